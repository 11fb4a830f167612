#include "audit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "rpc_err.h"

int vault_audit(struct vault *v, const struct audit_event *ev, struct airlock_error *e)
{
    const char *params[] = { ev->actor,
                             ev->action,
                             ev->project_id,
                             ev->sandbox_id ? ev->sandbox_id : "",
                             ev->secret_id ? ev->secret_id : "",
                             ev->host ? ev->host : "",
                             ev->method ? ev->method : "",
                             ev->path ? ev->path : "",
                             ev->outcome ? airlock_error_status_name(ev->outcome) : "OK",
                             ev->org_id ? ev->org_id : "" };
    char why[256];
    PGresult *res = db_query(&v->db,
                             "INSERT INTO vault_audit (actor, action, project_id, sandbox_id,"
                             " secret_id, host, method, path, status, org_id)"
                             " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                             10, params, why, sizeof(why));
    if (res) {
        PQclear(res);
        return 0;
    }
    log_error("audit append failed", "error=\"%s\"", why);
    return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "audit log unavailable: %s", why);
}

int audit_list(struct vault *v, const Airlock__Vault__V1__ListAuditRequest *req,
               Airlock__Vault__V1__ListAuditResponse *out, PGresult **rows,
               struct airlock_error *e)
{
    bool by_org;
    if (vault_check_owner(req->project_id, req->org_id, &by_org, e) < 0 ||
        vault_check_id("sandbox_id", req->sandbox_id, false, e) < 0)
        return -1;
    char limit[16];
    snprintf(limit, sizeof(limit), "%u",
             req->limit == 0 ? 100 : req->limit > 1000 ? 1000 : req->limit);
    const char *params[] = { by_org ? "" : req->project_id, req->sandbox_id, limit,
                             by_org ? req->org_id : "" };
    *rows = db_query(&v->db,
                     "SELECT id, (extract(epoch FROM at) * 1000)::bigint, actor, action,"
                     " project_id, sandbox_id, secret_id, host, method, path, status, org_id"
                     " FROM vault_audit WHERE ($4 = '' OR org_id = $4) AND project_id = $1"
                     " AND ($2 = '' OR sandbox_id = $2)"
                     " ORDER BY id DESC LIMIT $3::integer",
                     4, params, AIRLOCK_ERROR_MSG(e));
    if (!*rows)
        return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    int n = PQntuples(*rows);
    /* One block: the pointer array, then the entries it points to. */
    out->entries = calloc(1, ((size_t)n + 1) * (sizeof(*out->entries) +
                                                sizeof(Airlock__Vault__V1__AuditEntry)));
    if (!out->entries)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
    Airlock__Vault__V1__AuditEntry *entries = (void *)(out->entries + n + 1);
    /* Strings point into *rows, which the caller clears after sending. */
    for (int i = 0; i < n; i++) {
        Airlock__Vault__V1__AuditEntry *entry = &entries[i];
        airlock__vault__v1__audit_entry__init(entry);
        entry->id = strtoll(PQgetvalue(*rows, i, 0), NULL, 10);
        entry->at_unix_ms = strtoll(PQgetvalue(*rows, i, 1), NULL, 10);
        entry->actor = PQgetvalue(*rows, i, 2);
        entry->action = PQgetvalue(*rows, i, 3);
        entry->project_id = PQgetvalue(*rows, i, 4);
        entry->sandbox_id = PQgetvalue(*rows, i, 5);
        entry->secret_id = PQgetvalue(*rows, i, 6);
        entry->host = PQgetvalue(*rows, i, 7);
        entry->method = PQgetvalue(*rows, i, 8);
        entry->path = PQgetvalue(*rows, i, 9);
        entry->status = PQgetvalue(*rows, i, 10);
        entry->org_id = PQgetvalue(*rows, i, 11);
        out->entries[i] = entry;
    }
    out->n_entries = (size_t)n;
    return 0;
}

void audit_list_clear(Airlock__Vault__V1__ListAuditResponse *out, PGresult *rows)
{
    free(out->entries);
    out->entries = NULL;
    out->n_entries = 0;
    PQclear(rows);
}
