/* struct vm, shared by vm.c (process, monitor, stop) and vm_migrate.c
 * (snapshot and restore over QMP). Nothing else includes this. */
#ifndef AIRLOCK_VM_INTERNAL_H
#define AIRLOCK_VM_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>
#include <sys/un.h>

#include "qmp.h"
#include "vm.h"

struct vm {
    pid_t pid;
    char run_dir[PATH_MAX];
    char qmp_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    char agent_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    char console_path[PATH_MAX];
    char qemu_log_path[PATH_MAX];
    char pid_path[PATH_MAX];

    vm_exit_fn on_exit;
    void *exit_arg;

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

#endif
