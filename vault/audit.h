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
    /* How it ended: NULL = OK, else the failure, recorded as the gRPC
     * status name vault answered with it. */
    const struct airlock_error *outcome;
};

/* Appends one row to the audit log. When it cannot, -1 with e internal,
 * "audit log unavailable: why" (logged): what it records must then not
 * happen. e may be ev->outcome (read before e is written). */
int vault_audit(struct vault *v, const struct audit_event *ev, struct airlock_error *e);

/* A project's rows (optionally one sandbox's) or, with org_id alone, an
 * org's; newest first. On 0 out points into *rows: audit_list_clear after
 * sending. */
int audit_list(struct vault *v, const Airlock__Vault__V1__ListAuditRequest *req,
               Airlock__Vault__V1__ListAuditResponse *out, PGresult **rows,
               struct airlock_error *e);
void audit_list_clear(Airlock__Vault__V1__ListAuditResponse *out, PGresult *rows);

#endif
