/* Files: ReadFile (streamed out), WriteFile (streamed in, atomic) and
 * ListDir (the guest's batches as one answer, bounded in bytes and time);
 * the others are forwarded as they are (service_forward.c). Bytes are
 * streamed chunk by chunk with the guest channel's flow control, so a
 * 1 GiB file never needs 1 GiB of memory here. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "clock.h"
#include "vmhost_service.h"

/* A listing is one answer: what the guest sends for it may not outgrow the
 * largest gRPC message (common/rpc, 8 MiB) nor take longer than this, so a
 * guest that never says done cannot hold memory or a handler. */
#define LIST_REPLY_MAX_BYTES (8u << 20)
#define LIST_DEADLINE_MS 60000

/* The guest request a file request carries; NULL after finishing the call
 * with INVALID_ARGUMENT when it has none. */
static const void *guest_request(struct rpc_call *call, const void *g)
{
    if (!g)
        rpc_call_finish(call, GRPC_STATUS_INVALID_ARGUMENT, "request: required");
    return g;
}

void service_file_read(struct rpc_call *call, void *ctx)
{
    struct vmhost *vh = ctx;
    Airlock__Vmhost__V1__ReadFileRequest *req =
        (void *)rpc_call_recv_request(call, &airlock__vmhost__v1__read_file_request__descriptor);
    if (!req)
        return;
    struct sandbox *sb = NULL;
    struct guest_channel *ch = NULL;
    struct guest_stream *s = NULL;
    Airlock__Guest__V1__FileReadRequest *fr = (void *)guest_request(call, req->request);
    if (!fr || !service_check_path(call, "path", fr->path))
        goto out;
    ch = service_running_sandbox(call, vh, req->sandbox_id, &sb);
    if (!ch)
        goto out;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_FILE_READ;
    f.file_read = fr;
    s = service_open_stream(call, sb, ch, &f);
    if (!s)
        goto out;
    for (;;) {
        if (rpc_call_cancelled(call)) {
            rpc_call_finish(call, GRPC_STATUS_CANCELLED, "client cancelled");
            break;
        }
        GuestFrame *ans;
        enum guest_recv_status st = guest_stream_recv(s, SERVICE_GUEST_TIMEOUT_MS, &ans);
        if (st != GUEST_RECV_OK) {
            service_finish_guest_failure(call, sb, st);
            break;
        }
        if (ans->body_case != AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_DATA) {
            service_finish_from_result(call, ans);
            frame_free(ans);
            break;
        }
        bool eof = ans->data->eof;
        int sent = 0;
        if (ans->data->data.len) {
            Airlock__Vmhost__V1__FileChunk chunk = AIRLOCK__VMHOST__V1__FILE_CHUNK__INIT;
            chunk.data = ans->data->data;
            sent = rpc_call_send(call, &chunk.base);
        }
        frame_free(ans);
        if (sent < 0) {
            rpc_call_finish(call, GRPC_STATUS_CANCELLED, "client went away");
            break;
        }
        if (eof) {
            rpc_call_finish(call, GRPC_STATUS_OK, NULL);
            break;
        }
    }
out:
    guest_stream_close(s);
    service_done(sb, ch);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

/* After the guest confirmed the write: answer with the file's metadata. */
static void file_write_answer_stat(struct rpc_call *call, struct sandbox *sb,
                                   struct guest_channel *ch, ProtobufCBinaryData path)
{
    Airlock__Guest__V1__StatRequest sr = AIRLOCK__GUEST__V1__STAT_REQUEST__INIT;
    sr.path = path;
    sr.follow_symlinks = true;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_STAT;
    f.stat = &sr;
    service_forward_frame(call, sb, ch, &f, true);
}

void service_file_write(struct rpc_call *call, void *ctx)
{
    struct vmhost *vh = ctx;
    Airlock__Vmhost__V1__WriteFileRequest *first =
        (void *)rpc_call_recv_request(call, &airlock__vmhost__v1__write_file_request__descriptor);
    if (!first)
        return;
    struct sandbox *sb = NULL;
    struct guest_channel *ch = NULL;
    struct guest_stream *s = NULL;
    Airlock__Guest__V1__FileWriteRequest *fw = (void *)guest_request(call, first->request);
    if (!fw || !service_check_path(call, "path", fw->path) || !service_check_mode(call, fw->mode))
        goto out;
    ch = service_running_sandbox(call, vh, first->sandbox_id, &sb);
    if (!ch)
        goto out;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_FILE_WRITE;
    f.file_write = fw;
    s = service_open_stream(call, sb, ch, &f);
    if (!s)
        goto out;
    /* A failed send means the guest ended the stream early (its Result says
     * why) or the channel broke: either way the answer comes from recv. */
    bool sending = guest_stream_send_bytes(s, first->data.data, first->data.len, false,
                                           SERVICE_GUEST_TIMEOUT_MS) == 0;
    while (sending) {
        Airlock__Vmhost__V1__WriteFileRequest *more =
            (void *)rpc_call_recv(call, &airlock__vmhost__v1__write_file_request__descriptor);
        if (!more) {
            /* Anything but a clean end of the upload abandons it: closing the
             * stream cancels, and the guest drops its temp file. */
            enum rpc_recv_status rs = rpc_call_recv_status(call);
            if (rs == RPC_RECV_MALFORMED) {
                rpc_call_finish(call, GRPC_STATUS_INVALID_ARGUMENT,
                                "request is not a valid WriteFileRequest");
                goto out;
            }
            if (rs != RPC_RECV_END) {
                rpc_call_finish(call, GRPC_STATUS_CANCELLED, "client cancelled the upload");
                goto out;
            }
            guest_stream_send_bytes(s, NULL, 0, true, SERVICE_GUEST_TIMEOUT_MS);
            break;
        }
        sending = guest_stream_send_bytes(s, more->data.data, more->data.len, false,
                                          SERVICE_GUEST_TIMEOUT_MS) == 0;
        protobuf_c_message_free_unpacked(&more->base, NULL);
    }
    GuestFrame *ans;
    enum guest_recv_status st = guest_stream_recv(s, SERVICE_GUEST_TIMEOUT_MS, &ans);
    if (st != GUEST_RECV_OK) {
        service_finish_guest_failure(call, sb, st);
        goto out;
    }
    if (ans->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_RESULT &&
        ans->result->errno_value == 0)
        file_write_answer_stat(call, sb, ch, fw->path);
    else
        service_finish_from_result(call, ans);
    frame_free(ans);
out:
    guest_stream_close(s);
    service_done(sb, ch);
    protobuf_c_message_free_unpacked(&first->base, NULL);
}

void service_file_list(struct rpc_call *call, void *ctx)
{
    struct vmhost *vh = ctx;
    Airlock__Vmhost__V1__ListDirRequest *req =
        (void *)rpc_call_recv_request(call, &airlock__vmhost__v1__list_dir_request__descriptor);
    if (!req)
        return;
    struct sandbox *sb = NULL;
    struct guest_channel *ch = NULL;
    struct guest_stream *s = NULL;
    GuestFrame **batches = NULL;
    size_t n_batches = 0, n_entries = 0;
    Airlock__Guest__V1__FileInfo **entries = NULL;
    Airlock__Guest__V1__ListRequest *lr = (void *)guest_request(call, req->request);
    if (!lr || !service_check_path(call, "path", lr->path))
        goto out;
    ch = service_running_sandbox(call, vh, req->sandbox_id, &sb);
    if (!ch)
        goto out;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_LIST;
    f.list = lr;
    s = service_open_stream(call, sb, ch, &f);
    if (!s)
        goto out;
    int64_t give_up_at = clock_monotonic_ms() + LIST_DEADLINE_MS;
    size_t reply_bytes = 0;
    for (;;) {
        int64_t left = give_up_at - clock_monotonic_ms();
        GuestFrame *ans;
        enum guest_recv_status st =
            left > 0 ? guest_stream_recv(s, (int)left, &ans) : GUEST_RECV_TIMEOUT;
        if (st == GUEST_RECV_TIMEOUT) {
            rpc_call_finishf(call, GRPC_STATUS_DEADLINE_EXCEEDED,
                             "sandbox %s: the guest did not finish the listing within %d ms",
                             sandbox_id(sb), LIST_DEADLINE_MS);
            goto out;
        }
        if (st != GUEST_RECV_OK) {
            service_finish_guest_failure(call, sb, st);
            goto out;
        }
        if (ans->body_case != AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_DIR_ENTRIES) {
            service_finish_from_result(call, ans);
            frame_free(ans);
            goto out;
        }
        GuestFrame **nb = realloc(batches, (n_batches + 1) * sizeof(*nb));
        if (!nb) {
            frame_free(ans);
            rpc_call_finish(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
            goto out;
        }
        batches = nb;
        batches[n_batches++] = ans;
        n_entries += ans->dir_entries->n_entries;
        reply_bytes += airlock__guest__v1__dir_entries__get_packed_size(ans->dir_entries);
        if (reply_bytes > LIST_REPLY_MAX_BYTES) {
            rpc_call_finishf(call, GRPC_STATUS_RESOURCE_EXHAUSTED,
                             "sandbox %s: the listing is larger than %u bytes; list a "
                             "subdirectory",
                             sandbox_id(sb), LIST_REPLY_MAX_BYTES);
            goto out;
        }
        if (ans->dir_entries->done)
            break;
    }
    entries = calloc(n_entries + 1, sizeof(*entries));
    if (!entries) {
        rpc_call_finish(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        goto out;
    }
    size_t k = 0;
    for (size_t b = 0; b < n_batches; b++)
        for (size_t i = 0; i < batches[b]->dir_entries->n_entries; i++)
            entries[k++] = batches[b]->dir_entries->entries[i];
    Airlock__Vmhost__V1__ListDirResponse resp = AIRLOCK__VMHOST__V1__LIST_DIR_RESPONSE__INIT;
    resp.n_entries = n_entries;
    resp.entries = entries;
    rpc_call_send(call, &resp.base);
    rpc_call_finish(call, GRPC_STATUS_OK, NULL);
out:
    for (size_t b = 0; b < n_batches; b++)
        frame_free(batches[b]);
    free(batches);
    free(entries);
    guest_stream_close(s);
    service_done(sb, ch);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}
