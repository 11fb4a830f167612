#include "volume_spec.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static bool name_char(char c, bool first)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (!first && (c == '_' || c == '-'));
}

/* Whether the first n bytes of s are a valid name. */
static bool name_valid_n(const char *s, size_t n)
{
    if (n == 0 || n > VOLUME_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!name_char(s[i], i == 0))
            return false;
    return true;
}

bool volume_name_valid(const char *name)
{
    return name_valid_n(name, strlen(name));
}

int volume_name_check(const char *field, const char *name, struct airlock_error *e)
{
    if (!*name)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "%s: required", field);
    if (!volume_name_valid(name))
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "%s: \"%.80s\" is not a name ([a-z0-9][a-z0-9_-]{0,62})", field,
                                 name);
    return 0;
}

int volume_size_check(const char *field, uint64_t size_mb, struct airlock_error *e)
{
    if (size_mb < VOLUME_SIZE_MIN_MB || size_mb > VOLUME_SIZE_MAX_MB)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "%s: %" PRIu64 " is not in %d..%" PRIu64 " (MiB)", field, size_mb,
                                 VOLUME_SIZE_MIN_MB, VOLUME_SIZE_MAX_MB);
    return 0;
}

int volume_ref_parse(const char *field, const char *text, struct volume_ref *out,
                     struct airlock_error *e)
{
    *out = (struct volume_ref){ { 0 }, { 0 } };
    const char *at = strchr(text, '@');
    size_t vlen = at ? (size_t)(at - text) : strlen(text);
    if (!*text)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "%s: required", field);
    if (!name_valid_n(text, vlen) || (at && !volume_name_valid(at + 1)))
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "%s: \"%.140s\" is not a volume or volume@snapshot (each name "
                                 "[a-z0-9][a-z0-9_-]{0,62})",
                                 field, text);
    memcpy(out->volume, text, vlen);
    if (at)
        snprintf(out->snapshot, sizeof(out->snapshot), "%s", at + 1);
    return 0;
}

/* Whether path is dir or below it ("/proc", "/proc/x"; not "/procfs"). */
static bool path_within(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

int volume_path_check(const char *field, const char *path, struct airlock_error *e)
{
    static const char *const system[] = { "/proc", "/sys", "/dev" };
    size_t len = strlen(path);
    if (len == 0)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "%s: required", field);
    if (path[0] != '/')
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "%s: \"%.80s\" is not absolute", field,
                                 path);
    if (len > VOLUME_PATH_MAX)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "%s: longer than %d bytes", field,
                                 VOLUME_PATH_MAX);
    /* Each component: not empty (but a trailing '/'), ".", "..". */
    for (const char *c = path + 1; *c;) {
        size_t n = strcspn(c, "/");
        if ((n == 0 && c[0] == '/') || (n == 1 && c[0] == '.') ||
            (n == 2 && c[0] == '.' && c[1] == '.'))
            return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                     "%s: \"%.80s\" has an empty, \".\" or \"..\" component",
                                     field, path);
        c += n + (c[n] == '/');
    }
    if (strcmp(path, "/") == 0)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "%s: \"/\" is the root file system",
                                 field);
    for (size_t i = 0; i < sizeof(system) / sizeof(*system); i++)
        if (path_within(path, system[i]))
            return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                     "%s: \"%.80s\" is a system path (%s)", field, path,
                                     system[i]);
    return 0;
}

/* Whether two paths name the same directory, a trailing '/' aside. */
static bool same_path(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    while (la > 1 && a[la - 1] == '/')
        la--;
    while (lb > 1 && b[lb - 1] == '/')
        lb--;
    return la == lb && memcmp(a, b, la) == 0;
}

int volume_mounts_check(const struct volume_mount_spec *mounts, size_t n,
                        struct volume_ref refs[VOLUME_MOUNTS_MAX], struct airlock_error *e)
{
    if (n > VOLUME_MOUNTS_MAX)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "volumes: %zu given, at most %d", n,
                                 VOLUME_MOUNTS_MAX);
    for (size_t i = 0; i < n; i++) {
        char field[40];
        snprintf(field, sizeof(field), "volumes[%zu].name", i);
        if (volume_ref_parse(field, mounts[i].name, &refs[i], e) < 0)
            return -1;
        snprintf(field, sizeof(field), "volumes[%zu].path", i);
        if (volume_path_check(field, mounts[i].path, e) < 0)
            return -1;
        if (refs[i].snapshot[0] && !mounts[i].read_only)
            return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                     "volumes[%zu].read_only: %s is a snapshot, which is attached "
                                     "read-only only (set read_only)",
                                     i, mounts[i].name);
        for (size_t j = 0; j < i; j++) {
            if (strcmp(refs[j].volume, refs[i].volume) == 0)
                return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                         "volumes[%zu].name: volume %s is already volumes[%zu]",
                                         i, refs[i].volume, j);
            if (same_path(mounts[j].path, mounts[i].path))
                return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                         "volumes[%zu].path: %.80s is already volumes[%zu]'s", i,
                                         mounts[i].path, j);
        }
    }
    return 0;
}

int volume_mount_parse(const char *text, char *buf, size_t bufsize, struct volume_mount_spec *out,
                       struct airlock_error *e)
{
    if ((size_t)snprintf(buf, bufsize, "%s", text) >= bufsize)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "--volume %.40s…: too long", text);
    char *colon = strchr(buf, ':');
    if (!colon || colon == buf || colon[1] != '/')
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "--volume %s: not name:/path or name:/path:ro", text);
    *colon = '\0';
    out->name = buf;
    out->path = colon + 1;
    out->read_only = false;
    char *ro = strrchr(out->path, ':');
    if (ro) {
        if (strcmp(ro, ":ro") != 0)
            return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                     "--volume %s: only \":ro\" may follow the path", text);
        *ro = '\0';
        out->read_only = true;
    }
    return 0;
}

void volume_fork_name(const char *volume, const char *sandbox_id, char *out, size_t outlen)
{
    /* The volume's part is what gives way: the sandbox id keeps the
     * names of two forks apart. */
    size_t id_len = strlen(sandbox_id);
    int keep = id_len + 1 < VOLUME_NAME_MAX ? (int)(VOLUME_NAME_MAX - 1 - id_len) : 0;
    snprintf(out, outlen, "%.*s-%s", keep, volume, sandbox_id);
}
