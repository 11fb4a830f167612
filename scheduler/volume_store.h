/* Volumes in PostgreSQL (migration 15; docs/volumes.md "API"): a
 * project's volumes by name, their snapshots, and the claims sandboxes
 * hold on them (sandbox_volumes, written with the sandbox by
 * store_sandbox_insert). Lookups are scoped by project: a foreign volume
 * is not found, never a different error. A function that fails returns
 * -1 with e set (unavailable when the database is). */
#ifndef AIRLOCK_SCHEDULER_VOLUME_STORE_H
#define AIRLOCK_SCHEDULER_VOLUME_STORE_H

#include <libpq-fe.h>
#include <stdint.h>

#include "airlock/v1/volumes.pb-c.h"
#include "airlock_error.h"
#include "db.h"
#include "quota.h"
#include "volume_spec.h"

#define VOLUME_ID_SIZE 37 /* a UUID's text and its NUL */

/* One volume row as store_volume_get and store_volume_list answer it. */
struct volume_row {
    const char *id, *name, *node, *from_snapshot, *created_at, *holder, *readers;
    uint64_t size_mb;
    bool node_live; /* node set and heard from within --node-dead-after-s */
};
void store_volume_row(PGresult *res, int row, struct volume_row *out);

/* The project's volume `name` (1 row), not found naming it. */
int store_volume_get(struct db *db, const char *project_id, const char *name, int dead_after_s,
                     PGresult **out, struct airlock_error *e);
/* Every volume of the project, by name. */
int store_volume_list(struct db *db, const char *project_id, int dead_after_s, PGresult **out,
                      struct airlock_error *e);

/* A snapshot row: id, name, created_at (RFC 3339), size_mb, node ("":
 * taken before the volume's first use). */
enum { SNAP_ID, SNAP_NAME, SNAP_CREATED, SNAP_SIZE, SNAP_NODE };
/* The snapshots of volume_id, by name. */
int store_volume_snapshots(struct db *db, const char *volume_id, PGresult **out,
                           struct airlock_error *e);
/* Snapshot `name` of volume_id (1 row), not found naming "volume@name". */
int store_volume_snapshot_get(struct db *db, const char *volume_id, const char *volume,
                              const char *name, PGresult **out, struct airlock_error *e);

/* A new volume of the project (its id chosen here, into id), admitted by
 * the quotas (volumes and volume_mb; quota refusing); exists when the
 * name is taken. node NULL: none yet; from_snapshot "" when made empty. */
int store_volume_insert(struct db *db, const char *project_id, const char *name,
                        uint64_t size_mb, const char *node, const char *from_snapshot,
                        const struct quota_values *quota_defaults, char id[VOLUME_ID_SIZE],
                        struct airlock_error *e);

/* Volume id's size to size_mb, only when larger than now (state naming
 * the size otherwise) and admitted by the volume_mb quota. */
int store_volume_resize(struct db *db, const char *project_id, const char *id, const char *name,
                        uint64_t size_mb, const struct quota_values *quota_defaults,
                        struct airlock_error *e);
/* Sets volume id's size back (a grow its node refused). */
int store_volume_size_set(struct db *db, const char *id, uint64_t size_mb,
                          struct airlock_error *e);

/* Deletes volume id with its snapshots; state naming the sandbox when
 * one has it (or a snapshot of it) attached. other_nodes (when not NULL)
 * gets the nodes other than the volume's own that hold snapshots of it
 * (a volume that moved leaves them where they were taken): a row each,
 * the caller's to PQclear. */
int store_volume_delete(struct db *db, const char *id, const char *name, PGresult **other_nodes,
                        struct airlock_error *e);

/* A new snapshot `name` of volume id, of its size and on its node (into
 * snap_id); exists when the volume has one of that name. */
int store_snapshot_insert(struct db *db, const char *volume_id, const char *volume,
                          const char *name, char snap_id[VOLUME_ID_SIZE], struct airlock_error *e);
/* Deletes snapshot snap_id; state naming the sandbox that has it attached. */
int store_snapshot_delete(struct db *db, const char *snap_id, const char *ref,
                          struct airlock_error *e);

/* The sandbox holding volume id (its volume itself, not a snapshot) into
 * holder ("" = none). */
int store_volume_holder(struct db *db, const char *id, char *holder, size_t len,
                        struct airlock_error *e);

/* Records node as the node of every volume sandbox_id holds that has none
 * yet: their first use is there. */
int store_volumes_first_use(struct db *db, const char *sandbox_id, const char *node,
                            struct airlock_error *e);

/* The message of a volume row (strings point into res; snapshots, when
 * given, into snaps). */
struct volume_msg {
    Airlock__V1__Volume msg;
    Airlock__V1__VolumeSnapshot *snaps;
    Airlock__V1__VolumeSnapshot **snap_ptrs;
    char **readers; /* split copy of the row's readers */
    char *readers_text;
};
int store_volume_msg(PGresult *res, int row, PGresult *snaps, struct volume_msg *out,
                     struct airlock_error *e);
void store_volume_msg_free(struct volume_msg *m);
/* Row `row` of a snapshot result as the message (strings into res). */
void store_snapshot_msg(PGresult *res, int row, Airlock__V1__VolumeSnapshot *out);

#endif
