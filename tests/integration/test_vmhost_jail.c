/* The jail of every QEMU (vmhost/jail.c, docs/jail.md), checked from the
 * host on real sandboxes of a real vmhost: QEMU's uid, capabilities,
 * no_new_privs, seccomp, namespaces, what its root holds, its limits and
 * cgroup; that the guest still works; that a delete leaves no leaf, claim
 * or file handed out; that a jail which cannot be had fails the create
 * with a message naming why and leaves nothing; and that TCG, no security
 * boundary, needs --allow-tcg. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "itest.h"
#include "itest_assert.h"
#include "itest_group.h"

/* A range of this program's own, two uids wide, so the exhaustion test
 * can use it up (vmhost's default range: vmhost/main.c). */
#define JAIL_UID_BASE 900100000u
#define JAIL_UID_COUNT 2u
#define JAIL_LOCK_DIR "/run/airlock/jail-uids"
/* Small, so a flood passes it many times over quickly. */
#define CONSOLE_MAX_KB 64u

static pid_t qemu_of(struct itest_vmhost *vh, const char *id)
{
    grpc_status_code st;
    Airlock__Vmhost__V1__Sandbox *sb =
        itest_sandbox_call(vh, ITEST_METHOD("GetSandbox"), id, &st, NULL);
    assert_int_equal(st, GRPC_STATUS_OK);
    pid_t pid = sb->qemu_pid;
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    assert_true(pid > 1);
    return pid;
}

static char *read_proc(pid_t pid, const char *file)
{
    char path[64], *text = NULL;
    snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
    assert_int_equal(fs_read_file(path, 1 << 20, &text, NULL, NULL, 0), 0);
    return text;
}

/* The value after "Key:" in /proc/PID/status, whitespace collapsed. */
static void status_field(const char *status, const char *key, char *out, size_t outlen)
{
    char want[64];
    snprintf(want, sizeof(want), "\n%s:", key);
    const char *at = strstr(status, want);
    assert_non_null(at);
    at += strlen(want);
    size_t n = 0;
    for (; *at && *at != '\n' && n + 1 < outlen; at++)
        if (*at != ' ' && *at != '\t')
            out[n++] = *at;
        else if (n && out[n - 1] != ' ')
            out[n++] = ' ';
    out[n] = '\0';
}

static ino_t ns_inode(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return st.st_ino;
}

/* uid and gid of QEMU: one of the range, the same in all four slots. */
static unsigned assert_jail_ids(const char *status)
{
    char uid[128], gid[128];
    status_field(status, "Uid", uid, sizeof(uid));
    status_field(status, "Gid", gid, sizeof(gid));
    unsigned r, e, s, f;
    assert_int_equal(sscanf(uid, "%u %u %u %u", &r, &e, &s, &f), 4);
    assert_true(r == e && e == s && s == f);
    assert_true(r >= JAIL_UID_BASE && r < JAIL_UID_BASE + JAIL_UID_COUNT);
    unsigned g;
    assert_int_equal(sscanf(gid, "%u", &g), 1);
    assert_int_equal(g, r);
    return r;
}

static void assert_no_privileges(const char *status)
{
    static const char *const caps[] = { "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb" };
    char v[64];
    for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
        status_field(status, caps[i], v, sizeof(v));
        assert_string_equal(v, "0000000000000000");
    }
    status_field(status, "NoNewPrivs", v, sizeof(v));
    assert_string_equal(v, "1");
    status_field(status, "Seccomp", v, sizeof(v));
    assert_string_equal(v, "2");
    /* The jail's filter (jail_filter.c) and QEMU's own -sandbox on it. */
    status_field(status, "Seccomp_filters", v, sizeof(v));
    assert_int_equal(atoi(v), 2);
}

/* Everything QEMU's root holds: the jail's fixed names and nothing of the
 * host (no /var, /tmp, /root, /home, /run, /sys, no data directory). */
static void assert_root_holds_only_its_own(pid_t pid)
{
    static const char *const allowed[] = { ".",   "..",   "usr",  "lib",  "lib64",
                                            "bin", "etc",  "dev",  "proc", "vm",
                                            "disk", "mem", "jail-preload.so" };
    char root[64];
    snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
    DIR *d = opendir(root);
    assert_non_null(d);
    size_t seen_vm = 0, seen_disk = 0, seen_mem = 0;
    for (struct dirent *e; (e = readdir(d));) {
        bool ok = false;
        for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
            ok |= strcmp(e->d_name, allowed[i]) == 0;
        if (!ok)
            fail_msg("QEMU's root holds %s, which is no part of a jail", e->d_name);
        seen_vm += strcmp(e->d_name, "vm") == 0;
        seen_disk += strcmp(e->d_name, "disk") == 0;
        seen_mem += strcmp(e->d_name, "mem") == 0;
    }
    closedir(d);
    assert_true(seen_vm && seen_disk && seen_mem);
    /* /dev holds only the three harmless nodes under TCG. */
    char dev[96];
    snprintf(dev, sizeof(dev), "/proc/%d/root/dev", (int)pid);
    d = opendir(dev);
    assert_non_null(d);
    size_t nodes = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.') {
            assert_true(strcmp(e->d_name, "null") == 0 || strcmp(e->d_name, "zero") == 0 ||
                        strcmp(e->d_name, "urandom") == 0 || strcmp(e->d_name, "kvm") == 0);
            nodes++;
        }
    closedir(d);
    assert_true(nodes >= 3);
}

/* /mem (the template's memory every sandbox shares) and /usr are mounted
 * read-only inside; what QEMU may write is mounted noexec. */
static void assert_mount_flags(pid_t pid)
{
    char *info = read_proc(pid, "mountinfo");
    bool mem_ro = false, usr_ro = false, disk_noexec = false;
    for (char *line = strtok(info, "\n"); line; line = strtok(NULL, "\n")) {
        char point[256], opts[256];
        if (sscanf(line, "%*s %*s %*s %*s %255s %255s", point, opts) != 2)
            continue;
        bool ro = strncmp(opts, "ro", 2) == 0;
        mem_ro |= strcmp(point, "/mem") == 0 && ro;
        usr_ro |= strcmp(point, "/usr") == 0 && ro;
        disk_noexec |= strcmp(point, "/disk") == 0 && strstr(opts, "noexec");
    }
    free(info);
    assert_true(mem_ro);
    assert_true(usr_ro);
    assert_true(disk_noexec);
}

/* The cgroup path of QEMU in the hierarchy with the memory controller
 * (v1) or the unified one (v2), and its directory under /sys/fs/cgroup. */
static void memory_cgroup_dir(pid_t pid, char *out, size_t outlen)
{
    char *cg = read_proc(pid, "cgroup");
    const char *line = strstr(cg, ":memory:");
    if (line) {
        snprintf(out, outlen, "/sys/fs/cgroup/memory%.*s", (int)strcspn(line + 8, "\n"),
                 line + 8);
    } else {
        line = strstr(cg, "0::");
        assert_non_null(line);
        snprintf(out, outlen, "/sys/fs/cgroup%.*s", (int)strcspn(line + 3, "\n"), line + 3);
    }
    free(cg);
}

static void assert_limits(pid_t pid, unsigned uid, char *leaf, size_t leaflen)
{
    char *limits = read_proc(pid, "limits");
    assert_non_null(strstr(limits, "Max core file size        0"));
    assert_non_null(strstr(limits, "Max open files            1024"));
    free(limits);
    memory_cgroup_dir(pid, leaf, leaflen);
    char want[64];
    snprintf(want, sizeof(want), "/airlock-jails/vm-%u", uid);
    assert_non_null(strstr(leaf, want));
    /* Guest RAM (512 MiB) plus vmhost's default overhead (384 MiB). */
    char path[PATH_MAX + 32], *text = NULL;
    snprintf(path, sizeof(path), "%s/memory.limit_in_bytes", leaf);
    if (access(path, F_OK) < 0)
        snprintf(path, sizeof(path), "%s/memory.max", leaf);
    assert_int_equal(fs_read_file(path, 64, &text, NULL, NULL, 0), 0);
    assert_int_equal(strtoull(text, NULL, 10), 896ull << 20);
    free(text);
}

/* True when nobody holds uid's claim (a running QEMU would). */
static bool uid_claim_free(unsigned uid)
{
    char path[128];
    snprintf(path, sizeof(path), JAIL_LOCK_DIR "/%u", uid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT;
    bool free_now = flock(fd, LOCK_EX | LOCK_NB) == 0;
    close(fd);
    return free_now;
}

static void test_qemu_runs_jailed(void **state)
{
    (void)state;
    char *id = itest_assert_create(&itest_vh);
    pid_t pid = qemu_of(&itest_vh, id);
    char *status = read_proc(pid, "status");
    unsigned uid = assert_jail_ids(status);
    assert_no_privileges(status);
    free(status);

    /* Not dumpable: the files of /proc/PID belong to root, not to the
     * jail's uid (the directory itself keeps the task's owner). */
    char environ_path[64];
    snprintf(environ_path, sizeof(environ_path), "/proc/%d/environ", (int)pid);
    struct stat st;
    assert_int_equal(stat(environ_path, &st), 0);
    assert_int_equal(st.st_uid, 0);

    static const char *const own_ns[] = { "mnt", "pid", "ipc", "uts" };
    for (size_t i = 0; i < sizeof(own_ns) / sizeof(own_ns[0]); i++) {
        char theirs[64], ours[64];
        snprintf(theirs, sizeof(theirs), "/proc/%d/ns/%s", (int)pid, own_ns[i]);
        snprintf(ours, sizeof(ours), "/proc/self/ns/%s", own_ns[i]);
        assert_true(ns_inode(theirs) != ns_inode(ours));
    }
    char net[64], sandbox_ns[128];
    snprintf(net, sizeof(net), "/proc/%d/ns/net", (int)pid);
    snprintf(sandbox_ns, sizeof(sandbox_ns), "/run/netns/airlock-%s", id);
    assert_int_equal(ns_inode(net), ns_inode(sandbox_ns));

    assert_root_holds_only_its_own(pid);
    assert_mount_flags(pid);
    char leaf[PATH_MAX];
    assert_limits(pid, uid, leaf, sizeof(leaf));
    assert_false(uid_claim_free(uid));

    /* The guest works as ever through the jail's sockets. */
    char *out = itest_assert_sh(&itest_vh, id, "echo jailed-ok");
    assert_string_equal(out, "jailed-ok\n");
    free(out);

    assert_int_equal(itest_delete_sandbox(&itest_vh, id), GRPC_STATUS_OK);
    assert_int_equal(access(leaf, F_OK), -1);
    assert_true(uid_claim_free(uid));
    free(id);
}

/* The template's memory file stays root's and read-only to every jail: a
 * QEMU that could write it would change every sandbox restored from it. */
static void test_template_memory_stays_roots(void **state)
{
    (void)state;
    char *id = itest_assert_create(&itest_vh);
    pid_t pid = qemu_of(&itest_vh, id);
    char mem[96];
    snprintf(mem, sizeof(mem), "/proc/%d/root/mem", (int)pid);
    struct stat st;
    assert_int_equal(stat(mem, &st), 0);
    assert_int_equal(st.st_uid, 0);
    assert_int_equal(st.st_mode & 0222, 0200); /* owner (root) only */
    /* QEMU's open file of it is read-only (the preload's doing). */
    char fds[64];
    snprintf(fds, sizeof(fds), "/proc/%d/fd", (int)pid);
    DIR *d = opendir(fds);
    assert_non_null(d);
    bool found = false;
    for (struct dirent *e; (e = readdir(d));) {
        char link[320], target[PATH_MAX], fdinfo[320], *info = NULL;
        snprintf(link, sizeof(link), "%s/%s", fds, e->d_name);
        ssize_t n = readlink(link, target, sizeof(target) - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        if (strcmp(target, "/mem") != 0)
            continue;
        snprintf(fdinfo, sizeof(fdinfo), "/proc/%d/fdinfo/%s", (int)pid, e->d_name);
        assert_int_equal(fs_read_file(fdinfo, 4096, &info, NULL, NULL, 0), 0);
        unsigned flags = 0;
        const char *f = strstr(info, "flags:");
        assert_non_null(f);
        assert_int_equal(sscanf(f + 6, "%o", &flags), 1);
        assert_int_equal(flags & O_ACCMODE, O_RDONLY);
        free(info);
        found = true;
    }
    closedir(d);
    assert_true(found);
    assert_int_equal(itest_delete_sandbox(&itest_vh, id), GRPC_STATUS_OK);
    free(id);
}

/* A node whose uid range is used up refuses the next create with the
 * reason and leaves no directory, namespace or QEMU behind. */
static void test_uid_range_exhausted_fails_cleanly(void **state)
{
    (void)state;
    char *first = itest_assert_create(&itest_vh);
    char *second = itest_assert_create(&itest_vh);
    grpc_status_code st;
    char *details = NULL;
    char *third = itest_create_sandbox(&itest_vh, &st, &details);
    assert_null(third);
    assert_int_not_equal(st, GRPC_STATUS_OK);
    assert_non_null(details);
    assert_non_null(strstr(details, "every uid of the range"));
    free(details);
    assert_int_equal(itest_count_qemus(itest_vh.data_dir), 2);
    Airlock__Vmhost__V1__ListSandboxesResponse *list = itest_list_sandboxes(&itest_vh);
    assert_non_null(list);
    assert_int_equal(list->n_sandboxes, 2);
    protobuf_c_message_free_unpacked(&list->base, NULL);
    assert_int_equal(itest_delete_sandbox(&itest_vh, first), GRPC_STATUS_OK);
    free(first);
    /* The uid is free again: the next create gets it. */
    third = itest_assert_create(&itest_vh);
    assert_int_equal(itest_delete_sandbox(&itest_vh, third), GRPC_STATUS_OK);
    assert_int_equal(itest_delete_sandbox(&itest_vh, second), GRPC_STATUS_OK);
    free(third);
    free(second);
}

/* Without working KVM a node takes no guests unless told to: TCG is no
 * security boundary. An explicit --accel tcg is refused the same way, the
 * message names the way out, and the refused start leaves no store mount. */
static void test_tcg_refused_without_allow_tcg(void **state)
{
    (void)state;
    char data_dir[] = "/tmp/airlock-itest-tcg-XXXXXX";
    assert_non_null(mkdtemp(data_dir));
    char listen[PATH_MAX];
    snprintf(listen, sizeof(listen), "unix:%s/vmhost.sock", data_dir);
    const char *const argv[] = { AIRLOCK_VMHOST_BIN, "serve", "--data-dir", data_dir,
                                 "--image-dir", itest_image_dir(), "--listen", listen,
                                 "--guestd", AIRLOCK_GUESTD_BIN, "--accel", "tcg", NULL };
    char *output = NULL, err[4096];
    assert_int_equal(run_command(argv, NULL, &output, err, sizeof(err)), -1);
    assert_non_null(output);
    assert_non_null(strstr(output, "TCG is not a security boundary"));
    assert_non_null(strstr(output, "--allow-tcg"));
    free(output);
    char *mounts = NULL;
    assert_int_equal(fs_read_file("/proc/self/mounts", 1 << 20, &mounts, NULL, NULL, 0), 0);
    assert_null(strstr(mounts, data_dir));
    free(mounts);
    assert_int_equal(fs_remove_tree(data_dir, err, sizeof(err)), 0);
}

/* A guest that floods its console costs the node the console's bound and
 * no more: vmhost keeps the newest bytes (QEMU writes no file itself). */
static void test_console_flood_is_bounded(void **state)
{
    (void)state;
    char *id = itest_assert_create(&itest_vh);
    char *out = itest_assert_sh(&itest_vh, id,
                                "head -c 400000 /dev/zero | tr '\\0' x > /dev/ttyS0; "
                                "echo console-flood-end > /dev/ttyS0; echo done");
    assert_string_equal(out, "done\n");
    free(out);
    char path[PATH_MAX];
    assert_int_equal(fs_path(path, sizeof(path), "%s/store/sandboxes/%s/console.log",
                             itest_vh.data_dir, id), 0);
    char *text = NULL;
    size_t len = 0;
    bool ended = false;
    for (int i = 0; i < 100 && !ended; i++) { /* vmhost writes it as it reads */
        free(text);
        text = NULL;
        assert_int_equal(fs_read_file(path, 1 << 20, &text, &len, NULL, 0), 0);
        ended = strstr(text, "console-flood-end") != NULL;
        if (!ended)
            usleep(100 * 1000);
    }
    assert_true(ended);
    assert_true(len <= CONSOLE_MAX_KB * 1024);
    assert_non_null(strstr(text, "xxxxxxxx"));
    free(text);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_uid, 0); /* vmhost's file, not the jail's */
    assert_int_equal(itest_delete_sandbox(&itest_vh, id), GRPC_STATUS_OK);
    free(id);
}

static int setup(void **state)
{
    (void)state;
    char base[32], count[16];
    snprintf(base, sizeof(base), "%u", JAIL_UID_BASE);
    snprintf(count, sizeof(count), "%u", JAIL_UID_COUNT);
    char console_kb[16];
    snprintf(console_kb, sizeof(console_kb), "%u", CONSOLE_MAX_KB);
    const char *const args[] = { "--jail-uid-base", base, "--jail-uid-count", count,
                                 "--console-log-max-kb", console_kb, NULL };
    return itest_vmhost_start(&itest_vh, args);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_qemu_runs_jailed),
        cmocka_unit_test(test_template_memory_stays_roots),
        cmocka_unit_test(test_uid_range_exhausted_fails_cleanly),
        cmocka_unit_test(test_tcg_refused_without_allow_tcg),
        cmocka_unit_test(test_console_flood_is_bounded),
    };
    return cmocka_run_group_tests(tests, setup, itest_group_teardown);
}
