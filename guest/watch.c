/* WatchRequest: a directory watched with inotify, its events streamed as
 * WatchEvents until the host cancels (protos/guest.proto).
 *
 * Each watch has its own inotify instance in the loop, so ending the
 * stream (cancel, session end) closes one fd and the kernel drops every
 * watch it held: nothing can leak. Events wait in a coalescing, bounded
 * queue (watch_queue.c) for WATCH_COALESCE_MS, so a burst of writes to a
 * file becomes one event, and while the host holds back credit (a slow
 * client: the batches' encoded size counts against the stream's window)
 * they coalesce further and then overflow instead of growing memory.
 *
 * A recursive watch adds a watch for every directory below the root, and
 * for each one created or moved in later; entries a new directory already
 * holds when its watch is added are reported as created, since no event
 * could tell of them. A directory moved away takes its watches along; one
 * moved within the tree is watched again under its new name, its entries
 * reported as created there (events on the old watch that the kernel
 * queued after the move are dropped, and the walk stands in for them). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bytes.h"
#include "file_request.h"
#include "guestd_state.h"
#include "loop.h"
#include "request_handlers.h"
#include "send.h"
#include "stream.h"
#include "watch_queue.h"

/* A guest has 128 inotify instances by default (fs.inotify.
 * max_user_instances): the sandbox's own programs keep the rest. */
#define WATCH_MAX_PER_GUEST 32
#define WATCH_QUEUE_CAP 1024
#define WATCH_DIRS_MAX 4096
#define WATCH_COALESCE_MS 50

#define WATCH_MASK                                                                       \
    (IN_CREATE | IN_MODIFY | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB |        \
     IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_EXCL_UNLINK)

#define TYPE(x) AIRLOCK__GUEST__V1__WATCH_EVENT_TYPE__WATCH_EVENT_##x

struct watch_dir {
    int wd;
    char *path;
};

struct watch_stream {
    struct stream base;
    int fd;                 /* the inotify instance */
    char *root;
    int root_wd;
    bool recursive;
    bool ending;            /* the root is gone: flush, then Result */
    struct watch_dir *dirs; /* by wd, ascending */
    size_t ndirs, capdirs;
    struct watch_queue q;
    uint64_t window;        /* credit for WatchEvents' encoded bytes */
    uint64_t timer;
};

/* Index of wd in dirs, or where it would go. */
static size_t dirs_slot(const struct watch_stream *w, int wd)
{
    size_t lo = 0, hi = w->ndirs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (w->dirs[mid].wd < wd)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static const char *dirs_find(const struct watch_stream *w, int wd)
{
    size_t i = dirs_slot(w, wd);
    return i < w->ndirs && w->dirs[i].wd == wd ? w->dirs[i].path : NULL;
}

static void dirs_remove_at(struct watch_stream *w, size_t i)
{
    free(w->dirs[i].path);
    memmove(&w->dirs[i], &w->dirs[i + 1], (w->ndirs - i - 1) * sizeof(*w->dirs));
    w->ndirs--;
}

/* Records wd's path (the same directory added again keeps its wd). */
static int dirs_put(struct watch_stream *w, int wd, const char *path)
{
    char *copy = strdup(path);
    if (!copy)
        return -1;
    size_t i = dirs_slot(w, wd);
    if (i < w->ndirs && w->dirs[i].wd == wd) {
        free(w->dirs[i].path);
        w->dirs[i].path = copy;
        return 0;
    }
    if (w->ndirs == w->capdirs) {
        size_t cap = w->capdirs ? w->capdirs * 2 : 16;
        struct watch_dir *d = realloc(w->dirs, cap * sizeof(*d));
        if (!d) {
            free(copy);
            return -1;
        }
        w->dirs = d;
        w->capdirs = cap;
    }
    memmove(&w->dirs[i + 1], &w->dirs[i], (w->ndirs - i) * sizeof(*w->dirs));
    w->dirs[i] = (struct watch_dir){ wd, copy };
    w->ndirs++;
    return 0;
}

/* A directory moved away: its watches and those below it go. */
static void dirs_forget_tree(struct watch_stream *w, const char *path)
{
    size_t len = strlen(path);
    for (size_t i = w->ndirs; i-- > 0;) {
        const char *p = w->dirs[i].path;
        if (strncmp(p, path, len) == 0 && (p[len] == '\0' || p[len] == '/')) {
            inotify_rm_watch(w->fd, w->dirs[i].wd);
            dirs_remove_at(w, i);
        }
    }
}

static char *path_join(const char *dir, const char *name)
{
    char *p;
    bool root = dir[0] == '/' && dir[1] == '\0';
    return asprintf(&p, "%s/%s", root ? "" : dir, name) < 0 ? NULL : p;
}

/* Watches dir and, for a recursive watch, every directory below it; with
 * report, every entry found below dir is queued as created. 0, or an
 * errno: dir's own failure, or ENOSPC / ENOMEM from anywhere below (a
 * directory below that vanished or is unreadable is skipped). */
static int watch_tree(struct watch_stream *w, const char *dir, bool report)
{
    if (w->ndirs >= WATCH_DIRS_MAX)
        return ENOSPC;
    int wd = inotify_add_watch(w->fd, dir, WATCH_MASK);
    if (wd < 0)
        return errno;
    if (dirs_put(w, wd, dir) < 0)
        return ENOMEM;
    if (!w->recursive)
        return 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int err = 0;
    struct dirent *de;
    while (!err && (de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        char *child = path_join(dir, de->d_name);
        if (!child) {
            err = ENOMEM;
            break;
        }
        struct stat st;
        bool is_dir = de->d_type == DT_DIR ||
                      (de->d_type == DT_UNKNOWN &&
                       fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                       S_ISDIR(st.st_mode));
        if (report)
            watch_queue_push(&w->q, TYPE(CREATE), child, is_dir, unix_now_ms());
        if (is_dir) {
            int e = watch_tree(w, child, report);
            if (e == ENOSPC || e == ENOMEM)
                err = e;
        }
        free(child);
    }
    closedir(d);
    return err;
}

/* Encoded size of one event inside WatchEvents: tag, length, message. */
static size_t event_wire_size(const Airlock__Guest__V1__WatchEvent *e)
{
    size_t n = protobuf_c_message_get_packed_size(&e->base);
    size_t len_bytes = 1;
    for (size_t v = n; v >= 0x80; v >>= 7)
        len_bytes++;
    return 1 + len_bytes + n;
}

/* Sends one batch as far as the window allows; the events sent, 0 when
 * the window is too small for the next one. */
static size_t watch_send_batch(struct watch_stream *w)
{
    static Airlock__Guest__V1__WatchEvent evs[AIRLOCK_WATCH_BATCH_EVENTS];
    static Airlock__Guest__V1__WatchEvent *ptrs[AIRLOCK_WATCH_BATCH_EVENTS];
    uint64_t budget = w->window < AIRLOCK_CHUNK_MAX ? w->window : AIRLOCK_CHUNK_MAX;
    size_t n = 0, bytes = 0;
    while (n < watch_queue_len(&w->q) && n < AIRLOCK_WATCH_BATCH_EVENTS) {
        const struct watch_event *e = watch_queue_at(&w->q, n);
        airlock__guest__v1__watch_event__init(&evs[n]);
        evs[n].type = e->type;
        evs[n].path.data = (uint8_t *)e->path;
        evs[n].path.len = strlen(e->path);
        evs[n].is_dir = e->is_dir;
        evs[n].unix_ms = e->unix_ms;
        size_t sz = event_wire_size(&evs[n]);
        if (bytes + sz > budget)
            break;
        bytes += sz;
        ptrs[n] = &evs[n];
        n++;
    }
    if (n == 0)
        return 0;
    Airlock__Guest__V1__WatchEvents batch = AIRLOCK__GUEST__V1__WATCH_EVENTS__INIT;
    batch.events = ptrs;
    batch.n_events = n;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.stream_id = w->base.id;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_WATCH_EVENTS;
    f.watch_events = &batch;
    w->window -= frame_payload_bytes(&f); /* what the host will count */
    guestd_send(w->base.g, &f);
    watch_queue_drop(&w->q, n);
    return n;
}

/* Sends what the window allows; a watch whose root is gone ends once its
 * last events are out. */
static void watch_flush(void *ctx)
{
    struct watch_stream *w = ctx;
    w->timer = 0;
    while (watch_queue_len(&w->q) && watch_send_batch(w))
        ;
    if (w->ending && watch_queue_len(&w->q) == 0) {
        guestd_send_result(w->base.g, w->base.id, 0, "watch %s: the directory is gone",
                           w->root);
        guestd_stream_end(&w->base);
    }
}

static void watch_schedule(struct watch_stream *w, int64_t delay_ms)
{
    if (!w->timer)
        w->timer = loop_add_timer(w->base.g->loop, delay_ms, watch_flush, w);
}

static watch_type event_type(uint32_t mask)
{
    if (mask & (IN_CREATE | IN_MOVED_TO))
        return TYPE(CREATE);
    if (mask & IN_MODIFY)
        return TYPE(WRITE);
    if (mask & IN_DELETE)
        return TYPE(REMOVE);
    if (mask & IN_MOVED_FROM)
        return TYPE(RENAME);
    if (mask & IN_ATTRIB)
        return TYPE(CHMOD);
    return TYPE(UNKNOWN);
}

static void watch_event(struct watch_stream *w, const struct inotify_event *ev)
{
    int64_t now = unix_now_ms();
    if (ev->mask & IN_Q_OVERFLOW) {
        watch_queue_overflow(&w->q, now);
        return;
    }
    const char *dir = dirs_find(w, ev->wd);
    if (!dir)
        return; /* a watch already forgotten */
    bool root = ev->wd == w->root_wd;
    if (ev->mask & IN_IGNORED) {
        size_t i = dirs_slot(w, ev->wd);
        dirs_remove_at(w, i);
        w->ending |= root;
        return;
    }
    if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
        /* Below the root the parent's watch tells of it. */
        if (root) {
            watch_queue_push(&w->q, ev->mask & IN_DELETE_SELF ? TYPE(REMOVE) : TYPE(RENAME),
                             w->root, true, now);
            w->ending = true;
        }
        return;
    }
    watch_type type = event_type(ev->mask);
    if (type == TYPE(UNKNOWN) || !ev->len)
        return;
    bool is_dir = ev->mask & IN_ISDIR;
    char *path = path_join(dir, ev->name);
    if (!path) {
        watch_queue_overflow(&w->q, now);
        return;
    }
    watch_queue_push(&w->q, type, path, is_dir, now);
    if (w->recursive && is_dir) {
        if (ev->mask & (IN_CREATE | IN_MOVED_TO)) {
            int err = watch_tree(w, path, true);
            if (err == ENOSPC || err == ENOMEM)
                watch_queue_overflow(&w->q, now); /* part of the tree goes unwatched */
        } else if (ev->mask & IN_MOVED_FROM) {
            dirs_forget_tree(w, path);
        }
    }
    free(path);
}

static void watch_readable(int fd, short revents, void *ctx)
{
    (void)revents;
    struct watch_stream *w = ctx;
    static char buf[64 << 10] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0)
        return; /* EAGAIN: nothing after all */
    for (char *p = buf; p < buf + n;) {
        const struct inotify_event *ev = (const struct inotify_event *)p;
        watch_event(w, ev);
        p += sizeof(*ev) + ev->len;
    }
    if (watch_queue_len(&w->q) || w->ending)
        watch_schedule(w, w->ending ? 0 : WATCH_COALESCE_MS);
}

static void watch_on_window(struct stream *s, uint32_t bytes)
{
    struct watch_stream *w = (struct watch_stream *)s;
    w->window = window_add(w->window, bytes);
    if (watch_queue_len(&w->q))
        watch_schedule(w, 0);
}

static void watch_destroy(struct stream *s)
{
    struct watch_stream *w = (struct watch_stream *)s;
    struct guestd *g = s->g;
    loop_cancel_timer(g->loop, w->timer);
    if (w->fd >= 0) {
        loop_unwatch(g->loop, w->fd);
        close(w->fd); /* the kernel drops every watch of the instance */
    }
    for (size_t i = 0; i < w->ndirs; i++)
        free(w->dirs[i].path);
    free(w->dirs);
    watch_queue_free(&w->q);
    free(w->root);
    free(w);
    g->nwatches--;
}

static const struct stream_ops watch_ops = {
    .kind = "watch",
    .on_window = watch_on_window,
    .destroy = watch_destroy,
};

void watch_request(struct guestd *g, uint32_t id, const GuestFrame *frame)
{
    const Airlock__Guest__V1__WatchRequest *r = frame->watch;
    char *path = request_path(g, id, "watch", &r->path);
    if (!path)
        return;
    for (size_t len = strlen(path); len > 1 && path[len - 1] == '/';)
        path[--len] = '\0'; /* events name "/d/f", not "/d//f" */
    if (g->nwatches >= WATCH_MAX_PER_GUEST) {
        guestd_send_result(g, id, EBUSY, "watch %s: too many watches in this sandbox (at most %d)",
                           quoted(path).s, WATCH_MAX_PER_GUEST);
        free(path);
        return;
    }
    struct watch_stream *w = calloc(1, sizeof(*w));
    if (!w || watch_queue_init(&w->q, WATCH_QUEUE_CAP, path) < 0) {
        send_path_error(g, id, "watch", path, ENOMEM);
        free(w);
        free(path);
        return;
    }
    g->nwatches++; /* watch_destroy's to give back */
    w->base.g = g;
    w->root = path;
    w->recursive = r->recursive;
    w->window = AIRLOCK_STREAM_WINDOW;
    w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    int err = w->fd < 0 ? errno : watch_tree(w, path, false);
    if (err == ENOSPC && w->ndirs >= WATCH_DIRS_MAX) {
        guestd_send_result(g, id, ENOSPC, "watch %s: more than %d directories to watch",
                           quoted(path).s, WATCH_DIRS_MAX);
    } else if (err) {
        send_path_error(g, id, "watch", path, err);
    } else if (loop_watch(g->loop, w->fd, POLLIN, watch_readable, w) < 0) {
        err = errno ? errno : ENOMEM;
        send_path_error(g, id, "watch", path, err);
    }
    if (err) {
        watch_destroy(&w->base);
        return;
    }
    w->root_wd = w->dirs[0].wd; /* a fresh instance's first watch has the lowest wd */
    guestd_stream_add(g, &w->base, id, &watch_ops);
    /* An empty batch: the watch is in place, what happens from now on is
     * reported. */
    Airlock__Guest__V1__WatchEvents none = AIRLOCK__GUEST__V1__WATCH_EVENTS__INIT;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.stream_id = id;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_WATCH_EVENTS;
    f.watch_events = &none;
    guestd_send(g, &f);
}
