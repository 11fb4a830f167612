#include "console_log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "log.h"
#include "vm_socket.h"

#define CONSOLE_READ_BYTES 16384
#define CONSOLE_THREAD_STACK (256 * 1024)

struct console_log {
    int sock;
    int log_fd;
    size_t size;      /* of the file, as this side wrote it */
    size_t max_bytes;
    pthread_t reader;
    pthread_mutex_t lock; /* guards path, log_fd, size and ended */
    pthread_cond_t ended_cond;
    bool ended;       /* QEMU's end closed */
    char path[PATH_MAX];
};

static int open_log(struct console_log *cl, char *err, size_t errlen)
{
    /* append: a sandbox's console outlives each QEMU (suspend, restore). */
    cl->log_fd = open(cl->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
    struct stat st;
    if (cl->log_fd < 0 || fstat(cl->log_fd, &st) < 0) {
        snprintf(err, errlen, "console log %s: %s", cl->path, strerror(errno));
        if (cl->log_fd >= 0)
            close(cl->log_fd);
        cl->log_fd = -1;
        return -1;
    }
    cl->size = (size_t)st.st_size;
    return 0;
}

/* The file with only its newest half: written beside it and renamed over
 * it, so a reader sees the old file or the new one whole. Lock held. */
static void keep_newest_half(struct console_log *cl)
{
    char *tail = NULL, err[PATH_MAX + 256];
    size_t len = 0;
    bool truncated;
    if (fs_read_tail(cl->path, cl->max_bytes / 2, &tail, &len, &truncated) < 0 ||
        fs_write_file_replace(cl->path, tail, len, 0640, err, sizeof(err)) < 0) {
        /* Cannot shorten it: stop writing rather than grow without bound. */
        log_warn("console log kept from growing by stopping it", "path=%s", cl->path);
        close(cl->log_fd);
        cl->log_fd = -1;
        free(tail);
        return;
    }
    free(tail);
    close(cl->log_fd);
    if (open_log(cl, err, sizeof(err)) < 0)
        log_warn("console log cannot be reopened", "error=\"%s\"", err);
}

static void append(struct console_log *cl, const char *data, size_t n)
{
    pthread_mutex_lock(&cl->lock);
    if (cl->log_fd >= 0 && cl->size + n > cl->max_bytes)
        keep_newest_half(cl);
    /* A burst larger than the bound keeps its newest bytes. */
    if (n > cl->max_bytes / 2) {
        data += n - cl->max_bytes / 2;
        n = cl->max_bytes / 2;
    }
    if (cl->log_fd >= 0 && fs_write_all(cl->log_fd, data, n) == 0)
        cl->size += n;
    pthread_mutex_unlock(&cl->lock);
}

static void *read_console(void *arg)
{
    struct console_log *cl = arg;
    char buf[CONSOLE_READ_BYTES];
    for (;;) {
        ssize_t n = read(cl->sock, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        append(cl, buf, (size_t)n);
    }
    pthread_mutex_lock(&cl->lock);
    cl->ended = true;
    pthread_cond_broadcast(&cl->ended_cond);
    pthread_mutex_unlock(&cl->lock);
    return NULL;
}

static int connect_socket(const char *path, char *err, size_t errlen)
{
    char why[512];
    int fd = vm_socket_connect(path, why, sizeof(why));
    if (fd < 0) {
        snprintf(err, errlen, "console socket %s", why);
        return -1;
    }
    /* Not shut for writing, though nothing is ever typed into it: QEMU
     * takes an end of input for the client's going away. */
    return fd;
}

int console_log_attach(const char *socket_path, const char *log_path, size_t max_bytes,
                       struct console_log **out, char *err, size_t errlen)
{
    *out = NULL;
    struct console_log *cl = calloc(1, sizeof(*cl));
    if (!cl) {
        snprintf(err, errlen, "console log: out of memory");
        return -1;
    }
    cl->log_fd = -1;
    cl->max_bytes = max_bytes;
    pthread_mutex_init(&cl->lock, NULL);
    pthread_cond_init(&cl->ended_cond, NULL);
    if (fs_path(cl->path, sizeof(cl->path), "%s", log_path) < 0) {
        snprintf(err, errlen, "console log path too long: %s", log_path);
        goto fail;
    }
    if ((cl->sock = connect_socket(socket_path, err, errlen)) < 0)
        goto fail;
    if (open_log(cl, err, errlen) < 0)
        goto fail_sock;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, CONSOLE_THREAD_STACK);
    int rc = pthread_create(&cl->reader, &attr, read_console, cl);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        snprintf(err, errlen, "console log: cannot start its thread: %s", strerror(rc));
        close(cl->log_fd);
        goto fail_sock;
    }
    *out = cl;
    return 0;
fail_sock:
    close(cl->sock);
fail:
    pthread_cond_destroy(&cl->ended_cond);
    pthread_mutex_destroy(&cl->lock);
    free(cl);
    return -1;
}

int console_log_move(struct console_log *cl, const char *log_path, char *err, size_t errlen)
{
    pthread_mutex_lock(&cl->lock);
    int rc = fs_path(cl->path, sizeof(cl->path), "%s", log_path);
    pthread_mutex_unlock(&cl->lock);
    if (rc < 0)
        snprintf(err, errlen, "console log path too long: %s", log_path);
    return rc;
}

void console_log_drain(struct console_log *cl, int timeout_ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&cl->lock);
    while (!cl->ended && pthread_cond_timedwait(&cl->ended_cond, &cl->lock, &until) == 0)
        ;
    pthread_mutex_unlock(&cl->lock);
}

void console_log_detach(struct console_log *cl)
{
    if (!cl)
        return;
    shutdown(cl->sock, SHUT_RDWR); /* the reader sees its end */
    pthread_join(cl->reader, NULL);
    close(cl->sock);
    if (cl->log_fd >= 0)
        close(cl->log_fd);
    pthread_cond_destroy(&cl->ended_cond);
    pthread_mutex_destroy(&cl->lock);
    free(cl);
}
