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

/* qmp_lock held. Reads events until the MIGRATION event says how it ended. */
static int wait_migration_locked(struct vm *vm, const char *what, int timeout_ms, char *err,
                                 size_t errlen)
{
    long long deadline = ms_now() + timeout_ms;
    for (;;) {
        if (strcmp(vm->migration_status, "completed") == 0)
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
            snprintf(err, errlen, "%s did not complete within %d ms (last status \"%s\"): %s",
                     what, timeout_ms, vm->migration_status, left <= 0 ? "timeout" : qerr);
            return -1;
        }
    }
}

/* Outgoing migrations of a stopped VM: without a limit QEMU would throttle
 * the RAM copy to its default bandwidth and iterate towards a downtime
 * target that means nothing here. */
#define VM_MIGRATE_MAX_BANDWIDTH (64ull << 30)

/* qmp_lock held. */
static int set_capabilities_locked(struct vm *vm, bool ignore_shared, char *err, size_t errlen)
{
    json_t *args = json_pack("{s:[{s:s, s:b}, {s:s, s:b}]}", "capabilities", "capability",
                             "x-ignore-shared", "state", ignore_shared, "capability", "events",
                             "state", 1);
    int rc = qmp_execute(&vm->qmp, "migrate-set-capabilities", args, NULL, 2000, err, errlen);
    json_decref(args);
    return rc;
}

/* qmp_lock held. Starts a migration with command (migrate or
 * migrate-incoming) to/from uri and waits for it to complete. */
static int migrate_locked(struct vm *vm, const char *command, const char *uri, bool ignore_shared,
                          int timeout_ms, char *err, size_t errlen)
{
    vm->migration_status[0] = '\0';
    if (set_capabilities_locked(vm, ignore_shared, err, errlen) < 0)
        return -1;
    if (strcmp(command, "migrate") == 0) {
        json_t *params = json_pack("{s:I}", "max-bandwidth", (json_int_t)VM_MIGRATE_MAX_BANDWIDTH);
        int prc = qmp_execute(&vm->qmp, "migrate-set-parameters", params, NULL, 2000, err, errlen);
        json_decref(params);
        if (prc < 0)
            return -1;
    }
    json_t *args = json_pack("{s:s}", "uri", uri);
    int rc = qmp_execute(&vm->qmp, command, args, NULL, 2000, err, errlen);
    json_decref(args);
    if (rc < 0)
        return -1;
    return wait_migration_locked(vm, command, timeout_ms, err, errlen);
}

/* Hands QEMU fd under fdname (it gets its own copy), then runs command
 * (migrate or migrate-incoming) on "fd:fdname". */
static int migrate_fd(struct vm *vm, const char *command, const char *fdname, int fd,
                      bool ignore_shared, int timeout_ms, char *err, size_t errlen)
{
    char uri[64];
    snprintf(uri, sizeof(uri), "fd:%s", fdname);
    json_t *args = json_pack("{s:s}", "fdname", fdname);
    pthread_mutex_lock(&vm->qmp_lock);
    int rc = qmp_execute_fd(&vm->qmp, "getfd", args, fd, NULL, 2000, err, errlen);
    if (rc == 0)
        rc = migrate_locked(vm, command, uri, ignore_shared, timeout_ms, err, errlen);
    pthread_mutex_unlock(&vm->qmp_lock);
    json_decref(args);
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
