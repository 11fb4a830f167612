/* guestd's VolumeRequest (guest/volume.c) without a VM: what it refuses
 * before it touches a disk. A mount point that is not absolute, a system
 * path (/, /proc, /sys, /dev and below), a ".." or "." component, a NUL in
 * the path, a slot past the last, an unknown operation and SYNC, FREEZE,
 * THAW or GROW of a slot with nothing mounted each fail with the errno and
 * a message naming the slot or the path; a slot whose disk is missing (the
 * host has no "airlock-vol" disks) is ENODEV. Nothing is made on the way:
 * a refused path is never created. Mounting is tested against real VMs
 * (tests/integration/test_vmhost_volumes.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "test_guestd_client.h"

static int volume(struct gd *d, uint32_t id, Airlock__Guest__V1__VolumeOp op, unsigned slot,
                  const char *path, size_t path_len, char *msg, size_t len)
{
    Airlock__Guest__V1__VolumeRequest r = AIRLOCK__GUEST__V1__VOLUME_REQUEST__INIT;
    r.op = op;
    r.slot = slot;
    r.path.data = (uint8_t *)path;
    r.path.len = path_len;
    r.size_bytes = 1 << 20;
    gd_send_body(d, id, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_VOLUME, &r);
    return gd_result(d, id, msg, len);
}

#define MOUNT AIRLOCK__GUEST__V1__VOLUME_OP__VOLUME_OP_MOUNT

static void expect_refused(struct gd *d, uint32_t id, const char *path, const char *named)
{
    char msg[512] = "";
    assert_int_equal(volume(d, id, MOUNT, 0, path, strlen(path), msg, sizeof(msg)), EINVAL);
    if (!strstr(msg, named))
        fail_msg("%s: message \"%s\" does not name \"%s\"", path, msg, named);
}

static void test_paths_refused(void **state)
{
    struct gd *d = *state;
    expect_refused(d, 1, "relative/dir", "absolute");
    expect_refused(d, 2, "/", "system path");
    expect_refused(d, 3, "/proc", "system path");
    expect_refused(d, 4, "/sys/kernel", "system path");
    expect_refused(d, 5, "/dev/shm", "system path");
    expect_refused(d, 6, "/work/../proc", "..");
    expect_refused(d, 7, "/work/./x", "'.'");
    expect_refused(d, 8, "/work//x", "empty");
    char msg[256];
    assert_int_equal(volume(d, 9, MOUNT, 0, "/a\0b", 4, msg, sizeof(msg)), EINVAL);
    assert_non_null(strstr(msg, "NUL"));
    assert_int_equal(volume(d, 10, MOUNT, 0, "", 0, msg, sizeof(msg)), EINVAL);
    /* /proc/x and /work/../proc/x were never made. */
    assert_int_equal(access("/work/../proc/x", F_OK), -1);
}

static void test_slots_and_ops(void **state)
{
    struct gd *d = *state;
    char msg[256], dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/mnt", d->tmpdir);
    assert_int_equal(volume(d, 1, MOUNT, 4, dir, strlen(dir), msg, sizeof(msg)), EINVAL);
    assert_non_null(strstr(msg, "slot 4"));
    assert_int_equal(volume(d, 2, MOUNT, 3, dir, strlen(dir), msg, sizeof(msg)), ENODEV);
    assert_non_null(strstr(msg, "airlock-vol3"));
    assert_int_equal(access(dir, F_OK), -1); /* nothing made for a missing disk */
    assert_int_equal(volume(d, 3, 99, 0, NULL, 0, msg, sizeof(msg)), EINVAL);
    static const Airlock__Guest__V1__VolumeOp ops[] = {
        AIRLOCK__GUEST__V1__VOLUME_OP__VOLUME_OP_SYNC,
        AIRLOCK__GUEST__V1__VOLUME_OP__VOLUME_OP_FREEZE,
        AIRLOCK__GUEST__V1__VOLUME_OP__VOLUME_OP_THAW,
        AIRLOCK__GUEST__V1__VOLUME_OP__VOLUME_OP_GROW,
    };
    for (uint32_t i = 0; i < 4; i++) {
        assert_int_equal(volume(d, 10 + i, ops[i], 1, NULL, 0, msg, sizeof(msg)), ENOENT);
        assert_non_null(strstr(msg, "slot 1: nothing mounted"));
    }
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, gd_setup, gd_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_paths_refused),
        T(test_slots_and_ops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
