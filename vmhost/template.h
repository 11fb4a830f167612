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
 * (-cpu), machine options, -m, -smp and device order, so the directory name
 * is a hash of all of them and of the image: templates/<key>/. Built under
 * templates/.build-XXXXXX and renamed into place when complete and synced. */
#ifndef AIRLOCK_TEMPLATE_H
#define AIRLOCK_TEMPLATE_H

#include <limits.h>
#include <stddef.h>

#include "image.h"
#include "vm.h"

struct template_spec {
    const char *name;              /* "default" */
    const struct guest_image *image;
    const char *base_disk;         /* the image's rootfs, already inside the store */
    const char *templates_dir;     /* store/templates */
    const char *qemu_binary;       /* NULL = qemu-system-x86_64 */
    enum vm_accel accel;           /* KVM or TCG */
    unsigned vcpus;
    unsigned memory_mb;
    int ready_timeout_ms;          /* boot to guest daemon ready */
};

struct template_snapshot {
    char name[64];
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

#endif
