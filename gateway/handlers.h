/* Route handlers, one file per group: handlers_admin.c (health, metrics,
 * projects, keys), handlers_sandbox.c, handlers_exec.c, handlers_files.c. */
#ifndef AIRLOCK_GATEWAY_HANDLERS_H
#define AIRLOCK_GATEWAY_HANDLERS_H

#include "gateway.h"
#include "scheduler.pb-c.h"

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
enum MHD_Result handle_exec(struct gw_request *r);
enum MHD_Result handle_file_put(struct gw_request *r);
enum MHD_Result handle_file_get(struct gw_request *r);
enum MHD_Result handle_file_list(struct gw_request *r);
void file_put_begin(struct gw_request *r);
void file_put_chunk(struct gw_request *r, const char *data, size_t len);
void file_put_cleanup(struct gw_request *r);

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

/* The "path" query parameter: present, absolute, no NUL. NULL after
 * answering 400 otherwise. */
const char *gw_query_path(struct gw_request *r, enum MHD_Result *rc);

#endif
