/* struct vm, shared by vm.c (process, monitor, stop) and vm_migrate.c
 * (snapshot and restore over QMP). Nothing else includes this. */
#ifndef AIRLOCK_VM_INTERNAL_H
#define AIRLOCK_VM_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>
#include <sys/un.h>

#include "console_log.h"
#include "qmp.h"
#include "vm.h"

struct vm {
    pid_t pid;
    char run_dir[PATH_MAX];
    char vm_dir[PATH_MAX];     /* run_dir/vm: QEMU's working directory */
    char qmp_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    char agent_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    char console_sock[sizeof(((struct sockaddr_un *)0)->sun_path)];
    char console_path[PATH_MAX];
    char qemu_log_path[PATH_MAX];
    char pid_path[PATH_MAX];

    vm_exit_fn on_exit;
    void *exit_arg;
    /* Started by an earlier vmhost and taken over (vm_adopt.c): not our
     * child, so it is watched and killed through pidfd, and its exit status
     * is unknown. */
    bool adopted;
    int pidfd;
    struct jail *jail;         /* NULL: unjailed; closed with the vm (vm_dealloc) */
    struct console_log *console; /* keeps console.log from QEMU's console socket */

    pthread_mutex_t lock; /* guards the fields below */
    pthread_cond_t exited_cond;
    bool exited;   /* reaped by the monitor */
    bool stopping; /* vm_stop() owns the exit: no callback */
    bool stopped;  /* vm_stop() finished */
    int wait_status;
    pthread_t monitor;
    bool monitor_started;

    pthread_mutex_t qmp_lock; /* one QMP command at a time; guards the fields below */
    struct qmp_client qmp;
    char migration_status[32]; /* from the last MIGRATION event, "" before any */
};

/* A zeroed vm with its locks (qmp.fd and pidfd -1), or NULL; and its end
 * (QEMU must be gone and the monitor joined). */
struct vm *vm_alloc(vm_exit_fn on_exit, void *exit_arg);
void vm_dealloc(struct vm *vm);
/* run_dir and the paths in it; -1 with a message when they are too long. */
int vm_set_paths(struct vm *vm, const char *run_dir, char *err, size_t errlen);
/* The QMP event callback (records MIGRATION status); qmp_lock held. */
void vm_on_qmp_event(void *arg, const char *event, json_t *data);
/* The monitor saw QEMU end (vm->lock held; released here): records it,
 * wakes vm_stop and, unless vm_stop caused it, runs on_exit. */
void vm_exit_seen(struct vm *vm, int status);

#endif
