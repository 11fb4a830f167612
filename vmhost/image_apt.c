#include "image_apt.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"

#define APT_LISTS_DIR "/var/lib/apt/lists"
#define APT_UPDATE_HINT "run 'apt-get update' first (apt's package lists under " APT_LISTS_DIR " are missing or stale)"

static bool apt_lists_present(void)
{
    DIR *d = opendir(APT_LISTS_DIR);
    if (!d)
        return false;
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d)))
        found = strstr(e->d_name, "_Packages") != NULL;
    closedir(d);
    return found;
}

int apt_ctx_init(struct apt_ctx *a, const char *cache_dir, char *err, size_t errlen)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/apt", cache_dir);
    if (fs_mkdir_p(dir, 0755, err, errlen) < 0)
        return -1;
    snprintf(a->pkgcache_opt, sizeof(a->pkgcache_opt), "Dir::Cache::pkgcache=%s/pkgcache.bin",
             dir);
    snprintf(a->srcpkgcache_opt, sizeof(a->srcpkgcache_opt),
             "Dir::Cache::srcpkgcache=%s/srcpkgcache.bin", dir);
    if (!apt_lists_present()) {
        snprintf(err, errlen, "apt knows no packages: %s", APT_UPDATE_HINT);
        return -1;
    }
    return 0;
}

int apt_parse_policy(const char *output, const char *name, char *version, size_t versionlen)
{
    size_t n = strlen(name);
    bool in_block = false;
    for (const char *line = output; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        if (len > 0 && line[0] != ' ') /* "name:" or "name:arch:" opens a block */
            in_block = len > n && strncmp(line, name, n) == 0 && line[n] == ':';
        else if (in_block) {
            const char *p = line;
            while (*p == ' ')
                p++;
            if (strncmp(p, "Candidate: ", 11) == 0) {
                p += 11;
                size_t vlen = len - (size_t)(p - line);
                if (vlen == 0 || vlen >= versionlen || strncmp(p, "(none)", 6) == 0)
                    return -1;
                memcpy(version, p, vlen);
                version[vlen] = '\0';
                return 0;
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    return -1;
}

int apt_candidates(const struct apt_ctx *a, const char *const names[], size_t n,
                   char (*versions)[APT_VERSION_MAX], char *err, size_t errlen)
{
    const char **argv = calloc(n + 7, sizeof(*argv));
    char *output = NULL;
    int rc = -1;
    if (!argv) {
        snprintf(err, errlen, "apt-cache policy: out of memory");
        return -1;
    }
    size_t i = 0;
    argv[i++] = "apt-cache";
    argv[i++] = "-o";
    argv[i++] = a->pkgcache_opt;
    argv[i++] = "-o";
    argv[i++] = a->srcpkgcache_opt;
    argv[i++] = "policy";
    for (size_t k = 0; k < n; k++)
        argv[i++] = names[k];
    if (run_command(argv, NULL, &output, err, errlen) < 0)
        goto out;
    for (size_t k = 0; k < n; k++) {
        if (apt_parse_policy(output, names[k], versions[k], APT_VERSION_MAX) < 0) {
            snprintf(err, errlen, "apt has no installable version of package '%s': %s",
                     names[k], APT_UPDATE_HINT);
            goto out;
        }
    }
    rc = 0;
out:
    free(output);
    free(argv);
    return rc;
}

int apt_depends_with_prefix(const struct apt_ctx *a, const char *name, const char *prefix,
                            char *dep, size_t deplen, char *err, size_t errlen)
{
    const char *argv[] = { "apt-cache", "-o", a->pkgcache_opt, "-o", a->srcpkgcache_opt,
                           "depends", name, NULL };
    char *output = NULL;
    if (run_command(argv, NULL, &output, err, errlen) < 0) {
        size_t used = strlen(err);
        snprintf(err + used, errlen - used, " (%s)", APT_UPDATE_HINT);
        free(output);
        return -1;
    }
    int rc = -1;
    for (char *save = NULL, *line = strtok_r(output, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        char *p = line;
        while (*p == ' ' || *p == '|')
            p++;
        if (strncmp(p, "Depends: ", 9) != 0)
            continue;
        p += 9;
        if (strncmp(p, prefix, strlen(prefix)) == 0) {
            snprintf(dep, deplen, "%.*s", (int)strcspn(p, " \t<>"), p);
            rc = 0;
            break;
        }
    }
    if (rc < 0)
        snprintf(err, errlen, "package '%s' depends on no '%s*' package (apt-cache depends %s)",
                 name, prefix, name);
    free(output);
    return rc;
}

int apt_download(const struct apt_ctx *a, const char *name, const char *version, const char *dir,
                 char *deb_path, size_t deb_pathlen, char *err, size_t errlen)
{
    char spec[APT_NAME_MAX + APT_VERSION_MAX + 2];
    snprintf(spec, sizeof(spec), "%s=%s", name, version);
    /* As root, apt would hand the download to the _apt user, which cannot
     * write into our private temp dir. */
    const char *argv[] = { "apt-get", "-q", "-o", a->pkgcache_opt, "-o", a->srcpkgcache_opt,
                           "-o", "APT::Sandbox::User=root", "download", spec, NULL };
    if (run_command(argv, dir, NULL, err, errlen) < 0)
        return -1;
    DIR *d = opendir(dir);
    struct dirent *e;
    int rc = -1;
    while (d && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".deb") == 0 &&
            strncmp(e->d_name, name, strlen(name)) == 0) {
            snprintf(deb_path, deb_pathlen, "%s/%s", dir, e->d_name);
            rc = 0;
            break;
        }
    }
    if (d)
        closedir(d);
    if (rc < 0)
        snprintf(err, errlen, "apt-get download %s: no .deb appeared in %s", spec, dir);
    return rc;
}
