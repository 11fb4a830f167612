#include "image_cache.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "log.h"

#define HASH_LEN 64
#define BASE_PREFIX "base-"
#define KEEP_MAX 1000000u

struct image_entry {
    char name[HASH_LEN + 1];
    struct timespec used; /* manifest.json's mtime */
    bool remains;         /* kept, busy or not deletable */
};

int image_cache_parse_keep(const char *text, unsigned *keep, char *err, size_t errlen)
{
    char *end = NULL;
    errno = 0;
    unsigned long v = strtoul(text, &end, 10);
    if (!isdigit((unsigned char)text[0]) || *end || errno || v > KEEP_MAX) {
        snprintf(err, errlen,
                 "--image-cache-keep must be a number of guest images from 0 to %u "
                 "(0: never delete any), not \"%s\"",
                 KEEP_MAX, text);
        return -1;
    }
    *keep = (unsigned)v;
    return 0;
}

int image_cache_hold(const char *entry_dir, char *err, size_t errlen)
{
    int fd = open(entry_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || flock(fd, LOCK_SH) < 0) {
        snprintf(err, errlen, "image %s: %s", entry_dir, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    /* A cache we may not write still serves the image; pruning then sees
     * an older last use than the real one. */
    if (utimensat(fd, "manifest.json", NULL, 0) < 0)
        log_warn("image cache: cannot record use", "dir=%s error=\"%s\"", entry_dir,
                 strerror(errno));
    return fd;
}

void image_cache_release(int hold_fd)
{
    if (hold_fd >= 0)
        close(hold_fd); /* drops the flock */
}

static bool is_hash(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++)
        if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
            return false;
    return n == HASH_LEN;
}

static bool is_dir_at(int dfd, const char *name)
{
    struct stat st;
    return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

/* A listing of the cache with a read position of its own (a dup would
 * share dfd's). */
static DIR *open_listing(int dfd)
{
    int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d && fd >= 0)
        close(fd);
    return d;
}

/* Image entries: <hash>/ directories holding a regular manifest.json. */
static int list_images(int dfd, struct image_entry **out, size_t *count)
{
    DIR *d = open_listing(dfd);
    if (!d)
        return -1;
    struct image_entry *list = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char manifest[sizeof(e->d_name) + sizeof("/manifest.json")];
        struct stat st;
        if (!is_hash(e->d_name) || !is_dir_at(dfd, e->d_name))
            continue;
        snprintf(manifest, sizeof(manifest), "%s/manifest.json", e->d_name);
        if (fstatat(dfd, manifest, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 32;
            struct image_entry *grown = realloc(list, cap * sizeof(*list));
            if (!grown) {
                free(list);
                closedir(d);
                return -1;
            }
            list = grown;
        }
        list[n] = (struct image_entry){ .used = st.st_mtim };
        memcpy(list[n].name, e->d_name, HASH_LEN + 1);
        n++;
    }
    closedir(d);
    *out = list;
    *count = n;
    return 0;
}

/* Most recently used first; the name orders equal times. */
static int by_last_use(const void *pa, const void *pb)
{
    const struct image_entry *a = pa, *b = pb;
    if (a->used.tv_sec != b->used.tv_sec)
        return a->used.tv_sec > b->used.tv_sec ? -1 : 1;
    if (a->used.tv_nsec != b->used.tv_nsec)
        return a->used.tv_nsec > b->used.tv_nsec ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* Deletes cache_dir/name unless someone holds it. 1 deleted (its disk usage
 * added to *bytes), 0 busy, -1 failed (warned). */
static int remove_entry(int dfd, const char *cache_dir, const char *name,
                        unsigned long long *bytes)
{
    char path[PATH_MAX], doomed[PATH_MAX], err[512];
    int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        log_warn("image cache: cannot open entry", "dir=%s entry=%s error=\"%s\"", cache_dir,
                 name, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        bool busy = errno == EWOULDBLOCK;
        if (!busy)
            log_warn("image cache: cannot lock entry", "dir=%s entry=%s error=\"%s\"", cache_dir,
                     name, strerror(errno));
        close(fd);
        return busy ? 0 : -1;
    }
    int rc = -1;
    if (fs_path(path, sizeof(path), "%s/%s", cache_dir, name) < 0 ||
        fs_path(doomed, sizeof(doomed), "%s/%s.tmp.pruned", cache_dir, name) < 0) {
        log_warn("image cache: path too long", "dir=%s entry=%s", cache_dir, name);
        goto out;
    }
    unsigned long long usage = fs_disk_usage(path);
    if (rename(path, doomed) < 0) {
        log_warn("image cache: cannot delete entry", "entry=%s error=\"rename: %s\"", path,
                 strerror(errno));
        goto out;
    }
    if (fs_remove_tree(doomed, err, sizeof(err)) < 0) {
        log_warn("image cache: entry only partly deleted (the next build removes the rest)",
                 "entry=%s error=\"%s\"", doomed, err);
        goto out;
    }
    *bytes += usage;
    rc = 1;
out:
    close(fd);
    return rc;
}

/* The base an image was built from (manifest inputs.base) into base. */
static int image_base(const char *cache_dir, const char *name, char base[HASH_LEN + 1])
{
    char path[PATH_MAX];
    if (fs_path(path, sizeof(path), "%s/%s/manifest.json", cache_dir, name) < 0)
        return -1;
    json_t *root = json_load_file(path, 0, NULL);
    const char *b = json_string_value(json_object_get(json_object_get(root, "inputs"), "base"));
    int rc = b && is_hash(b) ? 0 : -1;
    if (rc == 0)
        memcpy(base, b, HASH_LEN + 1);
    json_decref(root);
    return rc;
}

/* The bases of the remaining images, or NULL when one of them does not say
 * (then no base can be told unused). */
static char (*remaining_bases(const char *cache_dir, const struct image_entry *images,
                              size_t count, size_t *nbases))[HASH_LEN + 1]
{
    char(*bases)[HASH_LEN + 1] = calloc(count ? count : 1, sizeof(*bases));
    *nbases = 0;
    for (size_t i = 0; bases && i < count; i++) {
        if (!images[i].remains)
            continue;
        if (image_base(cache_dir, images[i].name, bases[*nbases]) < 0) {
            log_warn("image cache: manifest names no base; keeping every base-* entry",
                     "entry=%s/%s", cache_dir, images[i].name);
            free(bases);
            return NULL;
        }
        (*nbases)++;
    }
    return bases;
}

static void prune_bases(int dfd, const char *cache_dir, const struct image_entry *images,
                        size_t count, struct image_cache_pruned *out)
{
    size_t nbases;
    char(*bases)[HASH_LEN + 1] = remaining_bases(cache_dir, images, count, &nbases);
    DIR *d = bases ? open_listing(dfd) : NULL;
    if (!d) {
        free(bases);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *hash = e->d_name + strlen(BASE_PREFIX);
        if (strncmp(e->d_name, BASE_PREFIX, strlen(BASE_PREFIX)) != 0 || !is_hash(hash) ||
            !is_dir_at(dfd, e->d_name))
            continue;
        bool used = false;
        for (size_t i = 0; i < nbases && !used; i++)
            used = strcmp(bases[i], hash) == 0;
        if (!used && remove_entry(dfd, cache_dir, e->d_name, &out->bytes) == 1)
            out->bases++;
    }
    closedir(d);
    free(bases);
}

void image_cache_prune(const char *cache_dir, unsigned keep, const char *current,
                       struct image_cache_pruned *out)
{
    struct image_cache_pruned none;
    if (!out)
        out = &none;
    memset(out, 0, sizeof(*out));
    if (keep == 0)
        return;
    struct image_entry *images = NULL;
    size_t count = 0;
    int dfd = open(cache_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || list_images(dfd, &images, &count) < 0) {
        log_warn("image cache: cannot list entries", "dir=%s error=\"%s\"", cache_dir,
                 strerror(errno));
        if (dfd >= 0)
            close(dfd);
        return;
    }
    qsort(images, count, sizeof(*images), by_last_use);
    for (size_t i = 0; i < count; i++) {
        images[i].remains = i < keep || (current && strcmp(images[i].name, current) == 0);
        if (images[i].remains)
            continue;
        int rc = remove_entry(dfd, cache_dir, images[i].name, &out->bytes);
        images[i].remains = rc != 1;
        out->images += rc == 1;
        out->busy += rc == 0;
    }
    prune_bases(dfd, cache_dir, images, count, out);
    if (out->images > 0 || out->bases > 0) {
        char size[32];
        log_info("image cache pruned",
                 "dir=%s images=%u bases=%u bytes=%llu freed=\"%s\" busy=%u keep=%u", cache_dir,
                 out->images, out->bases, out->bytes,
                 fs_human_size(out->bytes, size, sizeof(size)), out->busy, keep);
    }
    free(images);
    close(dfd);
}
