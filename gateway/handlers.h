/* Route handlers, one file per group: handlers_admin.c (health, metrics,
 * projects, keys), handlers_sandbox.c, handlers_network.c (egress policy),
 * handlers_checkpoint.c (checkpoints, restore, fork), handlers_exec.c, handlers_process.c,
 * handlers_files.c (bytes and listings), handlers_file_ops.c (stat, mkdir,
 * remove, rename), handlers_events.c. */
#ifndef AIRLOCK_GATEWAY_HANDLERS_H
#define AIRLOCK_GATEWAY_HANDLERS_H

#include "gateway.h"
#include "json_input.h"
#include <jansson.h>

#include "scheduler.pb-c.h"
#include "vmhost.pb-c.h"

#define SCHEDULER_METHOD(name) "/airlock.scheduler.v1.Scheduler/" name
#define VMHOST_METHOD(name) "/airlock.vmhost.v1.VmHost/" name
#define GW_SCHEDULER_TIMEOUT_MS 30000
#define GW_CREATE_TIMEOUT_MS 300000 /* a create boots a VM (TCG: seconds) */

enum MHD_Result handle_healthz(struct gw_request *r);
enum MHD_Result handle_metrics(struct gw_request *r);
enum MHD_Result handle_project_create(struct gw_request *r);
enum MHD_Result handle_key_create(struct gw_request *r);
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
enum MHD_Result handle_events(struct gw_request *r);
void file_put_begin(struct gw_request *r);
void file_put_chunk(struct gw_request *r, const char *data, size_t len);
void file_put_cleanup(struct gw_request *r);

/* The public shape of a sandbox (docs/api.md). */
json_t *gw_sandbox_json(const Airlock__Scheduler__V1__Sandbox *sb);

/* The caller's sandbox r->path_id from the scheduler (scoped to the
 * caller's project). On failure the error is answered (404 for a foreign
 * id) and NULL returned; *rc gets the MHD result. */
Airlock__Scheduler__V1__Sandbox *gw_sandbox_lookup(struct gw_request *r, enum MHD_Result *rc);

/* Like gw_sandbox_lookup, but records a failure with gw_request_fail (for
 * upload_begin, which cannot answer yet). */
Airlock__Scheduler__V1__Sandbox *gw_sandbox_lookup_early(struct gw_request *r);

/* The vmhost channel of a running sandbox; else answers 409 naming the
 * state (or 503) and returns NULL. */
struct rpc_channel *gw_sandbox_vmhost(struct gw_request *r, const Airlock__Scheduler__V1__Sandbox *sb,
                                      const char *what, enum MHD_Result *rc);

/* Sandbox {id}, its running vmhost and the "path" query parameter, or
 * NULL after answering (what: "reading files", for the 409 message). */
struct rpc_channel *gw_file_target(struct gw_request *r, const char *what,
                                   Airlock__Scheduler__V1__Sandbox **sb, const char **path,
                                   enum MHD_Result *rc);

/* {"name":…,"type":"file|dir|symlink|other","size":…,"mode":…,"mtime":…}
 * (name_b64 when the name is not UTF-8). */
json_t *gw_file_info_json(const Airlock__Vmhost__V1__FileInfo *fi);

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

/* Shape and types of a "network" object (egress policy, docs/api.md); -1
 * with err naming the field. egress judges the values later. */
int gw_network_check(json_t *network, char *err, size_t errlen);

/* The "path" query parameter: present, absolute, no NUL. NULL after
 * answering 400 otherwise. */
const char *gw_query_path(struct gw_request *r, enum MHD_Result *rc);

#endif
