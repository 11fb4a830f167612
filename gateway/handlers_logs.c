/* What a sandbox left on record, in any state: its egress connection log
 * (GET …/network/log) and its serial console (GET …/logs). Both are kept
 * on the sandbox's node, so like exec and files they go to its vmhost
 * directly after the scheduler's tenancy lookup. */
#include <stdlib.h>
#include <string.h>

#include "reply.h"
#include "route_handlers.h"

static json_t *connection_json(const Airlock__Egress__V1__Connection *c)
{
    char when[40];
    reply_rfc3339(c->time_unix_ms, when, sizeof(when));
    const char *decision = gw_decision_name(c->decision);
    return json_pack("{s:I,s:s,s:s,s:s,s:I,s:s,s:s,s:s,s:I,s:I}", "seq", (json_int_t)c->seq,
                     "time", when, "protocol", c->protocol, "dest_ip", c->dest_ip, "dest_port",
                     (json_int_t)c->dest_port, "name", c->name, "decision", decision, "reason",
                     c->reason, "bytes_sent", (json_int_t)c->bytes_sent, "bytes_received",
                     (json_int_t)c->bytes_received);
}

/* The vmhost call for sandbox {id} in any state (req names it already):
 * the answer, or NULL after answering the error (404 for a foreign id). */
static ProtobufCMessage *node_call(struct gw_request *r, const char *method,
                                   const ProtobufCMessage *req,
                                   const ProtobufCMessageDescriptor *desc, enum MHD_Result *rc)
{
    struct gw_caller caller = gw_request_caller(r);
    ProtobufCMessage *resp = NULL;
    struct airlock_error e;
    if (gw_sandbox_node_unary(r->gw, &caller, r->path_id, method, req, desc, &resp, &e) < 0)
        *rc = reply_airlock_error(r, &e);
    return resp;
}

enum MHD_Result handle_network_log(struct gw_request *r)
{
    enum MHD_Result rc = MHD_NO;
    uint64_t limit = 0, after = 0;
    if (!gw_query_uint(r, "limit", 1, GW_NETWORK_LOG_MAX_LIMIT, &limit, &rc) ||
        !gw_query_uint(r, "after_seq", 0, UINT64_MAX, &after, &rc))
        return rc;
    Airlock__Vmhost__V1__ListConnectionsRequest req =
        AIRLOCK__VMHOST__V1__LIST_CONNECTIONS_REQUEST__INIT;
    req.sandbox_id = r->path_id;
    req.after_seq = after;
    req.limit = (uint32_t)limit;
    Airlock__Egress__V1__ListConnectionsResponse *resp = (void *)node_call(
        r, VMHOST_METHOD("ListConnections"), &req.base,
        &airlock__egress__v1__list_connections_response__descriptor, &rc);
    if (resp) {
        json_t *list = json_array();
        for (size_t i = 0; i < resp->n_connections; i++)
            json_array_append_new(list, connection_json(resp->connections[i]));
        rc = reply_json(r, 200, json_pack("{s:s,s:o}", "id", r->path_id, "connections", list));
        protobuf_c_message_free_unpacked(&resp->base, NULL);
    }
    return rc;
}

enum MHD_Result handle_console_log(struct gw_request *r)
{
    enum MHD_Result rc = MHD_NO;
    uint64_t tail = GW_CONSOLE_TAIL_DEFAULT;
    if (!gw_query_uint(r, "tail", 1, GW_CONSOLE_TAIL_MAX, &tail, &rc))
        return rc;
    Airlock__Vmhost__V1__GetConsoleLogRequest req =
        AIRLOCK__VMHOST__V1__GET_CONSOLE_LOG_REQUEST__INIT;
    req.sandbox_id = r->path_id;
    req.tail_bytes = (uint32_t)tail;
    Airlock__Vmhost__V1__ConsoleLog *log = (void *)node_call(
        r, VMHOST_METHOD("GetConsoleLog"), &req.base,
        &airlock__vmhost__v1__console_log__descriptor, &rc);
    if (log) {
        struct MHD_Response *resp =
            MHD_create_response_from_buffer(log->data.len, log->data.data, MHD_RESPMEM_MUST_COPY);
        if (resp) {
            /* Whatever the guest wrote: not necessarily UTF-8. */
            MHD_add_response_header(resp, "Content-Type", "text/plain");
            MHD_add_response_header(resp, "X-Airlock-Log-Truncated",
                                    log->truncated ? "true" : "false");
        }
        rc = reply_queue(r, 200, resp);
        protobuf_c_message_free_unpacked(&log->base, NULL);
    }
    return rc;
}
