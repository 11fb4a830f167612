/* egress's side of vault (protos/vault.proto): whether a connection's host
 * has a credential binding for the sandbox (ListSecrets: metadata only, no
 * value, no token taken, nothing audited), and the injection for each
 * request (ResolveInjection: rate-limited and audited by vault). */
#ifndef AIRLOCK_EGRESS_VAULT_CLIENT_H
#define AIRLOCK_EGRESS_VAULT_CLIENT_H

#include <grpc/status.h>
#include <stdbool.h>
#include <stddef.h>

#include "rpc_client.h"
#include "vault.pb-c.h"

struct vault_client;

/* addr: vault's gRPC address; auth: how egress proves itself to vault
 * (rpc_client.h); actor: who egress is in vault's audit log
 * ("egress/<host name>"; with mutual TLS vault records the certificate's).
 * Connects lazily. NULL when out of memory. */
struct vault_client *vault_client_open(const char *addr, const struct rpc_channel_auth *auth,
                                       const char *actor);
void vault_client_close(struct vault_client *vc);

/* 1 when a secret the sandbox sees (its own or its project's) is bound to
 * host, 0 when none is, -1 with err set when vault could not say. */
int vault_client_host_bound(struct vault_client *vc, const char *project_id,
                            const char *sandbox_id, const char *host, char *err, size_t errlen);

/* ResolveInjection for one request (plaintext: it came over plain HTTP).
 * On OK *out holds the injection (free it with vault_injection_free, which
 * zeroes the secret); otherwise err has vault's message. */
grpc_status_code vault_client_resolve(struct vault_client *vc, const char *project_id,
                                      const char *sandbox_id, const char *host,
                                      const char *method, const char *path, bool plaintext,
                                      Airlock__Vault__V1__Injection **out, char *err,
                                      size_t errlen);
void vault_injection_free(Airlock__Vault__V1__Injection *inj);

#endif
