#include "file_streams.h"

#include <stdlib.h>
#include <string.h>

#include "rpc_err.h"
#include "sandbox_access.h"

#define FILE_DEFAULT_MODE 0644
#define FILE_MAX_MESSAGE (1u << 20)
#define FILE_READ_BLOCK (64 * 1024)

struct file_read {
    struct rpc_stream *stream; /* NULL once finished */
    Airlock__Vmhost__V1__FileChunk *chunk;
    size_t off;
};

static ssize_t file_read_next(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    struct file_read *g = cls;
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

static void file_read_free(void *cls)
{
    struct file_read *g = cls;
    if (g->chunk)
        protobuf_c_message_free_unpacked(&g->chunk->base, NULL);
    if (g->stream) {
        rpc_stream_cancel(g->stream);
        rpc_stream_finish(g->stream, NULL);
    }
    free(g);
}

int file_read_response(struct rpc_channel *ch, const char *sandbox_id, const char *path,
                       struct MHD_Response **resp, struct airlock_error *e)
{
    *resp = NULL;
    struct file_read *g = calloc(1, sizeof(*g));
    if (!g || !(g->stream = rpc_stream_open(ch, VMHOST_METHOD("ReadFile"), 0))) {
        free(g);
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
    }
    Airlock__Guest__V1__FileReadRequest fr = AIRLOCK__GUEST__V1__FILE_READ_REQUEST__INIT;
    fr.path.data = (uint8_t *)path;
    fr.path.len = strlen(path);
    Airlock__Vmhost__V1__ReadFileRequest req = AIRLOCK__VMHOST__V1__READ_FILE_REQUEST__INIT;
    req.sandbox_id = (char *)sandbox_id;
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
            airlock_error_from_status(e, st, details);
            free(details);
            file_read_free(g);
            return -1;
        }
        free(details); /* an empty file */
    }
    *resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, FILE_READ_BLOCK, file_read_next, g,
                                              file_read_free);
    if (!*resp) {
        file_read_free(g);
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
    }
    MHD_add_response_header(*resp, "Content-Type", "application/octet-stream");
    return 0;
}

struct rpc_stream *file_write_open(struct rpc_channel *ch, const char *sandbox_id,
                                   const char *path, bool make_parents)
{
    struct rpc_stream *s = rpc_stream_open(ch, VMHOST_METHOD("WriteFile"), 0);
    if (!s)
        return NULL;
    Airlock__Guest__V1__FileWriteRequest fw = AIRLOCK__GUEST__V1__FILE_WRITE_REQUEST__INIT;
    fw.path.data = (uint8_t *)path;
    fw.path.len = strlen(path);
    fw.mode = FILE_DEFAULT_MODE;
    fw.make_parents = make_parents;
    Airlock__Vmhost__V1__WriteFileRequest first = AIRLOCK__VMHOST__V1__WRITE_FILE_REQUEST__INIT;
    first.sandbox_id = (char *)sandbox_id;
    first.request = &fw;
    rpc_stream_send(s, &first.base);
    return s;
}

void file_write_chunk(struct rpc_stream *s, const void *data, size_t len)
{
    const uint8_t *p = data;
    while (len > 0) {
        size_t n = len > FILE_MAX_MESSAGE ? FILE_MAX_MESSAGE : len;
        Airlock__Vmhost__V1__WriteFileRequest msg = AIRLOCK__VMHOST__V1__WRITE_FILE_REQUEST__INIT;
        msg.data.data = (uint8_t *)p;
        msg.data.len = n;
        if (rpc_stream_send(s, &msg.base) < 0)
            return;
        p += n;
        len -= n;
    }
}

int file_write_finish(struct rpc_stream *s, Airlock__Guest__V1__FileInfo **info,
                      struct airlock_error *e)
{
    rpc_stream_close_send(s);
    ProtobufCMessage *fi = NULL;
    rpc_stream_recv(s, &airlock__guest__v1__file_info__descriptor, &fi);
    char *details = NULL;
    grpc_status_code st = rpc_stream_finish(s, &details);
    int rc = st == GRPC_STATUS_OK ? 0 : airlock_error_from_status(e, st, details);
    free(details);
    if (rc == 0 && info)
        *info = (Airlock__Guest__V1__FileInfo *)fi;
    else if (fi)
        protobuf_c_message_free_unpacked(fi, NULL);
    return rc;
}

void file_write_abort(struct rpc_stream *s)
{
    rpc_stream_cancel(s);
    rpc_stream_finish(s, NULL);
}
