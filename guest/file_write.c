/* FileWriteRequest: Data frames from the host are written as they arrive
 * (credit returned per write), to a temporary file in the target's
 * directory that is renamed over the target on eof - readers never see a
 * half-written file. append writes to the target directly. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_request.h"
#include "fsutil.h"
#include "guest_fs.h"
#include "request_handlers.h"
#include "send.h"
#include "stream.h"

struct file_write_stream {
    struct stream base;
    int fd;
    char *path;
    char *tmp_path; /* NULL when appending or once renamed */
};

/* Closes and renames into place; returns 0 or an errno. */
static int file_write_commit(struct file_write_stream *w)
{
    int fd = w->fd;
    w->fd = -1;
    if (close(fd) < 0)
        return errno;
    if (w->tmp_path) {
        if (rename(w->tmp_path, w->path) < 0)
            return errno;
        free(w->tmp_path);
        w->tmp_path = NULL;
    }
    return 0;
}

static void file_write_on_data(struct stream *s, const Airlock__Guest__V1__Data *d)
{
    struct file_write_stream *w = (struct file_write_stream *)s;
    struct guestd *g = s->g;
    if (fs_write_all(w->fd, d->data.data, d->data.len) < 0) {
        send_path_error(g, s->id, "write", w->path, errno);
        guestd_stream_end(s);
        return;
    }
    if (d->data.len)
        guestd_send_window(g, s->id, d->data.len);
    if (!d->eof)
        return;
    int err = file_write_commit(w);
    if (err)
        send_path_error(g, s->id, "write", w->path, err);
    else
        guestd_send_result(g, s->id, 0, NULL);
    guestd_stream_end(s);
}

static void file_write_destroy(struct stream *s)
{
    struct file_write_stream *w = (struct file_write_stream *)s;
    if (w->fd >= 0)
        close(w->fd);
    if (w->tmp_path)
        unlink(w->tmp_path);
    free(w->tmp_path);
    free(w->path);
    free(w);
}

static const struct stream_ops file_write_ops = {
    .kind = "file_write",
    .on_data = file_write_on_data,
    .destroy = file_write_destroy,
};

/* "<dir>/.airlock-write-XXXXXX" next to path, so rename stays atomic. */
static char *temp_path_for(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t dirlen = (size_t)(slash - path) + 1;
    static const char suffix[] = ".airlock-write-XXXXXX";
    char *tmp = malloc(dirlen + sizeof(suffix));
    if (tmp) {
        memcpy(tmp, path, dirlen);
        memcpy(tmp + dirlen, suffix, sizeof(suffix));
    }
    return tmp;
}

static int make_parent_dirs(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (slash == path)
        return 0;
    char *dir = strndup(path, (size_t)(slash - path));
    if (!dir)
        return -1;
    int rc = mkdir_parents(dir, 0755);
    int saved = errno;
    free(dir);
    errno = saved;
    return rc;
}

void file_write_request(struct guestd *g, uint32_t id, const GuestFrame *frame)
{
    const Airlock__Guest__V1__FileWriteRequest *req = frame->file_write;
    char *path = request_path(g, id, "write", &req->path);
    if (!path)
        return;
    mode_t mode = req->mode ? (mode_t)(req->mode & 07777) : 0644;
    struct file_write_stream *w = calloc(1, sizeof(*w));
    if (!w) {
        send_path_error(g, id, "write", path, ENOMEM);
        free(path);
        return;
    }
    w->fd = -1;
    w->path = path;
    if (req->make_parents && make_parent_dirs(path) < 0)
        goto fail;
    if (req->append) {
        w->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, mode);
    } else {
        if (!(w->tmp_path = temp_path_for(path)))
            goto fail;
        w->fd = mkostemp(w->tmp_path, O_CLOEXEC);
        if (w->fd < 0) {
            free(w->tmp_path); /* not created: nothing to unlink */
            w->tmp_path = NULL;
        } else if (fchmod(w->fd, mode) < 0) {
            goto fail;
        }
    }
    if (w->fd < 0)
        goto fail;
    guestd_stream_add(g, &w->base, id, &file_write_ops);
    return;
fail:
    send_path_error(g, id, "write", path, errno);
    file_write_destroy(&w->base);
}
