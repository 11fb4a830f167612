/* Taking over QEMU processes that an earlier vmhost started (it was killed,
 * or stopped without suspending them): QEMU is the listening side of both
 * its QMP socket and the guest channel's socket, so a new vmhost simply
 * connects again. It is not our child, so its end is watched through a
 * pidfd (exit status unknown) and it is signalled through the same pidfd,
 * never by a pid that may have been reused. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <unistd.h>

#include "clock.h"
#include "fsutil.h"
#include "log.h"
#include "proc.h"
#include "vm_internal.h"

#define VM_ADOPT_QMP_TIMEOUT_MS 10000
#define VM_ADOPT_QUERY_TIMEOUT_MS 10000
#define VM_STRAY_KILL_WAIT_MS 5000
#define VM_STRAYS_MAX 16

/* A QEMU of run_dir runs in run_dir/vm (vm.c starts it there): its
 * working directory says so even after the directory was renamed, which
 * its command line would not (a pooled VM handed out under another id). */
bool vm_runs_in(pid_t pid, const char *run_dir)
{
    char dir[PATH_MAX];
    return fs_path(dir, sizeof(dir), "%s/vm", run_dir) == 0 && proc_cwd_is(pid, dir);
}

bool vm_process_is(pid_t pid, unsigned long long start_time, const char *run_dir)
{
    unsigned long long t;
    return pid > 1 && proc_start_time(pid, &t) == 0 && t == start_time &&
           proc_cmdline_matches(pid, "qemu-system", NULL) && vm_runs_in(pid, run_dir);
}

int vm_start_time(const struct vm *vm, unsigned long long *out)
{
    return proc_start_time(vm->pid, out);
}

static void *monitor_adopted(void *arg)
{
    struct vm *vm = arg;
    struct pollfd p = { .fd = vm->pidfd, .events = POLLIN };
    while (poll(&p, 1, -1) < 0 && errno == EINTR)
        ;
    pthread_mutex_lock(&vm->lock);
    vm_exit_seen(vm, 0);
    return NULL;
}

int vm_adopt(const char *run_dir, pid_t pid, unsigned long long start_time, struct jailer *jailer,
             size_t console_max_bytes, vm_exit_fn on_exit, void *exit_arg, struct vm **out,
             char *err, size_t errlen)
{
    *out = NULL;
    struct vm *vm = vm_alloc(on_exit, exit_arg);
    if (!vm) {
        snprintf(err, errlen, "vm_adopt: out of memory");
        return -1;
    }
    vm->adopted = true;
    vm->pid = pid;
    if (vm_set_paths(vm, run_dir, err, errlen) < 0)
        goto fail;
    vm->pidfd = pidfd_open(pid, 0);
    /* Checked again with the pidfd held: it now names this process for
     * good, whatever happens to the pid. */
    if (vm->pidfd < 0 || !vm_process_is(pid, start_time, run_dir)) {
        snprintf(err, errlen, "QEMU (pid %d) of %s is gone", (int)pid, run_dir);
        goto fail;
    }
    if (jailer && jail_adopt(jailer, pid, vm->vm_dir, &vm->jail, err, errlen) < 0)
        goto fail;
    /* The console's output while no vmhost listened is gone; from here it
     * is kept again. */
    char cerr[256];
    if (console_log_attach(vm->console_sock, vm->console_path, console_max_bytes, &vm->console,
                           cerr, sizeof(cerr)) < 0)
        log_warn("adopted QEMU's console is not kept", "dir=%s error=\"%s\"", run_dir, cerr);
    if (qmp_connect(&vm->qmp, vm->qmp_path, vm_on_qmp_event, vm, VM_ADOPT_QMP_TIMEOUT_MS, err,
                    errlen) < 0)
        goto fail;
    int rc = pthread_create(&vm->monitor, NULL, monitor_adopted, vm);
    if (rc != 0) {
        snprintf(err, errlen, "vm_adopt: cannot start the monitor thread: %s", strerror(rc));
        goto fail;
    }
    vm->monitor_started = true;
    *out = vm;
    return 0;
fail:
    qmp_close(&vm->qmp);
    vm_dealloc(vm);
    return -1;
}

/* One QMP query; *ret (caller decrefs) is its return value. */
static int vm_query(struct vm *vm, const char *command, json_t **ret, char *err, size_t errlen)
{
    pthread_mutex_lock(&vm->qmp_lock);
    int rc = qmp_execute(&vm->qmp, command, NULL, ret, VM_ADOPT_QUERY_TIMEOUT_MS, err, errlen);
    pthread_mutex_unlock(&vm->qmp_lock);
    return rc;
}

int vm_run_state(struct vm *vm, char *out, size_t outlen, char *err, size_t errlen)
{
    json_t *ret = NULL;
    if (vm_query(vm, "query-status", &ret, err, errlen) < 0)
        return -1;
    const char *status = json_string_value(json_object_get(ret, "status"));
    snprintf(out, outlen, "%s", status ? status : "unknown");
    json_decref(ret);
    return 0;
}

/* True while an outgoing migration has not ended one way or the other. */
static bool migration_in_flight(const char *status)
{
    return strcmp(status, "setup") == 0 || strcmp(status, "active") == 0 ||
           strcmp(status, "cancelling") == 0 || strcmp(status, "pre-switchover") == 0 ||
           strcmp(status, "device") == 0 || strcmp(status, "wait-unplug") == 0;
}

int vm_settle_migration(struct vm *vm, int timeout_ms, char *err, size_t errlen)
{
    long long deadline = clock_monotonic_ms() + timeout_ms;
    bool cancelled = false;
    for (;;) {
        json_t *ret = NULL;
        if (vm_query(vm, "query-migrate", &ret, err, errlen) < 0)
            return -1;
        const char *s = json_string_value(json_object_get(ret, "status"));
        char status[32];
        snprintf(status, sizeof(status), "%s", s ? s : "none");
        json_decref(ret);
        if (!migration_in_flight(status))
            return 0;
        if (!cancelled) {
            pthread_mutex_lock(&vm->qmp_lock);
            int rc = qmp_execute(&vm->qmp, "migrate_cancel", NULL, NULL,
                                 VM_ADOPT_QUERY_TIMEOUT_MS, err, errlen);
            pthread_mutex_unlock(&vm->qmp_lock);
            if (rc < 0)
                return -1;
            cancelled = true;
        }
        if (clock_monotonic_ms() > deadline) {
            snprintf(err, errlen, "the migration a crashed vmhost started is still %s after %d ms",
                     status, timeout_ms);
            return -1;
        }
        usleep(50 * 1000);
    }
}

size_t vm_kill_strays(const char *run_dir, pid_t keep)
{
    char dir[PATH_MAX], real[PATH_MAX];
    if (!realpath(run_dir, real) || fs_path(dir, sizeof(dir), "%s/vm", real) < 0)
        return 0;
    pid_t pids[VM_STRAYS_MAX];
    size_t n = proc_find_in_dir("qemu-system", dir, pids, VM_STRAYS_MAX);
    size_t killed = 0;
    for (size_t i = 0; i < n && i < VM_STRAYS_MAX; i++) {
        if (pids[i] == keep)
            continue;
        int fd = pidfd_open(pids[i], 0);
        if (fd < 0)
            continue;
        /* Still that QEMU now that the pidfd pins it. */
        if (proc_cwd_is(pids[i], dir) && pidfd_send_signal(fd, SIGKILL, NULL, 0) == 0) {
            struct pollfd p = { .fd = fd, .events = POLLIN };
            while (poll(&p, 1, VM_STRAY_KILL_WAIT_MS) < 0 && errno == EINTR)
                ;
            killed++;
        }
        close(fd);
    }
    return killed;
}
