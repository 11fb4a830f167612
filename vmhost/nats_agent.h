/* vmhost's side of the control plane (protos/node.proto): heartbeats with
 * this node's capacity on airlock.node.<id>.heartbeat, and the scheduler's
 * work as NATS request/reply on airlock.node.<id>.<op>, served by the same
 * sandbox code as the gRPC API. Exec and file bytes do not come this way:
 * the heartbeat advertises the gRPC address and the gateway calls it. */
#ifndef AIRLOCK_VMHOST_NATS_AGENT_H
#define AIRLOCK_VMHOST_NATS_AGENT_H

#include <stddef.h>

#include "nats_credentials.h"
#include "vmhost.h"

#define NATS_AGENT_HEARTBEAT_MS 2000
#define NATS_ROLL_CALL_SUBJECT "airlock.nodes.roll-call"

struct nats_agent;

/* Connects as creds' user (must outlive the agent), subscribes and sends
 * the first heartbeat. advertise_addr is the gRPC address the gateway
 * should use for this node. */
struct nats_agent *nats_agent_start(struct vmhost *vh, const char *url,
                                    const struct nats_credentials *creds, const char *node_id,
                                    const char *advertise_addr, char *err, size_t errlen);

/* Stops taking work, waits for requests in flight, disconnects. */
void nats_agent_stop(struct nats_agent *a);

#endif
