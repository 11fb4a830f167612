/* Creating, listing and deleting secrets. Values go in encrypted and never
 * come back out here: responses carry metadata only. */
#ifndef AIRLOCK_VAULT_SECRETS_H
#define AIRLOCK_VAULT_SECRETS_H

#include "vault.h"
#include "vault.pb-c.h"

/* Fills out (strings malloc'd: secret_metadata_clear) on 0. Zeroes
 * req->value in every case. */
int secret_create(struct vault *v, Airlock__Vault__V1__CreateSecretRequest *req,
                  Airlock__Vault__V1__SecretMetadata *out, struct airlock_error *e);
void secret_metadata_clear(Airlock__Vault__V1__SecretMetadata *m);

/* out->secrets malloc'd: secret_list_clear. */
int secret_list(struct vault *v, const Airlock__Vault__V1__ListSecretsRequest *req,
                Airlock__Vault__V1__ListSecretsResponse *out, struct airlock_error *e);
void secret_list_clear(Airlock__Vault__V1__ListSecretsResponse *out);

int secret_delete(struct vault *v, const Airlock__Vault__V1__DeleteSecretRequest *req,
                  struct airlock_error *e);

#endif
