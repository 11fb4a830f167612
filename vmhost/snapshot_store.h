/* The snapshot store the nodes share (docs/snapshot-store.md): where a
 * suspend puts the sandbox so any node can resume it, and where template
 * snapshots are published for the nodes that lack them.
 *
 * It holds objects by name ("sandboxes/<id>/<generation>/state.delta").
 * Writes are atomic: an upload is invisible until committed (the directory
 * backend writes a temporary file, fsyncs and renames it). An object set
 * (a suspend, a template) is complete once its manifest.json exists: it is
 * written last. Every object but the manifests is a delta
 * (file_delta.h), whose sha256 the manifest records, so every read is
 * checked.
 *
 * Backends behind an ops table (snapshot_store_internal.h): a directory
 * shared by the nodes (NFS, CephFS, a ReadWriteMany volume), or a bucket
 * of an S3-compatible object store ("s3://BUCKET[/PREFIX]"). */
#ifndef AIRLOCK_SNAPSHOT_STORE_H
#define AIRLOCK_SNAPSHOT_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "airlock_error.h"

struct snapshot_store;
struct snapshot_upload;

struct snapshot_store_config {
    /* A directory's absolute path, or "s3://BUCKET[/PREFIX]". */
    const char *location;
    /* S3 only: the endpoint ("https://s3.eu-west-1.amazonaws.com", or a
     * compatible server's URL; buckets are addressed by path), the region
     * requests are signed for (NULL: us-east-1), a file holding
     * "ACCESS_KEY_ID:SECRET_ACCESS_KEY" (private to its owner), and a
     * local directory where objects are staged on their way. */
    const char *endpoint;
    const char *region;
    const char *credentials_file;
    const char *spool_dir;
};

/* Opens the store, checking that it can be written to. INVALID_ARGUMENT
 * or UNAVAILABLE naming it. */
int snapshot_store_open(const struct snapshot_store_config *cfg, struct snapshot_store **out,
                        struct airlock_error *e);
void snapshot_store_close(struct snapshot_store *st);
/* The location, for logs and errors. */
const char *snapshot_store_where(const struct snapshot_store *st);

/* Starts writing object name: *fd is where its bytes go (from offset 0).
 * Nothing is visible under name until commit. */
int snapshot_upload_begin(struct snapshot_store *st, const char *name,
                          struct snapshot_upload **out, int *fd, struct airlock_error *e);
/* Makes the object durable and visible under its name, replacing one of
 * that name; frees u either way. A full store is CAPACITY naming it. */
int snapshot_upload_commit(struct snapshot_upload *u, struct airlock_error *e);
/* Drops an upload: nothing is left. */
void snapshot_upload_abort(struct snapshot_upload *u);

/* Writes set's manifest.json, which completes the set (written last),
 * atomically. */
int snapshot_store_put_manifest(struct snapshot_store *st, const char *set, const json_t *m,
                                struct airlock_error *e);
/* Reads set's manifest: NOT_FOUND naming it when the set is absent or
 * incomplete, DATA_LOSS when it is not a JSON object (of at most 1 MiB). */
int snapshot_store_get_manifest(struct snapshot_store *st, const char *set, json_t **out,
                                struct airlock_error *e);
/* Whether set is complete: its manifest exists. */
bool snapshot_store_has_set(struct snapshot_store *st, const char *set);
/* Opens an object for reading from its start: close *fd after. */
int snapshot_store_open_object(struct snapshot_store *st, const char *name, int *fd,
                               struct airlock_error *e);
/* Removes every object whose name starts with prefix + "/" (an object
 * set); nothing there is not an error. */
int snapshot_store_remove_set(struct snapshot_store *st, const char *prefix,
                              struct airlock_error *e);

#endif
