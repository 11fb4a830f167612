#include "grpc_convert.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "policy_json.h"
#include "reply.h"
#include "string_map_json.h"
#include "vmhost_names.h"

static char *rfc3339(struct grpc_arena *a, int64_t unix_ms)
{
    char when[40];
    reply_rfc3339(unix_ms, when, sizeof(when));
    return grpc_arena_strdup(a, when);
}

typedef Airlock__V1__NetworkPolicy public_policy_t;
typedef Airlock__Egress__V1__Policy egress_policy_t;

/* The repeated fields NetworkPolicy has as egress's Policy has them, by
 * where each keeps their count and items: copied across (the arrays
 * borrowed) both ways by one loop. */
static const struct shared_list {
    const char *name;
    bool strings;
    size_t n[2], items[2]; /* [0] NetworkPolicy, [1] Policy */
} shared_lists[] = {
#define SHARED_LIST(field, strings)                                                        \
    { #field, strings,                                                                     \
      { offsetof(public_policy_t, n_##field), offsetof(egress_policy_t, n_##field) },      \
      { offsetof(public_policy_t, field), offsetof(egress_policy_t, field) } }
    SHARED_LIST(allow_domains, true), SHARED_LIST(deny_domains, true),
    SHARED_LIST(allow_cidrs, true),   SHARED_LIST(deny_cidrs, true),
    SHARED_LIST(allow_ports, false),  SHARED_LIST(deny_ports, false),
#undef SHARED_LIST
};
#define N_SHARED_LISTS (sizeof(shared_lists) / sizeof(*shared_lists))

static size_t *list_count(const void *policy, const struct shared_list *f, int side)
{
    return (size_t *)((char *)policy + f->n[side]);
}

static void **list_items(const void *policy, const struct shared_list *f, int side)
{
    return (void **)((char *)policy + f->items[side]);
}

/* The lists of `from` (side from_side of shared_list) into `to`. */
static void lists_copy(void *to, const void *from, int from_side)
{
    for (size_t i = 0; i < N_SHARED_LISTS; i++) {
        const struct shared_list *f = &shared_lists[i];
        *list_count(to, f, !from_side) = *list_count(from, f, from_side);
        *list_items(to, f, !from_side) = *list_items(from, f, from_side);
    }
}

/* The scheduler's policy as the public message (arrays borrowed from it);
 * NULL when none is set. */
static Airlock__V1__NetworkPolicy *network_msg(struct grpc_arena *a,
                                               const Airlock__Egress__V1__Policy *policy)
{
    Airlock__V1__NetworkPolicy *p = policy ? grpc_arena_alloc(a, sizeof(*p)) : NULL;
    if (!p)
        return NULL;
    airlock__v1__network_policy__init(p);
    const char *action = policy_default_name(policy->default_action);
    if (action)
        p->default_ = (char *)action;
    lists_copy(p, policy, 1);
    p->allow_ech = policy->allow_ech;
    p->inspect_tls = policy->inspect_tls;
    return p;
}

/* The scheduler's metadata as the public map's entries (strings borrowed). */
static void metadata_entries(struct grpc_arena *a, const Airlock__Scheduler__V1__Sandbox *sb,
                             Airlock__V1__Sandbox *out)
{
    size_t n = sb->n_metadata;
    out->metadata = n ? grpc_arena_alloc(a, n * sizeof(*out->metadata)) : NULL;
    for (size_t i = 0; out->metadata && i < n; i++) {
        Airlock__V1__Sandbox__MetadataEntry *e = grpc_arena_alloc(a, sizeof(*e));
        if (!e)
            return;
        airlock__v1__sandbox__metadata_entry__init(e);
        e->key = sb->metadata[i]->key;
        e->value = sb->metadata[i]->value;
        out->metadata[out->n_metadata++] = e;
    }
}

Airlock__V1__Sandbox *grpc_sandbox_msg(struct grpc_arena *a, const Airlock__Scheduler__V1__Sandbox *sb)
{
    Airlock__V1__Sandbox *m = grpc_arena_alloc(a, sizeof(*m));
    if (!m)
        return NULL;
    airlock__v1__sandbox__init(m);
    m->id = sb->id;
    m->state = sb->state;
    m->template_ = sb->template_;
    m->node = sb->node_id;
    m->cpus = sb->cpus;
    m->memory_mb = sb->memory_mb;
    metadata_entries(a, sb, m);
    m->idle_timeout_s = sb->idle_timeout_s;
    m->ttl_s = sb->ttl_s;
    m->checkpoint_every_s = sb->checkpoint_every_s;
    m->public_ports = sb->public_ports;
    m->traffic_token = sb->traffic_token;
    /* The same message on both sides: the scheduler's mounts as they are. */
    m->volumes = sb->volumes;
    m->n_volumes = sb->n_volumes;
    if (strcmp(sb->state, "lost") == 0 && *sb->restore_point) {
        m->restore_point = grpc_arena_alloc(a, sizeof(*m->restore_point));
        if (!m->restore_point)
            return NULL;
        airlock__v1__restore_point__init(m->restore_point);
        m->restore_point->checkpoint = sb->restore_point;
        m->restore_point->created_at = rfc3339(a, sb->restore_point_unix_ms);
    }
    m->created_at = rfc3339(a, sb->created_unix_ms);
    m->updated_at = rfc3339(a, sb->updated_unix_ms);
    m->error = sb->error;
    m->network = network_msg(a, sb->network);
    return m;
}

Airlock__V1__FileInfo *grpc_file_info_msg(struct grpc_arena *a, const Airlock__Guest__V1__FileInfo *fi)
{
    Airlock__V1__FileInfo *m = grpc_arena_alloc(a, sizeof(*m));
    if (!m)
        return NULL;
    airlock__v1__file_info__init(m);
    m->name = fi->name;
    m->type = (char *)gw_file_type_name(fi->type);
    m->size = fi->size;
    m->mode = fi->mode;
    m->mtime = rfc3339(a, fi->mtime_unix_ms);
    m->link_target = fi->link_target;
    return m;
}

Airlock__V1__ProcessInfo *grpc_process_msg(struct grpc_arena *a,
                                           const Airlock__Guest__V1__ProcessInfo *p)
{
    Airlock__V1__ProcessInfo *m = grpc_arena_alloc(a, sizeof(*m));
    char **cmd = p->n_argv ? grpc_arena_alloc(a, p->n_argv * sizeof(*cmd)) : NULL;
    if (!m || (p->n_argv && !cmd))
        return NULL;
    airlock__v1__process_info__init(m);
    for (size_t i = 0; i < p->n_argv; i++)
        cmd[i] = grpc_arena_strndup(a, (const char *)p->argv[i].data, p->argv[i].len);
    m->pid = p->pid;
    m->cmd = cmd;
    m->n_cmd = p->n_argv;
    m->running = p->running;
    m->exit_code = p->exit_code;
    m->signal = p->signal;
    m->started_at = rfc3339(a, p->started_unix_ms);
    return m;
}

Airlock__V1__Checkpoint *grpc_checkpoint_msg(struct grpc_arena *a,
                                             const Airlock__Scheduler__V1__Checkpoint *c)
{
    Airlock__V1__Checkpoint *m = grpc_arena_alloc(a, sizeof(*m));
    if (!m)
        return NULL;
    airlock__v1__checkpoint__init(m);
    m->name = c->name;
    m->kind = c->kind;
    m->created_at = rfc3339(a, c->created_unix_ms);
    m->stored = c->stored;
    return m;
}

Airlock__V1__Template *grpc_template_msg(struct grpc_arena *a,
                                         const Airlock__Scheduler__V1__Template *t)
{
    Airlock__V1__Template *m = grpc_arena_alloc(a, sizeof(*m));
    char ref[200];
    if (!m)
        return NULL;
    airlock__v1__template__init(m);
    snprintf(ref, sizeof(ref), "%s:%u", t->name, t->version);
    m->name = t->name;
    m->version = t->version;
    m->ref = grpc_arena_strdup(a, ref);
    m->cpus = t->cpus;
    m->memory_mb = t->memory_mb;
    m->node = t->node_id;
    m->created_at = rfc3339(a, t->created_unix_ms);
    m->build_ms = t->build_ms;
    m->spec_json = t->spec_json;
    return m;
}

/* Each of n messages converted by one of the *_msg functions above. */
static void **convert_list(struct grpc_arena *a, void *const *src, size_t n,
                           void *(*convert)(struct grpc_arena *, const void *))
{
    void **list = n ? grpc_arena_alloc(a, n * sizeof(*list)) : NULL;
    for (size_t i = 0; list && i < n; i++)
        if (!(list[i] = convert(a, src[i])))
            return NULL;
    return list;
}

static void *sandbox_any(struct grpc_arena *a, const void *m)
{
    return grpc_sandbox_msg(a, m);
}

static void *file_info_any(struct grpc_arena *a, const void *m)
{
    return grpc_file_info_msg(a, m);
}

static void *process_any(struct grpc_arena *a, const void *m)
{
    return grpc_process_msg(a, m);
}

static void *checkpoint_any(struct grpc_arena *a, const void *m)
{
    return grpc_checkpoint_msg(a, m);
}

static void *template_any(struct grpc_arena *a, const void *m)
{
    return grpc_template_msg(a, m);
}

Airlock__V1__Sandbox **grpc_sandbox_list(struct grpc_arena *a,
                                         Airlock__Scheduler__V1__Sandbox *const *sandboxes, size_t n)
{
    return (Airlock__V1__Sandbox **)convert_list(a, (void *const *)sandboxes, n, sandbox_any);
}

Airlock__V1__FileInfo **grpc_file_info_list(struct grpc_arena *a,
                                            Airlock__Guest__V1__FileInfo *const *entries, size_t n)
{
    return (Airlock__V1__FileInfo **)convert_list(a, (void *const *)entries, n, file_info_any);
}

Airlock__V1__ProcessInfo **grpc_process_list(struct grpc_arena *a,
                                             Airlock__Guest__V1__ProcessInfo *const *processes,
                                             size_t n)
{
    return (Airlock__V1__ProcessInfo **)convert_list(a, (void *const *)processes, n, process_any);
}

Airlock__V1__Checkpoint **grpc_checkpoint_list(struct grpc_arena *a,
                                               Airlock__Scheduler__V1__Checkpoint *const *checkpoints,
                                               size_t n)
{
    return (Airlock__V1__Checkpoint **)convert_list(a, (void *const *)checkpoints, n,
                                                    checkpoint_any);
}

Airlock__V1__Template **grpc_template_list(struct grpc_arena *a,
                                           Airlock__Scheduler__V1__Template *const *templates,
                                           size_t n)
{
    return (Airlock__V1__Template **)convert_list(a, (void *const *)templates, n, template_any);
}

int grpc_strings_json(json_t *obj, const char *prefix, const char *name, char *const *v, size_t n,
                      char *err, size_t errlen)
{
    json_t *list = n ? json_array() : NULL;
    for (size_t i = 0; i < n; i++) {
        if (json_array_append_new(list, json_string(v[i])) < 0) {
            snprintf(err, errlen, "%s%s[%zu]: must be UTF-8", prefix, name, i);
            json_decref(list);
            return -1;
        }
    }
    if (list)
        json_object_set_new(obj, name, list);
    return 0;
}

int grpc_network_policy(const Airlock__V1__NetworkPolicy *p, Airlock__Egress__V1__Policy *out,
                        char *err, size_t errlen)
{
    airlock__egress__v1__policy__init(out);
    if (!json_text_valid(p->default_)) {
        snprintf(err, errlen, "network.default: must be UTF-8");
        return -1;
    }
    if (*p->default_ &&
        policy_default_action(p->default_, "network", &out->default_action, err, errlen) < 0)
        return -1;
    for (size_t i = 0; i < N_SHARED_LISTS; i++) {
        const struct shared_list *f = &shared_lists[i];
        char *const *v = f->strings ? (char *const *)*list_items(p, f, 0) : NULL;
        for (size_t j = 0; v && j < *list_count(p, f, 0); j++) {
            if (!json_text_valid(v[j])) {
                snprintf(err, errlen, "network.%s[%zu]: must be UTF-8", f->name, j);
                return -1;
            }
        }
    }
    lists_copy(out, p, 0);
    out->allow_ech = p->allow_ech;
    out->inspect_tls = p->inspect_tls;
    return 0;
}

/* A string field as JSON in obj, left out when empty (so its default
 * applies); -1 with err naming it when it is not UTF-8. */
static int put_string(json_t *obj, const char *name, const char *v, char *err, size_t errlen)
{
    if (!*v || json_object_set_new(obj, name, json_string(v)) == 0)
        return 0;
    snprintf(err, errlen, "%s: must be UTF-8", name);
    return -1;
}

static void put_uint(json_t *obj, const char *name, uint32_t v)
{
    if (v)
        json_object_set_new(obj, name, json_integer(v));
}

/* A file as REST's {"path","content"|"content_b64","mode"}: text content
 * as "content" (so errors name the field the client set), other bytes as
 * base64. */
static json_t *file_json(const Airlock__V1__TemplateFile *f, size_t i, char *err, size_t errlen)
{
    json_t *obj = json_object(), *content = NULL;
    const char *data = (const char *)f->content.data;
    if (!memchr(data ? data : "", '\0', f->content.len))
        content = json_stringn(data ? data : "", f->content.len);
    const char *content_name = content ? "content" : "content_b64";
    if (!content)
        content = reply_base64(data ? data : "", f->content.len);
    if (json_object_set_new(obj, content_name, content) < 0 ||
        json_object_set_new(obj, "path", json_string(f->path)) < 0) {
        snprintf(err, errlen, "files[%zu].path: must be UTF-8", i);
        json_decref(obj);
        return NULL;
    }
    put_uint(obj, "mode", f->mode);
    return obj;
}

char *grpc_template_spec_json(const Airlock__V1__TemplateSpec *m, char *err, size_t errlen)
{
    static const Airlock__V1__TemplateSpec empty = AIRLOCK__V1__TEMPLATE_SPEC__INIT;
    json_t *obj = json_object(), *env = NULL, *network = NULL, *files = NULL;
    char *out = NULL;
    if (!m)
        m = &empty; /* the scheduler then says what is required */
    if (put_string(obj, "name", m->name, err, errlen) < 0 ||
        put_string(obj, "base", m->base_template, err, errlen) < 0 ||
        put_string(obj, "workdir", m->workdir, err, errlen) < 0 ||
        put_string(obj, "start_cmd", m->start_cmd, err, errlen) < 0 ||
        grpc_strings_json(obj, "", "packages", m->packages, m->n_packages, err, errlen) < 0 ||
        grpc_strings_json(obj, "", "run", m->run, m->n_run, err, errlen) < 0 ||
        !(env = string_map_to_json((ProtobufCMessage **)m->env, m->n_env, "env", err, errlen)))
        goto cleanup;
    if (m->network) {
        Airlock__Egress__V1__Policy policy;
        if (grpc_network_policy(m->network, &policy, err, errlen) < 0 ||
            !(network = policy_json_from_proto(&policy, "network", err, errlen)))
            goto cleanup;
    }
    if (m->n_files) {
        files = json_array();
        for (size_t i = 0; i < m->n_files; i++) {
            json_t *f = file_json(m->files[i], i, err, errlen);
            if (!f)
                goto cleanup;
            json_array_append_new(files, f);
        }
        json_object_set(obj, "files", files);
    }
    if (m->n_env)
        json_object_set(obj, "env", env);
    if (network)
        json_object_set(obj, "network", network);
    put_uint(obj, "cpus", m->cpus);
    put_uint(obj, "memory_mb", m->memory_mb);
    put_uint(obj, "warm_pool", m->warm_pool);
    if (!(out = json_dumps(obj, JSON_COMPACT)))
        snprintf(err, errlen, "out of memory");
cleanup:
    json_decref(obj);
    json_decref(env);
    json_decref(network);
    json_decref(files);
    return out;
}
