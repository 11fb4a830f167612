/* A sandbox's volumes in the shared snapshot store (docs/volumes.md
 * "Across nodes"): a suspend or checkpoint uploaded there carries each
 * attached disk, so the node that resumes the sandbox from it has them —
 * a volume moves with the sandbox that holds it. */
#ifndef AIRLOCK_SANDBOX_VOLUME_SETS_H
#define AIRLOCK_SANDBOX_VOLUME_SETS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "airlock_error.h"

struct sandbox;

/* Each used slot's disk as object <set>/vol<N>.delta (a sparse copy:
 * a volume shares nothing with the template), in files as "vol<N>"; the
 * slots into *volumes (a new JSON array, NULL when there are none).
 * A read-write volume's disk is volumes_dir/vol<N>.img when volumes_dir is
 * not NULL (a checkpoint's copy), else its image: the VM is stopped. The
 * bytes are added to *stored and *size. */
int sandbox_volume_sets_put(struct sandbox *sb, const char *set, const char *volumes_dir,
                            json_t *files, json_t **volumes, uint64_t *stored, uint64_t *size,
                            struct airlock_error *e);

/* A set's volumes (its manifest's "volumes" and "files") into sb's slots:
 * every disk rebuilt in sb's directory and checked first; then a volume's
 * is reflinked into the node's volume store as its image (made, or an older
 * copy replaced: the set is newer than any copy here) and held by sb, a
 * snapshot's stays as the slot's private copy. Volumes made here are
 * deleted again if sb does not stay (sandbox_volumes_keep). durable: synced.
 * On failure sb holds nothing. */
int sandbox_volume_sets_get(struct sandbox *sb, const char *set, const json_t *manifest,
                            bool durable, struct airlock_error *e);

#endif
