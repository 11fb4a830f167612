/* The append-only audit log (table vault_audit; a trigger refuses UPDATE,
 * DELETE and TRUNCATE). Changes write their row in the same statement as
 * the change; injections through vault_audit. */
#ifndef AIRLOCK_VAULT_AUDIT_H
#define AIRLOCK_VAULT_AUDIT_H

#include "vault.h"
#include "vault.pb-c.h"

/* Who did something, for the audit log. */
struct audit_event {
    const char *actor, *action, *project_id, *sandbox_id, *secret_id;
    const char *host, *method, *path;
    const char *org_id; /* an org secret's or org change's; NULL = none */
    grpc_status_code status;
};

/* Appends one row to the audit log. */
int vault_audit(struct vault *v, const struct audit_event *e, char *err, size_t errlen);

/* A project's rows (optionally one sandbox's) or, with org_id alone, an
 * org's; newest first. On OK out points into *rows: audit_list_clear after
 * sending. */
grpc_status_code audit_list(struct vault *v, const Airlock__Vault__V1__ListAuditRequest *req,
                            Airlock__Vault__V1__ListAuditResponse *out, PGresult **rows, char *err,
                            size_t errlen);
void audit_list_clear(Airlock__Vault__V1__ListAuditResponse *out, PGresult *rows);

#endif
