/* Route handlers, one file per group: handlers_admin.c (health, metrics,
 * projects, keys), handlers_sandbox.c, handlers_network.c (egress policy),
 * handlers_checkpoint.c (checkpoints, restore, fork), handlers_exec.c, handlers_process.c,
 * handlers_files.c (bytes and listings), handlers_file_ops.c (stat, mkdir,
 * remove, rename), handlers_events.c, handlers_logs.c (console and
 * connection logs), handlers_secrets.c + handlers_audit.c +
 * handlers_project_key.c (BYOK unlock) + handlers_orgs.c (vault),
 * handlers_warm_pool.c (warm-pool targets), handlers_template.c,
 * handlers_quota.c (a project's quotas), handlers_nodes.c (the nodes and
 * their drain state), handlers_volumes.c (volumes and their snapshots). */
#ifndef AIRLOCK_GATEWAY_ROUTE_HANDLERS_H
#define AIRLOCK_GATEWAY_ROUTE_HANDLERS_H

#include "gateway.h"
#include "json_input.h"
#include <jansson.h>

#include "exec_request.h"
#include "sandbox_access.h" /* SCHEDULER_METHOD, VMHOST_METHOD, timeouts, gw_caller */
#include "scheduler.pb-c.h"
#include "vmhost.pb-c.h"

#define VAULT_METHOD(name) "/airlock.vault.v1.Vault/" name

enum MHD_Result handle_healthz(struct gw_request *r);
enum MHD_Result handle_metrics(struct gw_request *r);
enum MHD_Result handle_whoami(struct gw_request *r);
enum MHD_Result handle_project_create(struct gw_request *r);
enum MHD_Result handle_key_create(struct gw_request *r);
enum MHD_Result handle_project_list(struct gw_request *r);
enum MHD_Result handle_key_list(struct gw_request *r);
enum MHD_Result handle_key_revoke(struct gw_request *r);
enum MHD_Result handle_sandbox_create(struct gw_request *r);
enum MHD_Result handle_sandbox_list(struct gw_request *r);
enum MHD_Result handle_sandbox_get(struct gw_request *r);
enum MHD_Result handle_sandbox_delete(struct gw_request *r);
enum MHD_Result handle_sandbox_pause(struct gw_request *r);
enum MHD_Result handle_sandbox_resume(struct gw_request *r);
enum MHD_Result handle_sandbox_suspend(struct gw_request *r);
enum MHD_Result handle_sandbox_network_put(struct gw_request *r);
enum MHD_Result handle_exec(struct gw_request *r);
enum MHD_Result handle_file_put(struct gw_request *r);
enum MHD_Result handle_file_get(struct gw_request *r);
enum MHD_Result handle_file_list(struct gw_request *r);
enum MHD_Result handle_file_stat(struct gw_request *r);
enum MHD_Result handle_file_watch(struct gw_request *r); /* handlers_watch.c */
enum MHD_Result handle_file_mkdir(struct gw_request *r);
enum MHD_Result handle_file_remove(struct gw_request *r);
enum MHD_Result handle_file_rename(struct gw_request *r);
enum MHD_Result handle_process_start(struct gw_request *r);
enum MHD_Result handle_process_list(struct gw_request *r);
enum MHD_Result handle_process_output(struct gw_request *r);
enum MHD_Result handle_process_stdin(struct gw_request *r);
enum MHD_Result handle_process_signal(struct gw_request *r);
enum MHD_Result handle_checkpoint_create(struct gw_request *r);
enum MHD_Result handle_checkpoint_list(struct gw_request *r);
enum MHD_Result handle_checkpoint_delete(struct gw_request *r);
enum MHD_Result handle_checkpoint_restore(struct gw_request *r);
enum MHD_Result handle_sandbox_fork(struct gw_request *r);
/* handlers_ports.c; gw_ports_json: the running sandbox's ports as the
 * API shows them (also in its GET), NULL with e. */
enum MHD_Result handle_ports_list(struct gw_request *r);
enum MHD_Result handle_port_url(struct gw_request *r);
json_t *gw_ports_json(struct gw_request *r, const char *id, struct airlock_error *e);
enum MHD_Result handle_events(struct gw_request *r);
enum MHD_Result handle_volume_create(struct gw_request *r);
enum MHD_Result handle_volume_list(struct gw_request *r);
enum MHD_Result handle_volume_get(struct gw_request *r);
enum MHD_Result handle_volume_delete(struct gw_request *r);
enum MHD_Result handle_volume_grow(struct gw_request *r);
enum MHD_Result handle_volume_snapshot_create(struct gw_request *r);
enum MHD_Result handle_volume_snapshot_list(struct gw_request *r);
enum MHD_Result handle_volume_snapshot_delete(struct gw_request *r);
enum MHD_Result handle_template_build(struct gw_request *r);
enum MHD_Result handle_template_list(struct gw_request *r);
enum MHD_Result handle_template_get(struct gw_request *r);
enum MHD_Result handle_template_delete(struct gw_request *r);
enum MHD_Result handle_warm_pool_put(struct gw_request *r);
enum MHD_Result handle_warm_pool_get(struct gw_request *r);
enum MHD_Result handle_process_resize(struct gw_request *r);
enum MHD_Result handle_network_log(struct gw_request *r);
enum MHD_Result handle_console_log(struct gw_request *r);
enum MHD_Result handle_secret_create(struct gw_request *r);
enum MHD_Result handle_secret_list(struct gw_request *r);
enum MHD_Result handle_secret_delete(struct gw_request *r);
enum MHD_Result handle_audit_list(struct gw_request *r);
enum MHD_Result handle_secrets_unlock(struct gw_request *r);
enum MHD_Result handle_secrets_lock(struct gw_request *r);
enum MHD_Result handle_org_create(struct gw_request *r);
enum MHD_Result handle_project_org_put(struct gw_request *r);
enum MHD_Result handle_quotas_get(struct gw_request *r);
enum MHD_Result handle_quotas_put(struct gw_request *r);
enum MHD_Result handle_nodes_list(struct gw_request *r);
enum MHD_Result handle_node_get(struct gw_request *r);
enum MHD_Result handle_node_drain(struct gw_request *r);
enum MHD_Result handle_node_undrain(struct gw_request *r);
enum MHD_Result handle_org_secret_create(struct gw_request *r);
enum MHD_Result handle_org_secret_list(struct gw_request *r);
enum MHD_Result handle_org_secret_delete(struct gw_request *r);
enum MHD_Result handle_org_audit_list(struct gw_request *r);
void file_put_begin(struct gw_request *r);
void file_put_chunk(struct gw_request *r, const char *data, size_t len);
void file_put_cleanup(struct gw_request *r);

/* One scheduler call (handlers_checkpoint.c); on success the answer as
 * JSON (to_json of the response) with ok_status (204: no body), else the
 * error. */
enum MHD_Result gw_scheduler_call(struct gw_request *r, const char *method, ProtobufCMessage *req,
                                  const ProtobufCMessageDescriptor *resp_desc, int timeout_ms,
                                  json_t *(*to_json)(const ProtobufCMessage *), unsigned ok_status);

/* The public shape of a sandbox (docs/api.md). */
json_t *gw_sandbox_json(const Airlock__Scheduler__V1__Sandbox *sb);

/* The caller's sandbox r->path_id from the scheduler (scoped to the
 * caller's project). On failure the error is answered (404 for a foreign
 * id) and NULL returned; *rc gets the MHD result. */
Airlock__Scheduler__V1__Sandbox *gw_sandbox_lookup(struct gw_request *r, enum MHD_Result *rc);

/* The same for sandbox id (e.g. from a request body). */
Airlock__Scheduler__V1__Sandbox *gw_sandbox_lookup_id(struct gw_request *r, const char *id,
                                                      enum MHD_Result *rc);

/* Like gw_sandbox_lookup, but records a failure with gw_request_fail (for
 * upload_begin, which cannot answer yet). */
Airlock__Scheduler__V1__Sandbox *gw_sandbox_lookup_early(struct gw_request *r);

/* The vmhost channel of a running sandbox; else answers 409 naming the
 * state (or 503) and returns NULL. */
struct rpc_channel *gw_sandbox_vmhost(struct gw_request *r, const Airlock__Scheduler__V1__Sandbox *sb,
                                      const char *what, enum MHD_Result *rc);

/* The vmhost channel of the sandbox's node whatever its state (logs); else
 * answers 503 and returns NULL. */
struct rpc_channel *gw_sandbox_node(struct gw_request *r, const Airlock__Scheduler__V1__Sandbox *sb,
                                    enum MHD_Result *rc);

/* Sandbox {id}, its running vmhost and the "path" query parameter, or
 * NULL after answering (what: "reading files", for the 409 message). */
struct rpc_channel *gw_file_target(struct gw_request *r, const char *what,
                                   Airlock__Scheduler__V1__Sandbox **sb, const char **path,
                                   enum MHD_Result *rc);

/* The body as an exec of kind, built for sandbox {id} (*sb), and its
 * running vmhost; NULL after answering (what: "exec", for the 409
 * message). exec_request_free(in) and free *sb (when set) in any case. */
struct rpc_channel *gw_exec_target(struct gw_request *r, enum exec_kind kind, const char *what,
                                   struct exec_request *in, Airlock__Scheduler__V1__Sandbox **sb,
                                   enum MHD_Result *rc);

/* {"name":…,"type":"file|dir|symlink|other","size":…,"mode":…,"mtime":…}
 * (name_b64 when the name is not UTF-8). */
json_t *gw_file_info_json(const Airlock__Guest__V1__FileInfo *fi);

/* The JSON body of r checked against fields (json_input.h); NULL after
 * answering 400 naming the field. */
json_t *gw_json_body(struct gw_request *r, const struct json_field *fields, size_t n_fields,
                     enum MHD_Result *rc);

/* For sandbox {id}, if running: sets *sandbox_id_field (a field of req) to
 * its id and makes the unary vmhost call `method`, whose answer is Empty;
 * 204, or the error (404 foreign sandbox, 409 naming the state and
 * `what`). */
enum MHD_Result gw_vmhost_call_no_content(struct gw_request *r, const char *what, const char *method,
                                          ProtobufCMessage *req, char **sandbox_id_field);

/* A unary call on airlock-vault (handlers_secrets.c): true with *resp, or
 * false after answering (503 when vault does not answer; vault's field
 * names in 400s renamed to the REST body's). */
bool gw_vault_call(struct gw_request *r, const char *method, const ProtobufCMessage *req,
                   const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **resp,
                   enum MHD_Result *rc);

/* A BYOK customer key as REST carries it: 64 hex digits → 32 bytes. -1
 * with e (invalid) naming customer_key (and key zeroed) otherwise. */
#define GW_CUSTOMER_KEY_BYTES 32
int gw_customer_key_parse(const char *hex, uint8_t key[GW_CUSTOMER_KEY_BYTES],
                          struct airlock_error *e);

/* Query parameter name as a number in min..max into *out (left alone when
 * absent); false after answering 400. */
bool gw_query_uint(struct gw_request *r, const char *name, uint64_t min, uint64_t max,
                   uint64_t *out, enum MHD_Result *rc);
/* The optional "sandbox_id" query parameter ("" when absent); false after
 * answering 400 for a malformed one. */
bool gw_query_sandbox_id(struct gw_request *r, const char **out, enum MHD_Result *rc);

/* The "path" query parameter: present, absolute, no NUL. NULL after
 * answering 400 otherwise. */
const char *gw_query_path(struct gw_request *r, enum MHD_Result *rc);

#endif
