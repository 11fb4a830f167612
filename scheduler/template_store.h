/* A project's templates in PostgreSQL (docs/templates.md). A version is a
 * row of `templates` whose id is "<project>.<name>:<version>" — the name
 * its node knows it by, and what sandboxes.template holds; "default" is
 * the shared row. States: building (a build in flight holds the version
 * number), ready, deleted (kept: deleted sandboxes still name it). A
 * function that fails returns -1 with e set (unavailable when the
 * database is). */
#ifndef AIRLOCK_SCHEDULER_TEMPLATE_STORE_H
#define AIRLOCK_SCHEDULER_TEMPLATE_STORE_H

#include <stdbool.h>

#include "airlock_error.h"
#include "db.h"
#include "quota.h"
#include "scheduler.pb-c.h"
#include "template_spec.h"

/* How long any build may take (service_template.c follows one that long
 * at most), so a version building for longer is a dead scheduler's; a
 * plain number: the quotas' SQL has it as text too (quota_store.h). */
#define TEMPLATE_BUILD_MAX_S 7200

#define TEMPLATE_USER_NAME_MAX 64
#define TEMPLATE_ID_SIZE 200

/* What a create needs of its template. */
struct template_choice {
    char id[TEMPLATE_ID_SIZE];     /* "default" or "<project>.<name>:<version>" */
    unsigned cpus, memory_mb;      /* 0 for "default" (the request decides) */
};

/* ref "" or "default", "name" (the newest ready version) or "name:N" of
 * project: not found naming it when the project has none such. */
int store_template_choose(struct db *db, const char *project_id, const char *ref,
                          struct template_choice *out, struct airlock_error *e);

/* A new version of name (one more than any before it, deleted ones
 * included) in state building on node: its id and version; only if the
 * project's quotas (quota_defaults where it has none of its own) admit
 * one more template and one more build, else quota. */
int store_template_begin(struct db *db, const char *project_id, const char *name,
                         const char *node_id, const char *spec_json,
                         const struct quota_values *quota_defaults, char *id, size_t idlen,
                         unsigned *version, struct airlock_error *e);
/* building -> ready with the size, build time and shared-store set
 * ("" = not published) the node reported. */
int store_template_ready(struct db *db, const char *id, unsigned cpus, unsigned memory_mb,
                         unsigned build_ms, const char *store_object, struct airlock_error *e);
/* A failed build's row goes (no sandbox ever named it). */
void store_template_abort(struct db *db, const char *id);

/* Ready versions of project: all (name NULL), or of name (version 0 = all
 * of them), newest last. Rows for store_template_msg. */
int store_template_find(struct db *db, const char *project_id, const char *name, unsigned version,
                        PGresult **out, struct airlock_error *e);
void store_template_msg(PGresult *res, int row, Airlock__Scheduler__V1__Template *msg);
/* Columns of a store_template_find row. */
const char *store_template_id(PGresult *res, int row);
const char *store_template_node(PGresult *res, int row);
const char *store_template_object(PGresult *res, int row);

/* Template id's set in the shared snapshot store into out ("" = none, or
 * no such template). */
int store_template_object_of(struct db *db, const char *id, char *out, size_t len,
                             struct airlock_error *e);
/* The nodes that may hold template id: builder and every node whose
 * heartbeat lists it (fetched copies), one id per row. */
int store_template_holders(struct db *db, const char *id, const char *builder, PGresult **out,
                           struct airlock_error *e);

/* A sandbox (not deleted) made from name's version (0 = any of them):
 * its id, or "" when none. */
int store_template_user(struct db *db, const char *project_id, const char *name, unsigned version,
                        char *sandbox, size_t len, struct airlock_error *e);
int store_template_mark_deleted(struct db *db, const char *id, struct airlock_error *e);

/* The node taking work (live within dead_after_s and active:
 * NODES_TAKING_WORK) with the most free memory: where a build goes.
 * Capacity when there is none. */
int store_template_pick_node(struct db *db, int dead_after_s, char *node, size_t len,
                             struct airlock_error *e);

/* For display: a template id without its "<project>." prefix. */
const char *template_display_name(const char *id, const char *project_id);

#endif
