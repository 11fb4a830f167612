/* Files: PUT (raw body streamed to vmhost WriteFile as it arrives), GET
 * (vmhost ReadFile streamed out as a chunked body) and files/list. Like
 * exec, the bytes go straight between gateway and the sandbox's vmhost.
 * The other file operations are in handlers_file_ops.c. */
#include <stdlib.h>
#include <string.h>

#include "reply.h"
#include "route_handlers.h"
#include "vmhost.pb-c.h"
#include "vmhost_names.h"

#define FILE_DEFAULT_MODE 0644
#define FILE_MAX_MESSAGE (1u << 20)

/* ---- PUT ---- */

struct file_put {
    struct rpc_stream *stream;
};

void file_put_begin(struct gw_request *r)
{
    const char *path = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "path");
    if (!path || path[0] != '/') {
        gw_request_fail(r, 400, "invalid_argument", "path: query parameter required, absolute");
        return;
    }
    Airlock__Scheduler__V1__Sandbox *sb = gw_sandbox_lookup_early(r);
    if (!sb)
        return;
    struct rpc_channel *ch;
    struct airlock_error e;
    if (gw_sandbox_channel(r->gw, sb, "writing files", &ch, &e) < 0)
        gw_request_fail_error(r, &e);
    struct file_put *fp = ch ? calloc(1, sizeof(*fp)) : NULL;
    if (fp && (fp->stream = rpc_stream_open(ch, VMHOST_METHOD("WriteFile"), 0))) {
        Airlock__Guest__V1__FileWriteRequest fw = AIRLOCK__GUEST__V1__FILE_WRITE_REQUEST__INIT;
        fw.path.data = (uint8_t *)path;
        fw.path.len = strlen(path);
        fw.mode = FILE_DEFAULT_MODE;
        Airlock__Vmhost__V1__WriteFileRequest first = AIRLOCK__VMHOST__V1__WRITE_FILE_REQUEST__INIT;
        first.sandbox_id = sb->id;
        first.request = &fw;
        rpc_stream_send(fp->stream, &first.base);
        r->upload = fp;
    } else if (ch) {
        free(fp);
        gw_request_fail(r, 500, "internal", "out of memory");
    }
    protobuf_c_message_free_unpacked(&sb->base, NULL);
}

void file_put_chunk(struct gw_request *r, const char *data, size_t len)
{
    struct file_put *fp = r->upload;
    while (len > 0) {
        size_t n = len > FILE_MAX_MESSAGE ? FILE_MAX_MESSAGE : len;
        Airlock__Vmhost__V1__WriteFileRequest msg = AIRLOCK__VMHOST__V1__WRITE_FILE_REQUEST__INIT;
        msg.data.data = (uint8_t *)data;
        msg.data.len = n;
        /* A failed send means the call is over; its status, read in
         * handle_file_put, says why. The rest of the body is drained. */
        if (rpc_stream_send(fp->stream, &msg.base) < 0)
            return;
        data += n;
        len -= n;
    }
}

enum MHD_Result handle_file_put(struct gw_request *r)
{
    struct file_put *fp = r->upload;
    rpc_stream_close_send(fp->stream);
    ProtobufCMessage *info = NULL;
    if (rpc_stream_recv(fp->stream, &airlock__guest__v1__file_info__descriptor, &info) == 1)
        protobuf_c_message_free_unpacked(info, NULL);
    char *details = NULL;
    grpc_status_code st = rpc_stream_finish(fp->stream, &details);
    fp->stream = NULL;
    enum MHD_Result rc = st == GRPC_STATUS_OK ? reply_empty(r, 204) : reply_grpc_error(r, st, details);
    free(details);
    return rc;
}

void file_put_cleanup(struct gw_request *r)
{
    struct file_put *fp = r->upload;
    if (!fp)
        return;
    if (fp->stream) {
        /* Client went away mid-upload: cancel, so vmhost drops the temp
         * file instead of installing half a file. */
        rpc_stream_cancel(fp->stream);
        rpc_stream_finish(fp->stream, NULL);
    }
    free(fp);
    r->upload = NULL;
}

/* ---- GET ---- */

struct file_get {
    struct rpc_stream *stream;
    Airlock__Vmhost__V1__FileChunk *chunk;
    size_t off;
};

static ssize_t file_get_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    struct file_get *g = cls;
    while (!g->chunk || g->off >= g->chunk->data.len) {
        if (g->chunk)
            protobuf_c_message_free_unpacked(&g->chunk->base, NULL);
        g->chunk = NULL;
        g->off = 0;
        if (!g->stream)
            return MHD_CONTENT_READER_END_OF_STREAM;
        if (rpc_stream_recv(g->stream, &airlock__vmhost__v1__file_chunk__descriptor,
                            (ProtobufCMessage **)&g->chunk) != 1) {
            grpc_status_code st = rpc_stream_finish(g->stream, NULL);
            g->stream = NULL;
            /* A failure mid-file must not look like a complete file. */
            if (st != GRPC_STATUS_OK)
                return MHD_CONTENT_READER_END_WITH_ERROR;
        }
    }
    size_t n = g->chunk->data.len - g->off;
    if (n > max)
        n = max;
    memcpy(buf, g->chunk->data.data + g->off, n);
    g->off += n;
    return (ssize_t)n;
}

static void file_get_free(void *cls)
{
    struct file_get *g = cls;
    if (g->chunk)
        protobuf_c_message_free_unpacked(&g->chunk->base, NULL);
    if (g->stream) {
        rpc_stream_cancel(g->stream);
        rpc_stream_finish(g->stream, NULL);
    }
    free(g);
}

struct rpc_channel *gw_file_target(struct gw_request *r, const char *what,
                                   Airlock__Scheduler__V1__Sandbox **sb, const char **path,
                                   enum MHD_Result *rc)
{
    *path = gw_query_path(r, rc);
    if (!*path)
        return NULL;
    *sb = gw_sandbox_lookup(r, rc);
    if (!*sb)
        return NULL;
    return gw_sandbox_vmhost(r, *sb, what, rc);
}

enum MHD_Result handle_file_get(struct gw_request *r)
{
    Airlock__Scheduler__V1__Sandbox *sb = NULL;
    const char *path;
    enum MHD_Result rc = MHD_NO;
    struct rpc_channel *ch = gw_file_target(r, "reading files", &sb, &path, &rc);
    struct file_get *g = ch ? calloc(1, sizeof(*g)) : NULL;
    if (!ch)
        goto out;
    if (!g || !(g->stream = rpc_stream_open(ch, VMHOST_METHOD("ReadFile"), 0))) {
        free(g);
        rc = reply_error(r, 500, "internal", "out of memory");
        goto out;
    }
    Airlock__Guest__V1__FileReadRequest fr = AIRLOCK__GUEST__V1__FILE_READ_REQUEST__INIT;
    fr.path.data = (uint8_t *)path;
    fr.path.len = strlen(path);
    Airlock__Vmhost__V1__ReadFileRequest req = AIRLOCK__VMHOST__V1__READ_FILE_REQUEST__INIT;
    req.sandbox_id = sb->id;
    req.request = &fr;
    rpc_stream_send(g->stream, &req.base);
    rpc_stream_close_send(g->stream);
    /* The first chunk (or the error) decides the status. */
    if (rpc_stream_recv(g->stream, &airlock__vmhost__v1__file_chunk__descriptor,
                        (ProtobufCMessage **)&g->chunk) != 1) {
        char *details = NULL;
        grpc_status_code st = rpc_stream_finish(g->stream, &details);
        g->stream = NULL;
        if (st != GRPC_STATUS_OK) {
            rc = reply_grpc_error(r, st, details);
            free(details);
            file_get_free(g);
            goto out;
        }
        free(details); /* an empty file */
    }
    struct MHD_Response *resp =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, file_get_read, g, file_get_free);
    if (!resp) {
        file_get_free(g);
        goto out;
    }
    MHD_add_response_header(resp, "Content-Type", "application/octet-stream");
    rc = reply_queue(r, 200, resp);
out:
    if (sb)
        protobuf_c_message_free_unpacked(&sb->base, NULL);
    return rc;
}

/* ---- list ---- */

json_t *gw_file_info_json(const Airlock__Guest__V1__FileInfo *fi)
{
    char mtime[40];
    reply_rfc3339(fi->mtime_unix_ms, mtime, sizeof(mtime));
    json_t *e = json_pack("{s:s,s:I,s:i,s:s}", "type", gw_file_type_name(fi->type), "size",
                          (json_int_t)fi->size, "mode", (json_int_t)fi->mode, "mtime", mtime);
    json_t *name = reply_utf8_string(fi->name.data, fi->name.len);
    if (name)
        json_object_set_new(e, "name", name);
    else
        json_object_set_new(e, "name_b64", reply_base64(fi->name.data, fi->name.len));
    return e;
}

enum MHD_Result handle_file_list(struct gw_request *r)
{
    Airlock__Scheduler__V1__Sandbox *sb = NULL;
    const char *path;
    enum MHD_Result rc = MHD_NO;
    struct rpc_channel *ch = gw_file_target(r, "listing files", &sb, &path, &rc);
    if (!ch)
        goto out;
    Airlock__Guest__V1__ListRequest lr = AIRLOCK__GUEST__V1__LIST_REQUEST__INIT;
    lr.path.data = (uint8_t *)path;
    lr.path.len = strlen(path);
    Airlock__Vmhost__V1__ListDirRequest req = AIRLOCK__VMHOST__V1__LIST_DIR_REQUEST__INIT;
    req.sandbox_id = sb->id;
    req.request = &lr;
    Airlock__Vmhost__V1__ListDirResponse *resp = NULL;
    char *details = NULL;
    grpc_status_code st = rpc_unary(ch, VMHOST_METHOD("ListDir"), &req.base,
                                    &airlock__vmhost__v1__list_dir_response__descriptor,
                                    (ProtobufCMessage **)&resp, &details, GW_SCHEDULER_TIMEOUT_MS);
    if (st != GRPC_STATUS_OK) {
        rc = reply_grpc_error(r, st, details);
    } else {
        json_t *entries = json_array();
        for (size_t i = 0; i < resp->n_entries; i++)
            json_array_append_new(entries, gw_file_info_json(resp->entries[i]));
        rc = reply_json(r, 200, json_pack("{s:o}", "entries", entries));
        protobuf_c_message_free_unpacked(&resp->base, NULL);
    }
    free(details);
out:
    if (sb)
        protobuf_c_message_free_unpacked(&sb->base, NULL);
    return rc;
}
