#include "template_registry.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "fsutil.h"
#include "log.h"
#include "warm_pool.h"

struct reservation {
    char name[TEMPLATE_NAME_MAX + 1];
    unsigned version;
    struct reservation *next;
};

struct template_registry {
    struct vmhost *vh;
    pthread_mutex_t lock;              /* versions, reservations */
    struct template_version *versions; /* defaults first, then by name and version */
    struct reservation *reserved;
    pthread_mutex_t default_build;     /* one per-size default build at a time */
    char named_dir[PATH_MAX];
};

/* lock held. Defaults at the head, named versions in order. */
static void insert_locked(struct template_registry *r, struct template_version *t)
{
    struct template_version **pp = &r->versions;
    if (t->version) {
        while (*pp && ((*pp)->version == 0 || strcmp((*pp)->name, t->name) < 0 ||
                       (strcmp((*pp)->name, t->name) == 0 && (*pp)->version < t->version)))
            pp = &(*pp)->next;
    }
    t->next = *pp;
    *pp = t;
}

static void unlink_locked(struct template_registry *r, struct template_version *t)
{
    for (struct template_version **pp = &r->versions; *pp; pp = &(*pp)->next) {
        if (*pp == t) {
            *pp = t->next;
            t->next = NULL;
            return;
        }
    }
}

void template_default_spec(struct vmhost *vh, unsigned vcpus, unsigned memory_mb,
                           struct template_spec *out)
{
    *out = (struct template_spec){
        .name = TEMPLATE_DEFAULT_NAME,
        .image = &vh->image,
        .base_disk = vh->base_disk,
        .templates_dir = vh->store.templates_dir,
        .qemu_binary = vh->cfg.qemu_binary,
        .accel = vh->accel,
        .jailer = vh->jailer,
        .vcpus = vcpus,
        .memory_mb = memory_mb,
        .ready_timeout_ms = vh->cfg.guest_ready_timeout_ms,
    };
}

/* The K=V entries execs get, from the manifest's template.env. */
static int version_env(struct template_version *t, json_t *env)
{
    size_t n = json_object_size(env), bytes = 0;
    const char *key;
    json_t *v;
    json_object_foreach(env, key, v)
        bytes += strlen(key) + strlen(json_string_value(v) ? json_string_value(v) : "") + 2;
    t->env = calloc(n ? n : 1, sizeof(*t->env));
    t->env_storage = malloc(bytes ? bytes : 1);
    if (!t->env || !t->env_storage)
        return -1;
    char *p = t->env_storage;
    json_object_foreach(env, key, v) {
        const char *value = json_string_value(v) ? json_string_value(v) : "";
        int len = sprintf(p, "%s=%s", key, value);
        t->env[t->n_env].data = (uint8_t *)p;
        t->env[t->n_env].len = (size_t)len;
        t->n_env++;
        p += len + 1;
    }
    return 0;
}

int template_key_fits(struct vmhost *vh, const char *image, unsigned vcpus, unsigned memory_mb,
                      const char *key, char *err, size_t errlen)
{
    struct guest_image img = { .hash = "" };
    snprintf(img.hash, sizeof(img.hash), "%s", image);
    struct template_spec spec;
    char now[65];
    template_default_spec(vh, vcpus, memory_mb, &spec);
    spec.image = &img;
    if (template_snapshot_key(&spec, now, err, errlen) < 0)
        return -1;
    if (strcmp(now, key) != 0) {
        snprintf(err, errlen, "built for another QEMU, accelerator or host (key %.16s, this "
                              "node's %.16s)",
                 key, now);
        return -1;
    }
    return 0;
}

/* A named version from its directory; with check_key, refused unless its
 * snapshot can be restored on this host as it is today. */
static struct template_version *version_load(struct template_registry *r, const char *dir,
                                             bool check_key, char *err, size_t errlen)
{
    char path[PATH_MAX];
    json_error_t jerr;
    json_t *m = fs_path(path, sizeof(path), "%s/manifest.json", dir) == 0
                    ? json_load_file(path, 0, &jerr)
                    : NULL;
    json_t *tj = json_object_get(m, "template");
    const char *name = json_string_value(json_object_get(tj, "name"));
    json_int_t version = json_integer_value(json_object_get(tj, "version"));
    const char *key = json_string_value(json_object_get(m, "key"));
    const char *image = json_string_value(json_object_get(m, "image"));
    if (!name || version <= 0 || !key || !image || strlen(key) != 64 || strlen(image) != 64) {
        snprintf(err, errlen, "%s: no complete manifest.json", dir);
        json_decref(m);
        return NULL;
    }
    struct template_version *t = template_version_new(r->named_dir, name, (unsigned)version);
    if (!t) {
        snprintf(err, errlen, "out of memory");
        json_decref(m);
        return NULL;
    }
    t->manifest = m;
    t->snap.vcpus = (unsigned)json_integer_value(json_object_get(m, "vcpus"));
    t->snap.memory_mb = (unsigned)json_integer_value(json_object_get(m, "memory_mb"));
    snprintf(t->snap.name, sizeof(t->snap.name), "%s", t->ref);
    snprintf(t->snap.key, sizeof(t->snap.key), "%s", key);
    snprintf(t->image_hash, sizeof(t->image_hash), "%s", image);
    const char *workdir = json_string_value(json_object_get(tj, "workdir"));
    t->workdir = workdir ? workdir : "";
    if (template_snapshot_paths(&t->snap, dir, err, errlen) < 0)
        goto fail;
    if (version_env(t, json_object_get(tj, "env")) < 0) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    char why[512];
    if (check_key && template_key_fits(r->vh, image, t->snap.vcpus, t->snap.memory_mb, key, why,
                                       sizeof(why)) < 0) {
        snprintf(err, errlen, "%s: %s; build it again", t->ref, why);
        goto fail;
    }
    return t;
fail:
    template_release(t);
    return NULL;
}

/* Directories of one name: <name>/<version>/. */
static void load_name(struct template_registry *r, const char *name_dir)
{
    DIR *d = opendir(name_dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char dir[PATH_MAX], err[1024];
        if (e->d_name[0] == '.' || fs_path(dir, sizeof(dir), "%s/%s", name_dir, e->d_name) < 0)
            continue;
        struct template_version *t = version_load(r, dir, true, err, sizeof(err));
        if (!t) {
            log_warn("template skipped", "dir=%s error=\"%s\"", dir, err);
            continue;
        }
        insert_locked(r, t);
        log_info("template loaded", "template=%s vcpus=%u memory_mb=%u", t->ref, t->snap.vcpus,
                 t->snap.memory_mb);
    }
    if (d)
        closedir(d);
}

static void load_named(struct template_registry *r)
{
    DIR *d = opendir(r->named_dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[PATH_MAX], err[256];
        if (fs_path(path, sizeof(path), "%s/%s", r->named_dir, e->d_name) < 0 ||
            !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (strncmp(e->d_name, TEMPLATE_DELETED_PREFIX, strlen(TEMPLATE_DELETED_PREFIX)) == 0) {
            if (fs_remove_tree(path, err, sizeof(err)) < 0)
                log_error("cannot remove a deleted template", "dir=%s error=\"%s\"", path, err);
            continue;
        }
        if (e->d_name[0] != '.')
            load_name(r, path);
    }
    if (d)
        closedir(d);
}

static struct template_version *find_default_locked(struct template_registry *r, unsigned vcpus,
                                                    unsigned memory_mb)
{
    for (struct template_version *t = r->versions; t; t = t->next)
        if (t->version == 0 && t->snap.vcpus == vcpus && t->snap.memory_mb == memory_mb)
            return t;
    return NULL;
}

/* lock held. The sizes of the default template registered, as
 * "1 vCPUs/512 MiB, ..." into held, and the least recently used one no
 * sandbox or create holds (NULL: each is held); the first size, whose warm
 * pool it is, is always held. */
static unsigned default_sizes_locked(struct template_registry *r, char *held, size_t heldlen,
                                     struct template_version **lru)
{
    unsigned sizes = 0;
    size_t used = 0;
    *lru = NULL;
    held[0] = '\0';
    for (struct template_version *t = r->versions; t; t = t->next) {
        if (t->version)
            continue;
        sizes++;
        if (used < heldlen)
            used += (size_t)snprintf(held + used, heldlen - used, "%s%u vCPUs/%u MiB",
                                     used ? ", " : "", t->snap.vcpus, t->snap.memory_mb);
        if (!t->pool && atomic_load(&t->refs) == 1 &&
            (!*lru || t->last_used_ms < (*lru)->last_used_ms))
            *lru = t;
    }
    return sizes;
}

/* lock held. Room to build one more size of the default template (each is
 * a snapshot with a memory file as large as its RAM, so arbitrary sizes
 * would fill the store): below --template-sizes-max, the least recently
 * used sizes no sandbox or create holds go (chained on *gone for the
 * caller to release outside the lock; their files go with them). CAPACITY
 * naming the sizes when each one is held. */
static int make_room_locked(struct template_registry *r, struct template_version **gone,
                            struct airlock_error *e)
{
    char held[512];
    struct template_version *lru;
    *gone = NULL;
    while (default_sizes_locked(r, held, sizeof(held), &lru) >= r->vh->cfg.template_sizes_max) {
        if (!lru)
            return airlock_error_set(
                e, AIRLOCK_ERR_CAPACITY,
                "this node keeps snapshots of the default template at %u sizes "
                "(--template-sizes-max), each in use: %s; make the sandbox at one of those "
                "sizes, or delete the sandboxes of one",
                r->vh->cfg.template_sizes_max, held);
        lru->deleted = true;
        unlink_locked(r, lru);
        lru->next = *gone;
        *gone = lru;
        log_info("template size removed to make room", "vcpus=%u memory_mb=%u",
                 lru->snap.vcpus, lru->snap.memory_mb);
    }
    return 0;
}

static void release_chain(struct template_version *t)
{
    while (t) {
        struct template_version *next = t->next;
        template_release(t); /* the registry's reference: its files go */
        t = next;
    }
}

/* A size not registered yet, with a reference: its snapshot found in the
 * store (an earlier vmhost's, which an adopted sandbox may hold: taken
 * without making room) or built, room made first. */
static struct template_version *default_new_size(struct template_registry *r, unsigned vcpus,
                                                 unsigned memory_mb, struct airlock_error *e)
{
    struct template_spec spec;
    template_default_spec(r->vh, vcpus, memory_mb, &spec);
    if (!template_snapshot_present(&spec)) {
        struct template_version *gone;
        pthread_mutex_lock(&r->lock);
        int rc = make_room_locked(r, &gone, e);
        pthread_mutex_unlock(&r->lock);
        release_chain(gone);
        if (rc < 0)
            return NULL;
    }
    struct template_version *t = template_version_new(r->named_dir, TEMPLATE_DEFAULT_NAME, 0);
    if (!t) {
        airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
        return NULL;
    }
    if (template_snapshot_ensure(&spec, &t->snap, AIRLOCK_ERROR_MSG(e)) < 0) {
        airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
        airlock_error_prefix(e, "snapshot of the default template at %u vCPUs, %u MiB: ", vcpus,
                             memory_mb);
        template_release(t);
        return NULL;
    }
    snprintf(t->image_hash, sizeof(t->image_hash), "%s", r->vh->image.hash);
    pthread_mutex_lock(&r->lock);
    insert_locked(r, t);
    template_version_get(t);
    pthread_mutex_unlock(&r->lock);
    return t;
}

/* The default template at a size other than the first: built on first use. */
static int default_at_size(struct template_registry *r, unsigned vcpus, unsigned memory_mb,
                           struct template_version **out, struct airlock_error *e)
{
    pthread_mutex_lock(&r->default_build);
    pthread_mutex_lock(&r->lock);
    struct template_version *t = find_default_locked(r, vcpus, memory_mb);
    if (t)
        template_version_get(t);
    pthread_mutex_unlock(&r->lock);
    if (!t)
        t = default_new_size(r, vcpus, memory_mb, e);
    if (t)
        t->last_used_ms = clock_monotonic_ms(); /* under default_build: no other writer */
    pthread_mutex_unlock(&r->default_build);
    *out = t;
    return t ? 0 : -1;
}

/* lock held: version (0 = the newest) of name, not deleted. */
static struct template_version *find_named_locked(struct template_registry *r, const char *name,
                                                  unsigned version)
{
    struct template_version *found = NULL;
    for (struct template_version *t = r->versions; t; t = t->next)
        if (t->version && strcmp(t->name, name) == 0 && (!version || t->version == version))
            found = t; /* in order: the last match is the newest */
    return found;
}

struct template_version *template_lookup(struct vmhost *vh, const char *ref,
                                         struct airlock_error *e)
{
    struct template_registry *r = vh->templates;
    char name[TEMPLATE_NAME_MAX + 1];
    unsigned version;
    if (!template_ref_parse(ref, name, sizeof(name), &version)) {
        airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND,
                          "template \"%s\" not found (a name, or name:version)", ref);
        return NULL;
    }
    pthread_mutex_lock(&r->lock);
    struct template_version *t = find_named_locked(r, name, version);
    if (t)
        template_version_get(t);
    pthread_mutex_unlock(&r->lock);
    if (!t)
        airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND, "template \"%s\" not found on this node", ref);
    return t;
}

int template_acquire(struct vmhost *vh, const char *ref, unsigned vcpus, unsigned memory_mb,
                     struct template_version **out, struct airlock_error *e)
{
    struct template_registry *r = vh->templates;
    *out = NULL;
    if (!ref || !*ref || strcmp(ref, TEMPLATE_DEFAULT_NAME) == 0) {
        if (!vh->have_template)
            return 0; /* --cold-boot */
        return default_at_size(r, vcpus ? vcpus : VMHOST_TEMPLATE_VCPUS,
                               memory_mb ? memory_mb : VMHOST_TEMPLATE_MEMORY_MB, out, e);
    }
    struct template_version *t = template_lookup(vh, ref, e);
    if (!t)
        return -1;
    if ((vcpus && vcpus != t->snap.vcpus) || (memory_mb && memory_mb != t->snap.memory_mb)) {
        airlock_error_set(e, AIRLOCK_ERR_INVALID,
                          "%s: template %s has %u vCPUs and %u MiB; its sandboxes have its "
                          "size (leave vcpus and memory_mb unset)",
                          vcpus && vcpus != t->snap.vcpus ? "vcpus" : "memory_mb", t->ref,
                          t->snap.vcpus, t->snap.memory_mb);
        template_release(t);
        return -1;
    }
    *out = t;
    return 0;
}

struct template_version **template_list(struct vmhost *vh, size_t *n)
{
    struct template_registry *r = vh->templates;
    pthread_mutex_lock(&r->lock);
    size_t count = 0;
    for (struct template_version *t = r->versions; t; t = t->next)
        count++;
    struct template_version **all = calloc(count + 1, sizeof(*all));
    size_t i = 0;
    for (struct template_version *t = all ? r->versions : NULL; t; t = t->next) {
        template_version_get(t);
        all[i++] = t;
    }
    pthread_mutex_unlock(&r->lock);
    *n = i;
    return all;
}

unsigned template_sandboxes(struct vmhost *vh, const struct template_version *t)
{
    return sandbox_count_from_template(vh, t, NULL, 0);
}

int template_delete(struct vmhost *vh, const char *ref, struct airlock_error *e)
{
    struct template_registry *r = vh->templates;
    char name[TEMPLATE_NAME_MAX + 1];
    unsigned version;
    if (!template_ref_parse(ref, name, sizeof(name), &version) ||
        strcmp(name, TEMPLATE_DEFAULT_NAME) == 0)
        return airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND, "template \"%s\" not found%s", ref,
                                 strcmp(name, TEMPLATE_DEFAULT_NAME) == 0
                                     ? " (the default template cannot be deleted)"
                                     : "");
    struct template_version *gone = NULL;
    bool found = false;
    pthread_mutex_lock(&r->lock);
    for (struct template_version *t = r->versions; t; t = t->next) {
        if (!t->version || strcmp(t->name, name) != 0 || (version && t->version != version))
            continue;
        char user[80];
        /* vh->lock is taken inside the registry lock, never the other way round. */
        unsigned users = sandbox_count_from_template(vh, t, user, sizeof(user));
        if (users) {
            airlock_error_set(e, AIRLOCK_ERR_STATE,
                              "template %s is used by %u sandbox%s (%s); delete %s first", t->ref,
                              users, users == 1 ? "" : "es", user, users == 1 ? "it" : "them");
            pthread_mutex_unlock(&r->lock);
            return -1;
        }
        found = true;
    }
    /* None in use: out of the registry, all at once. */
    for (struct template_version *t = r->versions, *next; found && t; t = next) {
        next = t->next;
        if (!t->version || strcmp(t->name, name) != 0 || (version && t->version != version))
            continue;
        unlink_locked(r, t);
        t->deleted = true;
        t->next = gone;
        gone = t;
    }
    pthread_mutex_unlock(&r->lock);
    while (gone) {
        struct template_version *t = gone;
        gone = t->next;
        log_info("template deleted", "template=%s", t->ref);
        /* Its pooled VMs hold references: they go first. */
        warm_pool_stop(t->owns_pool ? t->pool : NULL);
        t->pool = NULL;
        template_release(t);
    }
    if (!found)
        return airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND, "template \"%s\" not found on this node",
                                 ref);
    return 0;
}

int template_reserve(struct vmhost *vh, const char *name, unsigned version, unsigned *out,
                     struct airlock_error *e)
{
    struct template_registry *r = vh->templates;
    struct reservation *res = calloc(1, sizeof(*res));
    if (!res)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
    snprintf(res->name, sizeof(res->name), "%s", name);
    pthread_mutex_lock(&r->lock);
    unsigned newest = 0;
    bool taken = false;
    for (struct template_version *t = r->versions; t; t = t->next) {
        if (t->version && strcmp(t->name, name) == 0) {
            newest = t->version > newest ? t->version : newest;
            taken = taken || t->version == version;
        }
    }
    for (struct reservation *o = r->reserved; o; o = o->next) {
        if (strcmp(o->name, name) == 0) {
            newest = o->version > newest ? o->version : newest;
            taken = taken || o->version == version;
        }
    }
    res->version = version ? version : newest + 1;
    /* A version on disk that was not loaded (built for another host) keeps
     * its number too. */
    char dir[PATH_MAX];
    while (fs_path(dir, sizeof(dir), "%s/%s/%u", r->named_dir, name, res->version) == 0 &&
           access(dir, F_OK) == 0) {
        if (version) {
            taken = true;
            break;
        }
        res->version++;
    }
    if (!taken) {
        res->next = r->reserved;
        r->reserved = res;
        *out = res->version;
    }
    pthread_mutex_unlock(&r->lock);
    if (taken) {
        free(res);
        return airlock_error_set(e, AIRLOCK_ERR_EXISTS,
                                 "template %s:%u already exists on this node", name, version);
    }
    return 0;
}

static void unreserve_locked(struct template_registry *r, const char *name, unsigned version)
{
    for (struct reservation **pp = &r->reserved; *pp; pp = &(*pp)->next) {
        struct reservation *o = *pp;
        if (o->version == version && strcmp(o->name, name) == 0) {
            *pp = o->next;
            free(o);
            return;
        }
    }
}

void template_unreserve(struct vmhost *vh, const char *name, unsigned version)
{
    pthread_mutex_lock(&vh->templates->lock);
    unreserve_locked(vh->templates, name, version);
    pthread_mutex_unlock(&vh->templates->lock);
}

/* Creates without a version get the newest: the older ones' pools empty. */
static void retire_older_pools(struct template_registry *r, const struct template_version *newest)
{
    struct warm_pool *older[64];
    size_t n = 0;
    pthread_mutex_lock(&r->lock);
    for (struct template_version *t = r->versions; t && n < 64; t = t->next)
        if (t != newest && t->pool && t->version && strcmp(t->name, newest->name) == 0)
            older[n++] = t->pool;
    pthread_mutex_unlock(&r->lock);
    for (size_t i = 0; i < n; i++) {
        struct airlock_error e = { 0 };
        warm_pool_set_limits(older[i], 0, 0, &e); /* no pool: cannot fail */
    }
}

int template_publish(struct vmhost *vh, const char *dir, unsigned warm_pool,
                     struct template_version **out, struct airlock_error *e)
{
    struct template_registry *r = vh->templates;
    struct template_version *t = version_load(r, dir, false, AIRLOCK_ERROR_MSG(e));
    if (!t)
        return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    /* Empty until the version is registered: its VMs are made from it. */
    t->pool = warm_pool_start(vh, t, 0, 0, AIRLOCK_ERROR_MSG(e));
    if (!t->pool) {
        template_release(t);
        return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    }
    t->owns_pool = true;
    pthread_mutex_lock(&r->lock);
    unreserve_locked(r, t->name, t->version);
    insert_locked(r, t);
    template_version_get(t);
    pthread_mutex_unlock(&r->lock);
    retire_older_pools(r, t);
    /* A floor past the node's pool memory leaves the version without a
     * pool, said in the log; the version itself is fine. */
    struct airlock_error pe = { 0 };
    if (warm_pool_set_limits(t->pool, warm_pool, template_pool_ceiling(vh, warm_pool), &pe) < 0)
        log_warn("template warm pool not started", "template=%s error=\"%s\"", t->ref, pe.message);
    *out = t;
    return 0;
}

unsigned template_pool_ceiling(const struct vmhost *vh, unsigned min)
{
    return vh->cfg.warm_pool_max > min ? vh->cfg.warm_pool_max : min;
}

int template_set_pool(struct vmhost *vh, const char *ref, unsigned min, unsigned max,
                      struct airlock_error *e)
{
    struct warm_pool *pool = vh->pool;
    struct template_version *t = NULL;
    if (strcmp(ref, TEMPLATE_DEFAULT_NAME) != 0) {
        t = template_lookup(vh, ref, e);
        if (!t)
            return -1;
        pool = t->pool;
    }
    int rc = 0;
    if (!pool)
        rc = airlock_error_set(e, AIRLOCK_ERR_STATE,
                               "no warm pool: this node has no template snapshots (--cold-boot)");
    else
        rc = warm_pool_set_limits(pool, min, max ? max : template_pool_ceiling(vh, min), e);
    template_release(t);
    return rc;
}

/* A snapshot directory's name: its key, 64 hex digits. */
static bool is_snapshot_key(const char *name)
{
    return strlen(name) == 64 && strspn(name, "0123456789abcdef") == 64;
}

/* lock held. */
static bool registered_locked(struct template_registry *r, const char *dir)
{
    for (struct template_version *t = r->versions; t; t = t->next)
        if (strcmp(t->snap.dir, dir) == 0)
            return true;
    return false;
}

void template_registry_sweep(struct vmhost *vh)
{
    struct template_registry *r = vh->templates;
    /* Under --cold-boot nothing is registered, but sandboxes suspended
     * while snapshots were on may need theirs when they are on again. */
    DIR *d = r && vh->have_template ? opendir(vh->store.templates_dir) : NULL;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char dir[PATH_MAX], err[256];
        if (!is_snapshot_key(e->d_name) ||
            fs_path(dir, sizeof(dir), "%s/%s", vh->store.templates_dir, e->d_name) < 0)
            continue;
        /* Held across the removal: no create registers it meanwhile. */
        pthread_mutex_lock(&r->default_build);
        pthread_mutex_lock(&r->lock);
        bool used = registered_locked(r, dir);
        pthread_mutex_unlock(&r->lock);
        if (!used) {
            if (fs_remove_tree(dir, err, sizeof(err)) < 0)
                log_error("cannot remove an unused template snapshot", "dir=%s error=\"%s\"", dir,
                          err);
            else
                log_info("unused template snapshot removed", "key=%.16s", e->d_name);
        }
        pthread_mutex_unlock(&r->default_build);
    }
    if (d)
        closedir(d);
}

int template_registry_open(struct vmhost *vh, char *err, size_t errlen)
{
    struct template_registry *r = calloc(1, sizeof(*r));
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    r->vh = vh;
    pthread_mutex_init(&r->lock, NULL);
    pthread_mutex_init(&r->default_build, NULL);
    vh->templates = r;
    err[0] = '\0';
    if (fs_path(r->named_dir, sizeof(r->named_dir), "%s/%s", vh->store.templates_dir,
                TEMPLATE_NAMED_DIR) < 0 ||
        fs_mkdir_p(r->named_dir, 0755, err, errlen) < 0) {
        if (!*err)
            snprintf(err, errlen, "templates directory path too long");
        goto fail;
    }
    if (vh->have_template) {
        struct template_version *t = template_version_new(r->named_dir, TEMPLATE_DEFAULT_NAME, 0);
        if (!t) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
        t->snap = vh->tmpl;
        snprintf(t->image_hash, sizeof(t->image_hash), "%s", vh->image.hash);
        insert_locked(r, t);
        /* Also with --warm-pool 0: the scheduler may set a target later
         * (set_pool), and vh->pool then never changes while requests read
         * it. vmhost_shutdown stops it. */
        t->pool = vh->pool =
            warm_pool_start(vh, t, vh->cfg.warm_pool,
                            template_pool_ceiling(vh, vh->cfg.warm_pool), err, errlen);
        if (!t->pool)
            goto fail;
    }
    load_named(r);
    for (struct template_version *t = r->versions; t; t = t->next) {
        if (!t->version)
            continue;
        json_t *tj = json_object_get(t->manifest, "template");
        unsigned target = (unsigned)json_integer_value(json_object_get(tj, "warm_pool"));
        /* Only the newest of a name gets VMs (creates of "name" take it). */
        bool newest = !t->next || strcmp(t->next->name, t->name) != 0;
        t->pool = warm_pool_start(vh, t, newest ? target : 0,
                                  newest ? template_pool_ceiling(vh, target) : 0, err, errlen);
        if (!t->pool)
            goto fail;
        t->owns_pool = true;
    }
    return 0;
fail:
    warm_pool_stop(vh->pool); /* the default's: not the registry's to stop later */
    vh->pool = NULL;
    template_registry_close(vh);
    return -1;
}

void template_registry_close(struct vmhost *vh)
{
    struct template_registry *r = vh->templates;
    if (!r)
        return;
    /* Pooled VMs hold references: stopped first, outside the lock. */
    for (struct template_version *t = r->versions; t; t = t->next) {
        if (t->owns_pool)
            warm_pool_stop(t->pool);
        t->pool = NULL;
    }
    while (r->versions) {
        struct template_version *t = r->versions;
        r->versions = t->next;
        int others = atomic_load(&t->refs) - 1;
        if (others > 0)
            log_warn("template still in use at shutdown", "template=%s refs=%d", t->ref, others);
        template_release(t); /* the registry's; a sandbox still holding it frees it */
    }
    vh->templates = NULL;
    while (r->reserved) {
        struct reservation *o = r->reserved;
        r->reserved = o->next;
        free(o);
    }
    pthread_mutex_destroy(&r->default_build);
    pthread_mutex_destroy(&r->lock);
    free(r);
}
