/* What a sandbox left on record, readable in any state: its serial console
 * (GetConsoleLog) and its egress connection log (ListConnections, relayed
 * from this node's egress). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "egress_client.h"
#include "fsutil.h"
#include "vmhost_service.h"

#define CONSOLE_TAIL_DEFAULT (64u << 10)
#define CONSOLE_TAIL_MAX (1u << 20)

void service_console_log(struct rpc_call *call, void *ctx)
{
    Airlock__Vmhost__V1__GetConsoleLogRequest *req =
        (void *)rpc_call_recv_request(call, &airlock__vmhost__v1__get_console_log_request__descriptor);
    if (!req)
        return;
    struct sandbox *sb = NULL;
    if (req->tail_bytes > CONSOLE_TAIL_MAX) {
        rpc_call_finishf(call, GRPC_STATUS_INVALID_ARGUMENT, "tail_bytes: at most %u",
                         CONSOLE_TAIL_MAX);
        goto out;
    }
    sb = service_lookup_sandbox(call, ctx, req->sandbox_id);
    if (!sb)
        goto out;
    char path[PATH_MAX];
    if (fs_path(path, sizeof(path), "%s/console.log", sandbox_dir(sb)) < 0) {
        rpc_call_finish(call, GRPC_STATUS_INTERNAL, "console path too long");
        goto out;
    }
    char *data = NULL;
    size_t len = 0;
    bool truncated = false;
    size_t want = req->tail_bytes ? req->tail_bytes : CONSOLE_TAIL_DEFAULT;
    /* No file yet (QEMU has not opened it): nothing was written. */
    if (fs_read_tail(path, want, &data, &len, &truncated) < 0 && errno != ENOENT) {
        rpc_call_finishf(call, GRPC_STATUS_INTERNAL, "read %s: %s", path, strerror(errno));
        goto out;
    }
    Airlock__Vmhost__V1__ConsoleLog log = AIRLOCK__VMHOST__V1__CONSOLE_LOG__INIT;
    log.data.data = (uint8_t *)data;
    log.data.len = len;
    log.truncated = truncated;
    rpc_call_send(call, &log.base);
    rpc_call_finish(call, GRPC_STATUS_OK, NULL);
    free(data);
out:
    if (sb)
        sandbox_put(sb);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_connections(struct rpc_call *call, void *ctx)
{
    struct vmhost *vh = ctx;
    Airlock__Vmhost__V1__ListConnectionsRequest *req =
        (void *)rpc_call_recv_request(call, &airlock__vmhost__v1__list_connections_request__descriptor);
    if (!req)
        return;
    Airlock__Egress__V1__ListConnectionsResponse *resp = NULL;
    struct sandbox *sb = service_lookup_sandbox(call, vh, req->sandbox_id);
    if (!sb)
        goto out;
    if (!vh->egress) {
        rpc_call_finishf(call, GRPC_STATUS_FAILED_PRECONDITION,
                         "this node runs without egress: sandbox %s reaches nothing and has no "
                         "connection log",
                         sandbox_id(sb));
        goto out;
    }
    char err[1024];
    grpc_status_code st = egress_client_connections(vh->egress, sandbox_id(sb), req->after_seq, &resp,
                                                    err, sizeof(err));
    if (st == GRPC_STATUS_NOT_FOUND) {
        /* Not attached (yet, or no more): it has made no connection. */
        Airlock__Egress__V1__ListConnectionsResponse none =
            AIRLOCK__EGRESS__V1__LIST_CONNECTIONS_RESPONSE__INIT;
        rpc_call_send(call, &none.base);
        rpc_call_finish(call, GRPC_STATUS_OK, NULL);
        goto out;
    }
    if (st != GRPC_STATUS_OK) {
        rpc_call_finish(call, st == GRPC_STATUS_INVALID_ARGUMENT ? st : GRPC_STATUS_UNAVAILABLE,
                        err);
        goto out;
    }
    /* The newest `limit`: the entries come oldest first. */
    size_t skip = req->limit && resp->n_connections > req->limit
                      ? resp->n_connections - req->limit
                      : 0;
    Airlock__Egress__V1__ListConnectionsResponse view = *resp;
    view.connections += skip;
    view.n_connections -= skip;
    rpc_call_send(call, &view.base);
    rpc_call_finish(call, GRPC_STATUS_OK, NULL);
out:
    if (resp)
        protobuf_c_message_free_unpacked(&resp->base, NULL);
    if (sb)
        sandbox_put(sb);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}
