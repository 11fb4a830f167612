/* Sandboxes.GetConsoleLog and ListConnections: what a sandbox left on
 * record, in any state, from its node's vmhost after the scheduler's
 * tenancy lookup — the gRPC side of REST's handlers_logs.c. */
#include "grpc_call.h"
#include "reply.h"
#include "vmhost.pb-c.h"

/* The vmhost call for the caller's sandbox id in any state: true with
 * *resp (free it), false after failing the call. */
static bool node_unary(struct grpc_request *r, const char *id, const char *method,
                       const ProtobufCMessage *req, const ProtobufCMessageDescriptor *resp_desc,
                       ProtobufCMessage **resp)
{
    if (!grpc_check_id(r, id))
        return false;
    struct airlock_error e;
    if (gw_sandbox_node_unary(r->gw, &r->caller, id, method, req, resp_desc, resp, &e) == 0)
        return true;
    grpc_fail_error(r, &e);
    return false;
}

void grpc_get_console_log(struct grpc_request *r)
{
    const Airlock__V1__ConsoleLogRequest *in = (const void *)r->msg;
    if (in->tail_bytes > GW_CONSOLE_TAIL_MAX) {
        grpc_fail(r, GRPC_STATUS_INVALID_ARGUMENT, "tail_bytes: at most %u", GW_CONSOLE_TAIL_MAX);
        return;
    }
    Airlock__Vmhost__V1__GetConsoleLogRequest req =
        AIRLOCK__VMHOST__V1__GET_CONSOLE_LOG_REQUEST__INIT;
    req.sandbox_id = in->id;
    req.tail_bytes = in->tail_bytes ? in->tail_bytes : GW_CONSOLE_TAIL_DEFAULT;
    Airlock__Vmhost__V1__ConsoleLog *log = NULL;
    if (!node_unary(r, in->id, VMHOST_METHOD("GetConsoleLog"), &req.base,
                    &airlock__vmhost__v1__console_log__descriptor, (ProtobufCMessage **)&log))
        return;
    Airlock__V1__ConsoleLog out = AIRLOCK__V1__CONSOLE_LOG__INIT;
    out.data = log->data;
    out.truncated = log->truncated;
    grpc_reply(r, &out.base);
    protobuf_c_message_free_unpacked(&log->base, NULL);
}

void grpc_list_connections(struct grpc_request *r)
{
    const Airlock__V1__ListConnectionsRequest *in = (const void *)r->msg;
    if (in->limit > GW_NETWORK_LOG_MAX_LIMIT) {
        grpc_fail(r, GRPC_STATUS_INVALID_ARGUMENT, "limit: at most %d", GW_NETWORK_LOG_MAX_LIMIT);
        return;
    }
    Airlock__Vmhost__V1__ListConnectionsRequest req =
        AIRLOCK__VMHOST__V1__LIST_CONNECTIONS_REQUEST__INIT;
    req.sandbox_id = in->id;
    req.after_seq = in->after_seq;
    req.limit = in->limit;
    Airlock__Egress__V1__ListConnectionsResponse *resp = NULL;
    if (!node_unary(r, in->id, VMHOST_METHOD("ListConnections"), &req.base,
                    &airlock__egress__v1__list_connections_response__descriptor,
                    (ProtobufCMessage **)&resp))
        return;
    struct grpc_arena a = { 0 };
    Airlock__V1__ListConnectionsResponse out = AIRLOCK__V1__LIST_CONNECTIONS_RESPONSE__INIT;
    out.connections = grpc_arena_alloc(&a, (resp->n_connections + 1) * sizeof(*out.connections));
    for (size_t i = 0; out.connections && i < resp->n_connections; i++) {
        const Airlock__Egress__V1__Connection *c = resp->connections[i];
        Airlock__V1__Connection *m = grpc_arena_alloc(&a, sizeof(*m));
        char when[40];
        if (!m)
            break;
        airlock__v1__connection__init(m);
        reply_rfc3339(c->time_unix_ms, when, sizeof(when));
        m->seq = c->seq;
        m->time = grpc_arena_strdup(&a, when);
        m->protocol = c->protocol;
        m->dest_ip = c->dest_ip;
        m->dest_port = c->dest_port;
        m->name = c->name;
        m->decision = (char *)gw_decision_name(c->decision);
        m->reason = c->reason;
        m->bytes_sent = c->bytes_sent;
        m->bytes_received = c->bytes_received;
        out.connections[out.n_connections++] = m;
    }
    grpc_reply_built(r, &a,
                     out.n_connections == resp->n_connections ? &out.base : NULL, &resp->base);
}
