/* The steps that turn a guest image into a template snapshot, in a
 * directory the caller then renames into place. */
#ifndef AIRLOCK_TEMPLATE_BUILD_H
#define AIRLOCK_TEMPLATE_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "template.h"

/* Boots the template VM with its RAM in t->mem (shared), waits for the guest
 * daemon, runs spec->customize (if any) on its channel, has the guest sync
 * its disk, stops the vCPUs, saves the device
 * state to t->state, quits QEMU and fsyncs disk, memory and state, then
 * writes t->dir/manifest.json. *ms gets the time taken. On failure the VM is
 * gone; the caller removes the directory. */
int template_build(const struct template_spec *spec, const struct template_snapshot *t,
                   int64_t *ms, char *err, size_t errlen);

/* The template VM has the sandboxes' NIC (a restore needs the same devices)
 * on a TAP in a namespace of its own, named after the build directory
 * (".../.build-XXXXXX" -> "template-XXXXXX", namespace airlock-template-
 * XXXXXX) and deleted after the build; a vmhost that finds a leftover build
 * directory deletes its namespace by the same name. */
int template_build_net_id(const char *build_dir, char *out, size_t outlen);

#endif
