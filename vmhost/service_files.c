/* Files: ReadFile (streamed out), WriteFile (streamed in, atomic), ListDir,
 * StatFile, MakeDir, RemoveFile, RenameFile, ChmodFile. Bytes are streamed
 * chunk by chunk with the guest channel's flow control, so a 1 GiB file
 * never needs 1 GiB of memory here. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "service.h"


static void file_info_from_guest(Airlock__Vmhost__V1__FileInfo *out,
                                 const Airlock__Guest__V1__FileInfo *in)
{
    airlock__vmhost__v1__file_info__init(out);
    out->name = in->name;
    out->type = (Airlock__Vmhost__V1__FileType)in->type;
    out->size = in->size;
    out->mode = in->mode;
    out->mtime_unix_ms = in->mtime_unix_ms;
    out->uid = in->uid;
    out->gid = in->gid;
    out->link_target = in->link_target;
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
    if (!service_check_path(call, "path", req->path))
        goto out;
    ch = service_running_sandbox(call, vh, req->sandbox_id, &sb);
    if (!ch)
        goto out;
    Airlock__Guest__V1__FileReadRequest fr = AIRLOCK__GUEST__V1__FILE_READ_REQUEST__INIT;
    fr.path = req->path;
    fr.offset = req->offset;
    fr.length = req->length;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_FILE_READ;
    f.file_read = &fr;
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
    GuestFrame *ans = service_guest_call(call, sb, ch, &f);
    if (!ans)
        return;
    if (ans->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_FILE_INFO) {
        Airlock__Vmhost__V1__FileInfo info;
        file_info_from_guest(&info, ans->file_info);
        rpc_call_send(call, &info.base);
        rpc_call_finish(call, GRPC_STATUS_OK, NULL);
    } else {
        service_finish_from_result(call, ans);
    }
    frame_free(ans);
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
    if (!service_check_path(call, "path", first->path))
        goto out;
    if (!service_check_mode(call, first->mode))
        goto out;
    ch = service_running_sandbox(call, vh, first->sandbox_id, &sb);
    if (!ch)
        goto out;
    Airlock__Guest__V1__FileWriteRequest fw = AIRLOCK__GUEST__V1__FILE_WRITE_REQUEST__INIT;
    fw.path = first->path;
    fw.mode = first->mode;
    fw.append = first->append;
    fw.make_parents = first->make_parents;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_FILE_WRITE;
    f.file_write = &fw;
    s = service_open_stream(call, sb, ch, &f);
    if (!s)
        goto out;
    /* A failed send means the guest ended the stream early (its Result says
     * why) or the channel broke: either way the answer comes from recv. */
    bool sending = guest_stream_send_bytes(s, first->data.data, first->data.len, false, SERVICE_GUEST_TIMEOUT_MS) == 0;
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
        file_write_answer_stat(call, sb, ch, first->path);
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
    Airlock__Vmhost__V1__PathRequest *req =
        (void *)rpc_call_recv_request(call, &airlock__vmhost__v1__path_request__descriptor);
    if (!req)
        return;
    struct sandbox *sb = NULL;
    struct guest_channel *ch = NULL;
    struct guest_stream *s = NULL;
    GuestFrame **batches = NULL;
    size_t n_batches = 0, n_entries = 0;
    Airlock__Vmhost__V1__FileInfo *infos = NULL;
    Airlock__Vmhost__V1__FileInfo **ptrs = NULL;
    if (!service_check_path(call, "path", req->path))
        goto out;
    ch = service_running_sandbox(call, vh, req->sandbox_id, &sb);
    if (!ch)
        goto out;
    Airlock__Guest__V1__ListRequest lr = AIRLOCK__GUEST__V1__LIST_REQUEST__INIT;
    lr.path = req->path;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_LIST;
    f.list = &lr;
    s = service_open_stream(call, sb, ch, &f);
    if (!s)
        goto out;
    for (;;) {
        GuestFrame *ans;
        enum guest_recv_status st = guest_stream_recv(s, SERVICE_GUEST_TIMEOUT_MS, &ans);
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
        if (ans->dir_entries->done)
            break;
    }
    infos = calloc(n_entries + 1, sizeof(*infos));
    ptrs = calloc(n_entries + 1, sizeof(*ptrs));
    if (!infos || !ptrs) {
        rpc_call_finish(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        goto out;
    }
    size_t k = 0;
    for (size_t b = 0; b < n_batches; b++) {
        for (size_t i = 0; i < batches[b]->dir_entries->n_entries; i++, k++) {
            file_info_from_guest(&infos[k], batches[b]->dir_entries->entries[i]);
            ptrs[k] = &infos[k];
        }
    }
    Airlock__Vmhost__V1__ListDirResponse resp = AIRLOCK__VMHOST__V1__LIST_DIR_RESPONSE__INIT;
    resp.n_entries = n_entries;
    resp.entries = ptrs;
    rpc_call_send(call, &resp.base);
    rpc_call_finish(call, GRPC_STATUS_OK, NULL);
out:
    for (size_t b = 0; b < n_batches; b++)
        frame_free(batches[b]);
    free(batches);
    free(infos);
    free(ptrs);
    guest_stream_close(s);
    service_done(sb, ch);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_file_stat(struct rpc_call *call, void *ctx)
{
    struct vmhost *vh = ctx;
    Airlock__Vmhost__V1__PathRequest *req =
        (void *)rpc_call_recv_request(call, &airlock__vmhost__v1__path_request__descriptor);
    if (!req)
        return;
    struct sandbox *sb = NULL;
    struct guest_channel *ch = NULL;
    GuestFrame *ans = NULL;
    if (!service_check_path(call, "path", req->path))
        goto out;
    ch = service_running_sandbox(call, vh, req->sandbox_id, &sb);
    if (!ch)
        goto out;
    Airlock__Guest__V1__StatRequest sr = AIRLOCK__GUEST__V1__STAT_REQUEST__INIT;
    sr.path = req->path;
    sr.follow_symlinks = req->follow_symlinks;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_STAT;
    f.stat = &sr;
    ans = service_guest_call(call, sb, ch, &f);
    if (!ans)
        goto out;
    if (ans->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_FILE_INFO) {
        Airlock__Vmhost__V1__FileInfo info;
        file_info_from_guest(&info, ans->file_info);
        rpc_call_send(call, &info.base);
        rpc_call_finish(call, GRPC_STATUS_OK, NULL);
    } else {
        service_finish_from_result(call, ans);
    }
out:
    frame_free(ans);
    service_done(sb, ch);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_file_mkdir(struct rpc_call *call, void *ctx)
{
    Airlock__Vmhost__V1__MakeDirRequest *req =
        (void *)rpc_call_recv_request(call, &airlock__vmhost__v1__make_dir_request__descriptor);
    if (!req)
        return;
    if (service_check_path(call, "path", req->path) && service_check_mode(call, req->mode)) {
        Airlock__Guest__V1__MkdirRequest m = AIRLOCK__GUEST__V1__MKDIR_REQUEST__INIT;
        m.path = req->path;
        m.mode = req->mode;
        m.parents = req->parents;
        GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
        f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_MKDIR;
        f.mkdir = &m;
        service_simple_op(call, ctx, req->sandbox_id, &f);
    }
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_file_remove(struct rpc_call *call, void *ctx)
{
    Airlock__Vmhost__V1__PathRequest *req =
        (void *)rpc_call_recv_request(call, &airlock__vmhost__v1__path_request__descriptor);
    if (!req)
        return;
    if (service_check_path(call, "path", req->path)) {
        Airlock__Guest__V1__RemoveRequest r = AIRLOCK__GUEST__V1__REMOVE_REQUEST__INIT;
        r.path = req->path;
        r.recursive = req->recursive;
        GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
        f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_REMOVE;
        f.remove = &r;
        service_simple_op(call, ctx, req->sandbox_id, &f);
    }
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_file_rename(struct rpc_call *call, void *ctx)
{
    Airlock__Vmhost__V1__RenameFileRequest *req =
        (void *)rpc_call_recv_request(call, &airlock__vmhost__v1__rename_file_request__descriptor);
    if (!req)
        return;
    if (service_check_path(call, "from", req->from) && service_check_path(call, "to", req->to)) {
        Airlock__Guest__V1__RenameRequest r = AIRLOCK__GUEST__V1__RENAME_REQUEST__INIT;
        r.from = req->from;
        r.to = req->to;
        GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
        f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_RENAME;
        f.rename = &r;
        service_simple_op(call, ctx, req->sandbox_id, &f);
    }
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_file_chmod(struct rpc_call *call, void *ctx)
{
    Airlock__Vmhost__V1__ChmodFileRequest *req =
        (void *)rpc_call_recv_request(call, &airlock__vmhost__v1__chmod_file_request__descriptor);
    if (!req)
        return;
    if (service_check_path(call, "path", req->path) && service_check_mode(call, req->mode)) {
        Airlock__Guest__V1__ChmodRequest c = AIRLOCK__GUEST__V1__CHMOD_REQUEST__INIT;
        c.path = req->path;
        c.mode = req->mode;
        GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
        f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_CHMOD;
        f.chmod = &c;
        service_simple_op(call, ctx, req->sandbox_id, &f);
    }
    protobuf_c_message_free_unpacked(&req->base, NULL);
}
