/* Checkpoint rows in PostgreSQL (table checkpoints): the control plane's
 * record of what each node holds, listed without asking the node. Callers
 * have already scoped the sandbox to the caller's project. */
#ifndef AIRLOCK_SCHEDULER_CHECKPOINT_STORE_H
#define AIRLOCK_SCHEDULER_CHECKPOINT_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "airlock_error.h"
#include "db.h"
#include "quota_store.h"
#include "scheduler.pb-c.h"

/* What one more checkpoint asks of project_id's quotas. */
void store_checkpoint_ask(const char *project_id, const struct quota_values *quota_defaults,
                          struct quota_ask *out);
/* The names of the periodic checkpoints (controller_checkpoint.c):
 * auto-<unix ms>. */
#define CHECKPOINT_AUTO_PREFIX "auto-"
/* The range of a sandbox's checkpoint_every_s (0: none). */
#define CHECKPOINT_EVERY_MIN_S 10
#define CHECKPOINT_EVERY_MAX_S 86400

/* Records (or replaces a stale row of) checkpoint name and its set in the
 * shared snapshot store ("" = only on its node), only if ask (the
 * sandbox's project's) is admitted, else quota. */
int store_checkpoint_insert(struct db *db, const char *sandbox_id, const char *name,
                            const char *kind, int64_t created_unix_ms, const char *store_object,
                            const struct quota_ask *ask, struct airlock_error *e);
/* The checkpoint a lost sandbox is restored from: name ("" = the newest)
 * among those in the shared store; its set into set and its name into
 * found. State naming the sandbox (and name) when there is none. */
int store_checkpoint_stored(struct db *db, const char *sandbox_id, const char *name, char *set,
                            size_t setlen, char *found, size_t foundlen, struct airlock_error *e);
/* The sandbox's periodic checkpoints but keep ("": all), oldest first
 * (column 0: the name). */
int store_checkpoint_older_auto(struct db *db, const char *sandbox_id, const char *keep,
                                PGresult **older, struct airlock_error *e);
int store_checkpoint_delete(struct db *db, const char *sandbox_id, const char *name,
                            struct airlock_error *e);
/* By name; read rows with store_checkpoint_msg. */
int store_checkpoint_list(struct db *db, const char *sandbox_id, PGresult **out,
                          struct airlock_error *e);
/* Points msg's fields into row `row` of res (valid until PQclear). */
void store_checkpoint_msg(PGresult *res, int row, Airlock__Scheduler__V1__Checkpoint *msg);

#endif
