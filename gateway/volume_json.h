/* Volumes as REST's JSON (docs/api.md "Volumes"), the public messages of
 * protos/airlock/v1/volumes.proto field for field: what handlers_volumes.c
 * answers and what a sandbox shows and takes (handlers_sandbox.c). The
 * scheduler judges the values; this only reads their types. */
#ifndef AIRLOCK_GATEWAY_VOLUME_JSON_H
#define AIRLOCK_GATEWAY_VOLUME_JSON_H

#include <jansson.h>

#include "airlock/v1/volumes.pb-c.h"
#include "airlock_error.h"

/* {"name","id","size_mb","used_bytes" (when known),"node",
 * "attached_sandbox" (null: none),"attached_read_only","snapshots",
 * "created_at","from_snapshot"} */
json_t *gw_volume_json(const Airlock__V1__Volume *v);
json_t *gw_volume_snapshot_json(const Airlock__V1__VolumeSnapshot *s);
/* A sandbox's volumes: [{"name","path","read_only","slot"}]. */
json_t *gw_volume_mounts_json(Airlock__V1__VolumeMount *const *mounts, size_t n);

/* A create's "volumes" (an array, or NULL: none) as mounts pointing into
 * it; invalid naming the element (field[i]) that is not {"name":string,
 * "path":string,"read_only":bool}. E2B's volumeMounts ({"name","path"})
 * read the same way. Free *out with free(). */
int gw_volume_mounts_from_json(json_t *list, const char *field, Airlock__V1__VolumeMount ***out,
                               size_t *n, struct airlock_error *e);
void gw_volume_mounts_free(Airlock__V1__VolumeMount **mounts);

#endif
