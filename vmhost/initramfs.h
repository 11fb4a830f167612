/* The guest's initramfs: a static busybox, the virtio modules and an /init
 * script that mounts the root disk and hands over to the guest daemon.
 *
 * /init (a shell script) mounts devtmpfs, proc and sysfs, loads the modules
 * in dependency order, and then:
 *   - with "airlock.probe=1" on the kernel command line prints
 *     INITRAMFS_PROBE_MARKER and powers off (the accelerator probe; no disk
 *     needed);
 *   - otherwise waits up to 5 s for /dev/vda, mounts it read-write, moves
 *     /dev, /proc and /sys into it and execs switch_root into
 *     INITRAMFS_GUESTD_PATH, printing INITRAMFS_HANDOVER_MARKER first.
 * Any failure prints "airlock-init: ..." on the console and powers off, so
 * the host sees QEMU exit with the reason in the console log. */
#ifndef AIRLOCK_INITRAMFS_H
#define AIRLOCK_INITRAMFS_H

#include <stddef.h>

#include "initramfs_modules.h"
#include "strbuf.h"

#define INITRAMFS_PROBE_MARKER "AIRLOCK_PROBE_OK"
#define INITRAMFS_HANDOVER_MARKER "airlock-init: starting /usr/sbin/airlock-guestd"
#define INITRAMFS_GUESTD_PATH "/usr/sbin/airlock-guestd"

/* The virtio drivers the VM's devices need (dependencies are added). */
extern const char *const initramfs_module_names[];
extern const size_t initramfs_module_count;

/* The /init script for these modules (paths as in modules.dep). */
void initramfs_init_script(const struct module_list *modules, struct strbuf *out);

/* Writes the archive to path. modules_dir is lib/modules/<version> of the
 * unpacked kernel; busybox must be statically linked. */
int initramfs_write(const char *path, const char *busybox, const char *modules_dir,
                    const struct module_list *modules, const char *init_script, char *err,
                    size_t errlen);

#endif
