#include "kernel_fetch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "image_progress.h"

#define KERNEL_PACKAGE_PREFIX "linux-image-"

static int kernel_paths(const char *cache_dir, struct kernel_pkg *k, char *err, size_t errlen)
{
    snprintf(k->release, sizeof(k->release), "%s", k->package + strlen(KERNEL_PACKAGE_PREFIX));
    if (fs_path(k->dir, sizeof(k->dir), "%s/kernel-%s_%s", cache_dir, k->release, k->version) ||
        fs_path(k->vmlinuz, sizeof(k->vmlinuz), "%s/boot/vmlinuz-%s", k->dir, k->release) ||
        fs_path(k->modules_dir, sizeof(k->modules_dir), "%s/lib/modules/%s", k->dir,
                k->release)) {
        snprintf(err, errlen, "kernel: cache path under %s too long", cache_dir);
        return -1;
    }
    return 0;
}

int kernel_resolve(const struct apt_ctx *apt, const char *cache_dir, const char *meta_version,
                   struct kernel_pkg *k, char *err, size_t errlen)
{
    memset(k, 0, sizeof(*k));
    char memo[PATH_MAX];
    snprintf(memo, sizeof(memo), "%s/apt/%s_%s.resolved", cache_dir, KERNEL_METAPACKAGE,
             meta_version);
    char *text = NULL;
    if (fs_read_file(memo, 4096, &text, NULL, NULL, 0) == 0) {
        int ok = sscanf(text, "%127s %95s", k->package, k->version) == 2 &&
                 strncmp(k->package, KERNEL_PACKAGE_PREFIX, strlen(KERNEL_PACKAGE_PREFIX)) == 0;
        free(text);
        if (ok)
            return kernel_paths(cache_dir, k, err, errlen);
    }

    if (apt_depends_with_prefix(apt, KERNEL_METAPACKAGE, KERNEL_PACKAGE_PREFIX, k->package,
                                sizeof(k->package), err, errlen) < 0)
        return -1;
    const char *names[] = { k->package };
    char versions[1][APT_VERSION_MAX];
    if (apt_candidates(apt, names, 1, versions, err, errlen) < 0)
        return -1;
    snprintf(k->version, sizeof(k->version), "%s", versions[0]);
    if (kernel_paths(cache_dir, k, err, errlen) < 0)
        return -1;

    char line[APT_NAME_MAX + APT_VERSION_MAX + 4];
    int n = snprintf(line, sizeof(line), "%s %s\n", k->package, k->version);
    return fs_write_file_atomic(memo, line, (size_t)n, 0644, err, errlen);
}

int kernel_ensure(const struct apt_ctx *apt, const char *cache_dir, const char *busybox,
                  struct kernel_pkg *k, FILE *progress, char *err, size_t errlen)
{
    struct stat st;
    if (stat(k->vmlinuz, &st) == 0) {
        image_progress(progress, "kernel %s (%s): cached", k->release, k->version);
        return 0;
    }
    double t0 = monotonic_seconds();
    char tmp[PATH_MAX], deb[PATH_MAX], size[32];
    if (fs_path(tmp, sizeof(tmp), "%s.tmp.XXXXXX", k->dir) < 0 || !mkdtemp(tmp)) {
        snprintf(err, errlen, "mkdtemp %s: %s", tmp, strerror(errno));
        return -1;
    }
    if (apt_download(apt, k->package, k->version, tmp, deb, sizeof(deb), err, errlen) < 0)
        goto fail;
    stat(deb, &st);
    image_progress(progress, "kernel %s: downloaded %s (%s) in %.1f s", k->release, k->package,
                   fs_human_size((unsigned long long)st.st_size, size, sizeof(size)),
                   monotonic_seconds() - t0);

    const char *extract[] = { "dpkg-deb", "-x", deb, tmp, NULL };
    if (run_command(extract, NULL, NULL, err, errlen) < 0)
        goto fail;
    unlink(deb);

    char modules_dep[PATH_MAX];
    if (fs_path(modules_dep, sizeof(modules_dep), "%s/lib/modules/%s/modules.dep", tmp,
                k->release) == 0 && stat(modules_dep, &st) < 0) {
        const char *depmod[] = { busybox, "depmod", "-b", tmp, k->release, NULL };
        if (run_command(depmod, NULL, NULL, err, errlen) < 0)
            goto fail;
    }
    if (rename(tmp, k->dir) < 0) {
        snprintf(err, errlen, "rename %s to %s: %s", tmp, k->dir, strerror(errno));
        goto fail;
    }
    if (fs_fsync_dir(cache_dir, err, errlen) < 0)
        return -1;
    image_progress(progress, "kernel %s: unpacked to %s (%s) in %.1f s", k->release, k->dir,
                   fs_human_size(fs_disk_usage(k->dir), size, sizeof(size)),
                   monotonic_seconds() - t0);
    return 0;

fail:
    fs_remove_tree(tmp, NULL, 0);
    return -1;
}
