/* Orgs: groups of projects whose secrets (org scope) apply to every
 * project in the org. An org has its own data key, wrapped by the master
 * key (orgs have no BYOK). A project is in at most one org. */
#ifndef AIRLOCK_VAULT_ORGS_H
#define AIRLOCK_VAULT_ORGS_H

#include "vault.h"
#include "vault.pb-c.h"

/* CreateOrg (ALREADY_EXISTS when taken) and GetOrg (NOT_FOUND); out's
 * org_id is malloc'd: org_clear. */
grpc_status_code org_create(struct vault *v, const Airlock__Vault__V1__OrgRequest *req,
                            Airlock__Vault__V1__Org *out, char *err, size_t errlen);
grpc_status_code org_get(struct vault *v, const Airlock__Vault__V1__OrgRequest *req,
                         Airlock__Vault__V1__Org *out, char *err, size_t errlen);
void org_clear(Airlock__Vault__V1__Org *out);

/* SetProjectOrg; NOT_FOUND naming the org when it does not exist. */
grpc_status_code org_set_project(struct vault *v, const Airlock__Vault__V1__SetProjectOrgRequest *req,
                                 Airlock__Vault__V1__Org *out, char *err, size_t errlen);

/* Unwraps org_id's data key into key (VAULT_KEY_BYTES, locked memory). */
grpc_status_code org_data_key(struct vault *v, const char *org_id, unsigned char *key, char *err,
                              size_t errlen);

#endif
