/* One template version a sandbox can be restored from (template_registry.h
 * keeps them by name): its snapshot, its manifest and exec defaults, and a
 * reference count. The registry holds one reference while the version is
 * listed; every sandbox made from it, and every create or build in flight,
 * holds another. A version deleted from the registry keeps its files until
 * its last reference goes.
 *
 * A leaf of its own so the sandbox core can drop a sandbox's reference
 * without reaching the registry (which starts warm pools, which build
 * sandboxes). */
#ifndef AIRLOCK_TEMPLATE_VERSION_H
#define AIRLOCK_TEMPLATE_VERSION_H

#include <jansson.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "template.h"
#include "vmhost.pb-c.h"

/* What a deleted version's directory is renamed to before it is removed,
 * so a crash mid-removal never leaves a version that looks loadable. */
#define TEMPLATE_DELETED_PREFIX ".del-"

struct template_version {
    char name[TEMPLATE_NAME_MAX + 1];
    unsigned version;                  /* 0: the default template */
    char ref[TEMPLATE_REF_SIZE];       /* "name:version", or "default" */
    struct template_snapshot snap;
    char image_hash[65];
    json_t *manifest;                  /* named: manifest.json (spec, timings) */
    /* What execs in its sandboxes get unless they set their own. */
    ProtobufCBinaryData *env;          /* "K=V", pointing into env_storage */
    size_t n_env;
    char *env_storage;
    const char *workdir;               /* "" = none; points into manifest */
    struct warm_pool *pool;            /* NULL: none (default sizes but the first) */
    bool owns_pool;                    /* named versions; the default's is vh->pool */
    char named_dir[PATH_MAX];          /* store/templates/named: where deletion renames to */
    atomic_int refs;
    int64_t last_used_ms;              /* default sizes: the registry's choice of which goes */
    bool deleted;                      /* set under the registry's lock, before its release */
    struct template_version *next;     /* the registry's list, under its lock */
};

/* A version with one reference (the registry's), or NULL when out of
 * memory. version 0 names the default template. */
struct template_version *template_version_new(const char *named_dir, const char *name,
                                              unsigned version);
/* Another reference; the caller already holds one, or the registry's lock
 * while t is listed. */
void template_version_get(struct template_version *t);
/* Drops a reference; the last frees t (and removes its files when deleted).
 * NULL is a no-op. */
void template_release(struct template_version *t);

#endif
