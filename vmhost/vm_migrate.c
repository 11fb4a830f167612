/* Snapshot and restore of a VM over QMP migration to/from a file. Two
 * kinds: the template's, with x-ignore-shared (guest RAM lives in a shared
 * memory-backend-file and is not copied, so the state file holds device
 * state only, tens of KiB), and a suspend's, with the whole of guest RAM (a
 * restored sandbox maps the template's memory file privately, share=off:
 * its dirty pages exist only in QEMU's anonymous copy-on-write pages, and
 * QEMU migrates a non-shared RAM block in full anyway). Both sides of a
 * migration must agree on x-ignore-shared: it changes the stream format.
 * The state file goes to QEMU as an open fd either way (getfd, then fd:):
 * no shell and no cat are started. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vm_internal.h"

static long long ms_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* qmp_lock held. Reads events until the MIGRATION event says the
 * migration reached status want ("completed", or "pre-switchover" for a
 * live one) or ended otherwise. */
static int wait_migration_status_locked(struct vm *vm, const char *what, const char *want,
                                        int timeout_ms, char *err, size_t errlen)
{
    long long deadline = ms_now() + timeout_ms;
    for (;;) {
        if (strcmp(vm->migration_status, want) == 0)
            return 0;
        if (strcmp(vm->migration_status, "failed") == 0 ||
            strcmp(vm->migration_status, "cancelled") == 0) {
            json_t *info = NULL;
            char qerr[256];
            const char *why = NULL;
            if (qmp_execute(&vm->qmp, "query-migrate", NULL, &info, 2000, qerr, sizeof(qerr)) == 0)
                why = json_string_value(json_object_get(info, "error-desc"));
            snprintf(err, errlen, "%s %s: %s (see %s)", what, vm->migration_status,
                     why ? why : "QEMU gave no reason", vm->qemu_log_path);
            json_decref(info);
            return -1;
        }
        long long left = deadline - ms_now();
        char qerr[256];
        if (left <= 0 || qmp_wait_event(&vm->qmp, (int)left, qerr, sizeof(qerr)) < 0) {
            snprintf(err, errlen, "%s did not reach %s within %d ms (last status \"%s\"): %s",
                     what, want, timeout_ms, vm->migration_status,
                     left <= 0 ? "timeout" : qerr);
            return -1;
        }
    }
}

static int wait_migration_locked(struct vm *vm, const char *what, int timeout_ms, char *err,
                                 size_t errlen)
{
    return wait_migration_status_locked(vm, what, "completed", timeout_ms, err, errlen);
}

/* Outgoing migrations of a stopped VM: without a limit QEMU would throttle
 * the RAM copy to its default bandwidth and iterate towards a downtime
 * target that means nothing here. */
#define VM_MIGRATE_MAX_BANDWIDTH (64ull << 30)

/* qmp_lock held. pause: stop before the switchover (a live migration's
 * source, which must finish the disk first). */
static int set_capabilities_locked(struct vm *vm, bool ignore_shared, bool pause, char *err,
                                   size_t errlen)
{
    json_t *args = json_pack("{s:[{s:s, s:b}, {s:s, s:b}, {s:s, s:b}]}", "capabilities",
                             "capability", "x-ignore-shared", "state", ignore_shared,
                             "capability", "events", "state", 1, "capability",
                             "pause-before-switchover", "state", pause);
    int rc = qmp_execute(&vm->qmp, "migrate-set-capabilities", args, NULL, 2000, err, errlen);
    json_decref(args);
    return rc;
}

/* How a migration starts (start_locked). */
struct migration_start {
    const char *command;  /* "migrate" or "migrate-incoming" */
    const char *fdname;   /* QEMU's name of the fd it gets: the uri is fd:<fdname> */
    bool ignore_shared;   /* x-ignore-shared: device state only */
    bool pause;           /* pause-before-switchover (a live migration's source) */
    int downtime_ms;      /* an outgoing one's downtime-limit; 0: QEMU's own */
};

/* qmp_lock held. Hands QEMU fd (it gets its own copy) and starts the
 * migration; the caller waits for the status it needs. */
static int start_locked(struct vm *vm, const struct migration_start *m, int fd, char *err,
                        size_t errlen)
{
    vm->migration_status[0] = '\0';
    char uri[64];
    snprintf(uri, sizeof(uri), "fd:%s", m->fdname);
    json_t *fdargs = json_pack("{s:s}", "fdname", m->fdname);
    json_t *params = json_pack("{s:I}", "max-bandwidth", (json_int_t)VM_MIGRATE_MAX_BANDWIDTH);
    json_t *args = json_pack("{s:s}", "uri", uri);
    bool outgoing = strcmp(m->command, "migrate") == 0;
    if (m->downtime_ms)
        json_object_set_new(params, "downtime-limit", json_integer(m->downtime_ms));
    int rc = qmp_execute_fd(&vm->qmp, "getfd", fdargs, fd, NULL, 2000, err, errlen);
    if (rc == 0)
        rc = set_capabilities_locked(vm, m->ignore_shared, m->pause, err, errlen);
    if (rc == 0 && outgoing)
        rc = qmp_execute(&vm->qmp, "migrate-set-parameters", params, NULL, 2000, err, errlen);
    if (rc == 0)
        rc = qmp_execute(&vm->qmp, m->command, args, NULL, 2000, err, errlen);
    json_decref(fdargs);
    json_decref(params);
    json_decref(args);
    return rc;
}

/* command (migrate or migrate-incoming) on fd, waited for until it
 * completes. */
static int migrate_fd(struct vm *vm, const char *command, const char *fdname, int fd,
                      bool ignore_shared, int timeout_ms, char *err, size_t errlen)
{
    struct migration_start m = { command, fdname, ignore_shared, false, 0 };
    pthread_mutex_lock(&vm->qmp_lock);
    int rc = start_locked(vm, &m, fd, err, errlen);
    if (rc == 0)
        rc = wait_migration_locked(vm, command, timeout_ms, err, errlen);
    pthread_mutex_unlock(&vm->qmp_lock);
    return rc;
}

/* QEMU sends the completed event while still in run state finish-migrate,
 * where `cont` fails ("Migration is not finalized yet"); a checkpoint
 * continues the VM right after saving, so wait for postmigrate. */
static int wait_migration_finalized(struct vm *vm, int timeout_ms, char *err, size_t errlen)
{
    long long deadline = ms_now() + timeout_ms;
    for (;;) {
        json_t *info = NULL;
        pthread_mutex_lock(&vm->qmp_lock);
        int rc = qmp_execute(&vm->qmp, "query-status", NULL, &info, 2000, err, errlen);
        pthread_mutex_unlock(&vm->qmp_lock);
        const char *status = rc == 0 ? json_string_value(json_object_get(info, "status")) : NULL;
        bool finalizing = status && strcmp(status, "finish-migrate") == 0;
        json_decref(info);
        if (rc < 0 || !finalizing)
            return rc;
        if (ms_now() >= deadline) {
            snprintf(err, errlen, "QEMU still finalizing the migration after %d ms", timeout_ms);
            return -1;
        }
        struct timespec pause = { 0, 2 * 1000 * 1000 };
        nanosleep(&pause, NULL);
    }
}

/* full: guest RAM too (a suspend's), else device state only. */
static int save(struct vm *vm, const char *state_path, bool full, int timeout_ms, char *err,
                size_t errlen)
{
    int fd = open(state_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "create %s: %s", state_path, strerror(errno));
        return -1;
    }
    int rc = migrate_fd(vm, "migrate", "outgoing-state", fd, !full, timeout_ms, err, errlen);
    close(fd); /* QEMU has its own */
    if (rc < 0)
        return -1;
    return wait_migration_finalized(vm, timeout_ms, err, errlen);
}

int vm_load_state(struct vm *vm, const char *state_path, bool full, int timeout_ms, char *err,
                  size_t errlen)
{
    int fd = open(state_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "open %s: %s", state_path, strerror(errno));
        return -1;
    }
    int rc = migrate_fd(vm, "migrate-incoming", "incoming-state", fd, !full, timeout_ms, err,
                        errlen);
    close(fd); /* QEMU has its own */
    return rc;
}

int vm_save_state(struct vm *vm, const char *state_path, int timeout_ms, char *err, size_t errlen)
{
    return save(vm, state_path, false, timeout_ms, err, errlen);
}

int vm_save_full_state(struct vm *vm, const char *state_path, int timeout_ms, char *err,
                       size_t errlen)
{
    return save(vm, state_path, true, timeout_ms, err, errlen);
}

int vm_restore_full_state(struct vm *vm, const char *state_path, int timeout_ms, char *err,
                          size_t errlen)
{
    if (vm_load_state(vm, state_path, true, timeout_ms, err, errlen) < 0)
        return -1;
    return vm_qmp_command(vm, "cont", NULL, err, errlen);
}

/* ---- live migration between nodes (sandbox_migrate.c) ----
 * The guest runs while its RAM is copied, again and again for what it
 * dirtied, until the rest fits in the downtime; then QEMU stops it and
 * waits (pause-before-switchover) for the caller to finish the disk. The
 * stream goes to fd, a socketpair end vmhost relays (migration_channel.h). */

/* What the last round may take with the guest stopped: QEMU sizes its
 * rounds by it. */
#define VM_LIVE_DOWNTIME_MS 100

int vm_migrate_live_out(struct vm *vm, int fd, bool live, int timeout_ms, char *err,
                        size_t errlen)
{
    /* Stopped first, the copy is a suspend's, into a socket. */
    if (!live && vm_qmp_command(vm, "stop", NULL, err, errlen) < 0)
        return -1;
    struct migration_start m = { "migrate", "live-out", false, true, VM_LIVE_DOWNTIME_MS };
    pthread_mutex_lock(&vm->qmp_lock);
    int rc = start_locked(vm, &m, fd, err, errlen);
    if (rc == 0)
        rc = wait_migration_status_locked(vm, "live migration", "pre-switchover", timeout_ms,
                                          err, errlen);
    pthread_mutex_unlock(&vm->qmp_lock);
    return rc;
}

int vm_migrate_live_continue(struct vm *vm, int timeout_ms, char *err, size_t errlen)
{
    json_t *args = json_pack("{s:s}", "state", "pre-switchover");
    pthread_mutex_lock(&vm->qmp_lock);
    int rc = qmp_execute(&vm->qmp, "migrate-continue", args, NULL, 2000, err, errlen);
    if (rc == 0)
        rc = wait_migration_locked(vm, "live migration", timeout_ms, err, errlen);
    pthread_mutex_unlock(&vm->qmp_lock);
    json_decref(args);
    return rc == 0 ? wait_migration_finalized(vm, timeout_ms, err, errlen) : -1;
}

int vm_migrate_live_in(struct vm *vm, int fd, char *err, size_t errlen)
{
    struct migration_start m = { "migrate-incoming", "live-in", false, false, 0 };
    pthread_mutex_lock(&vm->qmp_lock);
    int rc = start_locked(vm, &m, fd, err, errlen);
    pthread_mutex_unlock(&vm->qmp_lock);
    return rc;
}

int vm_migrate_live_in_wait(struct vm *vm, int timeout_ms, char *err, size_t errlen)
{
    pthread_mutex_lock(&vm->qmp_lock);
    int rc = wait_migration_locked(vm, "incoming live migration", timeout_ms, err, errlen);
    pthread_mutex_unlock(&vm->qmp_lock);
    return rc;
}

int vm_migrate_live_abort(struct vm *vm, int timeout_ms, char *err, size_t errlen)
{
    char state[32];
    /* In flight: cancelled, and QEMU runs the guest again itself; after
     * the switchover (postmigrate) a cont takes its disk back. */
    if (vm_settle_migration(vm, timeout_ms, err, errlen) < 0 ||
        vm_run_state(vm, state, sizeof(state), err, errlen) < 0)
        return -1;
    if (strcmp(state, "running") == 0)
        return 0;
    return vm_qmp_command(vm, "cont", NULL, err, errlen);
}