#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define RUN_OUTPUT_MAX (8u << 20)
#define ERR_TAIL_BYTES 1500

static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

int fs_path(char *buf, size_t buflen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, buflen, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= buflen) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

int fs_mkdir_p(const char *path, mode_t mode, char *err, size_t errlen)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
        set_err(err, errlen, "mkdir %s: path too long", path);
        return -1;
    }
    for (char *p = buf + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char saved = *p;
        *p = '\0';
        if (mkdir(buf, mode) < 0 && errno != EEXIST) {
            set_err(err, errlen, "mkdir %s: %s", buf, strerror(errno));
            return -1;
        }
        *p = saved;
        if (saved == '\0')
            break;
    }
    struct stat st;
    if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
        set_err(err, errlen, "mkdir %s: exists and is not a directory", path);
        return -1;
    }
    return 0;
}

static int fsync_opened(const char *path, int flags, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | flags);
    if (fd < 0) {
        set_err(err, errlen, "open %s: %s", path, strerror(errno));
        return -1;
    }
    int rc = fsync(fd);
    if (rc < 0)
        set_err(err, errlen, "fsync %s: %s", path, strerror(errno));
    close(fd);
    return rc < 0 ? -1 : 0;
}

int fs_fsync_dir(const char *dir, char *err, size_t errlen)
{
    return fsync_opened(dir, O_DIRECTORY, err, errlen);
}

int fs_fsync_file(const char *path, char *err, size_t errlen)
{
    return fsync_opened(path, 0, err, errlen);
}


static void dir_of(const char *path, char *dir, size_t dirlen)
{
    snprintf(dir, dirlen, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, dirlen, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
}

static int write_replace(const char *path, const void *data, size_t len, mode_t mode,
                         bool durable, char *err, size_t errlen);

int fs_write_file_atomic(const char *path, const void *data, size_t len, mode_t mode, char *err,
                         size_t errlen)
{
    return write_replace(path, data, len, mode, true, err, errlen);
}

int fs_write_file_replace(const char *path, const void *data, size_t len, mode_t mode, char *err,
                          size_t errlen)
{
    return write_replace(path, data, len, mode, false, err, errlen);
}

static int write_replace(const char *path, const void *data, size_t len, mode_t mode,
                         bool durable, char *err, size_t errlen)
{
    char tmp[PATH_MAX], dir[PATH_MAX];
    if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path) >= (int)sizeof(tmp)) {
        set_err(err, errlen, "write %s: path too long", path);
        return -1;
    }
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        set_err(err, errlen, "create %s: %s", tmp, strerror(errno));
        return -1;
    }
    if (fchmod(fd, mode) < 0 || fs_write_all(fd, data, len) < 0 || (durable && fsync(fd) < 0)) {
        set_err(err, errlen, "write %s: %s", tmp, strerror(errno));
        goto fail;
    }
    if (close(fd) < 0) {
        fd = -1;
        set_err(err, errlen, "close %s: %s", tmp, strerror(errno));
        goto fail;
    }
    fd = -1;
    if (rename(tmp, path) < 0) {
        set_err(err, errlen, "rename %s to %s: %s", tmp, path, strerror(errno));
        goto fail;
    }
    if (!durable)
        return 0;
    dir_of(path, dir, sizeof(dir));
    return fs_fsync_dir(dir, err, errlen);

fail:
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    return -1;
}

int fs_read_file(const char *path, size_t max_bytes, char **data, size_t *len, char *err,
                 size_t errlen)
{
    *data = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        set_err(err, errlen, "open %s: %s", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, used = 0;
    char *buf = malloc(cap);
    if (!buf)
        goto nomem;
    for (;;) {
        if (used + 1 >= cap) {
            if (cap > max_bytes) {
                set_err(err, errlen, "read %s: larger than %zu bytes", path, max_bytes);
                goto fail;
            }
            char *bigger = realloc(buf, cap * 2);
            if (!bigger)
                goto nomem;
            buf = bigger;
            cap *= 2;
        }
        ssize_t n = read(fd, buf + used, cap - used - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            set_err(err, errlen, "read %s: %s", path, strerror(errno));
            goto fail;
        }
        if (n == 0)
            break;
        used += (size_t)n;
    }
    if (used > max_bytes) {
        set_err(err, errlen, "read %s: larger than %zu bytes", path, max_bytes);
        goto fail;
    }
    buf[used] = '\0';
    close(fd);
    *data = buf;
    if (len)
        *len = used;
    return 0;

nomem:
    set_err(err, errlen, "read %s: out of memory", path);
fail:
    free(buf);
    close(fd);
    return -1;
}

/* Copies [off, off+len) from in to out at the same offset. */
static int copy_range(int in, int out, off_t off, off_t len)
{
    char buf[1 << 16];
    while (len > 0) {
        size_t want = len < (off_t)sizeof(buf) ? (size_t)len : sizeof(buf);
        ssize_t n = pread(in, buf, want, off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        for (ssize_t done = 0; done < n;) {
            ssize_t w = pwrite(out, buf + done, (size_t)(n - done), off + done);
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0)
                return -1;
            done += w;
        }
        off += n;
        len -= n;
    }
    return 0;
}

int fs_read_tail(const char *path, size_t max_bytes, char **data, size_t *len, bool *truncated)
{
    *data = NULL;
    *len = 0;
    *truncated = false;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) < 0)
        goto fail;
    off_t start = (size_t)st.st_size > max_bytes ? st.st_size - (off_t)max_bytes : 0;
    size_t want = (size_t)(st.st_size - start);
    char *buf = malloc(want + 1);
    if (!buf)
        goto fail;
    size_t got = 0;
    while (got < want) {
        ssize_t n = pread(fd, buf + got, want - got, start + (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            free(buf);
            goto fail;
        }
        if (n == 0)
            break; /* the file shrank meanwhile */
        got += (size_t)n;
    }
    close(fd);
    buf[got] = '\0';
    *data = buf;
    *len = got;
    *truncated = start > 0;
    return 0;
fail:;
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
}

int fs_copy_file(const char *src, const char *dst, mode_t mode, char *err, size_t errlen)
{
    int rc = -1;
    int out = -1;
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        set_err(err, errlen, "open %s: %s", src, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(in, &st) < 0) {
        set_err(err, errlen, "stat %s: %s", src, strerror(errno));
        goto out;
    }
    out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (out < 0) {
        set_err(err, errlen, "create %s: %s", dst, strerror(errno));
        goto out;
    }
    /* Walk the data regions; the holes between them are left unwritten. */
    off_t data = 0;
    while (data < st.st_size) {
        data = lseek(in, data, SEEK_DATA);
        if (data < 0 && errno == ENXIO)
            break; /* only a hole remains */
        if (data < 0)
            goto io_error;
        off_t hole = lseek(in, data, SEEK_HOLE);
        if (hole < 0)
            goto io_error;
        if (copy_range(in, out, data, hole - data) < 0)
            goto io_error;
        data = hole;
    }
    if (ftruncate(out, st.st_size) < 0 || fchmod(out, mode) < 0)
        goto io_error;
    rc = 0;
    goto out;

io_error:
    set_err(err, errlen, "copy %s to %s: %s", src, dst, errno ? strerror(errno) : "short read");
out:
    if (out >= 0 && close(out) < 0 && rc == 0) {
        set_err(err, errlen, "close %s: %s", dst, strerror(errno));
        rc = -1;
    }
    close(in);
    return rc;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    int rc = type == FTW_DP ? rmdir(path) : unlink(path);
    return rc < 0 && errno != ENOENT ? errno : 0;
}

int fs_remove_tree(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(path, &st) < 0) {
        if (errno == ENOENT)
            return 0;
        set_err(err, errlen, "stat %s: %s", path, strerror(errno));
        return -1;
    }
    int rc = nftw(path, remove_entry, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
    if (rc != 0) {
        set_err(err, errlen, "remove %s: %s", path, strerror(rc > 0 ? rc : errno));
        return -1;
    }
    return 0;
}

static unsigned long long usage_total;

static int add_usage(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)path;
    (void)type;
    (void)ftw;
    usage_total += (unsigned long long)st->st_blocks * 512ull;
    return 0;
}

unsigned long long fs_disk_usage(const char *path)
{
    /* nftw has no user pointer; a lock keeps the static total per call. */
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    usage_total = 0;
    nftw(path, add_usage, 32, FTW_PHYS | FTW_MOUNT);
    unsigned long long total = usage_total;
    pthread_mutex_unlock(&lock);
    return total;
}

const char *fs_human_size(unsigned long long bytes, char *buf, size_t buflen)
{
    static const char *units[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
    double v = (double)bytes;
    unsigned u = 0;
    while (v >= 1024.0 && u + 1 < sizeof(units) / sizeof(units[0])) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, buflen, "%llu bytes", bytes);
    else if (v < 10.0)
        snprintf(buf, buflen, "%.1f %s", v, units[u]);
    else
        snprintf(buf, buflen, "%.0f %s", v, units[u]);
    return buf;
}

/* Appends to a growing buffer, dropping the oldest half beyond the cap. */
static int output_append(char **buf, size_t *len, size_t *cap, const char *data, size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t want = (*len + n + 1) * 2;
        if (want > RUN_OUTPUT_MAX + 65536)
            want = RUN_OUTPUT_MAX + 65536;
        if (*len + n + 1 > want) {
            size_t drop = *len / 2 + n;
            if (drop > *len)
                drop = *len;
            memmove(*buf, *buf + drop, *len - drop);
            *len -= drop;
        }
        if (want > *cap) {
            char *bigger = realloc(*buf, want);
            if (!bigger)
                return -1;
            *buf = bigger;
            *cap = want;
        }
    }
    memcpy(*buf + *len, data, n);
    *len += n;
    (*buf)[*len] = '\0';
    return 0;
}

static void describe_command(const char *const argv[], char *buf, size_t buflen)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; argv[i] && used + 1 < buflen; i++) {
        int n = snprintf(buf + used, buflen - used, "%s%s", i ? " " : "", argv[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    if (used >= buflen && buflen > 4)
        memcpy(buf + buflen - 4, "...", 4);
}

int run_command(const char *const argv[], const char *cwd, char **output, char *err,
                size_t errlen)
{
    char cmd[512];
    describe_command(argv, cmd, sizeof(cmd));
    if (output)
        *output = NULL;

    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) < 0) {
        set_err(err, errlen, "%s: pipe: %s", cmd, strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        set_err(err, errlen, "%s: fork: %s", cmd, strerror(errno));
        close(pipefd[0]);
        close(pipefd[1]);
        return -1;
    }
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(pipefd[1], 1) < 0 ||
            dup2(pipefd[1], 2) < 0)
            _exit(126);
        close_range(3, ~0u, 0);
        if (cwd && chdir(cwd) < 0) {
            dprintf(2, "chdir %s: %s\n", cwd, strerror(errno));
            _exit(126);
        }
        execvp(argv[0], (char *const *)argv);
        dprintf(2, "exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(pipefd[1]);

    char *buf = NULL;
    size_t len = 0, cap = 0;
    int oom = 0;
    char chunk[16384];
    for (;;) {
        ssize_t n = read(pipefd[0], chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (!oom && output_append(&buf, &len, &cap, chunk, (size_t)n) < 0)
            oom = 1;
    }
    close(pipefd[0]);

    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            status = -1;
            break;
        }
    }
    int rc = 0;
    if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || oom) {
        const char *tail = buf ? buf : "";
        if (len > ERR_TAIL_BYTES)
            tail = buf + len - ERR_TAIL_BYTES;
        if (oom)
            set_err(err, errlen, "%s: out of memory capturing its output", cmd);
        else if (status == -1)
            set_err(err, errlen, "%s: waitpid: %s", cmd, strerror(errno));
        else if (WIFSIGNALED(status))
            set_err(err, errlen, "%s: killed by signal %d; output: %s", cmd, WTERMSIG(status),
                    tail);
        else
            set_err(err, errlen, "%s: exited with status %d; output: %s", cmd,
                    WEXITSTATUS(status), tail);
        rc = -1;
    }
    if (output)
        *output = buf;
    else
        free(buf);
    return rc;
}

int fs_write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int fs_send_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}
