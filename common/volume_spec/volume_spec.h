/* The rules of volumes (docs/volumes.md "API", protos/airlock/v1/
 * volumes.proto) that need no database: names, sizes, "vol@snap"
 * references and a sandbox's mounts. Pure, so the scheduler (which
 * decides) and the CLI (which parses --volume) follow the same ones, and
 * a unit test covers them. Each check that fails returns -1 with e
 * (invalid) naming the field. */
#ifndef AIRLOCK_VOLUME_SPEC_H
#define AIRLOCK_VOLUME_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "airlock_error.h"

/* [a-z0-9][a-z0-9_-]{0,62}: a volume's or a snapshot's name. */
#define VOLUME_NAME_MAX 63
/* "vol@snap" */
#define VOLUME_REF_MAX (2 * VOLUME_NAME_MAX + 1)
#define VOLUME_SIZE_MIN_MB 1
#define VOLUME_SIZE_MAX_MB UINT64_C(1048576) /* 1 TiB */
/* The VM's volume slots (guest.proto VolumeRequest.slot). */
#define VOLUME_MOUNTS_MAX 4
/* A mount's path, at most (guestd's mount point). */
#define VOLUME_PATH_MAX 256

/* Whether name is [a-z0-9][a-z0-9_-]{0,62}. */
bool volume_name_valid(const char *name);

/* name as a volume's or snapshot's name, field naming it in the message. */
int volume_name_check(const char *field, const char *name, struct airlock_error *e);

/* size_mb in VOLUME_SIZE_MIN_MB..VOLUME_SIZE_MAX_MB. */
int volume_size_check(const char *field, uint64_t size_mb, struct airlock_error *e);

/* A reference: "vol" (snapshot "") or "vol@snap", each part a valid name;
 * volume and snapshot get VOLUME_NAME_MAX + 1 bytes each. */
struct volume_ref {
    char volume[VOLUME_NAME_MAX + 1];
    char snapshot[VOLUME_NAME_MAX + 1];
};
int volume_ref_parse(const char *field, const char *text, struct volume_ref *out,
                     struct airlock_error *e);

/* A mount path: absolute, at most VOLUME_PATH_MAX bytes, no "." or ".."
 * component, no empty one but a trailing '/', and not /, /proc, /sys,
 * /dev or below them. */
int volume_path_check(const char *field, const char *path, struct airlock_error *e);

/* One mount of a create, as given. */
struct volume_mount_spec {
    const char *name; /* "vol" or "vol@snap" */
    const char *path;
    bool read_only;
};

/* A sandbox's mounts (at most VOLUME_MOUNTS_MAX; each name, path and
 * read_only valid: a snapshot only read-only; no volume twice, whether
 * as itself or a snapshot; no path twice): refs[i] is mounts[i]'s
 * reference. Fields are named "volumes[i].name" and so on. */
int volume_mounts_check(const struct volume_mount_spec *mounts, size_t n,
                        struct volume_ref refs[VOLUME_MOUNTS_MAX], struct airlock_error *e);

/* The CLI's --volume "name:/path[:ro]" as a mount (name and path point
 * into buf, a copy of text of bufsize bytes). Only the form is checked
 * here; the scheduler judges the rest. */
int volume_mount_parse(const char *text, char *buf, size_t bufsize, struct volume_mount_spec *out,
                       struct airlock_error *e);

/* A fork's clone of volume `volume` for fork sandbox `sandbox_id`:
 * "<volume>-<sandbox id>", the volume's part cut so that the whole is at
 * most VOLUME_NAME_MAX bytes (a sandbox id, sb_ and [a-z0-9], keeps it a
 * valid name). */
void volume_fork_name(const char *volume, const char *sandbox_id, char *out, size_t outlen);

#endif
