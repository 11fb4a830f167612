/* Sandbox rows in PostgreSQL: lookups scoped by project (a foreign or
 * deleted sandbox is not found, never a different error), creation with an
 * idempotency key, and state transitions that are committed together with
 * their sandbox_transitions row in one statement. A function that fails
 * returns -1 with e set (unavailable when the database is). */
#ifndef AIRLOCK_SCHEDULER_SANDBOX_STORE_H
#define AIRLOCK_SCHEDULER_SANDBOX_STORE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "airlock_error.h"
#include "db.h"
#include "egress.pb-c.h"
#include "quota_store.h"
#include "sandbox_state.h"
#include "scheduler.pb-c.h"
#include "volume_attach.h"
#include "volume_spec.h"

/* Who/why/request of a transition, for the audit rows. */
struct transition_note {
    const char *who;
    const char *why;
    const char *request_id;
};

/* A committed transition, as published on airlock.events.<project>. */
struct sandbox_event {
    char project_id[64];
    char sandbox_id[72];
    const char *state;
    const char *previous;   /* NULL for the first one (creating) */
    char at[40];            /* RFC3339 UTC, the time of its sandbox_transitions row */
};

/* A sandbox row as the Sandbox message. Its strings point into the row
 * (valid until PQclear), its env, metadata and network (the JSON columns)
 * into what this holds. */
#define SANDBOX_JSON_COLUMNS 4
struct sandbox_msg {
    Airlock__Scheduler__V1__Sandbox msg;
    json_t *columns[SANDBOX_JSON_COLUMNS]; /* env, metadata, network (NULL: none set), volumes */
    Airlock__Egress__V1__Policy policy;    /* msg.network when the row has one */
    Airlock__V1__VolumeMount mounts[VOLUME_MOUNTS_MAX]; /* msg.volumes */
    Airlock__V1__VolumeMount *mount_ptrs[VOLUME_MOUNTS_MAX];
};
/* Row `row` of res as *out (store_sandbox_msg_free it, whatever the
 * answer); internal when a JSON column is not what this store writes,
 * capacity when out of memory. */
int store_sandbox_msg(PGresult *res, int row, struct sandbox_msg *out, struct airlock_error *e);
void store_sandbox_msg_free(struct sandbox_msg *m);
const char *store_sandbox_state(PGresult *res, int row);
const char *store_sandbox_node(PGresult *res, int row);
/* Its volumes column: the text of a JSON array (volume_attach.h). */
const char *store_sandbox_volumes(PGresult *res, int row);
/* Its suspend in the shared snapshot store ("" when none). */
const char *store_sandbox_store_object(PGresult *res, int row);
/* The template's row id ("default", "<project>.<name>:<version>"), which
 * the node knows it by; the message shows it without the project. */
const char *store_sandbox_template_id(PGresult *res, int row);

/* What n more sandboxes of the size of row `row` of res ask of the
 * project's quotas. */
void store_sandbox_ask(PGresult *res, int row, int64_t n, struct quota_values *request);

int store_sandbox_get(struct db *db, const char *project_id, const char *id, PGresult **out,
                      struct airlock_error *e);
/* Any project's sandbox: for the gateway's ingress, which a sandbox's
 * traffic token opens, not a project's key. */
int store_sandbox_get_any_project(struct db *db, const char *id, PGresult **out,
                                  struct airlock_error *e);
int store_sandbox_list(struct db *db, const char *project_id, PGresult **out,
                       struct airlock_error *e);

/* Inserts a creating sandbox named id, already placed on the live node
 * with most room for it (nodes.h; no node when none has room; only
 * volumes->node when that is set), with its claims on volumes (the
 * statement fails, inserting nothing, when one is held:
 * volume_attach_refused says why) and its first transition (*created
 * describes it); *row is the sandbox. When the
 * project already has a sandbox with this idempotency key, nothing is
 * inserted: *existing is set and *row is that sandbox (not found when it
 * was deleted since). Only if the project's quotas (quota_defaults where
 * it has none of its own) admit one more sandbox of its size, else quota.
 * An unknown template is invalid, and so is an env, metadata or network
 * string that is not UTF-8 (naming it). */
int store_sandbox_insert(struct db *db, const Airlock__Scheduler__V1__CreateSandboxRequest *req,
                         const char *id, const struct volume_attach *volumes,
                         int node_dead_after_s,
                         const struct quota_values *quota_defaults,
                         const struct transition_note *note, struct sandbox_event *created,
                         PGresult **row, bool *existing, struct airlock_error *e);

/* Frees the idempotency key of sandbox id (a create that never made it),
 * so a retry with the key creates anew. */
int store_sandbox_release_key(struct db *db, const char *id, struct airlock_error *e);

/* The volumes of forks (fork_volumes.h): what they take of the quotas,
 * each fork's volumes column (a JSON array of them, in fork order) and
 * the clones' rows (a JSON array of {"id","name","src"}). */
struct fork_volume_records {
    int64_t volumes, volume_mb;
    const char *columns, *clones;
};

/* Inserts the n forks the node made of `parent` (a row of
 * store_sandbox_get) under fork_ids, all or none: running, in the
 * parent's project, on its node, with its template, size, env, metadata,
 * idle timeout, TTL (counted from their own creation) and egress policy,
 * each with a first transition saying whose fork it is, and with their
 * volumes (their clones recorded as the project's volumes, on the
 * parent's node, and claimed by them); only if the project's quotas admit
 * n more sandboxes of the parent's size and the clones, else quota.
 * *rows: the forks in fork_ids' order (PQclear it). */
int store_forks_insert(struct db *db, PGresult *parent, const char *const *fork_ids, size_t n,
                       const struct fork_volume_records *volumes,
                       const struct quota_values *quota_defaults,
                       const struct transition_note *note, PGresult **rows,
                       struct airlock_error *e);
/* The lifecycle event of fork `row` of store_forks_insert's rows. */
void store_fork_event(PGresult *rows, int row, struct sandbox_event *out);

/* An egress policy as the text of the sandboxes.network column
 * (malloc'd), or NULL with e (invalid) naming the field a
 * jsonb column cannot hold (a string that is not UTF-8). */
char *store_policy_text(const Airlock__Egress__V1__Policy *policy, struct airlock_error *e);

/* Where the sandbox is now: its node, and its suspend in the shared
 * snapshot store ("" when none); the volumes it holds move to the node
 * with it. Not found for a deleted one. */
int store_sandbox_set_stored(struct db *db, const char *id, const char *node_id,
                             const char *store_object, struct airlock_error *e);

/* A suspended sandbox moved from node `from` to node `to` with its suspend
 * still `store_object` (a drain): 0 when moved, 1 when the row changed
 * meanwhile (a resume began, a delete) and was left as it is. */
int store_sandbox_move_suspended(struct db *db, const char *id, const char *from, const char *to,
                                 const char *store_object, struct airlock_error *e);

/* Records the sandbox's egress policy (store_policy_text's); not found
 * for a foreign or deleted one. */
int store_sandbox_set_network(struct db *db, const char *project_id, const char *id,
                              const char *policy_text, struct airlock_error *e);

/* Moves the sandbox's deadline to timeout_s from now; with extend_only a
 * later one stays. Not found for a foreign or deleted one. (A transition
 * to suspended drops it: store_transition.) */
int store_sandbox_set_timeout(struct db *db, const char *project_id, const char *id,
                              uint32_t timeout_s, bool extend_only, struct airlock_error *e);

/* from → to, checked against the state machine and committed with its
 * audit row; *committed describes it and, when row is not NULL, *row is
 * the sandbox as committed (PQclear it). State (naming the
 * state found) when the sandbox is no longer in `from` — another request
 * moved it first. With an ask (NULL: none), only if the project's quotas
 * admit it, else quota. */
int store_transition(struct db *db, const char *id, enum sandbox_state from, enum sandbox_state to,
                     const struct transition_note *note, const struct quota_ask *ask,
                     struct sandbox_event *committed, PGresult **row, struct airlock_error *e);

#endif
