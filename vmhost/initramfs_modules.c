#include "initramfs_modules.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MODULE_DEPS_MAX 64

struct dep_entry {
    char *path;
    char *deps[MODULE_DEPS_MAX];
    size_t ndeps;
    enum { UNVISITED, VISITING, DONE } state;
};

struct dep_table {
    struct dep_entry *entries;
    size_t count;
    char *text; /* owns every string above */
};

void module_name_of(const char *path, char *buf, size_t buflen)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    snprintf(buf, buflen, "%s", base);
    char *dot = strstr(buf, ".ko");
    if (dot)
        *dot = '\0';
    for (char *p = buf; *p; p++)
        if (*p == '-')
            *p = '_';
}

static int parse_dep(const char *modules_dep, struct dep_table *t, char *err, size_t errlen)
{
    *t = (struct dep_table){ 0 };
    t->text = strdup(modules_dep);
    size_t lines = 1;
    for (const char *p = modules_dep; *p; p++)
        lines += *p == '\n';
    t->entries = calloc(lines, sizeof(*t->entries));
    if (!t->text || !t->entries) {
        snprintf(err, errlen, "modules.dep: out of memory");
        return -1;
    }
    for (char *save = NULL, *line = strtok_r(t->text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue; /* not a "module: deps" line */
        *colon = '\0';
        struct dep_entry *e = &t->entries[t->count++];
        e->path = line;
        for (char *s2 = NULL, *d = strtok_r(colon + 1, " \t\r", &s2); d;
             d = strtok_r(NULL, " \t\r", &s2)) {
            if (e->ndeps == MODULE_DEPS_MAX) {
                snprintf(err, errlen, "modules.dep: %s has more than %d dependencies", e->path,
                         MODULE_DEPS_MAX);
                return -1;
            }
            e->deps[e->ndeps++] = d;
        }
    }
    return 0;
}

static struct dep_entry *find_by_name(struct dep_table *t, const char *name)
{
    char want[256], have[256];
    module_name_of(name, want, sizeof(want));
    for (size_t i = 0; i < t->count; i++) {
        module_name_of(t->entries[i].path, have, sizeof(have));
        if (strcmp(want, have) == 0)
            return &t->entries[i];
    }
    return NULL;
}

static struct dep_entry *find_by_path(struct dep_table *t, const char *path)
{
    for (size_t i = 0; i < t->count; i++)
        if (strcmp(t->entries[i].path, path) == 0)
            return &t->entries[i];
    return NULL;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Depth-first: every dependency is appended before the module itself. */
static int visit(struct dep_table *t, struct dep_entry *e, struct module_list *out, char *err,
                 size_t errlen)
{
    if (e->state == DONE)
        return 0;
    if (e->state == VISITING) {
        snprintf(err, errlen, "modules.dep: dependency cycle through %s", e->path);
        return -1;
    }
    if (!ends_with(e->path, ".ko")) {
        snprintf(err, errlen,
                 "kernel module %s is compressed; the initramfs loads modules with busybox "
                 "insmod, which needs uncompressed .ko files",
                 e->path);
        return -1;
    }
    e->state = VISITING;
    for (size_t i = 0; i < e->ndeps; i++) {
        struct dep_entry *d = find_by_path(t, e->deps[i]);
        if (!d) {
            snprintf(err, errlen, "modules.dep: %s depends on %s, which has no entry", e->path,
                     e->deps[i]);
            return -1;
        }
        if (visit(t, d, out, err, errlen) < 0)
            return -1;
    }
    e->state = DONE;
    char *copy = strdup(e->path);
    if (!copy) {
        snprintf(err, errlen, "modules.dep: out of memory");
        return -1;
    }
    out->paths[out->count++] = copy;
    return 0;
}

int modules_resolve(const char *modules_dep, const char *const names[], size_t nnames,
                    struct module_list *out, char *err, size_t errlen)
{
    struct dep_table t;
    *out = (struct module_list){ 0 };
    int rc = -1;
    if (parse_dep(modules_dep, &t, err, errlen) < 0)
        goto out;
    out->paths = calloc(t.count ? t.count : 1, sizeof(*out->paths));
    if (!out->paths) {
        snprintf(err, errlen, "modules.dep: out of memory");
        goto out;
    }
    for (size_t i = 0; i < nnames; i++) {
        struct dep_entry *e = find_by_name(&t, names[i]);
        if (!e) {
            snprintf(err, errlen, "kernel module %s is not in modules.dep (built in, or not "
                     "shipped by this kernel?)", names[i]);
            goto out;
        }
        if (visit(&t, e, out, err, errlen) < 0)
            goto out;
    }
    rc = 0;
out:
    free(t.entries);
    free(t.text);
    if (rc < 0)
        module_list_free(out);
    return rc;
}

void module_list_free(struct module_list *l)
{
    for (size_t i = 0; i < l->count; i++)
        free(l->paths[i]);
    free(l->paths);
    *l = (struct module_list){ 0 };
}
