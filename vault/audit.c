#include "audit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc_client.h"

int vault_audit(struct vault *v, const struct audit_event *e, char *err, size_t errlen)
{
    const char *params[] = { e->actor,
                             e->action,
                             e->project_id,
                             e->sandbox_id ? e->sandbox_id : "",
                             e->secret_id ? e->secret_id : "",
                             e->host ? e->host : "",
                             e->method ? e->method : "",
                             e->path ? e->path : "",
                             rpc_status_name(e->status),
                             e->org_id ? e->org_id : "" };
    PGresult *res = db_query(&v->db,
                             "INSERT INTO vault_audit (actor, action, project_id, sandbox_id,"
                             " secret_id, host, method, path, status, org_id)"
                             " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                             10, params, err, errlen);
    PQclear(res);
    return res ? 0 : -1;
}

grpc_status_code audit_list(struct vault *v, const Airlock__Vault__V1__ListAuditRequest *req,
                            Airlock__Vault__V1__ListAuditResponse *out, PGresult **rows, char *err,
                            size_t errlen)
{
    bool by_org;
    if (vault_check_owner(req->project_id, req->org_id, &by_org, err, errlen) < 0 ||
        vault_check_id("sandbox_id", req->sandbox_id, false, err, errlen) < 0)
        return GRPC_STATUS_INVALID_ARGUMENT;
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
                     4, params, err, errlen);
    if (!*rows)
        return GRPC_STATUS_INTERNAL;
    int n = PQntuples(*rows);
    /* One block: the pointer array, then the entries it points to. */
    out->entries = calloc(1, ((size_t)n + 1) * (sizeof(*out->entries) +
                                                sizeof(Airlock__Vault__V1__AuditEntry)));
    if (!out->entries) {
        snprintf(err, errlen, "out of memory");
        return GRPC_STATUS_INTERNAL;
    }
    Airlock__Vault__V1__AuditEntry *entries = (void *)(out->entries + n + 1);
    /* Strings point into *rows, which the caller clears after sending. */
    for (int i = 0; i < n; i++) {
        Airlock__Vault__V1__AuditEntry *e = &entries[i];
        airlock__vault__v1__audit_entry__init(e);
        e->id = strtoll(PQgetvalue(*rows, i, 0), NULL, 10);
        e->at_unix_ms = strtoll(PQgetvalue(*rows, i, 1), NULL, 10);
        e->actor = PQgetvalue(*rows, i, 2);
        e->action = PQgetvalue(*rows, i, 3);
        e->project_id = PQgetvalue(*rows, i, 4);
        e->sandbox_id = PQgetvalue(*rows, i, 5);
        e->secret_id = PQgetvalue(*rows, i, 6);
        e->host = PQgetvalue(*rows, i, 7);
        e->method = PQgetvalue(*rows, i, 8);
        e->path = PQgetvalue(*rows, i, 9);
        e->status = PQgetvalue(*rows, i, 10);
        e->org_id = PQgetvalue(*rows, i, 11);
        out->entries[i] = e;
    }
    out->n_entries = (size_t)n;
    return GRPC_STATUS_OK;
}

void audit_list_clear(Airlock__Vault__V1__ListAuditResponse *out, PGresult *rows)
{
    free(out->entries);
    out->entries = NULL;
    out->n_entries = 0;
    PQclear(rows);
}
