/* Root in a guest uses up what its VM has (docs/security.md, "Host-side
 * threat model: from the guest"): its disk until ENOSPC and past its end,
 * processes (a fork bomb), memory, every vCPU, and the console through
 * the kernel. The host must bound each: the disk file never grows past
 * its size, QEMU's threads, memory and CPU stay within its jail's cgroup
 * (docs/jail.md), console.log within --console-log-max-kb; vmhost and the
 * witness sandbox answer throughout, and the node is as it was once the
 * target is deleted (escape_guest.h). The plain console flood through
 * /dev/ttyS0 is test_vmhost_jail's (console_flood_is_bounded). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "escape_guest.h"
#include "escape_node.h"
#include "fsutil.h"
#include "itest_group.h"

#define OUT_MAX 4096
/* Small, so the kernel's flood passes it many times over. */
#define CONSOLE_MAX_KB 64u
/* How long a fork bomb or a CPU burn runs while the host watches. */
#define STRESS_MS 5000
#define SAMPLE_MS 200

/* The disk file has the size it was made with and holds no more blocks
 * than that. */
static void assert_disk_bounded(const struct escape_sandbox *sb, off_t size)
{
    struct stat st;
    escape_disk_stat(sb, &st);
    assert_int_equal(st.st_size, size);
    assert_true((unsigned long long)st.st_blocks * 512 <= (unsigned long long)size);
}

/* The guest fills its filesystem (most of it preallocated, the rest with
 * dd's zeros) until ENOSPC. */
static void disk_fill_stops_at_the_disk_size(void **state)
{
    (void)state;
    escape_target_create("disk-fill", NULL);
    struct stat before;
    escape_disk_stat(&escape_target, &before);
    char out[OUT_MAX];
    assert_int_not_equal(escape_sh(&escape_target,
                                   "avail=$(df --output=avail -B1 / | tail -1); "
                                   "fallocate -l $((avail - (64 << 20))) /bulk && "
                                   "dd if=/dev/zero of=/fill bs=1M 2>&1; rc=$?; sync; exit $rc",
                                   out, sizeof(out)), 0);
    assert_non_null(strstr(out, "No space left on device"));
    assert_disk_bounded(&escape_target, before.st_size);
    escape_sh_ok(&escape_target, "rm /bulk /fill && sync", NULL, 0);
    escape_assert_answers(&escape_target, 0);
}

/* Writes at and past the block device's end, with dd and pwrite(2). */
static void writes_past_the_disk_end_fail(void **state)
{
    (void)state;
    struct stat before;
    escape_disk_stat(&escape_shared, &before);
    char out[OUT_MAX];
    escape_sh(&escape_shared,
              "end=$(($(blockdev --getsize64 /dev/vda) / 4096)); "
              "dd if=/dev/zero of=/dev/vda bs=4096 seek=$end count=16 2>&1; "
              "python3 -c \"import os; fd = os.open('/dev/vda', os.O_WRONLY)\n"
              "for off in (2 << 30, 1 << 40, (1 << 63) - 4096):\n"
              "    try: os.pwrite(fd, b'x' * 4096, off); print('written', off)\n"
              "    except OSError as e: print(off, e.strerror)\"",
              out, sizeof(out));
    assert_non_null(strstr(out, "No space left on device"));
    assert_null(strstr(out, "written"));
    assert_disk_bounded(&escape_shared, before.st_size);
    escape_assert_answers(&escape_shared, 0);
}

/* Samples QEMU's threads and its cgroup's tasks for ms; the most of each. */
static void sample_tasks(pid_t qemu, int ms, long long *threads, long long *tasks)
{
    *threads = *tasks = 0;
    for (int64_t end = clock_monotonic_ms() + ms; clock_monotonic_ms() < end;) {
        long long t = escape_proc_status_value(qemu, "Threads");
        long long c = escape_qemu_cgroup_value(qemu, "pids", "pids.current");
        *threads = t > *threads ? t : *threads;
        *tasks = c > *tasks ? c : *tasks;
        usleep(SAMPLE_MS * 1000);
    }
}

/* Processes of the guest are the guest kernel's: QEMU gains no thread. */
static void fork_bomb_stays_in_the_guest(void **state)
{
    (void)state;
    escape_target_create("fork-bomb", NULL);
    pid_t qemu = escape_target.qemu;
    long long limit = escape_qemu_cgroup_value(qemu, "pids", "pids.max");
    assert_true(limit > 0);
    long long idle_threads = escape_proc_status_value(qemu, "Threads");
    escape_sh_detached(&escape_target, "bomb() { bomb | bomb & }; bomb");
    long long threads, tasks;
    sample_tasks(qemu, STRESS_MS, &threads, &tasks);
    fprintf(stderr, "escape: fork bomb: QEMU threads %lld idle, at most %lld; cgroup tasks at "
                    "most %lld of %lld\n", idle_threads, threads, tasks, limit);
    assert_true(tasks <= limit);
    assert_true(threads <= limit);
    escape_assert_contained(&escape_target, 0, ESCAPE_ANSWER_MS, NULL, 0);
}

/* The guest's own OOM killer ends the hog; QEMU's peak RSS stays under its
 * cgroup's limit, which never had to kill. */
static void memory_exhaustion_is_the_guests(void **state)
{
    (void)state;
    escape_target_create("memory", NULL);
    pid_t qemu = escape_target.qemu;
    char out[OUT_MAX];
    int code = escape_sh(&escape_target,
                         "python3 -c \"b = []\nwhile True: b.append(bytearray(16 << 20))\"; "
                         "echo exit=$?; dmesg | grep -q 'Out of memory: Killed process' && "
                         "echo oom-killed",
                         out, sizeof(out));
    assert_int_equal(code, 0);
    assert_string_equal(out, "exit=137\noom-killed\n");
    long long hwm_kb = escape_proc_status_value(qemu, "VmHWM");
    long long limit = escape_qemu_memory_limit(qemu);
    long long kills = escape_qemu_cgroup_field(qemu, "memory", "memory.oom_control", "oom_kill");
    if (kills < 0)
        kills = escape_qemu_cgroup_field(qemu, "memory", "memory.events", "oom_kill");
    fprintf(stderr, "escape: memory: QEMU peak RSS %lld MiB of a %lld MiB limit, %lld OOM kills\n",
            hwm_kb >> 10, limit >> 20, kills);
    assert_true(hwm_kb > 0 && limit > 0);
    assert_true(hwm_kb * 1024 < limit);
    assert_int_equal(kills, 0);
    escape_assert_answers(&escape_target, 0);
}

static long long qemu_cpu_ticks(pid_t qemu)
{
    char path[64], *text = NULL;
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)qemu);
    assert_int_equal(fs_read_file(path, 4096, &text, NULL, NULL, 0), 0);
    const char *after_comm = strrchr(text, ')');
    unsigned long long utime = 0, stime = 0;
    assert_int_equal(sscanf(after_comm + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
                            &utime, &stime), 2);
    free(text);
    return (long long)(utime + stime);
}

/* Both vCPUs of a two-vCPU sandbox spin: the witness still answers. Its
 * QEMU's CPU is bounded by a quota (vCPUs and half a core: on a node of
 * two cores, more than the node has; the scheduler's fairness is what
 * leaves the others their share there). How long the witness's exec takes
 * beside it is make bench's (section exec), never a check here. */
static void cpu_burn_on_every_vcpu(void **state)
{
    (void)state;
    Airlock__Vmhost__V1__CreateSandboxRequest req = AIRLOCK__VMHOST__V1__CREATE_SANDBOX_REQUEST__INIT;
    req.vcpus = 2;
    escape_target_create("cpu-burn", &req);
    pid_t qemu = escape_target.qemu;
    escape_sh_detached(&escape_target,
                       "for i in 1 2; do sh -c 'while :; do :; done' & done; wait");
    long long t0 = qemu_cpu_ticks(qemu);
    int64_t start = clock_monotonic_ms();
    usleep(STRESS_MS * 1000);
    double cores = (double)(qemu_cpu_ticks(qemu) - t0) / sysconf(_SC_CLK_TCK) /
                   ((double)(clock_monotonic_ms() - start) / 1000);
    long long quota = escape_qemu_cgroup_value(qemu, "cpu", "cpu.cfs_quota_us");
    long long period = escape_qemu_cgroup_value(qemu, "cpu", "cpu.cfs_period_us");
    fprintf(stderr, "escape: cpu burn: QEMU used %.2f cores (quota %lld/%lld us)\n", cores,
            quota, period);
    assert_true(quota > 0 && period > 0); /* bounded at all; how much is J7 */
    assert_int_equal(escape_assert_contained(&escape_target, 0, ESCAPE_ANSWER_MS * 4, NULL, 0),
                     ESCAPE_ANSWERS);
}

/* The kernel floods the console: its log level opened to everything, the
 * /dev/kmsg rate limit switched off, 450 KiB of messages at KERN_EMERG. */
static void kernel_console_flood_is_bounded(void **state)
{
    (void)state;
    escape_target_create("kmsg-flood", NULL);
    escape_sh_ok(&escape_target,
                 "echo on > /proc/sys/kernel/printk_devkmsg; dmesg -n 8; "
                 "python3 -c \"f = open('/dev/kmsg', 'w')\n"
                 "for i in range(500): f.write('<0>' + 'k' * 900 + '\\n'); f.flush()\"; "
                 "echo '<0>kmsg-flood-end' > /dev/kmsg",
                 NULL, 0);
    assert_true(escape_console_wait(&escape_target, "kmsg-flood-end", 60000));
    char path[PATH_MAX];
    escape_sandbox_path(&escape_target, "console.log", path, sizeof(path));
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    fprintf(stderr, "escape: console.log after the kernel's flood: %lld bytes\n",
            (long long)st.st_size);
    assert_true(st.st_size <= (off_t)CONSOLE_MAX_KB * 1024);
    assert_int_equal(st.st_uid, 0); /* vmhost's file, not the jail's */
    escape_assert_answers(&escape_target, 0);
}

static int group_setup(void **state)
{
    (void)state;
    char kb[16];
    snprintf(kb, sizeof(kb), "%u", CONSOLE_MAX_KB);
    const char *const args[] = { "--console-log-max-kb", kb, NULL };
    return escape_guest_start(args, true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        ESCAPE_ATTEMPT(writes_past_the_disk_end_fail),
        ESCAPE_ATTEMPT(disk_fill_stops_at_the_disk_size),
        ESCAPE_ATTEMPT(fork_bomb_stays_in_the_guest),
        ESCAPE_ATTEMPT(memory_exhaustion_is_the_guests),
        ESCAPE_ATTEMPT(cpu_burn_on_every_vcpu),
        ESCAPE_ATTEMPT(kernel_console_flood_is_bounded),
    };
    return cmocka_run_group_tests(tests, group_setup, escape_guest_group_teardown);
}
