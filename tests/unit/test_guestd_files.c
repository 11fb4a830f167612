/* guestd file operations: streamed write/read with checksums, append,
 * atomic replace, non-UTF-8 names, mkdir -p, remove, rename, chmod, stat,
 * list, and the errors of each. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <sys/stat.h>

#include "test_guestd_client.h"

static char *path_in(struct gd *d, const char *name)
{
    static char buf[4][512];
    static int next;
    char *p = buf[next++ % 4];
    snprintf(p, sizeof(buf[0]), "%s/%s", d->tmpdir, name);
    return p;
}

static uint64_t fnv1a(const void *data, size_t len)
{
    const uint8_t *p = data;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static uint8_t *pseudo_random(size_t len)
{
    uint8_t *buf = malloc(len);
    assert_non_null(buf);
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        buf[i] = (uint8_t)x;
    }
    return buf;
}

static size_t count_entries(const char *dir)
{
    DIR *dd = opendir(dir);
    assert_non_null(dd);
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(dd)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            n++;
    closedir(dd);
    return n;
}

static void test_write_read_round_trip(void **state)
{
    struct gd *d = *state;
    const size_t len = 5 * 1024 * 1024 + 17;
    uint8_t *data = pseudo_random(len);
    char *path = path_in(d, "sub/dir/blob.bin");
    assert_int_equal(gd_write_file(d, 1, path, data, len, false, 0600), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_size, len);
    assert_int_equal(st.st_mode & 0777, 0600);

    char *back;
    size_t back_len;
    assert_int_equal(gd_read_file(d, 2, path, 0, 0, &back, &back_len), 0);
    assert_int_equal(back_len, len);
    assert_true(fnv1a(back, back_len) == fnv1a(data, len));
    free(back);
    /* offset + length */
    assert_int_equal(gd_read_file(d, 3, path, 1000, 300000, &back, &back_len), 0);
    assert_int_equal(back_len, 300000);
    assert_memory_equal(back, data + 1000, 300000);
    free(back);
    free(data);
    /* Only the file itself: no temp file left behind. */
    assert_int_equal(count_entries(path_in(d, "sub/dir")), 1);
}

static void test_overwrite_and_append(void **state)
{
    struct gd *d = *state;
    char *path = path_in(d, "log.txt");
    assert_int_equal(gd_write_file(d, 1, path, "first\n", 6, false, 0), 0);
    assert_int_equal(gd_write_file(d, 2, path, "second\n", 7, false, 0), 0);
    assert_int_equal(gd_write_file(d, 3, path, "third\n", 6, true, 0), 0);
    char *back;
    size_t n;
    assert_int_equal(gd_read_file(d, 4, path, 0, 0, &back, &n), 0);
    assert_string_equal(back, "second\nthird\n");
    free(back);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644);
}

static void test_cancelled_write_leaves_nothing(void **state)
{
    struct gd *d = *state;
    char *path = path_in(d, "partial.txt");
    assert_int_equal(gd_write_file(d, 1, path, "old", 3, false, 0), 0);
    Airlock__Guest__V1__FileWriteRequest w = AIRLOCK__GUEST__V1__FILE_WRITE_REQUEST__INIT;
    w.path = gd_bytes(path);
    gd_send_body(d, 2, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_FILE_WRITE, &w);
    gd_send_data(d, 2, "new content", 11, false);
    GuestFrame *f = gd_next(d, 2); /* the write happened: credit comes back */
    assert_int_equal(f->body_case, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_WINDOW);
    frame_free(f);
    assert_int_equal(count_entries(d->tmpdir), 2); /* the file and the temp file */
    gd_send_cancel(d, 2);
    gd_expect_health(d, 3); /* the cancel has been handled */
    assert_int_equal(count_entries(d->tmpdir), 1);
    char *back;
    size_t n;
    assert_int_equal(gd_read_file(d, 4, path, 0, 0, &back, &n), 0);
    assert_string_equal(back, "old");
    free(back);
}

/* Stat, List or Remove of a path given as raw bytes. */
static void send_path_req(struct gd *d, uint32_t id, int body, const char *path, size_t len)
{
    ProtobufCBinaryData p = { len, (uint8_t *)path };
    Airlock__Guest__V1__StatRequest stat = AIRLOCK__GUEST__V1__STAT_REQUEST__INIT;
    Airlock__Guest__V1__ListRequest list = AIRLOCK__GUEST__V1__LIST_REQUEST__INIT;
    Airlock__Guest__V1__RemoveRequest remove = AIRLOCK__GUEST__V1__REMOVE_REQUEST__INIT;
    stat.path = list.path = remove.path = p;
    void *msg = body == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_STAT   ? (void *)&stat
                : body == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_LIST ? (void *)&list
                                                                     : (void *)&remove;
    gd_send_body(d, id, body, msg);
}

static void test_non_utf8_name(void **state)
{
    struct gd *d = *state;
    char *path = path_in(d, "caf\xe9");
    assert_int_equal(gd_write_file(d, 1, path, "x", 1, false, 0), 0);
    assert_int_equal(access(path, F_OK), 0);

    send_path_req(d, 2, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_STAT, path, strlen(path));
    GuestFrame *f = gd_next(d, 2);
    assert_int_equal(f->body_case, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_FILE_INFO);
    assert_int_equal(f->file_info->name.len, 4);
    assert_memory_equal(f->file_info->name.data, "caf\xe9", 4);
    assert_int_equal(f->file_info->size, 1);
    assert_int_equal(f->file_info->type, AIRLOCK__GUEST__V1__FILE_TYPE__FILE_TYPE_FILE);
    frame_free(f);

    send_path_req(d, 3, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_LIST, d->tmpdir, strlen(d->tmpdir));
    f = gd_next(d, 3);
    assert_int_equal(f->body_case, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_DIR_ENTRIES);
    assert_true(f->dir_entries->done);
    assert_int_equal(f->dir_entries->n_entries, 1);
    assert_memory_equal(f->dir_entries->entries[0]->name.data, "caf\xe9", 4);
    frame_free(f);

    send_path_req(d, 4, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_REMOVE, path, strlen(path));
    assert_int_equal(gd_result(d, 4, NULL, 0), 0);
    assert_int_equal(access(path, F_OK), -1);
}

static void test_bad_paths(void **state)
{
    struct gd *d = *state;
    char msg[256];
    send_path_req(d, 1, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_STAT, "", 0);
    assert_int_equal(gd_result(d, 1, msg, sizeof(msg)), EINVAL);
    send_path_req(d, 2, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_STAT, "/tmp\0/x", 7);
    assert_int_equal(gd_result(d, 2, msg, sizeof(msg)), EINVAL);
    assert_non_null(strstr(msg, "NUL"));
    char *missing = path_in(d, "missing");
    send_path_req(d, 3, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_STAT, missing, strlen(missing));
    assert_int_equal(gd_result(d, 3, msg, sizeof(msg)), ENOENT);
    assert_non_null(strstr(msg, missing));
    char *back;
    size_t n;
    assert_int_equal(gd_read_file(d, 4, missing, 0, 0, &back, &n), ENOENT);
    assert_int_equal(gd_read_file(d, 5, d->tmpdir, 0, 0, &back, &n), EISDIR);
    send_path_req(d, 6, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_LIST, missing, strlen(missing));
    assert_int_equal(gd_result(d, 6, msg, sizeof(msg)), ENOENT);
}

static void test_stat_symlink(void **state)
{
    struct gd *d = *state;
    char *link = path_in(d, "link");
    assert_int_equal(symlink("/etc/hostname-target", link), 0);
    send_path_req(d, 1, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_STAT, link, strlen(link));
    GuestFrame *f = gd_next(d, 1);
    assert_int_equal(f->body_case, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_FILE_INFO);
    assert_int_equal(f->file_info->type, AIRLOCK__GUEST__V1__FILE_TYPE__FILE_TYPE_SYMLINK);
    assert_int_equal(f->file_info->link_target.len, strlen("/etc/hostname-target"));
    assert_memory_equal(f->file_info->link_target.data, "/etc/hostname-target", 20);
    frame_free(f);
    /* Following a dangling link fails. */
    Airlock__Guest__V1__StatRequest s = AIRLOCK__GUEST__V1__STAT_REQUEST__INIT;
    s.path = gd_bytes(link);
    s.follow_symlinks = true;
    gd_send_body(d, 2, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_STAT, &s);
    assert_int_equal(gd_result(d, 2, NULL, 0), ENOENT);
}

static void test_mkdir_remove_rename_chmod(void **state)
{
    struct gd *d = *state;
    Airlock__Guest__V1__MkdirRequest m = AIRLOCK__GUEST__V1__MKDIR_REQUEST__INIT;
    char *deep = path_in(d, "a/b/c");
    m.path = gd_bytes(deep);
    gd_send_body(d, 1, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_MKDIR, &m);
    assert_int_equal(gd_result(d, 1, NULL, 0), ENOENT); /* no parents */
    m.parents = true;
    gd_send_body(d, 2, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_MKDIR, &m);
    assert_int_equal(gd_result(d, 2, NULL, 0), 0);
    gd_send_body(d, 3, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_MKDIR, &m);
    assert_int_equal(gd_result(d, 3, NULL, 0), 0); /* exists: fine with parents */
    struct stat st;
    assert_int_equal(stat(deep, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(gd_write_file(d, 4, path_in(d, "a/b/c/f"), "x", 1, false, 0), 0);
    assert_int_equal(symlink("/etc", path_in(d, "a/b/etc-link")), 0);

    char *a = path_in(d, "a");
    send_path_req(d, 5, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_REMOVE, a, strlen(a));
    assert_int_equal(gd_result(d, 5, NULL, 0), ENOTEMPTY);

    Airlock__Guest__V1__RenameRequest rn = AIRLOCK__GUEST__V1__RENAME_REQUEST__INIT;
    char *renamed = path_in(d, "renamed");
    rn.from = gd_bytes(a);
    rn.to = gd_bytes(renamed);
    gd_send_body(d, 6, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_RENAME, &rn);
    assert_int_equal(gd_result(d, 6, NULL, 0), 0);
    assert_int_equal(access(renamed, F_OK), 0);
    gd_send_body(d, 7, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_RENAME, &rn);
    assert_int_equal(gd_result(d, 7, NULL, 0), ENOENT);

    Airlock__Guest__V1__ChmodRequest ch = AIRLOCK__GUEST__V1__CHMOD_REQUEST__INIT;
    ch.path = gd_bytes(renamed);
    ch.mode = 0700;
    gd_send_body(d, 8, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_CHMOD, &ch);
    assert_int_equal(gd_result(d, 8, NULL, 0), 0);
    assert_int_equal(stat(renamed, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0700);

    Airlock__Guest__V1__RemoveRequest rm = AIRLOCK__GUEST__V1__REMOVE_REQUEST__INIT;
    rm.path = gd_bytes(renamed);
    rm.recursive = true;
    gd_send_body(d, 9, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_REMOVE, &rm);
    assert_int_equal(gd_result(d, 9, NULL, 0), 0);
    assert_int_equal(access(renamed, F_OK), -1);
    assert_int_equal(access("/etc/passwd", F_OK), 0); /* the symlink was not followed */
}

static void test_list_many_entries(void **state)
{
    struct gd *d = *state;
    enum { N = 3000 };
    for (int i = 0; i < N; i++) {
        char name[64];
        snprintf(name, sizeof(name), "entry-with-a-longish-name-%05d", i);
        int fd = open(path_in(d, name), O_CREAT | O_WRONLY, 0644);
        assert_true(fd >= 0);
        close(fd);
    }
    send_path_req(d, 1, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_LIST, d->tmpdir, strlen(d->tmpdir));
    size_t total = 0, frames = 0;
    for (;;) {
        GuestFrame *f = gd_next(d, 1);
        assert_int_equal(f->body_case, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_DIR_ENTRIES);
        total += f->dir_entries->n_entries;
        frames++;
        bool done = f->dir_entries->done;
        frame_free(f);
        if (done)
            break;
    }
    assert_int_equal(total, N);
    assert_true(frames > 1);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, gd_setup, gd_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_write_read_round_trip),
        T(test_overwrite_and_append),
        T(test_cancelled_write_leaves_nothing),
        T(test_non_utf8_name),
        T(test_bad_paths),
        T(test_stat_symlink),
        T(test_mkdir_remove_rename_chmod),
        T(test_list_many_entries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
