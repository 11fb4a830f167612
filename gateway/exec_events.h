/* vmhost ExecEvent streams (Exec, AttachProcess) as REST clients see them:
 * SSE events stdout / stderr ({"data":"…"} or {"data_b64":"…"}), a final
 * exit ({"exit_code":…,"signal":…,"timed_out":…}), or a final error event
 * when the stream breaks before its exit. */
#ifndef AIRLOCK_GATEWAY_EXEC_EVENTS_H
#define AIRLOCK_GATEWAY_EXEC_EVENTS_H

#include <jansson.h>
#include <stdbool.h>

#include "exec_slots.h"
#include "gateway.h"
#include "vmhost.pb-c.h"

json_t *exec_exit_json(const Airlock__Vmhost__V1__ExecExit *x);

/* Relays stream s (owned from here on) as SSE. An Exec passes the slot
 * it holds (exec_slots.h, given back when the stream ends); its first
 * event is awaited before answering, so a call that fails at once (no
 * such program, VM gone) is a plain JSON error instead of a 200, since
 * Exec's first event (started) comes at once. A re-attach (slot NULL)
 * would wait for a quiet process's first output, so it answers at once. */
enum MHD_Result exec_events_reply_sse(struct gw_request *r, struct rpc_stream *s,
                                      struct exec_slot *slot);

#endif
