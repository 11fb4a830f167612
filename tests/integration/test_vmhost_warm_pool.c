/* The warm pool on a real vmhost started with --warm-pool 2: creates are
 * served from the pool (from_pool) with or without an id of their own —
 * a pooled VM takes the id asked for, its directory and network namespace
 * renamed —, the pool refills in the background, pooled sandboxes still
 * get their own entropy, uuid and hostname, a renamed one is re-adopted by
 * a vmhost restarted after kill -9 (it is recognized by its working
 * directory, which moved with the rename) while the old pool's VMs are
 * stopped, bad or taken ids waste no pooled VM, a rename that cannot
 * happen leaves nothing behind, pooled QEMUs run at a lower CPU priority
 * until handed out, and GetNodeStats reports all of it. With
 * --warm-pool-spares, a create that finds no ready VM restores into a QEMU
 * the pool started ahead, and falls back to its own when that QEMU died.
 * The group teardown fails if vmhost leaves a VM, mount or loop device
 * behind (pooled VMs and spares included). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fsutil.h"
#include "itest.h"
#include "itest_assert.h"
#include "itest_group.h"
#include "proc.h"
#include "vm.h"
#include "warm_pool.h"

#define POOL_SIZE 2
#define POOL_FILL_TIMEOUT_MS 180000
#define STATE(s) AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_##s

static const char *const pool_args[] = { "--warm-pool", "2", NULL };

static int group_setup(void **state)
{
    (void)state;
    return itest_vmhost_start(&itest_vh, pool_args);
}

static int group_teardown(void **state)
{
    /* test_rename_onto_taken_namespace's, should it have failed midway */
    int ignored = system("ip netns delete airlock-taken-namespace 2>/dev/null");
    (void)ignored;
    return itest_group_teardown(state);
}

static Airlock__Vmhost__V1__NodeStats *node_stats(void)
{
    Airlock__Vmhost__V1__NodeStats *st = itest_node_stats(&itest_vh);
    assert_non_null(st);
    return st;
}

static unsigned long long pool_taken(void)
{
    Airlock__Vmhost__V1__NodeStats *st = node_stats();
    unsigned long long taken = st->pool_taken;
    protobuf_c_message_free_unpacked(&st->base, NULL);
    return taken;
}

static void wait_pool_full(void)
{
    assert_true(itest_wait_pool_ready(&itest_vh, POOL_SIZE, POOL_FILL_TIMEOUT_MS));
}

static void sandbox_dir(const char *id, char *out, size_t outlen)
{
    assert_int_equal(fs_path(out, outlen, "%s/store/sandboxes/%s", itest_vh.data_dir, id), 0);
}

/* Every sandbox directory (pooled VMs included) has its namespace under
 * its own name; returns how many there are. */
static size_t dirs_with_own_netns(void)
{
    char dir[PATH_MAX];
    assert_int_equal(fs_path(dir, sizeof(dir), "%s/store/sandboxes", itest_vh.data_dir), 0);
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (!itest_netns_exists(e->d_name))
            fail_msg("sandbox directory %s has no namespace airlock-%s", e->d_name, e->d_name);
        n++;
    }
    closedir(d);
    return n;
}

/* Every thread of QEMU pid runs at CPU niceness want. */
static void expect_qemu_nice(pid_t pid, int want)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    assert_non_null(d);
    size_t threads = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        errno = 0;
        int nice = getpriority(PRIO_PROCESS, (id_t)atoi(e->d_name));
        if (errno == ESRCH)
            continue; /* ended meanwhile */
        if (nice != want)
            fail_msg("QEMU %d thread %s runs at niceness %d, not %d", (int)pid, e->d_name, nice,
                     want);
        threads++;
    }
    closedir(d);
    assert_true(threads > 0);
}

/* vmhost's own niceness (the test may run niced: QEMUs are relative to it). */
static int vmhost_nice(void)
{
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, (id_t)itest_vh.pid);
    assert_int_equal(errno, 0);
    return nice;
}

/* The QEMU of sandbox id (its working directory is the sandbox's vm/). */
static pid_t sandbox_qemu(const char *id)
{
    char dir[PATH_MAX];
    pid_t pid = 0;
    sandbox_dir(id, dir, sizeof(dir));
    assert_int_equal(itest_find_qemus(dir, &pid, 1), 1);
    return pid;
}

/* "random-hex uuid hostname" of a guest, malloc'd. */
static char *guest_identity(const char *id)
{
    return itest_assert_sh(&itest_vh, id,
                           "head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \\n'; echo;"
                           "cat /proc/sys/kernel/random/uuid; hostname;"
                           /* the CA slot (marker once), the warm-up's
                            * stand-in CA gone (vmhost/sandbox_guest_init.h) */
                           "grep -c -e 'airlock sandbox CA' -e YWlybG9jayB3YXJtLXVw "
                           "/etc/ssl/certs/ca-certificates.crt");
}

static char *create_named(const char *id, grpc_status_code *st, char **details)
{
    Airlock__Vmhost__V1__CreateSandboxRequest req = AIRLOCK__VMHOST__V1__CREATE_SANDBOX_REQUEST__INIT;
    req.id = (char *)id;
    return itest_create_sandbox_with(&itest_vh, &req, st, details);
}

static void delete_and_check_gone(const char *id)
{
    char dir[PATH_MAX];
    sandbox_dir(id, dir, sizeof(dir));
    assert_int_equal(itest_delete_sandbox(&itest_vh, id), GRPC_STATUS_OK);
    assert_int_equal(access(dir, F_OK), -1);
    assert_false(itest_netns_exists(id));
}

static void test_pool_fills_and_reports(void **state)
{
    (void)state;
    wait_pool_full();
    Airlock__Vmhost__V1__NodeStats *st = node_stats();
    assert_int_equal(st->pool_target, POOL_SIZE);
    assert_int_equal(st->sandboxes, 0); /* pooled VMs are not sandboxes yet */
    assert_int_equal(st->free_slots, st->max_sandboxes);
    protobuf_c_message_free_unpacked(&st->base, NULL);
    assert_int_equal(itest_count_qemus(itest_vh.data_dir), POOL_SIZE);
    assert_int_equal(dirs_with_own_netns(), POOL_SIZE);
    /* Filled in the background: at a lower CPU priority until handed out. */
    pid_t pooled[POOL_SIZE];
    assert_int_equal(itest_find_qemus(itest_vh.data_dir, pooled, POOL_SIZE), POOL_SIZE);
    for (int i = 0; i < POOL_SIZE; i++)
        expect_qemu_nice(pooled[i], vmhost_nice() + WARM_POOL_NICE);
}

static void test_creates_come_from_pool_and_diverge(void **state)
{
    (void)state;
    wait_pool_full();
    unsigned long long taken = pool_taken();
    char *a = itest_assert_create(&itest_vh);
    char *b = itest_assert_create(&itest_vh);
    char *ids[] = { a, b };
    for (int i = 0; i < 2; i++) {
        Airlock__Vmhost__V1__Sandbox *sb = itest_assert_get(&itest_vh, ids[i]);
        assert_true(sb->from_pool);
        assert_true(sb->restored);
        assert_int_equal(sb->state, STATE(RUNNING));
        protobuf_c_message_free_unpacked(&sb->base, NULL);
        expect_qemu_nice(sandbox_qemu(ids[i]), vmhost_nice()); /* handed out: like any */
    }
    Airlock__Vmhost__V1__NodeStats *st = node_stats();
    assert_int_equal(st->pool_taken, taken + 2);
    assert_int_equal(st->sandboxes, 2);
    protobuf_c_message_free_unpacked(&st->base, NULL);

    /* Paused together in the pool (and warmed up with throwaway values),
     * reseeded and named when handed out. */
    char *ga = guest_identity(a);
    char *gb = guest_identity(b);
    char ra[80], ua[40], ha[80], rb[80], ub[40], hb[80];
    int ca_lines_a = -1, ca_lines_b = -1;
    assert_int_equal(sscanf(ga, "%79s %39s %79s %d", ra, ua, ha, &ca_lines_a), 4);
    assert_int_equal(sscanf(gb, "%79s %39s %79s %d", rb, ub, hb, &ca_lines_b), 4);
    assert_int_equal(ca_lines_a, 1);
    assert_int_equal(ca_lines_b, 1);
    assert_int_equal(strlen(ra), 32);
    assert_string_not_equal(ra, rb);
    assert_string_not_equal(ua, ub);
    assert_string_equal(ha, a);
    assert_string_equal(hb, b);

    /* The pool refills behind the creates. */
    wait_pool_full();
    delete_and_check_gone(a);
    delete_and_check_gone(b);
    assert_int_equal(itest_count_qemus(itest_vh.data_dir), POOL_SIZE);
    free(ga);
    free(gb);
    free(a);
    free(b);
}

/* The scheduler always names the id: such creates use the pool too. */
static void test_named_create_comes_from_pool(void **state)
{
    (void)state;
    wait_pool_full();
    unsigned long long taken = pool_taken();
    const char *id = "named-sandbox";
    char *got = create_named(id, NULL, NULL);
    assert_non_null(got);
    assert_string_equal(got, id);
    Airlock__Vmhost__V1__Sandbox *sb = itest_assert_get(&itest_vh, id);
    assert_true(sb->from_pool);
    assert_true(sb->restored);
    assert_int_equal(sb->state, STATE(RUNNING));
    pid_t qemu = sb->qemu_pid;
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    assert_int_equal(pool_taken(), taken + 1);

    /* Directory and namespace carry the new id; QEMU runs in the renamed
     * directory; the guest has the new hostname and works. */
    char dir[PATH_MAX], disk[PATH_MAX];
    sandbox_dir(id, dir, sizeof(dir));
    assert_int_equal(fs_path(disk, sizeof(disk), "%s/disk.ext4", dir), 0);
    assert_int_equal(access(disk, F_OK), 0);
    assert_true(itest_netns_exists(id));
    assert_true(vm_runs_in(qemu, dir));
    char *host = itest_assert_sh(&itest_vh, id, "hostname; echo written > /root/f; cat /root/f");
    assert_string_equal(host, "named-sandbox\nwritten\n");
    free(host);
    /* No namespace was left under the pooled VM's old name. */
    wait_pool_full();
    assert_int_equal(dirs_with_own_netns(), POOL_SIZE + 1);

    /* The same id again is refused before a pooled VM is taken. */
    grpc_status_code st;
    char *details = NULL;
    assert_null(create_named(id, &st, &details));
    assert_int_equal(st, GRPC_STATUS_ALREADY_EXISTS);
    assert_non_null(strstr(details, id));
    free(details);
    assert_int_equal(pool_taken(), taken + 1);

    /* Suspended and resumed under its new name: QEMU opens its disk again
     * at the end of the migration to a file, from the renamed directory. */
    sb = itest_sandbox_call(&itest_vh, ITEST_METHOD("SuspendSandbox"), id, &st, NULL);
    assert_int_equal(st, GRPC_STATUS_OK);
    assert_int_equal(sb->state, STATE(SUSPENDED));
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    sb = itest_sandbox_call(&itest_vh, ITEST_METHOD("ResumeSandbox"), id, &st, NULL);
    assert_int_equal(st, GRPC_STATUS_OK);
    assert_int_equal(sb->state, STATE(RUNNING));
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    host = itest_assert_sh(&itest_vh, id, "cat /root/f");
    assert_string_equal(host, "written\n");
    free(host);

    delete_and_check_gone(id);
    assert_int_equal(itest_count_qemus(itest_vh.data_dir), POOL_SIZE);
    free(got);
}

static void test_bad_id_takes_nothing(void **state)
{
    (void)state;
    wait_pool_full();
    unsigned long long taken = pool_taken();
    grpc_status_code st;
    char *details = NULL;
    assert_null(create_named("Not/An-Id", &st, &details));
    assert_int_equal(st, GRPC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(details, "id"));
    free(details);
    assert_int_equal(pool_taken(), taken);
    assert_int_equal(itest_count_qemus(itest_vh.data_dir), POOL_SIZE);
}

/* A namespace of the id's name that vmhost did not make: the hand-out's
 * rename is undone, the restore that follows fails the same way, the
 * answer names the namespace, and nothing is left (nor the stranger
 * touched). */
static void test_rename_onto_taken_namespace_leaks_nothing(void **state)
{
    (void)state;
    wait_pool_full();
    const char *id = "taken-namespace";
    assert_int_equal(system("ip netns add airlock-taken-namespace"), 0);
    grpc_status_code st;
    char *details = NULL;
    assert_null(create_named(id, &st, &details));
    assert_int_equal(st, GRPC_STATUS_INTERNAL);
    assert_non_null(strstr(details, "airlock-taken-namespace"));
    free(details);
    char dir[PATH_MAX];
    sandbox_dir(id, dir, sizeof(dir));
    assert_int_equal(access(dir, F_OK), -1);
    assert_true(itest_netns_exists(id));
    assert_int_equal(system("ip netns delete airlock-taken-namespace"), 0);
    wait_pool_full();
    assert_int_equal(itest_count_qemus(itest_vh.data_dir), POOL_SIZE);
    assert_int_equal(dirs_with_own_netns(), POOL_SIZE);
}

/* kill -9 after a renamed hand-out: the next vmhost adopts the renamed VM
 * (same QEMU) and stops the old pool's VMs, which have no record. */
static void test_renamed_sandbox_survives_vmhost_crash(void **state)
{
    (void)state;
    wait_pool_full();
    const char *id = "renamed-then-crash";
    char *got = create_named(id, NULL, NULL);
    assert_non_null(got);
    Airlock__Vmhost__V1__Sandbox *sb = itest_assert_get(&itest_vh, id);
    assert_true(sb->from_pool);
    pid_t qemu = sb->qemu_pid;
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    char *before = itest_assert_sh(&itest_vh, id, "cat /proc/sys/kernel/random/boot_id");

    assert_int_equal(itest_vmhost_crash_and_restart_with(&itest_vh, pool_args), 0);
    sb = itest_assert_get(&itest_vh, id);
    assert_int_equal(sb->state, STATE(RUNNING));
    assert_int_equal(sb->qemu_pid, qemu); /* the same VM, adopted */
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    char *after = itest_assert_sh(&itest_vh, id, "cat /proc/sys/kernel/random/boot_id");
    assert_string_equal(after, before);

    /* The new vmhost's pool plus the adopted VM: nothing of the old pool. */
    wait_pool_full();
    assert_int_equal(itest_count_qemus(itest_vh.data_dir), POOL_SIZE + 1);
    assert_int_equal(dirs_with_own_netns(), POOL_SIZE + 1);
    delete_and_check_gone(id);
    free(before);
    free(after);
    free(got);
}

/* How many times vmhost's log (1 MiB read) holds needle. */
static size_t logged(const char *needle)
{
    char *log = NULL;
    size_t len = 0, n = 0;
    assert_int_equal(fs_read_file(itest_vh.log_path, 1 << 20, &log, &len, NULL, 0), 0);
    for (const char *p = log; (p = strstr(p, needle)); p++)
        n++;
    free(log);
    return n;
}

/* The log holds needle n times within the fill timeout. */
static void wait_logged(const char *needle, size_t n)
{
    for (int waited = 0; logged(needle) < n; waited += 100) {
        if (waited > POOL_FILL_TIMEOUT_MS)
            fail_msg("vmhost's log has \"%s\" %zu times, not %zu", needle, logged(needle), n);
        usleep(100 * 1000);
    }
}

/* The n QEMUs under the data directory (the pool's ready VMs and spares). */
static void find_qemus(pid_t *out, size_t n)
{
    assert_int_equal(itest_count_qemus(itest_vh.data_dir), n);
    assert_int_equal(itest_find_qemus(itest_vh.data_dir, out, n), n);
}

/* With --warm-pool-spares, a pool in use keeps a QEMU started ahead
 * (waiting with -incoming defer, niced like pooled VMs): a create that
 * finds no ready VM restores into it, so its QEMU is that process. Spares
 * that died make the create fall back to a QEMU of its own, and the pool
 * starts new ones; nothing is left behind. */
static void test_spare_qemu_serves_create_past_the_pool(void **state)
{
    (void)state;
    static const char *const spare_args[] = { "--warm-pool", "1", "--warm-pool-spares", "1",
                                              NULL };
    assert_int_equal(itest_vmhost_crash_and_restart_with(&itest_vh, spare_args), 0);
    /* The first spare became the ready VM; the second waits. */
    assert_true(itest_wait_pool_ready(&itest_vh, 1, POOL_FILL_TIMEOUT_MS));
    wait_logged("warm pool spare QEMU ready", 2);
    pid_t ahead[2];
    find_qemus(ahead, 2);
    for (int i = 0; i < 2; i++)
        expect_qemu_nice(ahead[i], vmhost_nice() + WARM_POOL_NICE);

    char *pooled = create_named("pooled-first", NULL, NULL);
    assert_non_null(pooled);
    char *past = create_named("past-the-pool", NULL, NULL);
    assert_non_null(past);
    Airlock__Vmhost__V1__Sandbox *a = itest_assert_get(&itest_vh, "pooled-first");
    Airlock__Vmhost__V1__Sandbox *b = itest_assert_get(&itest_vh, "past-the-pool");
    assert_true(a->from_pool);
    assert_false(b->from_pool);
    /* Both QEMUs were started before either create. */
    pid_t qa = sandbox_qemu("pooled-first"), qb = sandbox_qemu("past-the-pool");
    if (!((qa == ahead[0] && qb == ahead[1]) || (qa == ahead[1] && qb == ahead[0])))
        fail_msg("sandboxes' QEMUs %d and %d are not the ones started ahead, %d and %d", (int)qa,
                 (int)qb, (int)ahead[0], (int)ahead[1]);
    expect_qemu_nice(qb, vmhost_nice());
    protobuf_c_message_free_unpacked(&a->base, NULL);
    protobuf_c_message_free_unpacked(&b->base, NULL);
    assert_int_equal(logged("qemu=prestarted us="), 1); /* past-the-pool's create line */
    char *id_a = guest_identity("pooled-first"), *id_b = guest_identity("past-the-pool");
    assert_string_not_equal(id_a, id_b); /* own entropy, uuid and hostname */
    assert_non_null(strstr(id_b, "past-the-pool"));

    /* Both waiting QEMUs die: the create still gets a sandbox. */
    assert_true(itest_wait_pool_ready(&itest_vh, 1, POOL_FILL_TIMEOUT_MS));
    wait_logged("warm pool spare QEMU ready", 4);
    pid_t all[4];
    find_qemus(all, 4);
    for (int i = 0; i < 4; i++)
        if (all[i] != sandbox_qemu("pooled-first") && all[i] != sandbox_qemu("past-the-pool"))
            assert_int_equal(kill(all[i], SIGKILL), 0);
    char *fallback = create_named("after-spares-died", NULL, NULL);
    assert_non_null(fallback);
    free(itest_assert_sh(&itest_vh, "after-spares-died", "true"));
    assert_int_equal(logged("restore into a spare QEMU failed: starting one"), 1);

    delete_and_check_gone("pooled-first");
    delete_and_check_gone("past-the-pool");
    delete_and_check_gone("after-spares-died");
    /* The dead ones gone, the pool and its spare made again. */
    assert_true(itest_wait_pool_ready(&itest_vh, 1, POOL_FILL_TIMEOUT_MS));
    wait_logged("warm pool spare QEMU ready", 6);
    find_qemus(ahead, 2);
    assert_int_equal(dirs_with_own_netns(), 2);
    free(id_a);
    free(id_b);
    free(pooled);
    free(past);
    free(fallback);
}

/* A pool that cannot be held: vmhost refuses to start, naming the value,
 * before it makes anything. */
static void test_pool_memory_below_one_vm_is_refused(void **state)
{
    (void)state;
    static const char *const args[] = { "--warm-pool", "1", "--pool-memory-mib", "256", NULL };
    struct itest_vmhost bad;
    assert_int_equal(itest_vmhost_start(&bad, args), -1);
    char *log = NULL;
    size_t len = 0;
    assert_int_equal(fs_read_file(bad.log_path, 1 << 20, &log, &len, NULL, 0), 0);
    assert_non_null(strstr(log, "--pool-memory-mib 256 is below one VM (512 MiB)"));
    free(log);
    assert_int_equal(itest_vmhost_stop(&bad), 0); /* nothing left to clean */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_fills_and_reports),
        cmocka_unit_test(test_creates_come_from_pool_and_diverge),
        cmocka_unit_test(test_named_create_comes_from_pool),
        cmocka_unit_test(test_bad_id_takes_nothing),
        cmocka_unit_test(test_rename_onto_taken_namespace_leaks_nothing),
        cmocka_unit_test(test_renamed_sandbox_survives_vmhost_crash),
        cmocka_unit_test(test_spare_qemu_serves_create_past_the_pool),
        cmocka_unit_test(test_pool_memory_below_one_vm_is_refused),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
