/* The scheduler's gRPC service (protos/scheduler.proto).
 * scheduler_service.c holds the method table and the project/key methods;
 * service_sandbox.c the sandbox lifecycle; service_op.c the operations one
 * request to the sandbox's node carries out (checkpoints, restore, forks, egress
 * policies), whose stages are in service_checkpoint.c, service_fork.c and
 * service_network.c; service_pool.c warm-pool targets;
 * service_template.c templates; service_quota.c a project's quotas;
 * service_nodes.c the nodes and their drain state. */
#ifndef AIRLOCK_SCHEDULER_SERVICE_H
#define AIRLOCK_SCHEDULER_SERVICE_H

#include "airlock_error.h"
#include "rpc_server.h"
#include "sandbox_store.h"
#include "scheduler.h"
#include "service_node_call.h"
#include "template_store.h"

struct rpc_server *scheduler_service_start(struct scheduler *s, char *err, size_t errlen);

/* Answers with the sandbox in row 0 of res and OK. */
void service_reply_sandbox(struct rpc_call *call, PGresult *res);
/* Answers with the project's sandbox id as it is stored now; -1 with e
 * when the lookup failed (then nothing is answered). */
int service_reply_sandbox_now(struct rpc_call *call, struct scheduler *s, const char *project_id,
                              const char *id, struct airlock_error *e);

/* Every row of each of the results, in order, as Sandbox messages (ptrs
 * is what a response's sandboxes field takes); service_sandbox_msgs_free
 * it, whatever the answer. */
struct sandbox_msgs {
    struct sandbox_msg *msgs;
    Airlock__Scheduler__V1__Sandbox **ptrs;
    size_t n;
};
int service_sandbox_msgs(PGresult *const *results, size_t n_results, struct sandbox_msgs *out,
                         struct airlock_error *e);
void service_sandbox_msgs_free(struct sandbox_msgs *m);

/* store_transition, and its event once committed. */
int service_transition(struct scheduler *s, const char *id, enum sandbox_state from,
                       enum sandbox_state to, const struct transition_note *note,
                       struct airlock_error *e);
/* The same, only if the project's quotas admit ask (quota when not): a
 * transition sandbox_transition_admitted() names. */
int service_transition_admitted(struct scheduler *s, const char *id, enum sandbox_state from,
                                enum sandbox_state to, const struct transition_note *note,
                                const struct quota_ask *ask, struct airlock_error *e);
/* The same, answered with the sandbox as committed in *row (PQclear it). */
int service_transition_row(struct scheduler *s, const char *id, enum sandbox_state from,
                           enum sandbox_state to, const struct transition_note *note,
                           PGresult **row, struct airlock_error *e);

/* Runs a lifecycle op (pause, resume, suspend, delete) on the project's
 * sandbox id as the API does and the controllers do: planned by the state
 * machine, a two-step op recorded before the node acts (and undone if the
 * node refuses, except delete), the final state committed with its audit
 * row and event. node gets the sandbox's node ("" if never placed). */
int service_sandbox_op(struct scheduler *s, const char *project_id, const char *id,
                       enum sandbox_op op, const struct transition_note *note, char *node,
                       size_t nodelen, struct airlock_error *e);

/* service_tenancy.c: the admin's projects and keys. */
void service_projects_list(struct rpc_call *call, void *ctx);
void service_keys_list(struct rpc_call *call, void *ctx);
void service_key_revoke(struct rpc_call *call, void *ctx);
/* service_quota.c: a project's quotas. */
void service_quotas_get(struct rpc_call *call, void *ctx);
void service_quotas_set(struct rpc_call *call, void *ctx);
/* service_nodes.c: the nodes and their drain state. */
void service_nodes_list(struct rpc_call *call, void *ctx);
void service_node_get(struct rpc_call *call, void *ctx);
void service_node_drain(struct rpc_call *call, void *ctx);
void service_node_undrain(struct rpc_call *call, void *ctx);

void service_sandbox_create(struct rpc_call *call, void *ctx);
void service_sandbox_get(struct rpc_call *call, void *ctx);
void service_sandbox_get_for_ingress(struct rpc_call *call, void *ctx);
void service_sandbox_list(struct rpc_call *call, void *ctx);
/* service_timeout.c */
void service_sandbox_set_timeout(struct rpc_call *call, void *ctx);
void service_sandbox_delete(struct rpc_call *call, void *ctx);
void service_sandbox_pause(struct rpc_call *call, void *ctx);
void service_sandbox_resume(struct rpc_call *call, void *ctx);
void service_sandbox_suspend(struct rpc_call *call, void *ctx);
void service_checkpoint_list(struct rpc_call *call, void *ctx);
void service_template_build(struct rpc_call *call, void *ctx); /* service_template.c */
void service_template_list(struct rpc_call *call, void *ctx);
void service_template_get(struct rpc_call *call, void *ctx);
void service_template_delete(struct rpc_call *call, void *ctx);

/* A create's template (template_store.h): req->template_ becomes its id
 * (pointing into tc), a named template's size fills cpus and memory_mb
 * (another size: invalid); not found naming an unknown one. */
int service_template_for_create(struct scheduler *s,
                                Airlock__Scheduler__V1__CreateSandboxRequest *req,
                                struct template_choice *tc, struct airlock_error *e);
/* service_volume.c: a project's volumes and their snapshots. */
void service_volume_create(struct rpc_call *call, void *ctx);
void service_volume_list(struct rpc_call *call, void *ctx);
void service_volume_get(struct rpc_call *call, void *ctx);
void service_volume_grow(struct rpc_call *call, void *ctx);
void service_volume_delete(struct rpc_call *call, void *ctx);
void service_volume_snapshot_create(struct rpc_call *call, void *ctx);
void service_volume_snapshot_list(struct rpc_call *call, void *ctx);
void service_volume_snapshot_delete(struct rpc_call *call, void *ctx);
void service_warm_pool_set(struct rpc_call *call, void *ctx);
void service_warm_pool_get(struct rpc_call *call, void *ctx);

#endif
