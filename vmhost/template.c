/* Finding a template snapshot by its key, or building it. */
#include "template.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "content_hash.h"
#include "fsutil.h"
#include "log.h"
#include "template_build.h"
#include "vm_tsc.h"

/* Bump when the template's QEMU command line or build steps change. */
/* 2: the template VM has the NIC; 3: idle at the snapshot; 4: the NIC
 * without guest_announce (vm.c); 5: the volume slots (vm.h) */
#define TEMPLATE_FORMAT_VERSION "5"

int template_snapshot_key(const struct template_spec *spec, char key[65], char *err, size_t errlen)
{
    char *version = vm_qemu_version(spec->qemu_binary, err, errlen);
    if (!version)
        return -1;
    struct content_hash h;
    if (content_hash_init(&h, err, errlen) < 0) {
        free(version);
        return -1;
    }
    char num[64];
    content_hash_add_str(&h, "format", TEMPLATE_FORMAT_VERSION);
    content_hash_add_str(&h, "image", spec->image->hash);
    content_hash_add_str(&h, "qemu", spec->qemu_binary ? spec->qemu_binary : "");
    content_hash_add_str(&h, "qemu-version", version);
    content_hash_add_str(&h, "accel", vm_accel_name(spec->accel));
    snprintf(num, sizeof(num), "%u", spec->vcpus);
    content_hash_add_str(&h, "vcpus", num);
    snprintf(num, sizeof(num), "%u", spec->memory_mb);
    content_hash_add_str(&h, "memory-mb", num);
    snprintf(num, sizeof(num), "%ld", vm_host_tsc_khz());
    content_hash_add_str(&h, "tsc-khz", num);
    content_hash_final(&h, key);
    free(version);
    return 0;
}

int template_snapshot_paths(struct template_snapshot *t, const char *dir, char *err, size_t errlen)
{
    if (fs_path(t->dir, sizeof(t->dir), "%s", dir) < 0 ||
        fs_path(t->disk, sizeof(t->disk), "%s/disk.ext4", dir) < 0 ||
        fs_path(t->mem, sizeof(t->mem), "%s/mem", dir) < 0 ||
        fs_path(t->state, sizeof(t->state), "%s/state", dir) < 0) {
        snprintf(err, errlen, "template path too long: %s", dir);
        return -1;
    }
    return 0;
}

static void snapshot_describe(const struct template_spec *spec, struct template_snapshot *out)
{
    memset(out, 0, sizeof(*out));
    snprintf(out->name, sizeof(out->name), "%s", spec->name);
    out->vcpus = spec->vcpus;
    out->memory_mb = spec->memory_mb;
}

int template_snapshot_build(const struct template_spec *spec, const char *final_dir,
                            struct template_snapshot *out, int64_t *ms, char *err, size_t errlen)
{
    snapshot_describe(spec, out);
    if (template_snapshot_key(spec, out->key, err, errlen) < 0 ||
        template_snapshot_paths(out, final_dir, err, errlen) < 0)
        return -1;
    char build_dir[PATH_MAX];
    if (fs_path(build_dir, sizeof(build_dir), "%s/.build-XXXXXX", spec->templates_dir) < 0 ||
        !mkdtemp(build_dir)) {
        snprintf(err, errlen, "create a build directory in %s: %s", spec->templates_dir,
                 strerror(errno));
        return -1;
    }
    struct template_snapshot building = *out;
    if (template_snapshot_paths(&building, build_dir, err, errlen) < 0 ||
        template_build(spec, &building, ms, err, errlen) < 0 ||
        fs_fsync_dir(build_dir, err, errlen) < 0)
        goto fail;
    if (rename(build_dir, out->dir) < 0) {
        snprintf(err, errlen, "rename %s to %s: %s", build_dir, out->dir, strerror(errno));
        goto fail;
    }
    return 0;
fail:;
    char ignored[256];
    fs_remove_tree(build_dir, ignored, sizeof(ignored));
    return -1;
}

bool template_snapshot_present(const struct template_spec *spec)
{
    char key[65], dir[PATH_MAX], ignored[256];
    return template_snapshot_key(spec, key, ignored, sizeof(ignored)) == 0 &&
           fs_path(dir, sizeof(dir), "%s/%s", spec->templates_dir, key) == 0 &&
           access(dir, F_OK) == 0;
}

int template_snapshot_ensure(const struct template_spec *spec, struct template_snapshot *out,
                             char *err, size_t errlen)
{
    char key[65], dir[PATH_MAX];
    if (template_snapshot_key(spec, key, err, errlen) < 0)
        return -1;
    if (fs_path(dir, sizeof(dir), "%s/%s", spec->templates_dir, key) < 0) {
        snprintf(err, errlen, "templates directory path too long: %s", spec->templates_dir);
        return -1;
    }
    /* The directory only ever appears complete (renamed into place). */
    if (access(dir, F_OK) == 0) {
        snapshot_describe(spec, out);
        memcpy(out->key, key, sizeof(out->key));
        log_info("template snapshot found", "template=%s key=%.16s vcpus=%u memory_mb=%u",
                 spec->name, key, spec->vcpus, spec->memory_mb);
        return template_snapshot_paths(out, dir, err, errlen);
    }
    int64_t ms = 0;
    if (template_snapshot_build(spec, dir, out, &ms, err, errlen) < 0 ||
        fs_fsync_dir(spec->templates_dir, err, errlen) < 0)
        return -1;
    log_info("template snapshot built", "template=%s key=%.16s vcpus=%u memory_mb=%u ms=%lld",
             spec->name, out->key, spec->vcpus, spec->memory_mb, (long long)ms);
    return 0;
}
