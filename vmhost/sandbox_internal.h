/* The sandbox module's own view of a sandbox (sandbox.h is everyone
 * else's): its fields, and the steps the module's files share. Included only
 * by sandbox*.c and checkpoint*.c, as vm_internal.h is by vm*.c. */
#ifndef AIRLOCK_SANDBOX_INTERNAL_H
#define AIRLOCK_SANDBOX_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>

#include "node_budget.h"
#include "policy.h"
#include "sandbox.h"
#include "sandbox_volume.h"
#include "vm.h"

struct sandbox {
    char id[65];
    char template_name[TEMPLATE_REF_SIZE]; /* the version's ref: "default", "name:N" */
    /* The template version it was made from (template_version.h), held for
     * its life: restores, resumes and forks map its memory file. NULL for a
     * cold-booted sandbox (--cold-boot). */
    struct template_version *tmpl;
    unsigned vcpus;
    unsigned memory_mb;
    /* What its VM holds of the node (node_budget.h): taken before a QEMU
     * starts, given back when it is gone (sandbox_start_vm's callers,
     * sandbox_vm_gone). */
    struct node_claim claim;
    bool restored;               /* from the template snapshot, not a cold boot */
    bool from_pool;              /* handed out by the warm pool (warm_pool.h) */
    int64_t created_unix_ms;
    char dir[PATH_MAX];
    char disk[PATH_MAX];
    /* Its volume slots (sandbox_volume.h), set at create and by a
     * restart's adoption; readers of other threads (answers) take lock. */
    struct sandbox_volume volumes[VM_VOLUME_SLOTS];
    bool volumes_made[VM_VOLUME_SLOTS]; /* by this create: deleted if it fails */
    /* One change of the network at a time: create, delete, policy and the
     * re-attach after an egress restart (egress_watch.h). */
    pthread_mutex_t net_lock;
    bool net_up;                 /* namespace airlock-<id> exists (sandbox_network.h) */
    bool egress_attached;
    char project_id[SANDBOX_PROJECT_ID_SIZE];        /* whose credentials egress injects; "" = none */
    /* The sandbox CA egress answered the attach with (credential
     * injection), installed into the guest at every SessionInit; NULL
     * without. Under net_lock (a re-attach replaces it). */
    char *egress_ca_pem;
    /* Without --egress: the last valid policy, kept for when one is
     * enforced (sandbox_network.c); under lock. */
    struct egress_policy *kept_policy;

    /* Its suspend snapshot's object set in the shared snapshot store
     * (sandbox_shared_store.h); "" when it has none. Under lock. */
    char store_object[SANDBOX_STORE_OBJECT_SIZE];
    /* A live migration this node takes part in (sandbox_migrate.c); NULL
     * when none. Under lock. */
    struct sandbox_migration *migration;

    pthread_mutex_t lock;        /* state, error, vm, channel, activity, store_object */
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

/* Moves sb to `to` if sb_state.h's table allows it from its state; else
 * logs the refused move (a bug) and returns false, the state unchanged.
 * The caller holds sb->lock. The only writer of sb->state. */
bool sandbox_transition(struct sandbox *sb, enum sb_state to);

/* The registry (sandbox.c); the caller holds vh->lock. */
struct sandbox *sandbox_registry_find_locked(struct vmhost *vh, const char *id);
/* Registers sb under id (renaming it when id is not its own): EXISTS when
 * the id is taken, CAPACITY when the node is full, naming them in e. */
int sandbox_registry_admit_locked(struct vmhost *vh, struct sandbox *sb, const char *id,
                                  struct airlock_error *e);
void sandbox_registry_remove_locked(struct vmhost *vh, struct sandbox *sb);

/* A new sandbox in state creating, with p's size and two references (the
 * registry's and the caller's) and its paths set. Registered under p->id
 * (or a new id) so concurrent creates of the same id and capacity checks
 * see it; detached: under an id of its own, out of the registry (a pooled
 * VM until its hand-out, sandbox_pool.h). */
int sandbox_reserve(struct vmhost *vh, const struct sandbox_create_params *p, bool detached,
                    struct sandbox **out, struct airlock_error *e);
/* sandbox_take_id.c. */
/* A detached sandbox (a pooled VM or a spare QEMU: sandbox_build.h) given
 * its place: registered under id (NULL: its own) in one step with the id
 * and capacity checks (EXISTS, CAPACITY); under another id its directory,
 * namespace and VM paths are renamed (a failure is INTERNAL and leaves it
 * detached under its own id, as it was). */
int sandbox_take_id(struct sandbox *sb, const char *id, struct airlock_error *e);

/* Takes sb out of the registry and drops the registry's reference, leaving
 * its VM, files and network as they are (vmhost's stop, sandbox_stop.c). */
void sandbox_unregister(struct sandbox *sb);

/* sandbox_vm.c. Starts the sandbox's QEMU as a create does (its disk, its
 * NIC on a TAP opened in its namespace, the template's memory file if
 * restored) and records it in sb->vm; incoming: wait for a state to load.
 * Create and resume-from-suspended share it, so a snapshot is always
 * loaded into the device list it was taken with. nice > 0: QEMU's CPU
 * niceness (a pooled VM, warm_pool.h). */
int sandbox_start_vm(struct sandbox *sb, bool incoming, int nice, char *err, size_t errlen);
/* Connects the guest channel (Hello) and records it in sb->channel. */
int sandbox_connect_guest(struct sandbox *sb, char *err, size_t errlen);
/* The exit callback every sandbox's VM gets: an unexpected end is an error. */
void sandbox_on_vm_exit(void *arg, int wait_status, const char *reason);
/* Takes the VM and guest channel out of sb and ends them (QEMU quits, or
 * is killed); nothing when it has none. */
void sandbox_drop_vm(struct sandbox *sb);
/* Its QEMU is gone (ended, or died): what it held of the node goes back. */
void sandbox_vm_gone(struct sandbox *sb);

/* sandbox_build.c. The guest's per-sandbox init, then running (and
 * recorded), unless QEMU died meanwhile; *initialized_us: when the guest
 * init was done. */
int sandbox_finish_create(struct sandbox *sb, int64_t *initialized_us, char *err, size_t errlen);

/* sandbox_delete.c. Undoes a create (or a hand-out) that failed after
 * sandbox_reserve(): out of the registry, then as sandbox_discard(). */
void sandbox_abandon(struct sandbox *sb, const char *err);
/* Out of the registry, torn down (as a delete), and the registry's
 * reference dropped; the caller keeps its own. */
void sandbox_remove(struct sandbox *sb);
/* The same without the failure's log line: a create refused before
 * anything was made (the node's budget), which its caller reports. */
void sandbox_unreserve(struct sandbox *sb);

/* sandbox_suspend.c. For a sandbox without a VM: its disk becomes a
 * reflink of disk, a new QEMU loads state (NULL: cold-boots), and the
 * guest answers its init. Resume from suspended and checkpoint restore
 * share it. */
int sandbox_start_from(struct sandbox *sb, const char *disk, const char *state,
                       struct airlock_error *e);
/* suspended -> resuming -> running; sandbox_resume() calls it. */
int sandbox_resume_suspended(struct sandbox *sb, struct airlock_error *e);

#endif
