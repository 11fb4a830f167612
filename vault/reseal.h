/* Upgrading secrets sealed with an older AAD (secret_aad.h): vault opens
 * them with their own version's AAD and seals them again with the current
 * one, which covers owner, scope and bindings. It needs the owner's data
 * key, so rows of orgs and master-key projects are re-sealed at start;
 * those of a BYOK project when vault next holds its key (UnlockProject,
 * or an injection with the customer key). Until then they work as they
 * are, protected by the old AAD (the id) only. */
#ifndef AIRLOCK_VAULT_RESEAL_H
#define AIRLOCK_VAULT_RESEAL_H

#include "vault.h"

/* Re-seals the old rows of project_id ("" for an org) or org_id under key,
 * the owner's data key; each with its audit row (reseal_secret), only if
 * the row is unchanged meanwhile. Outcomes are logged, not returned: a row
 * that does not open stays as it is and is refused where it is used. */
void reseal_owner(struct vault *v, const char *project_id, const char *org_id,
                  const unsigned char *key);

/* At start: every owner with old rows whose key vault holds without a
 * customer. -1 with e only when the database cannot be asked. */
int reseal_at_start(struct vault *v, struct airlock_error *e);

#endif
