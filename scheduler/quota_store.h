/* A project's quotas in PostgreSQL (migration 6; docs/api.md "Quotas"):
 * the admin's values (project_quotas), what the project uses, and the
 * admission of whatever takes more of it.
 *
 * Admission is atomic: the statement that records a new sandbox, a
 * resume, a checkpoint or a template build begins with QUOTA_GATE, which
 * takes the project's row lock and counts its usage after it
 * (quota_usage_locked), and does its write only WHERE QUOTA_ADMITTED. Two
 * such statements of one project run one after the other, the second
 * counting what the first committed, so concurrent creates never take a
 * quota past its limit. What a node makes before it is recorded (forks,
 * checkpoints) is asked about first (store_quota_admits: the common
 * refusal costs the node nothing) and admitted again when recorded; the
 * node's work is undone when that refuses. A function that fails returns
 * -1 with e set (quota when refused, unavailable when the database is). */
#ifndef AIRLOCK_SCHEDULER_QUOTA_STORE_H
#define AIRLOCK_SCHEDULER_QUOTA_STORE_H

#include <libpq-fe.h>

#include "airlock_error.h"
#include "db.h"
#include "quota.h"
#include "template_store.h"

#define QUOTA_STR_(x) #x
#define QUOTA_STR(x) QUOTA_STR_(x)

/* The CTE `q` that begins a statement admitting something: project (an
 * SQL text expression), request and defaults (SQL texts of bigint[], in
 * common/quota's order) give one row of the project's usage (counted
 * under its lock), its limits, the request and the first quota the
 * request exceeds (1-based; 0: none). */
#define QUOTA_GATE(project, request, defaults)                                            \
    QUOTA_GATE_COUNTING("quota_usage_locked", project, request, defaults)
/* The same counted by usage, a function of migration 6 (quota_usage: no
 * lock, for a statement that only asks). */
#define QUOTA_GATE_COUNTING(usage, project, request, defaults)                            \
    " q AS (SELECT used, limits, request, quota_exceeded(used, limits, request) AS exceeded" \
    "   FROM (SELECT " usage "(" project ", " QUOTA_STR(TEMPLATE_BUILD_MAX_S) ") AS used,"  \
    "     quota_limits(" project ", " defaults "::bigint[]) AS limits,"                  \
    "     " request "::bigint[] AS request) g)"
/* The condition of the write QUOTA_GATE admits. */
#define QUOTA_ADMITTED " (SELECT exceeded FROM q) = 0"
/* What the statement answers of q, for quota_ask_answer. */
#define QUOTA_ANSWER_COLUMNS " q.used::text, q.limits::text, q.request::text, q.exceeded"

/* What a statement admitting something asks of its project's quotas. */
struct quota_ask {
    const char *project_id;
    struct quota_values request;         /* how much more of each kind */
    const struct quota_values *defaults; /* the scheduler's (--quota-*) */
};

/* The texts of an ask's request and defaults, QUOTA_GATE's parameters. */
#define QUOTA_VALUES_TEXT_SIZE (QUOTA_KIND_COUNT * 21 + 2)
struct quota_ask_params {
    char request[QUOTA_VALUES_TEXT_SIZE];
    char defaults[QUOTA_VALUES_TEXT_SIZE];
};
void quota_ask_params(const struct quota_ask *ask, struct quota_ask_params *out);

/* The gate's verdict from row `row` of res, whose QUOTA_ANSWER_COLUMNS
 * begin at `column`: 0 when it admitted the ask, -1 with e (quota)
 * naming the quota, its limit and the usage when it refused, internal
 * when the columns are not the gate's. */
int quota_ask_answer(const struct quota_ask *ask, PGresult *res, int row, int column,
                     struct airlock_error *e);

/* Whether the project could take ask now (a question: no lock is taken,
 * and the answer may change before the record): 0, or -1 with e as
 * quota_ask_answer's. */
int store_quota_admits(struct db *db, const struct quota_ask *ask, struct airlock_error *e);

/* A project's quotas as projects.proto's ProjectQuotas; msg points into
 * the rest. */
struct project_quotas_msg {
    Airlock__V1__ProjectQuotas msg;
    Airlock__V1__Quota quotas[QUOTA_KIND_COUNT];
    char project_id[64];
};

/* The limits in force (the project's own, else defaults) and the usage
 * of project_id; not found for an unknown project. */
int store_quota_get(struct db *db, const char *project_id, const struct quota_values *defaults,
                    struct project_quotas_msg *out, struct airlock_error *e);

/* Sets the quotas limits gives (0: the default again), keeps the
 * others; invalid naming a value below -1 (nothing changes), not found
 * for an unknown project. */
int store_quota_set(struct db *db, const char *project_id, const Airlock__V1__QuotaLimits *limits,
                    struct airlock_error *e);

#endif
