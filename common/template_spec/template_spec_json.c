/* The JSON form of a template spec: {"name":…, "base":…, "packages":[…],
 * "files":[{"path":…, "content"|"content_b64":…, "mode":…}], "run":[…],
 * "env":{…}, "workdir":…, "start_cmd":…, "cpus":…, "memory_mb":…,
 * "warm_pool":…, "network":{…}}. */
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_json.h"
#include "template_spec.h"

typedef Airlock__Vmhost__V1__TemplateSpec TemplateSpec;
typedef Airlock__Vmhost__V1__TemplateFile TemplateFile;
typedef Airlock__Vmhost__V1__TemplateSpec__EnvEntry EnvEntry;

static const char *const spec_fields[] = { "name",    "base",      "packages", "files",
                                           "run",     "env",       "workdir",  "start_cmd",
                                           "cpus",    "memory_mb", "warm_pool", "network" };

static int unknown_fields(json_t *obj, const char *const *known, size_t n, const char *prefix,
                          char *err, size_t errlen)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        size_t i = 0;
        while (i < n && strcmp(known[i], key) != 0)
            i++;
        if (i == n) {
            snprintf(err, errlen, "%s%.64s: unknown field", prefix, key);
            return -1;
        }
    }
    return 0;
}

/* A string field or "" when absent; -1 for another type. */
static int get_string(json_t *obj, const char *name, const char *field, char **out, char *err,
                      size_t errlen)
{
    json_t *v = json_object_get(obj, name);
    *out = "";
    if (!v)
        return 0;
    if (!json_is_string(v)) {
        snprintf(err, errlen, "%s: must be a string", field);
        return -1;
    }
    *out = (char *)json_string_value(v);
    return 0;
}

static int get_uint(json_t *obj, const char *name, uint32_t *out, char *err, size_t errlen)
{
    json_t *v = json_object_get(obj, name);
    *out = 0;
    if (!v)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > UINT32_MAX) {
        snprintf(err, errlen, "%s: must be a non-negative integer", name);
        return -1;
    }
    *out = (uint32_t)json_integer_value(v);
    return 0;
}

/* An array of strings as a malloc'd array pointing into the JSON. */
static int get_strings(json_t *obj, const char *name, char ***out, size_t *n, char *err,
                       size_t errlen)
{
    json_t *v = json_object_get(obj, name);
    *out = NULL;
    *n = 0;
    if (!v)
        return 0;
    if (!json_is_array(v)) {
        snprintf(err, errlen, "%s: must be an array of strings", name);
        return -1;
    }
    size_t count = json_array_size(v);
    char **list = calloc(count ? count : 1, sizeof(*list));
    if (!list) {
        snprintf(err, errlen, "%s: out of memory", name);
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        json_t *s = json_array_get(v, i);
        if (!json_is_string(s)) {
            snprintf(err, errlen, "%s[%zu]: must be a string", name, i);
            free(list);
            return -1;
        }
        list[i] = (char *)json_string_value(s);
    }
    *out = list;
    *n = count;
    return 0;
}

/* "0755" or 493: permission bits. */
static int file_mode(json_t *v, size_t i, uint32_t *mode, char *err, size_t errlen)
{
    *mode = 0;
    if (!v)
        return 0;
    if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) <= 07777) {
        *mode = (uint32_t)json_integer_value(v);
        return 0;
    }
    const char *s = json_is_string(v) ? json_string_value(v) : NULL;
    bool octal = s && *s && strspn(s, "01234567") == strlen(s);
    unsigned long m = octal ? strtoul(s, NULL, 8) : 07777 + 1;
    if (m > 07777) {
        snprintf(err, errlen, "files[%zu].mode: an octal string like \"0644\" or an integer up to "
                              "4095", i);
        return -1;
    }
    *mode = (uint32_t)m;
    return 0;
}

/* content (UTF-8 text) or content_b64 into a malloc'd copy. */
static int file_content(json_t *f, size_t i, ProtobufCBinaryData *out, char *err, size_t errlen)
{
    json_t *text = json_object_get(f, "content"), *b64 = json_object_get(f, "content_b64");
    out->data = NULL;
    out->len = 0;
    if (text && b64) {
        snprintf(err, errlen, "files[%zu]: content and content_b64 both given; pick one", i);
        return -1;
    }
    json_t *v = text ? text : b64;
    if (v && !json_is_string(v)) {
        snprintf(err, errlen, "files[%zu].%s: must be a string", i,
                 text ? "content" : "content_b64");
        return -1;
    }
    size_t len = v ? json_string_length(v) : 0;
    out->data = malloc(len + 1);
    if (!out->data) {
        snprintf(err, errlen, "files[%zu]: out of memory", i);
        return -1;
    }
    if (!b64) {
        memcpy(out->data, v ? json_string_value(v) : "", len);
        out->len = len;
        return 0;
    }
    /* EVP_DecodeBlock counts the padding as data: take it off again. */
    int n = len % 4 == 0 ? EVP_DecodeBlock(out->data, (const unsigned char *)json_string_value(v),
                                          (int)len)
                         : -1;
    if (n < 0) {
        snprintf(err, errlen, "files[%zu].content_b64: not valid base64", i);
        free(out->data);
        out->data = NULL;
        return -1;
    }
    const char *s = json_string_value(v);
    for (size_t k = len; k > 0 && s[k - 1] == '='; k--)
        n--;
    out->len = (size_t)n;
    return 0;
}

static const char *const file_fields[] = { "path", "content", "content_b64", "mode" };

static int get_files(json_t *obj, TemplateSpec *spec, char *err, size_t errlen)
{
    json_t *v = json_object_get(obj, "files");
    if (!v)
        return 0;
    if (!json_is_array(v)) {
        snprintf(err, errlen, "files: must be an array of objects");
        return -1;
    }
    size_t count = json_array_size(v);
    spec->files = calloc(count ? count : 1, sizeof(*spec->files));
    if (!spec->files) {
        snprintf(err, errlen, "files: out of memory");
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        json_t *f = json_array_get(v, i);
        char prefix[32], field[48];
        snprintf(prefix, sizeof(prefix), "files[%zu].", i);
        snprintf(field, sizeof(field), "files[%zu].path", i);
        if (!json_is_object(f)) {
            snprintf(err, errlen, "files[%zu]: must be an object", i);
            return -1;
        }
        TemplateFile *tf = calloc(1, sizeof(*tf));
        if (!tf) {
            snprintf(err, errlen, "files: out of memory");
            return -1;
        }
        airlock__vmhost__v1__template_file__init(tf);
        spec->files[spec->n_files++] = tf;
        if (unknown_fields(f, file_fields, sizeof(file_fields) / sizeof(*file_fields), prefix, err,
                           errlen) < 0 ||
            get_string(f, "path", field, &tf->path, err, errlen) < 0 ||
            file_mode(json_object_get(f, "mode"), i, &tf->mode, err, errlen) < 0 ||
            file_content(f, i, &tf->content, err, errlen) < 0)
            return -1;
    }
    return 0;
}

static int get_env(json_t *obj, TemplateSpec *spec, char *err, size_t errlen)
{
    json_t *v = json_object_get(obj, "env");
    if (!v)
        return 0;
    if (!json_is_object(v)) {
        snprintf(err, errlen, "env: must be an object of strings");
        return -1;
    }
    size_t count = json_object_size(v);
    spec->env = calloc(count ? count : 1, sizeof(*spec->env));
    if (!spec->env) {
        snprintf(err, errlen, "env: out of memory");
        return -1;
    }
    const char *key;
    json_t *val;
    json_object_foreach(v, key, val) {
        if (!json_is_string(val)) {
            snprintf(err, errlen, "env.%.64s: must be a string", key);
            return -1;
        }
        EnvEntry *e = calloc(1, sizeof(*e));
        if (!e) {
            snprintf(err, errlen, "env: out of memory");
            return -1;
        }
        airlock__vmhost__v1__template_spec__env_entry__init(e);
        e->key = (char *)key;
        e->value = (char *)json_string_value(val);
        spec->env[spec->n_env++] = e;
    }
    return 0;
}

static int get_network(json_t *obj, TemplateSpec *spec, char *err, size_t errlen)
{
    json_t *v = json_object_get(obj, "network");
    if (!v)
        return 0;
    Airlock__Egress__V1__Policy *p = calloc(1, sizeof(*p));
    if (!p) {
        snprintf(err, errlen, "network: out of memory");
        return -1;
    }
    if (policy_json_to_proto(v, "network", p, err, errlen) < 0) {
        free(p);
        return -1;
    }
    spec->network = p;
    return 0;
}

static int read_spec(json_t *root, TemplateSpec *spec, char *err, size_t errlen)
{
    if (!json_is_object(root)) {
        snprintf(err, errlen, "the template spec must be a JSON object");
        return -1;
    }
    if (unknown_fields(root, spec_fields, sizeof(spec_fields) / sizeof(*spec_fields), "", err,
                       errlen) < 0 ||
        get_string(root, "name", "name", &spec->name, err, errlen) < 0 ||
        get_string(root, "base", "base", &spec->base_template, err, errlen) < 0 ||
        get_string(root, "workdir", "workdir", &spec->workdir, err, errlen) < 0 ||
        get_string(root, "start_cmd", "start_cmd", &spec->start_cmd, err, errlen) < 0 ||
        get_uint(root, "cpus", &spec->cpus, err, errlen) < 0 ||
        get_uint(root, "memory_mb", &spec->memory_mb, err, errlen) < 0 ||
        get_uint(root, "warm_pool", &spec->warm_pool, err, errlen) < 0 ||
        get_strings(root, "packages", &spec->packages, &spec->n_packages, err, errlen) < 0 ||
        get_strings(root, "run", &spec->run, &spec->n_run, err, errlen) < 0 ||
        get_files(root, spec, err, errlen) < 0 || get_env(root, spec, err, errlen) < 0 ||
        get_network(root, spec, err, errlen) < 0)
        return -1;
    return template_spec_check(spec, err, errlen);
}

int template_spec_from_json(const char *text, size_t len, struct template_spec_json *out,
                            char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    airlock__vmhost__v1__template_spec__init(&out->msg);
    json_error_t jerr;
    out->json = json_loadb(text, len, 0, &jerr);
    if (!out->json) {
        snprintf(err, errlen, "the template spec is not valid JSON: %s (line %d)", jerr.text,
                 jerr.line);
        return -1;
    }
    if (read_spec(out->json, &out->msg, err, errlen) < 0) {
        template_spec_json_free(out);
        return -1;
    }
    return 0;
}

void template_spec_json_free(struct template_spec_json *s)
{
    TemplateSpec *m = &s->msg;
    free(m->packages);
    free(m->run);
    for (size_t i = 0; i < m->n_files; i++) {
        free(m->files[i]->content.data);
        free(m->files[i]);
    }
    free(m->files);
    for (size_t i = 0; i < m->n_env; i++)
        free(m->env[i]);
    free(m->env);
    if (m->network) {
        policy_json_release(m->network);
        free(m->network);
    }
    json_decref(s->json);
    memset(s, 0, sizeof(*s));
}
