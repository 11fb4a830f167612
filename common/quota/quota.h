/* A project's quotas (protos/airlock/v1/projects.proto, docs/api.md
 * "Quotas"): the kinds, in one order that the scheduler's SQL arrays and
 * its --quota-* flags follow, their fields in the proto messages, the
 * rules a value follows, and the one message of a refusal. Pure: the
 * scheduler counts and decides under a lock in PostgreSQL
 * (scheduler/quota_store.c), the gateway turns the messages into REST's
 * JSON. */
#ifndef AIRLOCK_QUOTA_H
#define AIRLOCK_QUOTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "airlock/v1/projects.pb-c.h"
#include "airlock_error.h"

enum quota_kind {
    QUOTA_SANDBOXES,
    QUOTA_VCPUS,
    QUOTA_MEMORY_MB,
    QUOTA_CHECKPOINTS,
    QUOTA_TEMPLATES,
    QUOTA_TEMPLATE_BUILDS,
    QUOTA_VOLUMES,
    QUOTA_VOLUME_MB,
    QUOTA_KIND_COUNT,
};

/* A limit that is no limit. */
#define QUOTA_UNLIMITED INT64_C(-1)

/* One number per kind, in enum quota_kind's order. */
struct quota_values {
    int64_t v[QUOTA_KIND_COUNT];
};

/* "sandboxes", "memory_mb", …: the field of the proto messages, REST's
 * JSON key, the project_quotas column. NULL out of range. */
const char *quota_name(enum quota_kind k);
/* Every kind's name, ", " between them, for messages. */
void quota_names(char *buf, size_t len);
/* The kind named name; -1 when none is. */
int quota_kind_parse(const char *name);
/* The scheduler's default when no flag says otherwise. */
int64_t quota_builtin_default(enum quota_kind k);

/* A value the admin sets (QuotaLimits): -1, 0 (the default again) or
 * more; -1 with e (invalid) naming the field otherwise. */
int quota_setting_check(enum quota_kind k, int64_t value, struct airlock_error *e);
/* A default (a flag): -1 or 0 and more (0: nothing of it without a
 * project's own value); false otherwise. */
bool quota_default_valid(int64_t value);

/* What n sandboxes of cpus vCPUs and memory_mb MiB each take, and
 * nothing else. */
void quota_sandboxes(int64_t n, int64_t cpus, int64_t memory_mb, struct quota_values *out);

/* Whether l sets kind k, and to what. */
bool quota_limits_get(const Airlock__V1__QuotaLimits *l, enum quota_kind k, int64_t *value);
void quota_limits_set(Airlock__V1__QuotaLimits *l, enum quota_kind k, int64_t value);
/* Kind k's field of q (a pointer to its Quota pointer). */
Airlock__V1__Quota **quota_field(Airlock__V1__ProjectQuotas *q, enum quota_kind k);

/* Sets e to the refusal of `requested` more of kind k for project, which
 * uses `used` of its `limit`: class AIRLOCK_ERR_QUOTA, the message
 * "quota exceeded: vcpus: 8 in use + 2 requested > limit 8 (project
 * prj_x)". Returns -1. */
int quota_refuse(struct airlock_error *e, const char *project, enum quota_kind k, int64_t used,
                 int64_t requested, int64_t limit);
/* The same for a cap that is no quota of a project's: `name` of `whose`
 * ("quota exceeded: execs: 8 in use + 1 requested > limit 8 (key
 * key_x)" for name "execs", whose "key key_x"). */
int quota_refuse_cap(struct airlock_error *e, const char *whose, const char *name, int64_t used,
                     int64_t requested, int64_t limit);

/* PostgreSQL's text of a bigint[] of QUOTA_KIND_COUNT numbers
 * ("{1,2,512,0,0,0}"), NULLs allowed ("{4,NULL,…}"): 0 with the values
 * and, when set is not NULL, which were not NULL (a NULL reads as 0);
 * -1 when text is not that. */
int quota_values_parse(const char *text, struct quota_values *out, bool set[QUOTA_KIND_COUNT]);
/* v as such an array's text ("{1,2,512,0,0,0}") in buf. */
void quota_values_text(const struct quota_values *v, char *buf, size_t len);

#endif
