#include "template_spec.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool lower_or_digit(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool template_name_valid(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > TEMPLATE_NAME_MAX || !lower_or_digit(name[0]))
        return false;
    for (size_t i = 1; i < n; i++)
        if (!lower_or_digit(name[i]) && !strchr("_.-", name[i]))
            return false;
    return true;
}

bool template_ref_parse(const char *ref, char *name, size_t namelen, unsigned *version)
{
    *version = 0;
    const char *colon = strchr(ref, ':');
    size_t n = colon ? (size_t)(colon - ref) : strlen(ref);
    if (n >= namelen)
        return false;
    memcpy(name, ref, n);
    name[n] = '\0';
    if (!template_name_valid(name))
        return false;
    if (!colon)
        return true;
    char *end;
    unsigned long v = strtoul(colon + 1, &end, 10);
    if (colon[1] < '1' || colon[1] > '9' || *end || v > UINT_MAX)
        return false;
    *version = (unsigned)v;
    return true;
}

/* Debian package names (Policy 5.6.1): lower-case letters, digits, + - .,
 * at least two characters, starting with a letter or digit. */
static bool package_name_valid(const char *p)
{
    size_t n = strlen(p);
    if (n < 2 || n > 128 || !lower_or_digit(p[0]))
        return false;
    for (size_t i = 1; i < n; i++)
        if (!lower_or_digit(p[i]) && !strchr("+-.", p[i]))
            return false;
    return true;
}

static bool env_key_valid(const char *k)
{
    if (!*k || (*k >= '0' && *k <= '9'))
        return false;
    for (; *k; k++)
        if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') || (*k >= '0' && *k <= '9') ||
              *k == '_'))
            return false;
    return true;
}

static int check_path(const char *field, const char *path, char *err, size_t errlen)
{
    if (path[0] != '/') {
        snprintf(err, errlen, "%s: must be an absolute path, not \"%.100s\"", field, path);
        return -1;
    }
    if (strlen(path) >= PATH_MAX) {
        snprintf(err, errlen, "%s: longer than %d bytes", field, PATH_MAX - 1);
        return -1;
    }
    return 0;
}

static int check_command(const char *field, const char *cmd, char *err, size_t errlen)
{
    if (!*cmd) {
        snprintf(err, errlen, "%s: empty command", field);
        return -1;
    }
    if (strlen(cmd) > TEMPLATE_MAX_COMMAND) {
        snprintf(err, errlen, "%s: longer than %d bytes", field, TEMPLATE_MAX_COMMAND);
        return -1;
    }
    return 0;
}

static int check_files(const Airlock__Vmhost__V1__TemplateSpec *spec, char *err, size_t errlen)
{
    if (spec->n_files > TEMPLATE_MAX_FILES) {
        snprintf(err, errlen, "files: more than %d files", TEMPLATE_MAX_FILES);
        return -1;
    }
    size_t total = 0;
    for (size_t i = 0; i < spec->n_files; i++) {
        const Airlock__Vmhost__V1__TemplateFile *f = spec->files[i];
        char field[64];
        snprintf(field, sizeof(field), "files[%zu].path", i);
        if (check_path(field, f->path, err, errlen) < 0)
            return -1;
        if (f->content.len > TEMPLATE_MAX_FILE_BYTES) {
            snprintf(err, errlen, "files[%zu].content: %zu bytes, more than %u", i,
                     f->content.len, TEMPLATE_MAX_FILE_BYTES);
            return -1;
        }
        if (f->mode > 07777) {
            snprintf(err, errlen, "files[%zu].mode: %o is not a permission mode", i, f->mode);
            return -1;
        }
        total += f->content.len;
    }
    if (total > TEMPLATE_MAX_FILES_TOTAL) {
        snprintf(err, errlen, "files: %zu bytes in all, more than %u (install big things with "
                              "packages or fetch them in run)", total, TEMPLATE_MAX_FILES_TOTAL);
        return -1;
    }
    return 0;
}

static int check_lists(const Airlock__Vmhost__V1__TemplateSpec *spec, char *err, size_t errlen)
{
    if (spec->n_packages > TEMPLATE_MAX_PACKAGES) {
        snprintf(err, errlen, "packages: more than %d packages", TEMPLATE_MAX_PACKAGES);
        return -1;
    }
    for (size_t i = 0; i < spec->n_packages; i++) {
        if (!package_name_valid(spec->packages[i])) {
            snprintf(err, errlen, "packages[%zu]: \"%.100s\" is not a Debian package name", i,
                     spec->packages[i]);
            return -1;
        }
    }
    if (spec->n_run > TEMPLATE_MAX_RUN) {
        snprintf(err, errlen, "run: more than %d commands", TEMPLATE_MAX_RUN);
        return -1;
    }
    for (size_t i = 0; i < spec->n_run; i++) {
        char field[32];
        snprintf(field, sizeof(field), "run[%zu]", i);
        if (check_command(field, spec->run[i], err, errlen) < 0)
            return -1;
    }
    if (spec->n_env > TEMPLATE_MAX_ENV) {
        snprintf(err, errlen, "env: more than %d variables", TEMPLATE_MAX_ENV);
        return -1;
    }
    for (size_t i = 0; i < spec->n_env; i++) {
        if (!env_key_valid(spec->env[i]->key)) {
            snprintf(err, errlen, "env: \"%.64s\" is not a variable name ([A-Za-z_][A-Za-z0-9_]*)",
                     spec->env[i]->key);
            return -1;
        }
        if (strlen(spec->env[i]->value) > TEMPLATE_MAX_ENV_VALUE) {
            snprintf(err, errlen, "env.%.64s: longer than %d bytes", spec->env[i]->key,
                     TEMPLATE_MAX_ENV_VALUE);
            return -1;
        }
    }
    return 0;
}

int template_spec_check(const Airlock__Vmhost__V1__TemplateSpec *spec, char *err, size_t errlen)
{
    if (!*spec->name) {
        snprintf(err, errlen, "name: required");
        return -1;
    }
    if (!template_name_valid(spec->name)) {
        snprintf(err, errlen,
                 "name: \"%.140s\" must be 1-%d characters of a-z, 0-9, '_', '.', '-', starting "
                 "with a letter or digit", spec->name, TEMPLATE_NAME_MAX);
        return -1;
    }
    if (strcmp(spec->name, TEMPLATE_DEFAULT_NAME) == 0) {
        snprintf(err, errlen, "name: \"default\" is the base template; choose another name");
        return -1;
    }
    if (*spec->base_template && strcmp(spec->base_template, TEMPLATE_DEFAULT_NAME) != 0) {
        snprintf(err, errlen, "base: only \"default\" can be a base, not \"%.100s\"",
                 spec->base_template);
        return -1;
    }
    if (check_lists(spec, err, errlen) < 0 || check_files(spec, err, errlen) < 0)
        return -1;
    if (*spec->workdir && check_path("workdir", spec->workdir, err, errlen) < 0)
        return -1;
    if (*spec->start_cmd && check_command("start_cmd", spec->start_cmd, err, errlen) < 0)
        return -1;
    if (spec->cpus > TEMPLATE_MAX_CPUS) {
        snprintf(err, errlen, "cpus: %u is more than %d", spec->cpus, TEMPLATE_MAX_CPUS);
        return -1;
    }
    if (spec->memory_mb &&
        (spec->memory_mb < TEMPLATE_MIN_MEMORY_MB || spec->memory_mb > TEMPLATE_MAX_MEMORY_MB)) {
        snprintf(err, errlen, "memory_mb: %u is not in %d..%d", spec->memory_mb,
                 TEMPLATE_MIN_MEMORY_MB, TEMPLATE_MAX_MEMORY_MB);
        return -1;
    }
    if (spec->warm_pool > TEMPLATE_MAX_WARM_POOL) {
        snprintf(err, errlen, "warm_pool: %u is more than %d", spec->warm_pool,
                 TEMPLATE_MAX_WARM_POOL);
        return -1;
    }
    return 0;
}
