/* Files into and out of the snapshot store as deltas (file_delta.h): how
 * every large object there is written and read, so each is checked. */
#ifndef AIRLOCK_SNAPSHOT_DELTA_H
#define AIRLOCK_SNAPSHOT_DELTA_H

#include <jansson.h>
#include <stdbool.h>

#include "airlock_error.h"
#include "file_delta.h"
#include "snapshot_store.h"

enum snapshot_delta_kind {
    SNAPSHOT_DELTA_BLOCKS, /* a disk against the disk it was reflinked from */
    SNAPSHOT_DELTA_PAGES,  /* a migration stream against guest memory */
};

/* Uploads path as object name, a delta against base (NULL: against
 * nothing, a sparse copy); sha256 gets the object's checksum. */
int snapshot_delta_put(struct snapshot_store *st, const char *name, const char *path,
                       const char *base, enum snapshot_delta_kind kind, char sha256[65],
                       struct file_delta_stats *stats, struct airlock_error *e);

/* Rebuilds object name (whose checksum must be sha256) against base
 * (NULL: nothing) into a new file path, fsynced when durable. A failure
 * removes path: DATA_LOSS naming the object when it is corrupt or
 * truncated. */
int snapshot_delta_get(struct snapshot_store *st, const char *name, const char *sha256,
                       const char *base, const char *path, bool durable,
                       struct airlock_error *e);

/* A set's file (a manifest's "files" entry): snapshot_delta_put of path as
 * <set>/<object>, recorded in files under key (sha256, size, stored and
 * literal bytes; stats also gets them when not NULL). */
int snapshot_delta_put_file(struct snapshot_store *st, const char *set, const char *object,
                            const char *key, const char *path, const char *base,
                            enum snapshot_delta_kind kind, json_t *files,
                            struct file_delta_stats *stats, struct airlock_error *e);

/* snapshot_delta_get of <set>/<object> checked against files' entry key:
 * DATA_LOSS naming the set when the entry has no checksum. */
int snapshot_delta_get_file(struct snapshot_store *st, const char *set, const char *object,
                            const char *key, const json_t *files, const char *base,
                            const char *path, bool durable, struct airlock_error *e);

#endif
