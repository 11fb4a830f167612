/* vmhost ExecEvent streams (Exec, AttachProcess) as REST clients see them:
 * SSE events stdout / stderr ({"data":"…"} or {"data_b64":"…"}), a final
 * exit ({"exit_code":…,"signal":…,"timed_out":…}), or a final error event
 * when the stream breaks before its exit. */
#ifndef AIRLOCK_GATEWAY_EXEC_EVENTS_H
#define AIRLOCK_GATEWAY_EXEC_EVENTS_H

#include <jansson.h>
#include <stdbool.h>

#include "gateway.h"
#include "vmhost.pb-c.h"

json_t *exec_exit_json(const Airlock__Vmhost__V1__ExecExit *x);

/* Relays stream s (owned from here on) as SSE. With status_from_first, the
 * first event is awaited before answering, so a call that fails at once
 * (no such program, VM gone) is a plain JSON error instead of a 200 —
 * right for Exec, whose first event (started) comes at once; a re-attach
 * to a quiet process would wait for its first output, so it passes
 * false. */
enum MHD_Result exec_events_reply_sse(struct gw_request *r, struct rpc_stream *s,
                                      bool status_from_first);

#endif
