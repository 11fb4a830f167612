/* The snapshot store's backends: an ops table each (snapshot_store_dir.c). */
#ifndef AIRLOCK_SNAPSHOT_STORE_INTERNAL_H
#define AIRLOCK_SNAPSHOT_STORE_INTERNAL_H

#include "snapshot_store.h"

struct snapshot_store_ops {
    int (*upload_begin)(struct snapshot_store *st, const char *name,
                        struct snapshot_upload **out, int *fd, struct airlock_error *e);
    int (*upload_commit)(struct snapshot_upload *u, struct airlock_error *e);
    void (*upload_abort)(struct snapshot_upload *u);
    int (*open_object)(struct snapshot_store *st, const char *name, int *fd,
                       struct airlock_error *e);
    bool (*exists)(struct snapshot_store *st, const char *name);
    int (*remove_set)(struct snapshot_store *st, const char *prefix, struct airlock_error *e);
    void (*close)(struct snapshot_store *st);
};

/* An upload in progress; backend holds the backend's own part. */
struct snapshot_upload {
    struct snapshot_store *st;
    int fd; /* where the object's bytes go */
    void *backend;
};

struct snapshot_store {
    const struct snapshot_store_ops *ops;
    char where[4096];
    void *backend;
};

/* A directory shared by the nodes (snapshot_store_dir.c). */
int snapshot_store_dir_open(const char *dir, struct snapshot_store *st, struct airlock_error *e);
/* An S3-compatible object store (snapshot_store_s3.c). */
int snapshot_store_s3_open(const struct snapshot_store_config *cfg, struct snapshot_store *st,
                           struct airlock_error *e);

#endif
