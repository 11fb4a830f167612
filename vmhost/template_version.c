#include "template_version.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fsutil.h"
#include "log.h"

struct template_version *template_version_new(const char *named_dir, const char *name,
                                              unsigned version)
{
    struct template_version *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    snprintf(t->name, sizeof(t->name), "%s", name);
    t->version = version;
    if (version)
        snprintf(t->ref, sizeof(t->ref), "%s:%u", name, version);
    else
        snprintf(t->ref, sizeof(t->ref), "%s", name);
    snprintf(t->named_dir, sizeof(t->named_dir), "%s", named_dir);
    t->workdir = "";
    atomic_init(&t->refs, 1); /* the registry's */
    return t;
}

/* Renamed first: a crash mid-removal leaves a .del- leftover (removed at
 * the next start), never a half-removed version that looks loadable. */
static void remove_files(struct template_version *t)
{
    char dead[PATH_MAX], name_dir[PATH_MAX], err[256];
    if (fs_path(dead, sizeof(dead), "%s/%s%s-%u", t->named_dir, TEMPLATE_DELETED_PREFIX, t->name,
                t->version) < 0 ||
        rename(t->snap.dir, dead) < 0)
        snprintf(dead, sizeof(dead), "%s", t->snap.dir);
    if (fs_remove_tree(dead, err, sizeof(err)) < 0)
        log_error("cannot remove a deleted template", "dir=%s error=\"%s\"", dead, err);
    if (fs_path(name_dir, sizeof(name_dir), "%s/%s", t->named_dir, t->name) == 0)
        rmdir(name_dir); /* fails while other versions remain */
    log_info("template removed", "template=%s", t->ref);
}

void template_version_get(struct template_version *t)
{
    atomic_fetch_add(&t->refs, 1);
}

void template_release(struct template_version *t)
{
    if (!t || atomic_fetch_sub(&t->refs, 1) != 1)
        return;
    if (t->deleted)
        remove_files(t);
    json_decref(t->manifest);
    free(t->env);
    free(t->env_storage);
    free(t);
}
