/* ListRequest: DirEntries in batches well under the frame limit, the last
 * with done = true. A huge directory is sent one batch per loop iteration,
 * pausing while the channel backlog is high, so memory stays bounded. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "channel.h"
#include "file_request.h"
#include "guest_fs.h"
#include "guestd_state.h"
#include "loop.h"
#include "request_handlers.h"
#include "send.h"
#include "stream.h"

#define LIST_BATCH_BYTES (256u << 10)
#define LIST_BATCH_ENTRIES AIRLOCK_DIR_BATCH_ENTRIES
#define LIST_BACKLOG_MAX (1u << 20)
#define LIST_BACKOFF_MS 5

struct dir_list_stream {
    struct stream base;
    DIR *dir;
    char *path;
    uint64_t timer;
};

struct dir_batch {
    Airlock__Guest__V1__FileInfo infos[LIST_BATCH_ENTRIES];
    Airlock__Guest__V1__FileInfo *ptrs[LIST_BATCH_ENTRIES];
    size_t n, bytes;
};

static void dir_batch_clear(struct dir_batch *b)
{
    for (size_t i = 0; i < b->n; i++) {
        free(b->infos[i].name.data);
        free(b->infos[i].link_target.data);
    }
    b->n = b->bytes = 0;
}

static int dir_batch_add(struct dir_batch *b, int dirfd, const char *name)
{
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT ? 0 : -1; /* removed meanwhile: skip */
    Airlock__Guest__V1__FileInfo *fi = &b->infos[b->n];
    airlock__guest__v1__file_info__init(fi);
    file_info_from_stat(fi, &st);
    size_t len = strlen(name);
    if (!(fi->name.data = malloc(len)))
        return -1;
    memcpy(fi->name.data, name, len);
    fi->name.len = len;
    if (S_ISLNK(st.st_mode))
        file_info_read_link(fi, dirfd, name, (size_t)st.st_size);
    b->ptrs[b->n++] = fi;
    b->bytes += 64 + len + fi->link_target.len; /* generous per-entry estimate */
    return 0;
}

static void dir_list_send(struct dir_list_stream *l, struct dir_batch *b, bool done)
{
    Airlock__Guest__V1__DirEntries de = AIRLOCK__GUEST__V1__DIR_ENTRIES__INIT;
    de.entries = b->ptrs;
    de.n_entries = b->n;
    de.done = done;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.stream_id = l->base.id;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_DIR_ENTRIES;
    f.dir_entries = &de;
    guestd_send(l->base.g, &f);
}

static void dir_list_pump(void *ctx)
{
    struct dir_list_stream *l = ctx;
    struct guestd *g = l->base.g;
    l->timer = 0;
    if (channel_backlog(g->channel) > LIST_BACKLOG_MAX) {
        l->timer = loop_add_timer(g->loop, LIST_BACKOFF_MS, dir_list_pump, l);
        return;
    }
    struct dir_batch *b = malloc(sizeof(*b));
    if (!b) {
        send_path_error(g, l->base.id, "list", l->path, ENOMEM);
        guestd_stream_end(&l->base);
        return;
    }
    b->n = b->bytes = 0;
    int err = 0;
    bool end = false;
    while (b->n < LIST_BATCH_ENTRIES && b->bytes < LIST_BATCH_BYTES) {
        errno = 0;
        struct dirent *de = readdir(l->dir);
        if (!de) {
            err = errno;
            end = true;
            break;
        }
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (dir_batch_add(b, dirfd(l->dir), de->d_name) < 0) {
            err = errno;
            end = true;
            break;
        }
    }
    if (err)
        send_path_error(g, l->base.id, "list", l->path, err);
    else
        dir_list_send(l, b, end);
    dir_batch_clear(b);
    free(b);
    if (end)
        guestd_stream_end(&l->base);
    else
        l->timer = loop_add_timer(g->loop, 0, dir_list_pump, l);
}

static void dir_list_destroy(struct stream *s)
{
    struct dir_list_stream *l = (struct dir_list_stream *)s;
    loop_cancel_timer(s->g->loop, l->timer);
    closedir(l->dir);
    free(l->path);
    free(l);
}

static const struct stream_ops dir_list_ops = {
    .kind = "list",
    .destroy = dir_list_destroy,
};

void dir_list_request(struct guestd *g, uint32_t id, const GuestFrame *frame)
{
    const Airlock__Guest__V1__ListRequest *r = frame->list;
    char *path = request_path(g, id, "list", &r->path);
    if (!path)
        return;
    struct dir_list_stream *l = calloc(1, sizeof(*l));
    DIR *dir = opendir(path);
    if (!dir || !l) {
        send_path_error(g, id, "list", path, dir ? ENOMEM : errno);
        if (dir)
            closedir(dir);
        free(l);
        free(path);
        return;
    }
    l->dir = dir;
    l->path = path;
    guestd_stream_add(g, &l->base, id, &dir_list_ops);
    dir_list_pump(l);
}
