/* A sandbox on this node: its VM, its guest channel, its directory
 * (sandboxes/<id>/ with disk.ext4, sockets and console.log), and the execs
 * in flight that ExecInput can reach. The type is opaque: the sandbox
 * module's own files (sandbox*.c, checkpoint*.c) see its fields through
 * sandbox_internal.h; everyone else uses the functions below.
 *
 * Lifetime: the registry holds one reference; every request handler that
 * looked a sandbox up holds another until sandbox_put(). Deletion takes it
 * out of the registry at once (new lookups fail with NOT_FOUND), stops the
 * VM (which fails the streams of handlers still running) and the memory goes
 * with the last reference.
 *
 * How the module is laid out (vmhost/README.md): sandbox.c the object and
 * the registry; sandbox_create.c the create (a pooled VM or a build);
 * sandbox_build.c the builders; sandbox_vm.c its QEMU and guest channel;
 * sandbox_delete.c the teardown.
 *
 * Errors: a function that takes a struct airlock_error *e returns 0, or -1
 * with e's class and the message naming what failed (airlock_error.h);
 * the module's own files and checkpoint.h do the same. */
#ifndef AIRLOCK_SANDBOX_H
#define AIRLOCK_SANDBOX_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "airlock_error.h"
#include "egress.pb-c.h"
#include "guest_channel.h"
#include "sandbox_id.h"
#include "sandbox_volume.h"
#include "sb_state.h"
#include "template.h"
#include "vmhost.h"

struct sandbox; /* opaque: sandbox_internal.h */
struct template_version;

#define SANDBOX_PROJECT_ID_SIZE 129 /* at most 128 characters and the NUL */
/* "sandboxes/<id>/<generation>": its suspend in the shared snapshot store. */
#define SANDBOX_STORE_OBJECT_SIZE 128

struct sandbox_exec {
    char id[32];
    struct guest_stream *stream;
    struct sandbox_exec *next;
};

/* What a create asks for (the API's CreateSandbox, the scheduler's create). */
struct sandbox_create_params {
    const char *id;              /* NULL/empty = generate */
    const char *template_name;   /* NULL/empty = "default"; "name" or "name:N" (named) */
    const char *template_store_object; /* NULL/empty = none; else fetched if missing */
    unsigned vcpus;              /* 0 = the template's (default: 1) */
    unsigned memory_mb;          /* 0 = the template's (default: 512) */
    const Airlock__Egress__V1__Policy *policy; /* NULL = deny everything */
    const char *project_id;      /* NULL/empty = none: no credentials injected */
    /* Volumes attached at create, by slot (sandbox_volume.h); with any,
     * the create restores a VM of its own (pooled VMs have empty slots). */
    Airlock__Vmhost__V1__VolumeAttachment *const *volumes;
    size_t n_volumes;
    /* A fork's: its parent's directory, whose vol<N>.img are the parent's
     * private copies of its read-only snapshots, copied from there (the
     * snapshot may be on the node the parent came from). NULL = none. */
    const char *volume_copies;
};

/* A running sandbox: a pooled VM handed out, or one built now (restored
 * from the template's snapshot, or cold-booted), whose guest daemon
 * answered its init. On success *out holds a reference. On failure nothing
 * is left behind. */
int sandbox_create(struct vmhost *vh, const struct sandbox_create_params *p, struct sandbox **out,
                   struct airlock_error *e);

/* running|paused -> suspending -> suspended: the whole VM state (RAM
 * included) and a reflink of the disk written durably to DIR/suspend/, then
 * QEMU quits. A failure leaves the sandbox as it was and no partial files. */
int sandbox_suspend(struct sandbox *sb, struct airlock_error *e);

/* True when the registry has a sandbox of that id (in any state). */
bool sandbox_id_taken(struct vmhost *vh, const char *id);

/* Looks a sandbox up and takes a reference, or NULL. */
struct sandbox *sandbox_get(struct vmhost *vh, const char *id);
void sandbox_put(struct sandbox *sb);

/* References to every sandbox, for listing; free the array and put each. */
struct sandbox **sandbox_list(struct vmhost *vh, size_t *n);

/* How many registered sandboxes were made from t, and the id of one in
 * first (when not NULL and there is one). */
unsigned sandbox_count_from_template(struct vmhost *vh, const struct template_version *t,
                                     char *first, size_t firstlen);

/* Stops the VM, removes every file of the sandbox and drops it from the
 * registry. Works in any state. Its suspend in the shared snapshot store
 * goes too, unless it is keep_stored (NULL/"": none): the sandbox lives on
 * from there, on another node; so do its checkpoints there, unless
 * keep_checkpoints (it lives on elsewhere, restored from one). The images
 * of moved_volumes (n_moved of them: volumes now on another node) go too,
 * their snapshots here staying. */
int sandbox_delete(struct vmhost *vh, const char *id, const char *keep_stored,
                   bool keep_checkpoints, char *const *moved_volumes, size_t n_moved,
                   struct airlock_error *e);

/* running -> paused (QMP stop) and paused -> running (QMP cont, then the
 * guest clock is set); resume also brings a suspended sandbox back (a new
 * QEMU loads DIR/suspend/, then the guest init). Any other state:
 * AIRLOCK_ERR_STATE naming it. */
int sandbox_pause(struct sandbox *sb, struct airlock_error *e);
int sandbox_resume(struct sandbox *sb, struct airlock_error *e);

/* The guest channel of a running sandbox with a reference the caller drops
 * with guest_channel_release(), or NULL with STATE naming why in e. */
struct guest_channel *sandbox_channel(struct sandbox *sb, struct airlock_error *e);

void sandbox_touch(struct sandbox *sb);

/* Execs in flight, so ExecInput can find their streams. */
void sandbox_exec_register(struct sandbox *sb, struct sandbox_exec *ex);
void sandbox_exec_unregister(struct sandbox *sb, struct sandbox_exec *ex);
/* Runs fn on the exec's stream under exec_lock (so the stream cannot
 * be closed meanwhile). Returns -1 with errno ENOENT for an unknown exec. */
int sandbox_exec_with_stream(struct sandbox *sb, const char *exec_id,
                             int (*fn)(struct guest_stream *s, void *arg), void *arg);

/* Fixed for the sandbox's life once it is registered. */
const char *sandbox_id(const struct sandbox *sb);
const char *sandbox_dir(const struct sandbox *sb);
/* The template version it was made from; NULL when cold-booted. */
const struct template_version *sandbox_template(const struct sandbox *sb);

/* Its state now (it may change the moment the lock is gone). */
enum sb_state sandbox_state(struct sandbox *sb);

/* A copy of what the API shows of a sandbox, taken under its locks, so it
 * can be sent after they are gone. The caller maps it to its messages. */
struct sandbox_view {
    char id[65];
    char template_name[TEMPLATE_REF_SIZE];
    char error[4096];
    char image_hash[65];
    const char *accel;           /* static: "kvm" or "tcg" */
    enum sb_state state;
    int qemu_pid;                /* 0: no VM */
    unsigned vcpus;
    unsigned memory_mb;
    bool restored;               /* from the template snapshot, not a cold boot */
    bool from_pool;
    int64_t created_unix_ms;
    char store_object[SANDBOX_STORE_OBJECT_SIZE]; /* its suspend in the shared store; "" */
    /* now while an exec streams (the scheduler's idle controller reads it) */
    int64_t last_activity_unix_ms;
    struct sandbox_volume volumes[VM_VOLUME_SLOTS]; /* by slot; .used */
};

void sandbox_view_take(struct sandbox *sb, struct sandbox_view *out);

#endif
