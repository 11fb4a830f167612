#include "quota.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each kind's name and fields, from the field's name in projects.proto:
 * a rename there fails to compile here. QuotaLimits keeps each value in
 * a oneof of its own (presence), whose case is the field's number when
 * set. */
#define KIND(field, FIELD, builtin)                                                          \
    { #field, builtin, offsetof(Airlock__V1__QuotaLimits, field##_given_case),             \
      offsetof(Airlock__V1__QuotaLimits, field),                                             \
      AIRLOCK__V1__QUOTA_LIMITS__##FIELD##_GIVEN_##FIELD,                                    \
      offsetof(Airlock__V1__ProjectQuotas, field) }

static const struct kind {
    const char *name;
    int64_t builtin; /* the default without a flag: room for one busy tenant, not the node */
    size_t given_case, value, given; /* in QuotaLimits: the oneof's case, the value, its "set" */
    size_t quota;                    /* in ProjectQuotas */
} kinds[QUOTA_KIND_COUNT] = {
    [QUOTA_SANDBOXES] = KIND(sandboxes, SANDBOXES, 50),
    [QUOTA_VCPUS] = KIND(vcpus, VCPUS, 100),
    [QUOTA_MEMORY_MB] = KIND(memory_mb, MEMORY_MB, 100 * 1024),
    [QUOTA_CHECKPOINTS] = KIND(checkpoints, CHECKPOINTS, 500),
    [QUOTA_TEMPLATES] = KIND(templates, TEMPLATES, 50),
    [QUOTA_TEMPLATE_BUILDS] = KIND(template_builds, TEMPLATE_BUILDS, 4),
    [QUOTA_VOLUMES] = KIND(volumes, VOLUMES, 50),
    [QUOTA_VOLUME_MB] = KIND(volume_mb, VOLUME_MB, 200 * 1024),
};

const char *quota_name(enum quota_kind k)
{
    return (unsigned)k < QUOTA_KIND_COUNT ? kinds[k].name : NULL;
}

void quota_names(char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < QUOTA_KIND_COUNT && used < len; k++) {
        int n = snprintf(buf + used, len - used, "%s%s", k ? ", " : "", kinds[k].name);
        used += n > 0 ? (size_t)n : 0;
    }
}

int quota_kind_parse(const char *name)
{
    for (int k = 0; k < QUOTA_KIND_COUNT; k++)
        if (strcmp(kinds[k].name, name) == 0)
            return k;
    return -1;
}

int64_t quota_builtin_default(enum quota_kind k)
{
    return kinds[k].builtin;
}

int quota_setting_check(enum quota_kind k, int64_t value, struct airlock_error *e)
{
    if (value >= QUOTA_UNLIMITED)
        return 0;
    return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                             "%s: %" PRId64 " is negative (a limit is 0 or more; 0 = the "
                             "scheduler's default, -1 = unlimited)",
                             kinds[k].name, value);
}

bool quota_default_valid(int64_t value)
{
    return value >= QUOTA_UNLIMITED;
}

void quota_sandboxes(int64_t n, int64_t cpus, int64_t memory_mb, struct quota_values *out)
{
    *out = (struct quota_values){ { 0 } };
    out->v[QUOTA_SANDBOXES] = n;
    out->v[QUOTA_VCPUS] = n * cpus;
    out->v[QUOTA_MEMORY_MB] = n * memory_mb;
}

/* The oneof cases are enums of int size (protobuf-c forces it) with no
 * negative value, which GCC and Clang make unsigned int. */
_Static_assert(sizeof(Airlock__V1__QuotaLimits__SandboxesGivenCase) == sizeof(unsigned),
               "a oneof's case is read as an unsigned int");
bool quota_limits_get(const Airlock__V1__QuotaLimits *l, enum quota_kind k, int64_t *value)
{
    const char *base = (const char *)l;
    if (*(const unsigned *)(base + kinds[k].given_case) != kinds[k].given)
        return false;
    *value = *(const int64_t *)(base + kinds[k].value);
    return true;
}

void quota_limits_set(Airlock__V1__QuotaLimits *l, enum quota_kind k, int64_t value)
{
    char *base = (char *)l;
    *(unsigned *)(base + kinds[k].given_case) = (unsigned)kinds[k].given;
    *(int64_t *)(base + kinds[k].value) = value;
}

Airlock__V1__Quota **quota_field(Airlock__V1__ProjectQuotas *q, enum quota_kind k)
{
    return (Airlock__V1__Quota **)((char *)q + kinds[k].quota);
}

int quota_refuse_cap(struct airlock_error *e, const char *whose, const char *name, int64_t used,
                     int64_t requested, int64_t limit)
{
    return airlock_error_set(e, AIRLOCK_ERR_QUOTA,
                             AIRLOCK_QUOTA_MESSAGE_PREFIX "%s: %" PRId64 " in use + %" PRId64
                             " requested > limit %" PRId64 " (%s)",
                             name, used, requested, limit, whose);
}

int quota_refuse(struct airlock_error *e, const char *project, enum quota_kind k, int64_t used,
                 int64_t requested, int64_t limit)
{
    char whose[96];
    snprintf(whose, sizeof(whose), "project %s", project);
    return quota_refuse_cap(e, whose, kinds[k].name, used, requested, limit);
}

int quota_values_parse(const char *text, struct quota_values *out, bool set[QUOTA_KIND_COUNT])
{
    const char *p = text;
    if (*p++ != '{')
        return -1;
    for (int k = 0; k < QUOTA_KIND_COUNT; k++) {
        bool null = strncmp(p, "NULL", 4) == 0;
        char *end = (char *)p + 4;
        out->v[k] = null ? 0 : strtoll(p, &end, 10);
        if (end == p)
            return -1;
        if (set)
            set[k] = !null;
        p = end;
        if (*p++ != (k + 1 < QUOTA_KIND_COUNT ? ',' : '}'))
            return -1;
    }
    return *p == '\0' ? 0 : -1;
}

void quota_values_text(const struct quota_values *v, char *buf, size_t len)
{
    size_t used = 0;
    for (int k = 0; k < QUOTA_KIND_COUNT && used < len; k++) {
        int n = snprintf(buf + used, len - used, "%c%" PRId64, k ? ',' : '{', v->v[k]);
        used += n > 0 ? (size_t)n : 0;
    }
    if (used < len)
        snprintf(buf + used, len - used, "}");
}
