/* Queries to the host's apt (never installs anything on the host).
 *
 * apt on this kind of host keeps no binary package cache, so every
 * apt-cache call parses all lists (~1 s). We point apt at a cache of our
 * own under cache_dir/apt/; apt revalidates it against the lists itself,
 * and a query then takes milliseconds. */
#ifndef AIRLOCK_IMAGE_APT_H
#define AIRLOCK_IMAGE_APT_H

#include <limits.h>
#include <stddef.h>

#define APT_VERSION_MAX 96
#define APT_NAME_MAX 128

struct apt_ctx {
    char pkgcache_opt[PATH_MAX + 64];
    char srcpkgcache_opt[PATH_MAX + 64];
};

int apt_ctx_init(struct apt_ctx *a, const char *cache_dir, char *err, size_t errlen);

/* Candidate versions of names[i] into versions[i]. Fails naming the first
 * package without a candidate (and suggests apt-get update). */
int apt_candidates(const struct apt_ctx *a, const char *const names[], size_t n,
                   char (*versions)[APT_VERSION_MAX], char *err, size_t errlen);

/* The first "Depends:" of the candidate of name that starts with prefix
 * (e.g. linux-image-cloud-amd64 -> linux-image-6.1.0-57-cloud-amd64). */
int apt_depends_with_prefix(const struct apt_ctx *a, const char *name, const char *prefix,
                            char *dep, size_t deplen, char *err, size_t errlen);

/* apt-get download name=version into dir; the .deb's path into deb_path. */
int apt_download(const struct apt_ctx *a, const char *name, const char *version, const char *dir,
                 char *deb_path, size_t deb_pathlen, char *err, size_t errlen);

/* Parses `apt-cache policy` output: the candidate of name, or -1. */
int apt_parse_policy(const char *output, const char *name, char *version, size_t versionlen);

#endif
