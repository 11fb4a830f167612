/* Sandboxes.ReadFile (server stream), WriteFile (client stream), ListDir,
 * StatFile, MakeDir, RemoveFile and RenameFile: straight to the sandbox's
 * vmhost, like the REST file routes, so file bytes never pass the
 * scheduler. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grpc_call.h"
#include "grpc_convert.h"
#include "grpc_relay.h"

#define MKDIR_DEFAULT_MODE 0755
#define FILE_DEFAULT_MODE 0644

static void set_path(ProtobufCBinaryData *field, const char *path)
{
    field->data = (uint8_t *)path;
    field->len = strlen(path);
}

/* Whether path (the field `name`) is absolute; false after failing the
 * call. */
static bool check_path(struct grpc_request *r, const char *path, const char *name)
{
    struct airlock_error e;
    if (gw_path_check(path, name, &e) == 0)
        return true;
    grpc_fail_error(r, &e);
    return false;
}

static int forward_chunk(struct grpc_request *r, const ProtobufCMessage *msg)
{
    const Airlock__Vmhost__V1__FileChunk *chunk = (const void *)msg;
    Airlock__V1__FileChunk out = AIRLOCK__V1__FILE_CHUNK__INIT;
    out.data = chunk->data;
    return grpc_send(r, &out.base) < 0 ? -1 : 0;
}

void grpc_read_file(struct grpc_request *r)
{
    const Airlock__V1__PathRequest *in = (const void *)r->msg;
    Airlock__Scheduler__V1__Sandbox *sb;
    struct rpc_channel *ch;
    if (!check_path(r, in->path, "path") || !grpc_open_sandbox(r, in->id, "reading files", &sb, &ch))
        return;
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    struct rpc_stream *s = rpc_stream_open(ch, VMHOST_METHOD("ReadFile"), 0);
    if (!s) {
        grpc_fail(r, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        return;
    }
    Airlock__Guest__V1__FileReadRequest fr = AIRLOCK__GUEST__V1__FILE_READ_REQUEST__INIT;
    set_path(&fr.path, in->path);
    Airlock__Vmhost__V1__ReadFileRequest req = AIRLOCK__VMHOST__V1__READ_FILE_REQUEST__INIT;
    req.sandbox_id = in->id;
    req.request = &fr;
    rpc_stream_send(s, &req.base);
    rpc_stream_close_send(s);
    grpc_relay_stream(r, s, &airlock__vmhost__v1__file_chunk__descriptor, forward_chunk, NULL);
}

/* The first message of a WriteFile stream, checked; NULL after failing the
 * call. */
static Airlock__V1__WriteFileRequest *write_file_first(struct grpc_request *r)
{
    Airlock__V1__WriteFileRequest *first =
        (void *)rpc_call_recv(r->call, &airlock__v1__write_file_request__descriptor);
    switch (rpc_call_recv_status(r->call)) {
    case RPC_RECV_MESSAGE:
        if (grpc_check_id(r, first->id) && check_path(r, first->path, "path"))
            return first;
        protobuf_c_message_free_unpacked(&first->base, NULL);
        return NULL;
    case RPC_RECV_END:
        grpc_fail(r, GRPC_STATUS_INVALID_ARGUMENT, "id, path: the first message must name them");
        return NULL;
    case RPC_RECV_MALFORMED:
        grpc_fail(r, GRPC_STATUS_INVALID_ARGUMENT, "request is not a valid WriteFileRequest");
        return NULL;
    default:
        grpc_fail(r, GRPC_STATUS_CANCELLED, "the client went away");
        return NULL;
    }
}

/* Forwards the data of the client's messages after the first one; the
 * status to end with (OK at the client's end of stream). */
static grpc_status_code write_file_rest(struct grpc_request *r, struct rpc_stream *s)
{
    for (;;) {
        Airlock__V1__WriteFileRequest *m =
            (void *)rpc_call_recv(r->call, &airlock__v1__write_file_request__descriptor);
        if (!m) {
            enum rpc_recv_status rs = rpc_call_recv_status(r->call);
            return rs == RPC_RECV_END         ? GRPC_STATUS_OK
                   : rs == RPC_RECV_MALFORMED ? GRPC_STATUS_INVALID_ARGUMENT
                                              : GRPC_STATUS_CANCELLED;
        }
        Airlock__Vmhost__V1__WriteFileRequest msg = AIRLOCK__VMHOST__V1__WRITE_FILE_REQUEST__INIT;
        msg.data = m->data;
        /* A failed send means vmhost ended the call; its status says why. */
        int sent = rpc_stream_send(s, &msg.base);
        protobuf_c_message_free_unpacked(&m->base, NULL);
        if (sent < 0)
            return GRPC_STATUS_OK;
    }
}

void grpc_write_file(struct grpc_request *r)
{
    Airlock__V1__WriteFileRequest *first = write_file_first(r);
    Airlock__Scheduler__V1__Sandbox *sb = NULL;
    struct rpc_channel *ch;
    if (!first || !grpc_open_sandbox(r, first->id, "writing files", &sb, &ch))
        goto out;
    struct rpc_stream *s = rpc_stream_open(ch, VMHOST_METHOD("WriteFile"), 0);
    if (!s) {
        grpc_fail(r, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        goto out;
    }
    Airlock__Guest__V1__FileWriteRequest fw = AIRLOCK__GUEST__V1__FILE_WRITE_REQUEST__INIT;
    set_path(&fw.path, first->path);
    fw.mode = FILE_DEFAULT_MODE;
    Airlock__Vmhost__V1__WriteFileRequest head = AIRLOCK__VMHOST__V1__WRITE_FILE_REQUEST__INIT;
    head.sandbox_id = sb->id;
    head.request = &fw;
    head.data = first->data;
    grpc_status_code st = rpc_stream_send(s, &head.base) < 0 ? GRPC_STATUS_OK
                                                             : write_file_rest(r, s);
    if (st != GRPC_STATUS_OK) {
        /* Cancelled: vmhost drops the temp file instead of installing half
         * a file. */
        rpc_stream_cancel(s);
        rpc_stream_finish(s, NULL);
        grpc_fail(r, st, st == GRPC_STATUS_CANCELLED ? "the client went away"
                                                     : "request is not a valid WriteFileRequest");
        goto out;
    }
    rpc_stream_close_send(s);
    ProtobufCMessage *info = NULL;
    if (rpc_stream_recv(s, &airlock__guest__v1__file_info__descriptor, &info) == 1)
        protobuf_c_message_free_unpacked(info, NULL);
    char *details = NULL;
    st = rpc_stream_finish(s, &details);
    Airlock__V1__Empty nothing = AIRLOCK__V1__EMPTY__INIT;
    if (st == GRPC_STATUS_OK)
        grpc_reply(r, &nothing.base);
    else
        grpc_fail(r, st, "%s", details && *details ? details : rpc_status_name(st));
    free(details);
out:
    if (sb)
        protobuf_c_message_free_unpacked(&sb->base, NULL);
    if (first)
        protobuf_c_message_free_unpacked(&first->base, NULL);
}

/* The public PathRequest's sandbox and path, checked; false after failing
 * the call. */
static bool path_request(struct grpc_request *r, const Airlock__V1__PathRequest **in)
{
    *in = (const void *)r->msg;
    return check_path(r, (*in)->path, "path");
}

void grpc_list_dir(struct grpc_request *r)
{
    const Airlock__V1__PathRequest *in;
    if (!path_request(r, &in))
        return;
    Airlock__Guest__V1__ListRequest lr = AIRLOCK__GUEST__V1__LIST_REQUEST__INIT;
    set_path(&lr.path, in->path);
    Airlock__Vmhost__V1__ListDirRequest req = AIRLOCK__VMHOST__V1__LIST_DIR_REQUEST__INIT;
    req.sandbox_id = in->id;
    req.request = &lr;
    Airlock__Vmhost__V1__ListDirResponse *resp;
    if (!grpc_vmhost_unary(r, in->id, "listing files", VMHOST_METHOD("ListDir"), &req.base,
                           &airlock__vmhost__v1__list_dir_response__descriptor,
                           (ProtobufCMessage **)&resp))
        return;
    struct grpc_arena a = { 0 };
    Airlock__V1__ListDirResponse out = AIRLOCK__V1__LIST_DIR_RESPONSE__INIT;
    out.entries = grpc_file_info_list(&a, resp->entries, resp->n_entries);
    out.n_entries = resp->n_entries;
    grpc_reply_built(r, &a, &out.base, &resp->base);
}

void grpc_stat_file(struct grpc_request *r)
{
    const Airlock__V1__PathRequest *in;
    if (!path_request(r, &in))
        return;
    Airlock__Guest__V1__StatRequest sr = AIRLOCK__GUEST__V1__STAT_REQUEST__INIT;
    set_path(&sr.path, in->path);
    Airlock__Vmhost__V1__StatFileRequest req = AIRLOCK__VMHOST__V1__STAT_FILE_REQUEST__INIT;
    req.sandbox_id = in->id;
    req.request = &sr;
    Airlock__Guest__V1__FileInfo *fi;
    if (!grpc_vmhost_unary(r, in->id, "stat", VMHOST_METHOD("StatFile"), &req.base,
                           &airlock__guest__v1__file_info__descriptor, (ProtobufCMessage **)&fi))
        return;
    struct grpc_arena a = { 0 };
    Airlock__V1__FileInfo *out = grpc_file_info_msg(&a, fi);
    grpc_reply_built(r, &a, out ? &out->base : NULL, &fi->base);
}

void grpc_remove_file(struct grpc_request *r)
{
    const Airlock__V1__PathRequest *in;
    if (!path_request(r, &in))
        return;
    Airlock__Guest__V1__RemoveRequest rm = AIRLOCK__GUEST__V1__REMOVE_REQUEST__INIT;
    set_path(&rm.path, in->path);
    rm.recursive = in->recursive;
    Airlock__Vmhost__V1__RemoveFileRequest req = AIRLOCK__VMHOST__V1__REMOVE_FILE_REQUEST__INIT;
    req.sandbox_id = in->id;
    req.request = &rm;
    grpc_vmhost_call_empty(r, in->id, "removing files", VMHOST_METHOD("RemoveFile"), &req.base);
}

void grpc_make_dir(struct grpc_request *r)
{
    const Airlock__V1__MakeDirRequest *in = (const void *)r->msg;
    if (!check_path(r, in->path, "path"))
        return;
    if (in->mode > 07777) {
        grpc_fail(r, GRPC_STATUS_INVALID_ARGUMENT, "mode: %u is more than 4095 (07777)", in->mode);
        return;
    }
    Airlock__Guest__V1__MkdirRequest m = AIRLOCK__GUEST__V1__MKDIR_REQUEST__INIT;
    set_path(&m.path, in->path);
    m.mode = in->mode ? in->mode : MKDIR_DEFAULT_MODE;
    m.parents = in->parents;
    Airlock__Vmhost__V1__MakeDirRequest req = AIRLOCK__VMHOST__V1__MAKE_DIR_REQUEST__INIT;
    req.sandbox_id = in->id;
    req.request = &m;
    grpc_vmhost_call_empty(r, in->id, "making directories", VMHOST_METHOD("MakeDir"), &req.base);
}

void grpc_rename_file(struct grpc_request *r)
{
    const Airlock__V1__RenameFileRequest *in = (const void *)r->msg;
    if (!check_path(r, in->from_path, "from_path") || !check_path(r, in->to_path, "to_path"))
        return;
    Airlock__Guest__V1__RenameRequest mv = AIRLOCK__GUEST__V1__RENAME_REQUEST__INIT;
    set_path(&mv.from, in->from_path);
    set_path(&mv.to, in->to_path);
    Airlock__Vmhost__V1__RenameFileRequest req = AIRLOCK__VMHOST__V1__RENAME_FILE_REQUEST__INIT;
    req.sandbox_id = in->id;
    req.request = &mv;
    grpc_vmhost_call_empty(r, in->id, "renaming files", VMHOST_METHOD("RenameFile"), &req.base);
}
