/* vault's gRPC service (protos/vault.proto). */
#ifndef AIRLOCK_VAULT_SERVICE_H
#define AIRLOCK_VAULT_SERVICE_H

#include "rpc_server.h"
#include "vault.h"

struct rpc_server *vault_service_start(struct vault *v, const char *listen,
                                       const struct rpc_security *sec, char *err,
                                       size_t errlen);

#endif
