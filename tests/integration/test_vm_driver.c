/* The VM driver against real QEMU (TCG here): build or reuse the guest
 * image, boot it, drive it over QMP, stop it, and see an unexpected exit
 * reported with the console tail. Every test kills only the QEMU it started
 * (by pid, through vm_free) and removes its run directory, also on failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "image.h"
#include "initramfs.h"
#include "vm.h"

#define BOOT_TIMEOUT_MS 60000
#define STUB_MARKER "STUB_GUESTD_UP"

static struct guest_image image;
static enum vm_accel accel;
static bool using_stub;
static char stub_dir[64];

struct vm_test {
    char run_dir[64];
    char disk[128];
    struct vm *vm;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int exits;
    int exit_status;
    char exit_reason[8192];
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *image_cache_dir(void)
{
    const char *d = getenv("AIRLOCK_TEST_IMAGE_DIR");
    return d && *d ? d : "/var/cache/airlock/images";
}

/* Any static binary can be PID 1 for a boot test: this one says hello. */
static int build_stub_guestd(char *path, size_t pathlen)
{
    static const char source[] = "#include <fcntl.h>\n#include <unistd.h>\n"
                                 "int main(void) {\n"
                                 "    int fd = open(\"/dev/console\", O_WRONLY);\n"
                                 "    if (fd >= 0 && write(fd, \"" STUB_MARKER "\\n\", 15) < 0)\n"
                                 "        return 1;\n"
                                 "    for (;;) pause();\n"
                                 "}\n";
    char src[128], err[2048];
    snprintf(stub_dir, sizeof(stub_dir), "/tmp/airlock-stub-guestd.XXXXXX");
    if (!mkdtemp(stub_dir))
        return -1;
    snprintf(src, sizeof(src), "%s/stub.c", stub_dir);
    snprintf(path, pathlen, "%s/airlock-guestd-stub", stub_dir);
    const char *cc[] = { "cc", "-static", "-O2", "-o", path, src, NULL };
    if (fs_write_file_atomic(src, source, sizeof(source) - 1, 0644, err, sizeof(err)) < 0 ||
        run_command(cc, NULL, NULL, err, sizeof(err)) < 0) {
        fprintf(stderr, "stub guestd: %s\n", err);
        return -1;
    }
    return 0;
}

static int group_setup(void **state)
{
    (void)state;
    char guestd[PATH_MAX] = "";
#ifdef AIRLOCK_GUESTD_BIN
    if (access(AIRLOCK_GUESTD_BIN, X_OK) == 0)
        snprintf(guestd, sizeof(guestd), "%s", AIRLOCK_GUESTD_BIN);
#endif
    if (!guestd[0]) {
        if (build_stub_guestd(guestd, sizeof(guestd)) < 0)
            return -1;
        using_stub = true;
    }
    fprintf(stderr, "guest daemon: %s%s\n", guestd, using_stub ? " (stub)" : "");
    struct image_build_options opts = { .cache_dir = image_cache_dir(),
                                        .guestd_path = guestd,
                                        .progress = stderr };
    char err[4096];
    if (guest_image_ensure(&opts, &image, err, sizeof(err)) < 0) {
        fprintf(stderr, "image: %s\n", err);
        return -1;
    }
    double t0 = now_s();
    accel = vm_accel_probe(VM_ACCEL_AUTO, NULL, NULL, image.kernel, image.initrd, image_cache_dir());
    fprintf(stderr, "accelerator: %s (decided in %.2f s)\n", vm_accel_name(accel), now_s() - t0);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    guest_image_release(&image);
    if (stub_dir[0])
        fs_remove_tree(stub_dir, NULL, 0);
    return 0;
}

static int test_setup(void **state)
{
    struct vm_test *t = calloc(1, sizeof(*t));
    char err[512];
    snprintf(t->run_dir, sizeof(t->run_dir), "/tmp/airlock-vmtest.XXXXXX");
    if (!t || !mkdtemp(t->run_dir))
        return -1;
    snprintf(t->disk, sizeof(t->disk), "%s/disk.ext4", t->run_dir);
    if (fs_copy_file(image.rootfs, t->disk, 0600, err, sizeof(err)) < 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->cond, NULL);
    *state = t;
    return 0;
}

static int test_teardown(void **state)
{
    struct vm_test *t = *state;
    vm_free(t->vm); /* kills our QEMU if a failed assertion left it running */
    fs_remove_tree(t->run_dir, NULL, 0);
    pthread_cond_destroy(&t->cond);
    pthread_mutex_destroy(&t->lock);
    free(t);
    return 0;
}

static void record_exit(void *arg, int wait_status, const char *reason)
{
    struct vm_test *t = arg;
    pthread_mutex_lock(&t->lock);
    t->exits++;
    t->exit_status = wait_status;
    snprintf(t->exit_reason, sizeof(t->exit_reason), "%s", reason);
    pthread_cond_broadcast(&t->cond);
    pthread_mutex_unlock(&t->lock);
}

static struct vm_config config_for(struct vm_test *t)
{
    return (struct vm_config){ .accel = accel,
                               .kernel = image.kernel,
                               .initrd = image.initrd,
                               .disk = t->disk,
                               .vcpus = 1,
                               .memory_mb = 512,
                               .run_dir = t->run_dir };
}

/* Polls the console log for marker; fails the test after the timeout. */
static void wait_for_console(struct vm_test *t, const char *marker)
{
    char *text = NULL;
    for (int waited = 0; waited < BOOT_TIMEOUT_MS; waited += 20) {
        free(text);
        text = NULL;
        if (fs_read_file(vm_console_log(t->vm), 1 << 20, &text, NULL, NULL, 0) == 0 &&
            strstr(text, marker)) {
            free(text);
            return;
        }
        usleep(20 * 1000);
    }
    fail_msg("no '%s' on the console within %d ms; console:\n%s", marker, BOOT_TIMEOUT_MS,
             text ? text : "(unreadable)");
}

static void boot(struct vm_test *t)
{
    char err[4096];
    struct vm_config cfg = config_for(t);
    double t0 = now_s();
    if (vm_start(&cfg, record_exit, t, &t->vm, err, sizeof(err)) < 0)
        fail_msg("vm_start: %s", err);
    double qmp_ready = now_s() - t0;
    wait_for_console(t, INITRAMFS_HANDOVER_MARKER);
    if (using_stub)
        wait_for_console(t, STUB_MARKER);
    fprintf(stderr, "boot (%s): QMP ready %.2f s, guest daemon started %.2f s\n",
            vm_accel_name(accel), qmp_ready, now_s() - t0);
}

static int count_open_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    while (d && readdir(d))
        n++;
    if (d)
        closedir(d);
    return n;
}

static bool exists(const char *dir, const char *name)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

static void test_boot_qmp_and_stop(void **state)
{
    struct vm_test *t = *state;
    int fds_before = count_open_fds();
    boot(t);
    pid_t pid = vm_pid(t->vm);
    assert_true(exists(t->run_dir, "vm/qmp.sock"));
    assert_true(exists(t->run_dir, "vm/agent.sock"));
    assert_true(exists(t->run_dir, "qemu.pid"));

    char err[1024];
    assert_int_equal(vm_qmp_command(t->vm, "stop", NULL, err, sizeof(err)), 0);
    assert_int_equal(vm_qmp_command(t->vm, "cont", NULL, err, sizeof(err)), 0);
    assert_int_equal(vm_qmp_command(t->vm, "no-such-command", NULL, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "CommandNotFound"));
    assert_int_equal(vm_qmp_command(t->vm, "stop", "[1,2]", err, sizeof(err)), -1);
    assert_int_equal(vm_qmp_command(t->vm, "human-monitor-command",
                                    "{\"command-line\": \"info status\"}", err, sizeof(err)),
                     0);

    double t0 = now_s();
    assert_int_equal(vm_stop(t->vm, 5000), 0);
    fprintf(stderr, "vm_stop took %.2f s\n", now_s() - t0);
    assert_int_equal(vm_stop(t->vm, 5000), 0); /* idempotent */
    assert_int_equal(kill(pid, 0), -1);
    assert_int_equal(errno, ESRCH);
    assert_false(exists(t->run_dir, "vm/qmp.sock"));
    assert_false(exists(t->run_dir, "vm/agent.sock"));
    assert_false(exists(t->run_dir, "qemu.pid"));
    assert_true(exists(t->run_dir, "console.log"));
    assert_int_equal(t->exits, 0); /* a requested stop is not an unexpected exit */
    assert_int_equal(vm_qmp_command(t->vm, "cont", NULL, err, sizeof(err)), -1);
    vm_free(t->vm);
    t->vm = NULL;
    assert_int_equal(count_open_fds(), fds_before);
}

static void test_kill_reports_exit_with_console_tail(void **state)
{
    struct vm_test *t = *state;
    boot(t);
    pid_t pid = vm_pid(t->vm);
    assert_int_equal(kill(pid, SIGKILL), 0);

    pthread_mutex_lock(&t->lock);
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 10;
    while (t->exits == 0 && pthread_cond_timedwait(&t->cond, &t->lock, &deadline) == 0)
        ;
    int exits = t->exits;
    pthread_mutex_unlock(&t->lock);
    assert_int_equal(exits, 1);
    assert_true(WIFSIGNALED(t->exit_status));
    assert_int_equal(WTERMSIG(t->exit_status), SIGKILL);
    assert_non_null(strstr(t->exit_reason, "SIGKILL"));
    assert_non_null(strstr(t->exit_reason, INITRAMFS_HANDOVER_MARKER));
    fprintf(stderr, "exit reason begins: %.60s\n", t->exit_reason);

    assert_int_equal(vm_stop(t->vm, 1000), 0);
    assert_false(exists(t->run_dir, "vm/qmp.sock"));
    assert_int_equal(t->exits, 1);
}

static void test_start_failure_leaves_nothing(void **state)
{
    struct vm_test *t = *state;
    int fds_before = count_open_fds();
    struct vm_config cfg = config_for(t);
    cfg.kernel = "/nonexistent/vmlinuz";
    char err[4096];
    assert_int_equal(vm_start(&cfg, record_exit, t, &t->vm, err, sizeof(err)), -1);
    assert_null(t->vm);
    assert_non_null(strstr(err, "/nonexistent/vmlinuz")); /* QEMU's own words, from qemu.log */
    assert_false(exists(t->run_dir, "vm/qmp.sock"));
    assert_false(exists(t->run_dir, "qemu.pid"));
    assert_int_equal(count_open_fds(), fds_before);
    assert_int_equal(waitpid(-1, NULL, WNOHANG), -1); /* no child left behind */
    assert_int_equal(errno, ECHILD);

    cfg.kernel = image.kernel;
    cfg.qemu_binary = "/nonexistent/qemu";
    assert_int_equal(vm_start(&cfg, record_exit, t, &t->vm, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "QEMU binary /nonexistent/qemu")); /* found before any fork */
    assert_int_equal(t->exits, 0);
    assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
    assert_int_equal(errno, ECHILD);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_boot_qmp_and_stop, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_kill_reports_exit_with_console_tail, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_start_failure_leaves_nothing, test_setup,
                                        test_teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
