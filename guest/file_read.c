/* FileReadRequest: a stream of Data chunks, as far as the host's window
 * allows, then Data{eof}. Memory stays at one chunk whatever the size. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_request.h"
#include "request_handlers.h"
#include "send.h"
#include "stream.h"

struct file_read_stream {
    struct stream base;
    int fd;
    char *path;
    uint64_t offset;
    uint64_t remaining; /* UINT64_MAX: to end of file */
    uint64_t window;
};

static void file_read_pump(struct file_read_stream *r)
{
    struct guestd *g = r->base.g;
    uint8_t buf[AIRLOCK_CHUNK_MAX];
    while (r->remaining > 0 && r->window > 0) {
        size_t want = sizeof(buf);
        if (r->window < want)
            want = (size_t)r->window;
        if (r->remaining < want)
            want = (size_t)r->remaining;
        ssize_t n = pread(r->fd, buf, want, (off_t)r->offset);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            send_path_error(g, r->base.id, "read", r->path, errno);
            guestd_stream_end(&r->base);
            return;
        }
        if (n == 0)
            break;
        guestd_send_data(g, r->base.id, buf, (size_t)n, false);
        r->offset += (uint64_t)n;
        r->remaining -= (uint64_t)n;
        r->window -= (uint64_t)n;
        if ((size_t)n < want) /* end of file */
            break;
    }
    if (r->remaining > 0 && r->window == 0)
        return; /* wait for credit */
    guestd_send_data(g, r->base.id, NULL, 0, true);
    guestd_stream_end(&r->base);
}

static void file_read_on_window(struct stream *s, uint32_t bytes)
{
    struct file_read_stream *r = (struct file_read_stream *)s;
    r->window = window_add(r->window, bytes);
    file_read_pump(r);
}

static void file_read_destroy(struct stream *s)
{
    struct file_read_stream *r = (struct file_read_stream *)s;
    close(r->fd);
    free(r->path);
    free(r);
}

static const struct stream_ops file_read_ops = {
    .kind = "file_read",
    .on_window = file_read_on_window,
    .destroy = file_read_destroy,
};

void file_read_request(struct guestd *g, uint32_t id, const GuestFrame *frame)
{
    const Airlock__Guest__V1__FileReadRequest *req = frame->file_read;
    char *path = request_path(g, id, "read", &req->path);
    if (!path)
        return;
    /* O_NONBLOCK: opening a FIFO must not hang the daemon. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        send_path_error(g, id, "read", path, errno);
        goto fail;
    }
    if (S_ISDIR(st.st_mode) || !S_ISREG(st.st_mode)) {
        send_path_error(g, id, "read", path, S_ISDIR(st.st_mode) ? EISDIR : EINVAL);
        goto fail;
    }
    struct file_read_stream *r = calloc(1, sizeof(*r));
    if (!r) {
        send_path_error(g, id, "read", path, ENOMEM);
        goto fail;
    }
    r->fd = fd;
    r->path = path;
    r->offset = req->offset;
    r->remaining = req->length ? req->length : UINT64_MAX;
    r->window = AIRLOCK_STREAM_WINDOW;
    guestd_stream_add(g, &r->base, id, &file_read_ops);
    file_read_pump(r);
    return;
fail:
    if (fd >= 0)
        close(fd);
    free(path);
}
