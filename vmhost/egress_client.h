/* vmhost's side of egress (protos/egress.proto): a sandbox's namespace is
 * attached with its policy at create, its policy replaced on request, and
 * it is detached before its namespace is deleted. */
#ifndef AIRLOCK_EGRESS_CLIENT_H
#define AIRLOCK_EGRESS_CLIENT_H

#include <grpc/status.h>
#include <stddef.h>

#include "egress.pb-c.h"

struct egress_client;

/* addr: egress's gRPC address ("unix:/path" or "host:port"). Connects
 * lazily: egress may start after vmhost. NULL when out of memory. */
struct egress_client *egress_client_open(const char *addr);
void egress_client_close(struct egress_client *ec);

/* Each returns egress's status; on failure err says what egress said.
 * policy NULL = deny everything. */
grpc_status_code egress_client_attach(struct egress_client *ec, const char *sandbox_id,
                                      const char *netns_path,
                                      const Airlock__Egress__V1__Policy *policy, char *err,
                                      size_t errlen);
grpc_status_code egress_client_set_policy(struct egress_client *ec, const char *sandbox_id,
                                          const Airlock__Egress__V1__Policy *policy, char *err,
                                          size_t errlen);
/* A sandbox egress does not know (NOT_FOUND) counts as detached. */
grpc_status_code egress_client_detach(struct egress_client *ec, const char *sandbox_id, char *err,
                                      size_t errlen);

#endif
