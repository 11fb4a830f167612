/* Orgs: groups of projects whose secrets (org scope) apply to every
 * project in the org. An org has its own data key, wrapped by the master
 * key (orgs have no BYOK). A project is in at most one org. */
#ifndef AIRLOCK_VAULT_ORGS_H
#define AIRLOCK_VAULT_ORGS_H

#include "vault.h"
#include "vault.pb-c.h"

/* CreateOrg (AIRLOCK_ERR_EXISTS when taken) and GetOrg (not found); out's
 * org_id is malloc'd: org_clear. */
int org_create(struct vault *v, const Airlock__Vault__V1__OrgRequest *req,
               Airlock__Vault__V1__Org *out, struct airlock_error *e);
int org_get(struct vault *v, const Airlock__Vault__V1__OrgRequest *req,
            Airlock__Vault__V1__Org *out, struct airlock_error *e);
void org_clear(Airlock__Vault__V1__Org *out);

/* SetProjectOrg; not found naming the org when it does not exist. */
int org_set_project(struct vault *v, const Airlock__Vault__V1__SetProjectOrgRequest *req,
                    Airlock__Vault__V1__Org *out, struct airlock_error *e);

/* Unwraps org_id's data key into key (VAULT_KEY_BYTES, locked memory). */
int org_data_key(struct vault *v, const char *org_id, unsigned char *key,
                 struct airlock_error *e);

#endif
