#include "guest_fs.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int mkdir_one(const char *path, mode_t mode)
{
    if (mkdir(path, mode) == 0)
        return 0;
    struct stat st;
    if (errno == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return 0;
    if (errno == EEXIST)
        errno = ENOTDIR;
    return -1;
}

int mkdir_parents(const char *path, mode_t mode)
{
    char *p = strdup(path);
    if (!p)
        return -1;
    int rc = 0;
    for (char *slash = strchr(p + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        if (slash[1] == '\0' || slash[-1] == '/')
            continue;
        *slash = '\0';
        rc = mkdir_one(p, 0755);
        *slash = '/';
        if (rc < 0)
            break;
    }
    if (rc == 0)
        rc = mkdir_one(p, mode);
    int saved = errno;
    free(p);
    errno = saved;
    return rc;
}

/* nftw has no context argument: the daemon is single-threaded, so the
 * failing path can live here for the duration of one remove_tree call. */
static struct {
    char *path;
    size_t len;
} remove_failure;

static int remove_entry(const char *fpath, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    int rc = (type == FTW_DP || type == FTW_DNR) ? rmdir(fpath) : unlink(fpath);
    if (rc < 0 && errno != ENOENT) {
        snprintf(remove_failure.path, remove_failure.len, "%s", fpath);
        return -1;
    }
    return 0;
}

int remove_tree(const char *path, char *failed_path, size_t failed_len)
{
    remove_failure.path = failed_path;
    remove_failure.len = failed_len;
    snprintf(failed_path, failed_len, "%s", path);
    return nftw(path, remove_entry, 32, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
}

void file_info_from_stat(Airlock__Guest__V1__FileInfo *fi, const struct stat *st)
{
    if (S_ISREG(st->st_mode))
        fi->type = AIRLOCK__GUEST__V1__FILE_TYPE__FILE_TYPE_FILE;
    else if (S_ISDIR(st->st_mode))
        fi->type = AIRLOCK__GUEST__V1__FILE_TYPE__FILE_TYPE_DIR;
    else if (S_ISLNK(st->st_mode))
        fi->type = AIRLOCK__GUEST__V1__FILE_TYPE__FILE_TYPE_SYMLINK;
    else
        fi->type = AIRLOCK__GUEST__V1__FILE_TYPE__FILE_TYPE_OTHER;
    fi->size = (uint64_t)st->st_size;
    fi->mode = st->st_mode & 07777;
    fi->mtime_unix_ms = (int64_t)st->st_mtim.tv_sec * 1000 + st->st_mtim.tv_nsec / 1000000;
    fi->uid = st->st_uid;
    fi->gid = st->st_gid;
}

int file_info_read_link(Airlock__Guest__V1__FileInfo *fi, int dirfd, const char *path,
                        size_t size_hint)
{
    size_t cap = size_hint > 0 && size_hint < 4096 ? size_hint + 1 : 4096;
    uint8_t *buf = malloc(cap);
    if (!buf)
        return -1;
    ssize_t n = readlinkat(dirfd, path, (char *)buf, cap);
    if (n < 0) {
        free(buf);
        return -1;
    }
    fi->link_target.data = buf;
    fi->link_target.len = (size_t)n;
    return 0;
}
