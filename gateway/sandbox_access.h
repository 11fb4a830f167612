/* What the REST handlers and the public gRPC API share on their way to the
 * scheduler and to the sandboxes' vmhosts: who is calling, API key
 * authentication, project-scoped scheduler calls, and the vmhost channel of
 * a running sandbox. Each function returns 0, or -1 with a struct
 * airlock_error naming the field, id or state (what the scheduler or a
 * vmhost answered is classified once, airlock_error_from_status); each
 * front end turns it into its own error shape (reply_airlock_error,
 * grpc_fail_error). */
#ifndef AIRLOCK_GATEWAY_SANDBOX_ACCESS_H
#define AIRLOCK_GATEWAY_SANDBOX_ACCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "airlock_error.h"
#include "gateway.h"
#include "egress.pb-c.h"
#include "scheduler.pb-c.h"

#define SCHEDULER_METHOD(name) "/airlock.scheduler.v1.Scheduler/" name
#define VMHOST_METHOD(name) "/airlock.vmhost.v1.VmHost/" name
#define GW_SCHEDULER_TIMEOUT_MS 30000
#define GW_CREATE_TIMEOUT_MS 300000 /* a create boots a VM (TCG: seconds) */
#define GW_IDLE_TIMEOUT_MAX_S (365u * 86400) /* and ttl_s */
/* gRPC waits for a service that is down (wait-for-ready) until the call's
 * deadline, minutes for a create: a request gives up on a service it has
 * no connection to after this instead, and says which one. Long enough
 * for a restart. */
#define GW_CONNECT_WAIT_MS 5000

/* Who makes a call, once authenticated: what every scheduler request
 * names. The strings belong to the caller of these functions. */
struct gw_caller {
    const char *request_id;  /* req_…, in both services' log lines */
    const char *project_id;  /* every query is scoped by it */
    const char *key_id;      /* recorded as the actor of transitions */
};

/* Names the caller in a scheduler request (its request_id, project_id and
 * actor fields). */
#define GW_CALLER_FILL(req, c)                                                                     \
    ((req).request_id = (char *)(c)->request_id, (req).project_id = (char *)(c)->project_id,     \
     (req).actor = (char *)(c)->key_id)

static inline struct gw_caller gw_request_caller(const struct gw_request *r)
{
    return (struct gw_caller){ r->id, r->project_id, r->key_id };
}

/* The principal of authorization ("Bearer <key>", NULL when absent):
 * unauthenticated with `missing` as the message when there is no bearer
 * key, else the scheduler's Authenticate answer, or its recent success
 * from the gateway's key cache (key_cache.h). */
int gw_authenticate(struct gateway *gw, const char *authorization, const char *missing,
                    struct key_principal *who, struct airlock_error *e);

/* A sandbox id as vmhost and the scheduler make them ([a-z0-9_-]{1,64});
 * -1 with e (invalid) naming it otherwise. */
int gw_id_check(const char *id, struct airlock_error *e);

/* An absolute path argument called `name`; -1 with e (invalid)
 * otherwise. */
int gw_path_check(const char *path, const char *name, struct airlock_error *e);

/* rpc_unary on ch (the scheduler, vault or a vmhost); its failure as e.
 * A service not connected within GW_CONNECT_WAIT_MS is unavailable with a
 * message naming it (as is one whose connection went during the call:
 * rpc_client.h). */
int gw_unary(struct rpc_channel *ch, const char *method, const ProtobufCMessage *req,
             const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **resp, int timeout_ms,
             struct airlock_error *e);

/* A scheduler call that takes a SandboxRef (GetSandbox, DeleteSandbox,
 * PauseSandbox, ResumeSandbox, SuspendSandbox, ListCheckpoints) for the
 * caller's sandbox id; resp_desc says what it answers. A foreign id is
 * not found like an unknown one. */
int gw_sandbox_ref_call(struct gateway *gw, const struct gw_caller *c, const char *method,
                        const char *id, const ProtobufCMessageDescriptor *resp_desc,
                        ProtobufCMessage **resp, struct airlock_error *e);

/* Bounds of the logs a sandbox leaves on its node (REST and gRPC). */
#define GW_CONSOLE_TAIL_DEFAULT (64u << 10)
#define GW_CONSOLE_TAIL_MAX (1u << 20)
#define GW_NETWORK_LOG_MAX_LIMIT 10000

/* An egress decision as both APIs spell it: "allow" or "deny". */
static inline const char *gw_decision_name(Airlock__Egress__V1__Decision d)
{
    return d == AIRLOCK__EGRESS__V1__DECISION__DECISION_ALLOW ? "allow" : "deny";
}

/* The vmhost channel of sandbox sb's node, whatever its state (logs), or
 * unavailable when the node cannot be reached. */
int gw_sandbox_node_channel(struct gateway *gw, const Airlock__Scheduler__V1__Sandbox *sb,
                            struct rpc_channel **ch, struct airlock_error *e);

/* The unary vmhost call `method` for the caller's sandbox id in any state
 * (its logs), req naming that id already: the scheduler's tenancy lookup
 * (not found for a foreign id), then its node. On 0 *resp (caller frees). */
int gw_sandbox_node_unary(struct gateway *gw, const struct gw_caller *c, const char *id,
                          const char *method, const ProtobufCMessage *req,
                          const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **resp,
                          struct airlock_error *e);

/* The vmhost channel of sandbox sb, which must be running: state
 * "sandbox sb_… is paused; <what> needs running", or unavailable when its
 * node cannot be reached. */
int gw_sandbox_channel(struct gateway *gw, const Airlock__Scheduler__V1__Sandbox *sb,
                       const char *what, struct rpc_channel **ch, struct airlock_error *e);

/* The caller's sandbox id (GetSandbox) and, when it is running, its
 * vmhost channel (owned by the pool). On failure *sb is NULL. */
int gw_sandbox_open(struct gateway *gw, const struct gw_caller *c, const char *id, const char *what,
                    Airlock__Scheduler__V1__Sandbox **sb, struct rpc_channel **ch,
                    struct airlock_error *e);

/* Has the scheduler create the sandbox req describes (the front end's
 * translation of its request: template, size, env, metadata, network;
 * the caller's fields are filled here), after the limits both APIs share. */
int gw_sandbox_create(struct gateway *gw, const struct gw_caller *c,
                      Airlock__Scheduler__V1__CreateSandboxRequest *req,
                      Airlock__Scheduler__V1__Sandbox **out, struct airlock_error *e);

/* Replaces sandbox id's egress policy (its values judged by egress on the
 * node). */
int gw_sandbox_set_network(struct gateway *gw, const struct gw_caller *c, const char *id,
                           Airlock__Egress__V1__Policy *network,
                           Airlock__Scheduler__V1__Sandbox **out, struct airlock_error *e);

/* A CheckpointRequest (CreateCheckpoint, DeleteCheckpoint,
 * RestoreCheckpoint) of the caller for sandbox_id; strings borrowed. */
Airlock__Scheduler__V1__CheckpointRequest gw_checkpoint_request(const struct gw_caller *c,
                                                               const char *sandbox_id,
                                                               const char *name);

#endif
