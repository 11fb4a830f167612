/* A sandbox on this node: its VM, its guest channel, its directory
 * (sandboxes/<id>/ with disk.ext4, sockets and console.log), and the execs
 * in flight that ExecInput can reach.
 *
 * Lifetime: the registry holds one reference; every request handler that
 * looked a sandbox up holds another until sandbox_put(). Deletion takes it
 * out of the registry at once (new lookups fail with NOT_FOUND), stops the
 * VM (which fails the streams of handlers still running) and the memory goes
 * with the last reference. */
#ifndef AIRLOCK_SANDBOX_H
#define AIRLOCK_SANDBOX_H

#include <limits.h>
#include <pthread.h>
#include <stdint.h>

#include "egress.pb-c.h"
#include "policy.h"
#include "guest_channel.h"
#include "sandbox_id.h"
#include "sb_state.h"
#include "vm.h"
#include "vmhost.h"
#include "vmhost.pb-c.h"

struct sandbox_exec {
    char id[32];
    struct guest_stream *stream;
    struct sandbox_exec *next;
};

struct sandbox {
    char id[65];
    char template_name[TEMPLATE_REF_SIZE]; /* the version's ref: "default", "name:N" */
    /* The template version it was made from (template_registry.h), held for
     * its life: restores, resumes and forks map its memory file. NULL for a
     * cold-booted sandbox (--cold-boot). */
    struct template_version *tmpl;
    unsigned vcpus;
    unsigned memory_mb;
    bool restored;               /* from the template snapshot, not a cold boot */
    bool from_pool;              /* handed out by the warm pool (warm_pool.h) */
    int64_t created_unix_ms;
    char dir[PATH_MAX];
    char disk[PATH_MAX];
    /* One change of the network at a time: create, delete, policy and the
     * re-attach after an egress restart (egress_watch.h). */
    pthread_mutex_t net_lock;
    bool net_up;                 /* namespace airlock-<id> exists (sandbox_network.h) */
    bool egress_attached;
    char project_id[129];        /* whose credentials egress injects; "" = none */
    /* The sandbox CA egress answered the attach with (credential
     * injection), installed into the guest at every SessionInit; NULL
     * without. Under net_lock (a re-attach replaces it). */
    char *egress_ca_pem;
    /* Without --egress: the last valid policy, kept for when one is
     * enforced (sandbox_network.c); under lock. */
    struct egress_policy *kept_policy;

    pthread_mutex_t lock;        /* state, error, vm, channel, activity */
    pthread_mutex_t exec_lock;   /* execs; held while ExecInput writes */
    enum sb_state state;         /* changed only by sandbox_transition() */
    char error[4096];
    struct vm *vm;
    struct guest_channel *channel;
    struct sandbox_exec *execs;
    int64_t last_activity_unix_ms;

    /* Durability (sandbox_record.h, sandbox_stop.h). */
    pthread_mutex_t record_lock; /* one record write at a time, in state order */
    enum sb_state recorded_state; /* the stable state in the record; 0 before the first */
    /* Suspended by vmhost's stop rather than by a request: the state the
     * control plane still believes it is in (running or paused), brought
     * back on first use by sandbox_wake(); 0 otherwise. Under lock. */
    enum sb_state stop_suspended_from;
    pthread_mutex_t wake_lock;   /* one sandbox_wake() at a time */

    struct vmhost *vh;
    int refs;                    /* protected by vh->lock */
    struct sandbox *next;        /* registry list, protected by vh->lock */
};

struct sandbox_create_params {
    const char *id;              /* NULL/empty = generate */
    const char *template_name;   /* NULL/empty = "default"; "name" or "name:N" (named) */
    unsigned vcpus;              /* 0 = the template's (default: 1) */
    unsigned memory_mb;          /* 0 = the template's (default: 512) */
    const Airlock__Egress__V1__Policy *policy; /* NULL = deny everything */
    const char *project_id;      /* NULL/empty = none: no credentials injected */
    bool for_pool;               /* warm_pool.c: own id, unregistered, left paused */
    /* sandbox_fork.c: start from a checkpoint's disk (NULL = the template)
     * and, when not NULL, load its full state instead of booting. */
    const char *from_disk;
    const char *from_state;
};

/* Error classes a caller maps to its own status codes (gRPC here). */
enum sandbox_error {
    SANDBOX_OK = 0,
    SANDBOX_ERR_INVALID,         /* a parameter is invalid; message names it */
    SANDBOX_ERR_NOT_FOUND,
    SANDBOX_ERR_EXISTS,
    SANDBOX_ERR_CAPACITY,
    SANDBOX_ERR_STATE,           /* not allowed in the current state */
    SANDBOX_ERR_UNAVAILABLE,     /* a service it needs (egress) cannot be reached */
    SANDBOX_ERR_INTERNAL,
};

/* Boots a VM and waits until its guest daemon answers; on success *out holds
 * a reference. On failure nothing is left behind. */
enum sandbox_error sandbox_create(struct vmhost *vh, const struct sandbox_create_params *p,
                                  struct sandbox **out, char *err, size_t errlen);

/* For the warm pool and suspend/resume (warm_pool.c, sandbox_suspend.c). */

/* A sandbox made with for_pool: out of the registry, warmed up and paused
 * after its guest answered (sandbox_pool.h). sandbox_adopt_pooled()
 * registers it under p->id (renaming it) or its own, resumes it, attaches
 * it to egress and runs the per-sandbox guest init (on failure it is gone);
 * sandbox_discard_pooled() stops and removes one never adopted. */
enum sandbox_error sandbox_adopt_pooled(struct sandbox *sb, const struct sandbox_create_params *p,
                                        char *err, size_t errlen);
void sandbox_discard_pooled(struct sandbox *sb);

/* Starts the sandbox's QEMU as a create does (its disk, its NIC on a TAP
 * opened in its namespace, the template's memory file if restored) and
 * records it in sb->vm; incoming: wait for a state to load. Create and
 * resume-from-suspended share it, so a snapshot is always loaded into the
 * device list it was taken with. nice > 0: QEMU's CPU niceness (a pooled
 * VM, warm_pool.h). */
int sandbox_start_vm(struct sandbox *sb, bool incoming, int nice, char *err, size_t errlen);
/* Connects the guest channel (Hello) and records it in sb->channel. */
int sandbox_connect_guest(struct sandbox *sb, char *err, size_t errlen);
/* For a sandbox without a VM: its disk becomes a reflink of disk, a new
 * QEMU loads state (NULL: cold-boots), and the guest answers its init.
 * Resume from suspended and checkpoint restore share it. */
int sandbox_start_from(struct sandbox *sb, const char *disk, const char *state, char *err,
                       size_t errlen);

/* running|paused -> suspending -> suspended: the whole VM state (RAM
 * included) and a reflink of the disk written durably to DIR/suspend/, then
 * QEMU quits. A failure leaves the sandbox as it was and no partial files. */
enum sandbox_error sandbox_suspend(struct sandbox *sb, char *err, size_t errlen);
/* suspended -> resuming -> running; sandbox_resume() calls it. */
enum sandbox_error sandbox_resume_suspended(struct sandbox *sb, char *err, size_t errlen);

/* For re-adoption after a restart (sandbox_adopt.c): registers a new
 * sandbox named p->id in state creating, with p's size, its paths set and
 * two references (the registry's and the caller's); and the exit callback
 * every sandbox's VM gets. */
enum sandbox_error sandbox_reserve(struct vmhost *vh, const struct sandbox_create_params *p,
                                   struct sandbox **out, char *err, size_t errlen);
void sandbox_on_vm_exit(void *arg, int wait_status, const char *reason);
/* Takes the VM and guest channel out of sb and ends them (QEMU quits, or
 * is killed); nothing when it has none. */
void sandbox_drop_vm(struct sandbox *sb);
/* Takes sb out of the registry and drops the registry's reference, leaving
 * its VM, files and network as they are (vmhost's stop, sandbox_stop.c). */
void sandbox_unregister(struct sandbox *sb);

/* True when the registry has a sandbox of that id (in any state). */
bool sandbox_id_taken(struct vmhost *vh, const char *id);

/* Looks a sandbox up and takes a reference, or NULL. */
struct sandbox *sandbox_get(struct vmhost *vh, const char *id);
void sandbox_put(struct sandbox *sb);

/* References to every sandbox, for listing; free the array and put each. */
struct sandbox **sandbox_list(struct vmhost *vh, size_t *n);

/* Stops the VM, removes every file of the sandbox and drops it from the
 * registry. Works in any state. */
enum sandbox_error sandbox_delete(struct vmhost *vh, const char *id, char *err, size_t errlen);

/* running -> paused (QMP stop) and paused -> running (QMP cont, then the
 * guest clock is set); resume also brings a suspended sandbox back (a new
 * QEMU loads DIR/suspend/, then the guest init). Any other state:
 * SANDBOX_ERR_STATE naming it. */
enum sandbox_error sandbox_pause(struct sandbox *sb, char *err, size_t errlen);
enum sandbox_error sandbox_resume(struct sandbox *sb, char *err, size_t errlen);

/* The guest channel of a running sandbox with a reference the caller drops
 * with guest_channel_release(), or NULL with the reason in err. */
struct guest_channel *sandbox_channel(struct sandbox *sb, enum sandbox_error *code, char *err,
                                      size_t errlen);

void sandbox_touch(struct sandbox *sb);

/* Execs in flight, so ExecInput can find their streams. */
void sandbox_exec_register(struct sandbox *sb, struct sandbox_exec *ex);
void sandbox_exec_unregister(struct sandbox *sb, struct sandbox_exec *ex);
/* Runs fn on the exec's stream under exec_lock (so the stream cannot
 * be closed meanwhile). Returns -1 with errno ENOENT for an unknown exec. */
int sandbox_exec_with_stream(struct sandbox *sb, const char *exec_id,
                             int (*fn)(struct guest_stream *s, void *arg), void *arg);

/* Moves sb to `to` if sb_state.h's table allows it from its state; else
 * logs the refused move (a bug) and returns false, the state unchanged.
 * The caller holds sb->lock. The only writer of sb->state. */
bool sandbox_transition(struct sandbox *sb, enum sb_state to);


#endif
