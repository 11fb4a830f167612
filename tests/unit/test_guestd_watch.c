/* guestd directory watches (guest/watch.c) over the test socketpair:
 * events of each kind, coalesced writes, recursive vs not, overflow under
 * a closed window and in a daemon fallen behind (the stream going on after
 * it), the root going away, bad paths, the per-guest cap, and cancel
 * removing the inotify instance (the daemon's fds counted). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <sys/stat.h>

#include "test_guestd_client.h"

#define T(x) AIRLOCK__GUEST__V1__WATCH_EVENT_TYPE__WATCH_EVENT_##x
#define BODY(x) AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_##x

struct ev {
    int type;
    char path[256];
    bool is_dir;
};

struct evlist {
    struct ev *v;
    size_t n, cap;
};

static char *path_in(struct gd *d, const char *name)
{
    static char buf[8][512];
    static int next;
    char *p = buf[next++ % 8];
    snprintf(p, sizeof(buf[0]), "%s/%s", d->tmpdir, name);
    return p;
}

static void touch(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT, 0644);
    assert_true(fd >= 0);
    close(fd);
}

static void send_watch(struct gd *d, uint32_t id, const char *path, bool recursive)
{
    Airlock__Guest__V1__WatchRequest w = AIRLOCK__GUEST__V1__WATCH_REQUEST__INIT;
    w.path = gd_bytes(path);
    w.recursive = recursive;
    gd_send_body(d, id, BODY(WATCH), &w);
}

/* Starts a watch and waits for its first, empty batch. */
static void start_watch(struct gd *d, uint32_t id, const char *path, bool recursive)
{
    send_watch(d, id, path, recursive);
    GuestFrame *f = gd_next(d, id);
    if (f->body_case != BODY(WATCH_EVENTS))
        fail_msg("watch %s: expected WatchEvents, got body %d (%s)", path, (int)f->body_case,
                 f->body_case == BODY(RESULT) ? f->result->message : "");
    assert_int_equal(f->watch_events->n_events, 0);
    frame_free(f);
}

/* Reads batches on id into l until an event for `until` of type `type`
 * arrives (1), the stream ends (-1), or nothing comes for timeout_ms (0);
 * credit is returned only with credit. */
static int collect_within(struct gd *d, uint32_t id, struct evlist *l, int type, const char *until,
                          bool credit, int timeout_ms)
{
    for (;;) {
        GuestFrame *f = gd_try_next(d, id, timeout_ms);
        if (!f)
            return 0;
        if (f->body_case != BODY(WATCH_EVENTS)) {
            assert_int_equal(f->body_case, BODY(RESULT));
            frame_free(f);
            return -1;
        }
        if (credit)
            gd_send_window(d, id, (uint32_t)frame_payload_bytes(f));
        bool found = false;
        for (size_t i = 0; i < f->watch_events->n_events; i++) {
            const Airlock__Guest__V1__WatchEvent *e = f->watch_events->events[i];
            if (l->n == l->cap) {
                l->cap = l->cap ? l->cap * 2 : 64;
                l->v = realloc(l->v, l->cap * sizeof(*l->v));
                assert_non_null(l->v);
            }
            struct ev *x = &l->v[l->n++];
            x->type = (int)e->type;
            snprintf(x->path, sizeof(x->path), "%.*s", (int)e->path.len, e->path.data);
            x->is_dir = e->is_dir;
            found |= (int)e->type == type && strcmp(x->path, until) == 0;
        }
        frame_free(f);
        if (found)
            return 1;
    }
}

/* collect_within that fails the test when nothing comes for GD_TIMEOUT_MS. */
static bool collect(struct gd *d, uint32_t id, struct evlist *l, int type, const char *until,
                    bool credit)
{
    int rc = collect_within(d, id, l, type, until, credit, GD_TIMEOUT_MS);
    if (rc == 0)
        fail_msg("no frame on stream %u within %d ms", id, GD_TIMEOUT_MS);
    return rc > 0;
}

/* Events of type (0: any) for path. */
static size_t count(const struct evlist *l, int type, const char *path)
{
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++)
        n += (!type || l->v[i].type == type) && strcmp(l->v[i].path, path) == 0;
    return n;
}

/* inotify instances the daemon holds. */
static int inotify_fds(pid_t pid)
{
    char dir[64], link[384], target[256];
    snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
    DIR *dd = opendir(dir);
    assert_non_null(dd);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(dd))) {
        snprintf(link, sizeof(link), "%s/%s", dir, de->d_name);
        ssize_t len = readlink(link, target, sizeof(target) - 1);
        if (len > 0) {
            target[len] = '\0';
            n += strcmp(target, "anon_inode:inotify") == 0;
        }
    }
    closedir(dd);
    return n;
}

static void test_events_of_each_kind(void **state)
{
    struct gd *d = *state;
    start_watch(d, 1, d->tmpdir, false);
    char *a = path_in(d, "a"), *b = path_in(d, "b");
    int fd = open(a, O_WRONLY | O_CREAT, 0644);
    assert_true(fd >= 0);
    for (int i = 0; i < 200; i++)
        assert_int_equal(write(fd, "x", 1), 1);
    close(fd);
    assert_int_equal(rename(a, b), 0);
    assert_int_equal(chmod(b, 0600), 0);
    assert_int_equal(unlink(b), 0);
    assert_int_equal(mkdir(path_in(d, "sub"), 0755), 0);
    touch(path_in(d, "sub/inner")); /* below the root: not watched */
    touch(path_in(d, "marker"));
    struct evlist l = { 0 };
    assert_true(collect(d, 1, &l, T(CREATE), path_in(d, "marker"), true));
    assert_int_equal(count(&l, T(CREATE), a), 1);
    size_t writes = count(&l, T(WRITE), a);
    assert_true(writes >= 1 && writes < 200); /* coalesced */
    assert_int_equal(count(&l, T(RENAME), a), 1);
    assert_int_equal(count(&l, T(CREATE), b), 1);
    assert_true(count(&l, T(CHMOD), b) >= 1);
    assert_int_equal(count(&l, T(REMOVE), b), 1);
    assert_int_equal(count(&l, T(CREATE), path_in(d, "sub")), 1);
    assert_int_equal(count(&l, 0, path_in(d, "sub/inner")), 0);
    for (size_t i = 0; i < l.n; i++)
        if (strcmp(l.v[i].path, path_in(d, "sub")) == 0)
            assert_true(l.v[i].is_dir);
    free(l.v);
    gd_send_cancel(d, 1);
}

static void test_recursive(void **state)
{
    struct gd *d = *state;
    assert_int_equal(mkdir(path_in(d, "pre"), 0755), 0);
    start_watch(d, 1, d->tmpdir, true);
    touch(path_in(d, "pre/f"));
    assert_int_equal(mkdir(path_in(d, "new"), 0755), 0);
    struct evlist l = { 0 };
    assert_true(collect(d, 1, &l, T(CREATE), path_in(d, "new"), true));
    touch(path_in(d, "new/g"));
    assert_int_equal(rename(path_in(d, "new"), path_in(d, "moved")), 0);
    touch(path_in(d, "moved/h"));
    assert_true(collect(d, 1, &l, T(CREATE), path_in(d, "moved/h"), true));
    assert_int_equal(count(&l, T(CREATE), path_in(d, "pre/f")), 1);
    assert_int_equal(count(&l, T(CREATE), path_in(d, "new/g")), 1);
    assert_int_equal(count(&l, T(RENAME), path_in(d, "new")), 1);
    assert_int_equal(count(&l, T(CREATE), path_in(d, "moved")), 1);
    /* Nothing under the old name after the move. */
    assert_int_equal(count(&l, 0, path_in(d, "new/h")), 0);
    free(l.v);
    gd_send_cancel(d, 1);
}

/* With stall, the daemon is stopped while the files are made, so it finds
 * them all at once, with credit left: the kernel's queue and its own
 * overflow before the window closes. */
static void overflow_then_on(struct gd *d, bool stall)
{
    start_watch(d, 1, d->tmpdir, false);
    /* No credit back: past the window the queue fills, then overflows. */
    enum { FILES = 20000 };
    char name[32];
    if (stall)
        assert_int_equal(kill(d->pid, SIGSTOP), 0);
    for (int i = 0; i < FILES; i++) {
        snprintf(name, sizeof(name), "file-%05d", i);
        touch(path_in(d, name));
    }
    if (stall)
        assert_int_equal(kill(d->pid, SIGCONT), 0);
    struct evlist l = { 0 };
    size_t before = 0;
    bool lost_early = false;
    /* What came within the window, then the rest once credit is back. A
     * daemon that falls behind (a loaded machine) overflows while it still
     * has credit: its marker then comes in this first part. */
    for (;;) {
        GuestFrame *f = gd_try_next(d, 1, 1000);
        if (!f)
            break;
        assert_int_equal(f->body_case, BODY(WATCH_EVENTS));
        before += f->watch_events->n_events;
        for (size_t i = 0; i < f->watch_events->n_events; i++)
            lost_early |= f->watch_events->events[i]->type == T(OVERFLOW);
        frame_free(f);
    }
    assert_true(before < FILES);
    if (stall)
        assert_true(lost_early);
    gd_send_window(d, 1, AIRLOCK_STREAM_WINDOW);
    if (!lost_early) {
        assert_true(collect(d, 1, &l, T(OVERFLOW), d->tmpdir, true));
        assert_true(before + l.n < FILES); /* events were lost, and said so */
        assert_true(l.n <= 1024 + 1);      /* the queue's bound and its overflow */
    }
    /* The watch goes on. A file made while guestd's queue still holds the
     * backlog (after an early overflow nothing above drained it) is lost
     * with it, rightly; once a lull with credit has carried the backlog
     * away, another is reported. */
    bool reported = false;
    for (int attempt = 0; attempt < 5 && !reported; attempt++) {
        snprintf(name, sizeof(name), "after-%d", attempt);
        char *after = path_in(d, name);
        touch(after);
        int rc = collect_within(d, 1, &l, T(CREATE), after, true, 2000);
        assert_true(rc >= 0);
        reported = rc == 1;
    }
    assert_true(reported);
    assert_true(before + l.n - 1 < FILES); /* whenever they were lost */
    free(l.v);
    gd_send_cancel(d, 1);
}

static void test_overflow_then_on(void **state)
{
    overflow_then_on(*state, false);
}

static void test_overflow_behind_then_on(void **state)
{
    overflow_then_on(*state, true);
}

static void test_root_removed(void **state)
{
    struct gd *d = *state;
    char *sub = path_in(d, "gone");
    assert_int_equal(mkdir(sub, 0755), 0);
    start_watch(d, 1, sub, true);
    assert_int_equal(rmdir(sub), 0);
    struct evlist l = { 0 };
    assert_true(collect(d, 1, &l, T(REMOVE), sub, true));
    char msg[256];
    assert_int_equal(gd_result(d, 1, msg, sizeof(msg)), 0);
    assert_non_null(strstr(msg, "gone"));
    free(l.v);
}

static void test_bad_paths_cap_and_cancel(void **state)
{
    struct gd *d = *state;
    char msg[512];
    send_watch(d, 1, path_in(d, "missing"), false);
    assert_int_equal(gd_result(d, 1, msg, sizeof(msg)), ENOENT);
    assert_non_null(strstr(msg, "missing"));
    touch(path_in(d, "plain"));
    send_watch(d, 2, path_in(d, "plain"), false);
    assert_int_equal(gd_result(d, 2, msg, sizeof(msg)), ENOTDIR);
    assert_non_null(strstr(msg, "plain"));

    for (int round = 0; round < 3; round++) {
        for (uint32_t i = 0; i < 32; i++)
            start_watch(d, 100 + i, d->tmpdir, round == 1);
        send_watch(d, 200, d->tmpdir, false);
        assert_int_equal(gd_result(d, 200, msg, sizeof(msg)), EBUSY);
        assert_non_null(strstr(msg, "too many watches"));
        assert_int_equal(inotify_fds(d->pid), 32);
        for (uint32_t i = 0; i < 32; i++)
            gd_send_cancel(d, 100 + i);
        /* A health round trip: the cancels before it are done. */
        gd_expect_health(d, 300 + (uint32_t)round);
        assert_int_equal(inotify_fds(d->pid), 0);
        /* Batches sent before a cancel landed are dropped here. */
        for (size_t i = 0; i < d->npending; i++)
            frame_free(d->pending[i]);
        d->npending = 0;
    }
}

#define TEST(fn) cmocka_unit_test_setup_teardown(fn, gd_setup, gd_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_events_of_each_kind),
        TEST(test_recursive),
        TEST(test_overflow_then_on),
        TEST(test_overflow_behind_then_on),
        TEST(test_root_removed),
        TEST(test_bad_paths_cap_and_cancel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
