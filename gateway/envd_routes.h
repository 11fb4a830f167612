/* E2B's in-sandbox API (envd) served by the gateway, so E2B's SDK's
 * `sandbox.commands`, `sandbox.pty` and `sandbox.files` work against
 * airlock: the Connect services process.Process and filesystem.Filesystem
 * (envd_process.c, envd_filesystem.c) and envd's HTTP routes /files and
 * /health (envd_files.c), translated to the sandbox's vmhost calls.
 *
 * A request is envd's when it names a sandbox with the headers
 * `E2b-Sandbox-Id` + `E2b-Sandbox-Port: 49983` (what the SDK sends with
 * E2B_SANDBOX_URL), or with the Host `49983-<sandbox id>.<public domain>`.
 * Its `X-Access-Token` must be an API key (e2b_<hex> or ak_<hex>) of the
 * sandbox's project; envd is never open. These routes are not in gw_routes
 * (`airlock-gateway --routes`): their paths are E2B's. */
#ifndef AIRLOCK_GATEWAY_ENVD_ROUTES_H
#define AIRLOCK_GATEWAY_ENVD_ROUTES_H

#include <jansson.h>
#include <stdbool.h>

#include "airlock_error.h"
#include "gateway.h"
#include "json_input.h"
#include "routes.h"
#include "scheduler.pb-c.h"

#define ENVD_PORT "49983"

extern const struct gw_route envd_routes[];
extern const size_t envd_routes_count;

/* request_begin's hook: false when r is not for envd (nothing done);
 * else routes it, authenticates it and begins its upload, recording any
 * failure for envd_reply_pending. */
bool envd_request_begin(struct gw_request *r, const char *method, const char *url);
/* Answers the failure recorded on r in the shape of its call. */
enum MHD_Result envd_reply_pending(struct gw_request *r);

/* ---- for envd_*.c ---- */

/* Records e on r (Connect's code and status) for an upload's end. */
void envd_fail(struct gw_request *r, const struct airlock_error *e);
/* e in the shape of r's call: a Connect unary error, a Connect stream's
 * end-stream (HTTP 200), or envd's HTTP {"code":<status>,"message":…}. */
enum MHD_Result envd_reply_error(struct gw_request *r, const struct airlock_error *e);
/* A unary call's response message (stolen), 200 application/json. */
enum MHD_Result envd_reply_message(struct gw_request *r, json_t *msg);
/* The request message of r's Connect call (unary or streaming body): 0
 * with *msg, or -1 with e. */
int envd_request_message(struct gw_request *r, json_t **msg, struct airlock_error *e);
/* The user the SDK names in "Authorization: Basic <user:>" ("" when none:
 * the sandbox's default, root). */
void envd_request_user(struct gw_request *r, char *user, size_t userlen);

/* The caller's sandbox (r->path_id) and, being running, its vmhost
 * channel; what names the operation in a state error. */
int envd_sandbox(struct gw_request *r, const char *what, Airlock__Scheduler__V1__Sandbox **sb,
                 struct rpc_channel **ch, struct airlock_error *e);

/* A Connect call under way: its request message checked against fields
 * (json_input.h; NULL: the handler checks them), the sandbox and its
 * vmhost channel. */
struct envd_call {
    json_t *msg;
    Airlock__Scheduler__V1__Sandbox *sb;
    struct rpc_channel *ch;
    struct airlock_error e;
};
/* 0, or -1 with c->e; envd_call_end in either case. */
int envd_call_begin(struct gw_request *r, const char *what, const struct json_field *fields,
                    size_t n_fields, struct envd_call *c);
/* Frees what c holds (c->e stays). */
void envd_call_free(struct envd_call *c);
/* Answers msg (stolen; NULL: c->e as the error) and frees c. */
enum MHD_Result envd_call_end(struct gw_request *r, struct envd_call *c, json_t *msg);
/* A unary call of the sandbox's vmhost answered with Empty: 0, or -1 with
 * c->e. */
int envd_vmhost_empty(struct envd_call *c, const char *method, ProtobufCMessage *req);
/* The string field name of obj (already type-checked): *out, NULL when
 * absent; -1 with e (invalid) when required and absent or empty. */
int envd_string(json_t *obj, const char *name, bool required, const char **out,
                struct airlock_error *e);

/* Route handlers. */
enum MHD_Result envd_process_start(struct gw_request *r);
enum MHD_Result envd_process_connect(struct gw_request *r);
enum MHD_Result envd_process_list(struct gw_request *r);
enum MHD_Result envd_process_send_input(struct gw_request *r);
enum MHD_Result envd_process_send_signal(struct gw_request *r);
enum MHD_Result envd_process_update(struct gw_request *r);
enum MHD_Result envd_process_close_stdin(struct gw_request *r);
enum MHD_Result envd_fs_stat(struct gw_request *r);
enum MHD_Result envd_fs_list_dir(struct gw_request *r);
enum MHD_Result envd_fs_make_dir(struct gw_request *r);
enum MHD_Result envd_fs_move(struct gw_request *r);
enum MHD_Result envd_fs_remove(struct gw_request *r);
enum MHD_Result envd_fs_watch_dir(struct gw_request *r); /* envd_watch.c */
enum MHD_Result envd_unimplemented(struct gw_request *r);
enum MHD_Result envd_health(struct gw_request *r);
enum MHD_Result envd_files_get(struct gw_request *r);
enum MHD_Result envd_files_post(struct gw_request *r);
void envd_files_post_begin(struct gw_request *r);
void envd_files_post_chunk(struct gw_request *r, const char *data, size_t len);
void envd_files_post_cleanup(struct gw_request *r);

#endif
