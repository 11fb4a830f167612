/* Template snapshots: a VM booted once from a guest image until its guest
 * daemon answered, then frozen into three files that every sandbox of the
 * template is restored from:
 *
 *   disk.ext4   the template VM's disk once QEMU is gone; sandboxes get a
 *               reflink (FICLONE) of it
 *   mem         guest RAM (memory-backend-file, written shared by the
 *               template VM); sandboxes map it privately (share=off), so
 *               clean pages stay shared in the page cache
 *   state       device state (QMP migrate with x-ignore-shared), ~70 KiB
 *
 * plus manifest.json. A restore needs the same QEMU binary, accelerator
 * (-cpu), machine options, -m, -smp and device order, so the key is a hash
 * of all of them and of the image: the default template's directory is
 * templates/<key>/ (one per size); a named template's is
 * templates/named/<name>/<version>/ with its key in the manifest
 * (template_named.c). Built under templates/.build-XXXXXX and renamed into
 * place when complete and synced. */
#ifndef AIRLOCK_TEMPLATE_H
#define AIRLOCK_TEMPLATE_H

#include <stdbool.h>

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "egress.pb-c.h"
#include "image.h"
#include "template_spec.h"
#include "vm.h"

struct guest_channel;
struct egress_client;

struct template_spec {
    const char *name;              /* "default", or a named template's ref */
    const struct guest_image *image;
    const char *base_disk;         /* the image's rootfs, already inside the store */
    const char *templates_dir;     /* store/templates */
    const char *qemu_binary;       /* NULL = qemu-system-x86_64 */
    enum vm_accel accel;           /* KVM or TCG */
    struct jailer *jailer;         /* the template VM's jail (vm.h); NULL: unjailed */
    unsigned vcpus;
    unsigned memory_mb;
    int ready_timeout_ms;          /* boot to guest daemon ready */
    /* Named templates (template_named.c) make the guest theirs before the
     * snapshot: customize runs once guestd answered (NULL: nothing to do). */
    int (*customize)(void *arg, struct guest_channel *ch, char *err, size_t errlen);
    void *customize_arg;
    /* The build VM's network is attached to egress with this policy when
     * both are set: what customize's commands may reach. */
    struct egress_client *egress;
    const Airlock__Egress__V1__Policy *network;
    json_t *manifest_extra;        /* merged into manifest.json; may be NULL */
};

struct template_snapshot {
    char name[TEMPLATE_REF_SIZE];
    char key[65];
    char dir[PATH_MAX];
    char disk[PATH_MAX];
    char mem[PATH_MAX];
    char state[PATH_MAX];
    unsigned vcpus;
    unsigned memory_mb;
};

/* Returns the snapshot for spec, building it when it does not exist yet
 * (boot, guest ready, sync, stop, save state, quit; ~5 s under TCG). On
 * failure no partial directory is left and err says what failed. */
int template_snapshot_ensure(const struct template_spec *spec, struct template_snapshot *out,
                             char *err, size_t errlen);

/* Whether spec's snapshot is in the store already (ensure would find it,
 * not build it); false when its key cannot be made. */
bool template_snapshot_present(const struct template_spec *spec);

/* Builds spec's snapshot into final_dir, which must not exist yet (built
 * under templates_dir/.build-XXXXXX and renamed when complete and synced).
 * *ms gets the time taken. On failure nothing is left. */
int template_snapshot_build(const struct template_spec *spec, const char *final_dir,
                            struct template_snapshot *out, int64_t *ms, char *err, size_t errlen);

/* The key of spec's snapshot: a hash of everything a restore must match,
 * so a snapshot whose key differs from today's cannot be restored here. */
int template_snapshot_key(const struct template_spec *spec, char key[65], char *err,
                          size_t errlen);

/* Fills t's paths for the snapshot directory dir. */
int template_snapshot_paths(struct template_snapshot *t, const char *dir, char *err,
                            size_t errlen);

#endif
