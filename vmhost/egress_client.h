/* vmhost's side of egress (protos/egress.proto): a sandbox's namespace is
 * attached with its policy at create, its policy replaced on request, and
 * it is detached before its namespace is deleted. */
#ifndef AIRLOCK_EGRESS_CLIENT_H
#define AIRLOCK_EGRESS_CLIENT_H

#include <grpc/status.h>
#include <stddef.h>
#include <stdint.h>

#include "egress.pb-c.h"
#include "rpc_client.h"

struct egress_client;

/* addr: egress's gRPC address ("unix:/path" or "host:port"); auth: how
 * vmhost proves itself (rpc_client.h). Connects lazily: egress may start
 * after vmhost. NULL when out of memory. */
struct egress_client *egress_client_open(const char *addr, const struct rpc_channel_auth *auth);
void egress_client_close(struct egress_client *ec);

/* Each returns egress's status; on failure err says what egress said.
 * policy NULL = deny everything. project_id (NULL/"" = none, or unchanged
 * for set_policy) is whose credentials egress injects. When egress injects
 * credentials, *ca_pem (ca_pem may be NULL) gets the sandbox CA the guest
 * must trust (malloc'd), else NULL. */
grpc_status_code egress_client_attach(struct egress_client *ec, const char *sandbox_id,
                                      const char *netns_path,
                                      const Airlock__Egress__V1__Policy *policy,
                                      const char *project_id, char **ca_pem, char *err,
                                      size_t errlen);
grpc_status_code egress_client_set_policy(struct egress_client *ec, const char *sandbox_id,
                                          const Airlock__Egress__V1__Policy *policy,
                                          const char *project_id, char **ca_pem, char *err,
                                          size_t errlen);
/* The sandbox's connection log from after_seq on; *out (free with
 * protobuf_c_message_free_unpacked) only when OK. */
grpc_status_code egress_client_connections(struct egress_client *ec, const char *sandbox_id,
                                           uint64_t after_seq,
                                           Airlock__Egress__V1__ListConnectionsResponse **out,
                                           char *err, size_t errlen);
/* egress's instance id (33 bytes: a new one after every egress start),
 * waiting at most timeout_ms for egress to answer. */
grpc_status_code egress_client_status(struct egress_client *ec, int timeout_ms, char *instance_id,
                                      char *err, size_t errlen);
/* A sandbox egress does not know (NOT_FOUND) counts as detached. */
grpc_status_code egress_client_detach(struct egress_client *ec, const char *sandbox_id, char *err,
                                      size_t errlen);

#endif
