/* The durable record of a sandbox: sandboxes/<id>/sandbox.json, rewritten
 * (temp file, fsync, rename, fsync of the directory; for running and
 * paused without the fsyncs, see sandbox_record_save_nosync) at every change of
 * its stable state, so a vmhost that restarts — after a kill -9 or a clean
 * stop — knows every sandbox it had and what became of it
 * (sandbox_adopt.h). Beside it, policy.pb holds the sandbox's egress
 * policy (protobuf; absent = deny everything), written the same way when
 * the policy is set. A directory without a record is not a sandbox (a
 * create or delete cut short, a pooled VM): the next start removes it.
 * Checkpoints need no record: a checkpoint directory under its own name is
 * complete (checkpoint.h). */
#ifndef AIRLOCK_SANDBOX_RECORD_H
#define AIRLOCK_SANDBOX_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "egress.pb-c.h"
#include "sandbox.h"
#include "sandbox_volume.h"

#define SANDBOX_RECORD_FILE "sandbox.json"
#define SANDBOX_POLICY_FILE "policy.pb"

/* What a record says (the fields a restart acts on; the file also names
 * the disk, sockets, namespace, egress attachment and snapshot for
 * operators: a restart finds those by the sandbox's id). */
struct sandbox_record {
    char id[65];
    enum sb_state state;               /* running, paused, suspended or error */
    enum sb_state stop_suspended_from; /* see struct sandbox; 0 = not */
    char error[4096];
    char template_name[TEMPLATE_REF_SIZE]; /* the version's ref */
    char project_id[SANDBOX_PROJECT_ID_SIZE];
    unsigned vcpus;
    unsigned memory_mb;
    bool restored;
    bool from_pool;
    int64_t created_unix_ms;
    pid_t qemu_pid;                    /* 0: no VM */
    unsigned long long qemu_start_time;
    char store_object[SANDBOX_STORE_OBJECT_SIZE]; /* "" = none */
    struct sandbox_volume volumes[VM_VOLUME_SLOTS]; /* by slot; .used */
};

/* Writes sb's record for its current state. A transient state (suspending,
 * checkpointing, ...) is recorded as the stable one before it. Nothing is
 * written for a sandbox being deleted or not yet created: the first record
 * is written when a create has made it running. */
int sandbox_record_save(struct sandbox *sb, char *err, size_t errlen);
/* The same without the fsyncs, for the states a power cut ends anyway:
 * running (a create's first record) and paused (pause, resume). The record
 * must outlive vmhost, which the page cache does; a power cut takes the VM
 * (and its disk, written with cache=unsafe) along. The fsyncs cost ~3 ms
 * here (a pooled create takes ~5 ms without them), ~40 ms with 8 at once. */
int sandbox_record_save_nosync(struct sandbox *sb, char *err, size_t errlen);

/* Reads dir's record; -1 with the reason when it is missing or unusable. */
int sandbox_record_read(const char *dir, struct sandbox_record *out, char *err, size_t errlen);
bool sandbox_record_exists(const char *dir);

/* Removes the record first thing in a delete: a delete cut short then
 * leaves an unknown directory that the next start removes. */
void sandbox_record_remove(struct sandbox *sb);

/* The policy file: saved when the policy is set (NULL = deny all: the file
 * goes), loaded when the network is attached again. *out NULL = deny all;
 * free it with airlock__egress__v1__policy__free_unpacked. */
int sandbox_policy_save(struct sandbox *sb, const Airlock__Egress__V1__Policy *policy, char *err,
                        size_t errlen);
int sandbox_policy_load(struct sandbox *sb, Airlock__Egress__V1__Policy **out, char *err,
                        size_t errlen);

#endif
