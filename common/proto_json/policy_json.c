#include "policy_json.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef Airlock__Egress__V1__Policy policy_t;

/* The repeated fields, by where protobuf-c keeps their count and items, so
 * one loop serves all six. */
static const struct list_field {
    const char *name;
    bool ports;
    size_t n_off, items_off;
} list_fields[] = {
    { "allow_domains", false, offsetof(policy_t, n_allow_domains), offsetof(policy_t, allow_domains) },
    { "deny_domains", false, offsetof(policy_t, n_deny_domains), offsetof(policy_t, deny_domains) },
    { "allow_cidrs", false, offsetof(policy_t, n_allow_cidrs), offsetof(policy_t, allow_cidrs) },
    { "deny_cidrs", false, offsetof(policy_t, n_deny_cidrs), offsetof(policy_t, deny_cidrs) },
    { "allow_ports", true, offsetof(policy_t, n_allow_ports), offsetof(policy_t, allow_ports) },
    { "deny_ports", true, offsetof(policy_t, n_deny_ports), offsetof(policy_t, deny_ports) },
};
#define N_LIST_FIELDS (sizeof(list_fields) / sizeof(*list_fields))

/* The switches: true or false. */
static const struct bool_field {
    const char *name;
    size_t off;
} bool_fields[] = {
    { "allow_ech", offsetof(policy_t, allow_ech) },
    { "inspect_tls", offsetof(policy_t, inspect_tls) },
};
#define N_BOOL_FIELDS (sizeof(bool_fields) / sizeof(*bool_fields))

static void **items_of(policy_t *p, const struct list_field *f)
{
    return (void **)((char *)p + f->items_off);
}

int policy_default_action(const char *s, const char *name, Airlock__Egress__V1__DefaultAction *out,
                          char *err, size_t errlen)
{
    if (strcmp(s, "deny") == 0) {
        *out = AIRLOCK__EGRESS__V1__DEFAULT_ACTION__DEFAULT_ACTION_DENY;
    } else if (strcmp(s, "allow") == 0) {
        *out = AIRLOCK__EGRESS__V1__DEFAULT_ACTION__DEFAULT_ACTION_ALLOW;
    } else {
        snprintf(err, errlen, "%s.default: must be \"deny\" or \"allow\"", name);
        return -1;
    }
    return 0;
}

const char *policy_default_name(Airlock__Egress__V1__DefaultAction a)
{
    switch (a) {
    case AIRLOCK__EGRESS__V1__DEFAULT_ACTION__DEFAULT_ACTION_DENY:
        return "deny";
    case AIRLOCK__EGRESS__V1__DEFAULT_ACTION__DEFAULT_ACTION_ALLOW:
        return "allow";
    default:
        return NULL;
    }
}

static int set_list(json_t *v, const char *name, const struct list_field *f, policy_t *out,
                    char *err, size_t errlen)
{
    if (!json_is_array(v)) {
        snprintf(err, errlen, "%s.%s: must be an array", name, f->name);
        return -1;
    }
    size_t n = json_array_size(v);
    void *items = calloc(n ? n : 1, f->ports ? sizeof(uint32_t) : sizeof(char *));
    if (!items) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* Owned by out from here, so a failure below is freed by the caller. */
    *(size_t *)((char *)out + f->n_off) = n;
    *items_of(out, f) = items;
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(v, i);
        if (f->ports) {
            /* Only what fits the uint32 field; 1..65535 is egress's rule. */
            if (!json_is_integer(e) || json_integer_value(e) < 0 ||
                json_integer_value(e) > (json_int_t)UINT32_MAX) {
                snprintf(err, errlen, "%s.%s[%zu]: must be a port number", name, f->name, i);
                return -1;
            }
            ((uint32_t *)items)[i] = (uint32_t)json_integer_value(e);
        } else {
            if (!json_is_string(e)) {
                snprintf(err, errlen, "%s.%s[%zu]: must be a string", name, f->name, i);
                return -1;
            }
            ((char **)items)[i] = (char *)json_string_value(e);
        }
    }
    return 0;
}

int policy_json_to_proto(json_t *v, const char *name, Airlock__Egress__V1__Policy *out, char *err,
                         size_t errlen)
{
    airlock__egress__v1__policy__init(out);
    if (!json_is_object(v)) {
        snprintf(err, errlen, "%s: must be an object", name);
        return -1;
    }
    const char *key;
    json_t *value;
    json_object_foreach(v, key, value)
    {
        if (strcmp(key, "default") == 0) {
            const char *action = json_is_string(value) ? json_string_value(value) : "";
            if (policy_default_action(action, name, &out->default_action, err, errlen) < 0)
                goto fail;
            continue;
        }
        const struct bool_field *b = NULL;
        for (size_t i = 0; i < N_BOOL_FIELDS && !b; i++)
            if (strcmp(bool_fields[i].name, key) == 0)
                b = &bool_fields[i];
        if (b) {
            if (!json_is_boolean(value)) {
                snprintf(err, errlen, "%s.%s: must be true or false", name, b->name);
                goto fail;
            }
            *(protobuf_c_boolean *)((char *)out + b->off) = json_is_true(value);
            continue;
        }
        const struct list_field *f = NULL;
        for (size_t i = 0; i < N_LIST_FIELDS && !f; i++)
            if (strcmp(list_fields[i].name, key) == 0)
                f = &list_fields[i];
        if (!f) {
            snprintf(err, errlen, "%s: unknown field \"%.100s\"", name, key);
            goto fail;
        }
        if (set_list(value, name, f, out, err, errlen) < 0)
            goto fail;
    }
    return 0;
fail:
    policy_json_release(out);
    return -1;
}

void policy_json_release(Airlock__Egress__V1__Policy *p)
{
    for (size_t i = 0; i < N_LIST_FIELDS; i++)
        free(*items_of(p, &list_fields[i]));
    airlock__egress__v1__policy__init(p);
}

/* List field f of p as a JSON array (NULL when empty). */
static int list_json(const policy_t *p, const struct list_field *f, const char *name, json_t **out,
                     char *err, size_t errlen)
{
    size_t n = *(const size_t *)((const char *)p + f->n_off);
    void *items = *items_of((policy_t *)p, f);
    *out = n ? json_array() : NULL;
    for (size_t i = 0; i < n; i++) {
        json_t *e = f->ports ? json_integer(((const uint32_t *)items)[i])
                             : json_string(((char *const *)items)[i]);
        if (json_array_append_new(*out, e) < 0) {
            snprintf(err, errlen, "%s.%s[%zu]: must be UTF-8", name, f->name, i);
            json_decref(*out);
            *out = NULL;
            return -1;
        }
    }
    return 0;
}

json_t *policy_json_from_proto(const Airlock__Egress__V1__Policy *p, const char *name, char *err,
                               size_t errlen)
{
    json_t *obj = json_object();
    const char *action = policy_default_name(p->default_action);
    if (!obj || (action && json_object_set_new(obj, "default", json_string(action)) < 0))
        goto oom;
    for (size_t i = 0; i < N_LIST_FIELDS; i++) {
        json_t *list;
        if (list_json(p, &list_fields[i], name, &list, err, errlen) < 0) {
            json_decref(obj);
            return NULL;
        }
        if (list && json_object_set_new(obj, list_fields[i].name, list) < 0)
            goto oom;
    }
    for (size_t i = 0; i < N_BOOL_FIELDS; i++)
        if (*(const protobuf_c_boolean *)((const char *)p + bool_fields[i].off) &&
            json_object_set_new(obj, bool_fields[i].name, json_true()) < 0)
            goto oom;
    return obj;
oom:
    snprintf(err, errlen, "out of memory");
    json_decref(obj);
    return NULL;
}
