/* egress's gRPC API (protos/egress.proto) over common/rpc. */
#ifndef AIRLOCK_EGRESS_SERVICE_H
#define AIRLOCK_EGRESS_SERVICE_H

#include <stddef.h>

#include "egress.h"
#include "rpc_server.h"

#define EGRESS_METHOD(name) "/airlock.egress.v1.Egress/" name

struct rpc_server *egress_service_start(struct egress *eg, const char *addr,
                                        const struct rpc_security *sec, char *err,
                                        size_t errlen);

#endif
