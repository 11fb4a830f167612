/* The guest kernel: Debian's cloud kernel, downloaded with apt-get download
 * and unpacked with dpkg-deb -x into cache_dir/kernel-<release>_<version>/
 * (never installed on the host). */
#ifndef AIRLOCK_KERNEL_FETCH_H
#define AIRLOCK_KERNEL_FETCH_H

#include <limits.h>
#include <stdio.h>

#include "image_apt.h"

#define KERNEL_METAPACKAGE "linux-image-cloud-amd64"

struct kernel_pkg {
    char package[APT_NAME_MAX];    /* linux-image-6.1.0-57-cloud-amd64 */
    char version[APT_VERSION_MAX]; /* 6.1.192-3 */
    char release[APT_NAME_MAX];    /* 6.1.0-57-cloud-amd64, as uname -r says */
    char dir[PATH_MAX];
    char vmlinuz[PATH_MAX];
    char modules_dir[PATH_MAX]; /* dir/lib/modules/<release> */
};

/* Finds the real kernel package behind KERNEL_METAPACKAGE at meta_version.
 * The answer is remembered in cache_dir (apt-cache depends is slow). */
int kernel_resolve(const struct apt_ctx *apt, const char *cache_dir, const char *meta_version,
                   struct kernel_pkg *k, char *err, size_t errlen);

/* Downloads and unpacks the kernel unless cached; generates modules.dep
 * (the package ships none) with busybox depmod. */
int kernel_ensure(const struct apt_ctx *apt, const char *cache_dir, const char *busybox,
                  struct kernel_pkg *k, FILE *progress, char *err, size_t errlen);

#endif
