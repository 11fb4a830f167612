#include "grpc_convert.h"

#include <stdio.h>
#include <string.h>

#include "policy_json.h"
#include "reply.h"
#include "vmhost_names.h"

static char *rfc3339(struct grpc_arena *a, int64_t unix_ms)
{
    char when[40];
    reply_rfc3339(unix_ms, when, sizeof(when));
    return grpc_arena_strdup(a, when);
}

static char **strings_copy(struct grpc_arena *a, char *const *src, size_t n)
{
    char **out = n ? grpc_arena_alloc(a, n * sizeof(*out)) : NULL;
    for (size_t i = 0; out && i < n; i++)
        out[i] = grpc_arena_strdup(a, src[i]);
    return out;
}

static uint32_t *ports_copy(struct grpc_arena *a, const uint32_t *src, size_t n)
{
    uint32_t *out = n ? grpc_arena_alloc(a, n * sizeof(*out)) : NULL;
    if (out)
        memcpy(out, src, n * sizeof(*out));
    return out;
}

/* The stored policy (REST's "network" JSON) as a message; NULL when none
 * is set. */
static Airlock__V1__NetworkPolicy *network_msg(struct grpc_arena *a, const char *network_json)
{
    json_t *j = *network_json ? json_loads(network_json, 0, NULL) : NULL;
    Airlock__Egress__V1__Policy policy;
    char err[256];
    Airlock__V1__NetworkPolicy *p = NULL;
    /* The gateway checked it before the scheduler stored it. */
    if (!j || policy_json_to_proto(j, "network", &policy, err, sizeof(err)) < 0)
        goto out;
    p = grpc_arena_alloc(a, sizeof(*p));
    if (p) {
        airlock__v1__network_policy__init(p);
        if (policy.default_action == AIRLOCK__EGRESS__V1__DEFAULT_ACTION__DEFAULT_ACTION_ALLOW)
            p->default_ = "allow";
        else if (policy.default_action == AIRLOCK__EGRESS__V1__DEFAULT_ACTION__DEFAULT_ACTION_DENY)
            p->default_ = "deny";
        p->allow_domains = strings_copy(a, policy.allow_domains, policy.n_allow_domains);
        p->n_allow_domains = policy.n_allow_domains;
        p->deny_domains = strings_copy(a, policy.deny_domains, policy.n_deny_domains);
        p->n_deny_domains = policy.n_deny_domains;
        p->allow_cidrs = strings_copy(a, policy.allow_cidrs, policy.n_allow_cidrs);
        p->n_allow_cidrs = policy.n_allow_cidrs;
        p->deny_cidrs = strings_copy(a, policy.deny_cidrs, policy.n_deny_cidrs);
        p->n_deny_cidrs = policy.n_deny_cidrs;
        p->allow_ports = ports_copy(a, policy.allow_ports, policy.n_allow_ports);
        p->n_allow_ports = policy.n_allow_ports;
        p->deny_ports = ports_copy(a, policy.deny_ports, policy.n_deny_ports);
        p->n_deny_ports = policy.n_deny_ports;
        p->allow_ech = policy.allow_ech;
        p->inspect_tls = policy.inspect_tls;
    }
    policy_json_release(&policy);
out:
    json_decref(j);
    return p;
}

/* metadata_json (an object of strings) as map entries. */
static void metadata_entries(struct grpc_arena *a, const char *metadata_json, Airlock__V1__Sandbox *out)
{
    json_t *j = json_loads(metadata_json, 0, NULL);
    size_t n = json_is_object(j) ? json_object_size(j) : 0;
    out->metadata = n ? grpc_arena_alloc(a, n * sizeof(*out->metadata)) : NULL;
    const char *key;
    json_t *v;
    if (out->metadata) {
        json_object_foreach(j, key, v)
        {
            Airlock__V1__Sandbox__MetadataEntry *e = grpc_arena_alloc(a, sizeof(*e));
            if (!e || !json_is_string(v))
                continue;
            airlock__v1__sandbox__metadata_entry__init(e);
            e->key = grpc_arena_strdup(a, key);
            e->value = grpc_arena_strdup(a, json_string_value(v));
            out->metadata[out->n_metadata++] = e;
        }
    }
    json_decref(j);
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
    metadata_entries(a, sb->metadata_json, m);
    m->idle_timeout_s = sb->idle_timeout_s;
    m->ttl_s = sb->ttl_s;
    m->created_at = rfc3339(a, sb->created_unix_ms);
    m->updated_at = rfc3339(a, sb->updated_unix_ms);
    m->error = sb->error;
    m->network = network_msg(a, sb->network_json);
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

/* The string field `name` of a map entry. */
static const char *entry_string(const ProtobufCMessage *entry, const char *name)
{
    const ProtobufCFieldDescriptor *f =
        protobuf_c_message_descriptor_get_field_by_name(entry->descriptor, name);
    return f ? *(char *const *)((const char *)entry + f->offset) : "";
}

int grpc_string_map_json(ProtobufCMessage *const *entries, size_t n, const char *field,
                         json_t **out, char *err, size_t errlen)
{
    *out = json_object();
    for (size_t i = 0; *out && i < n; i++) {
        const char *key = entry_string(entries[i], "key");
        json_t *value = json_string(entry_string(entries[i], "value"));
        if (!value || json_object_set_new(*out, key, value) < 0) {
            snprintf(err, errlen, "%s: keys and values must be UTF-8", field);
            json_decref(*out);
            *out = NULL;
            return -1;
        }
    }
    if (!*out)
        snprintf(err, errlen, "out of memory");
    return *out ? 0 : -1;
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

static void put_ports(json_t *obj, const char *name, const uint32_t *v, size_t n)
{
    if (!n)
        return;
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(list, json_integer(v[i]));
    json_object_set_new(obj, name, list);
}

int grpc_network_json(const Airlock__V1__NetworkPolicy *p, json_t **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!p)
        return 0;
    json_t *obj = json_object();
    if (*p->default_ && json_object_set_new(obj, "default", json_string(p->default_)) < 0) {
        snprintf(err, errlen, "network.default: must be UTF-8");
        json_decref(obj);
        return -1;
    }
    const char *in = "network.";
    if (grpc_strings_json(obj, in, "allow_domains", p->allow_domains, p->n_allow_domains, err,
                          errlen) < 0 ||
        grpc_strings_json(obj, in, "deny_domains", p->deny_domains, p->n_deny_domains, err,
                          errlen) < 0 ||
        grpc_strings_json(obj, in, "allow_cidrs", p->allow_cidrs, p->n_allow_cidrs, err,
                          errlen) < 0 ||
        grpc_strings_json(obj, in, "deny_cidrs", p->deny_cidrs, p->n_deny_cidrs, err,
                          errlen) < 0) {
        json_decref(obj);
        return -1;
    }
    put_ports(obj, "allow_ports", p->allow_ports, p->n_allow_ports);
    put_ports(obj, "deny_ports", p->deny_ports, p->n_deny_ports);
    if (p->allow_ech)
        json_object_set_new(obj, "allow_ech", json_true());
    if (p->inspect_tls)
        json_object_set_new(obj, "inspect_tls", json_true());
    *out = obj;
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
        grpc_string_map_json((ProtobufCMessage **)m->env, m->n_env, "env", &env, err, errlen) < 0 ||
        grpc_network_json(m->network, &network, err, errlen) < 0)
        goto cleanup;
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
