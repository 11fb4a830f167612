/* envd's HTTP file routes: GET /files?path= streams a file out (vmhost
 * ReadFile), POST /files?path= takes multipart/form-data, each "file"
 * part written as it arrives (vmhost WriteFile, atomic, parent
 * directories made) to the query's path or, without one, to the path the
 * part's filename gives, as E2B's SDK sends them; a raw
 * application/octet-stream body goes to the query's path. Answers
 * [{"path","name","type":"file"}] per file. */
#include <stdlib.h>
#include <string.h>

#include "envd_routes.h"
#include "file_streams.h"
#include "reply.h"
#include "sandbox_access.h"

#define POST_BUFFER (64 * 1024)

enum MHD_Result envd_files_get(struct gw_request *r)
{
    const char *path = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "path");
    Airlock__Scheduler__V1__Sandbox *sb = NULL;
    struct rpc_channel *ch;
    struct MHD_Response *resp;
    struct airlock_error e;
    enum MHD_Result rc;
    if (gw_path_check(path, "path", &e) < 0 || envd_sandbox(r, "reading files", &sb, &ch, &e) < 0 ||
        file_read_response(ch, sb->id, path, &resp, &e) < 0)
        rc = envd_reply_error(r, &e);
    else
        rc = reply_queue(r, 200, resp);
    if (sb)
        protobuf_c_message_free_unpacked(&sb->base, NULL);
    return rc;
}

struct files_upload {
    struct gw_request *r;
    char sandbox_id[80];
    struct rpc_channel *ch;
    const char *query_path;          /* NULL: each part's filename */
    struct MHD_PostProcessor *form;  /* NULL: a raw body */
    struct rpc_stream *stream;       /* the file being written */
    char *path;                      /* its path */
    char *part_name;                 /* its part's filename */
    uint64_t part_len;               /* bytes of it so far */
    json_t *written;                 /* entries of the files done */
    struct airlock_error e;
    bool failed;
};

/* Finishes the file being written, adding its entry; after a failure it
 * is abandoned instead, so no part of a failed upload is installed. */
static void finish_file(struct files_upload *u)
{
    if (!u->stream)
        return;
    if (u->failed) {
        file_write_abort(u->stream);
    } else if (file_write_finish(u->stream, NULL, &u->e) < 0) {
        u->failed = true;
    } else {
        const char *slash = strrchr(u->path, '/');
        json_array_append_new(u->written, json_pack("{s:s,s:s,s:s}", "path", u->path, "name",
                                                    slash + 1, "type", "file"));
    }
    u->stream = NULL;
    free(u->path);
    free(u->part_name);
    u->path = u->part_name = NULL;
}

static int start_file(struct files_upload *u, const char *path)
{
    if (gw_path_check(path, u->query_path ? "path" : "the part's filename", &u->e) < 0) {
        u->failed = true;
        return -1;
    }
    u->path = strdup(path);
    u->stream = u->path ? file_write_open(u->ch, u->sandbox_id, path, true) : NULL;
    if (!u->stream) {
        airlock_error_set(&u->e, AIRLOCK_ERR_INTERNAL, "out of memory");
        u->failed = true;
        return -1;
    }
    return 0;
}

static enum MHD_Result form_part(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *filename, const char *content_type,
                                 const char *transfer_encoding, const char *data, uint64_t off,
                                 size_t size)
{
    (void)kind;
    (void)content_type;
    (void)transfer_encoding;
    struct files_upload *u = cls;
    if (u->failed)
        return MHD_NO;
    if (strcmp(key, "file") != 0) {
        airlock_error_set(&u->e, AIRLOCK_ERR_INVALID,
                          "form field \"%.64s\": only \"file\" parts are taken", key);
        u->failed = true;
        return MHD_NO;
    }
    filename = filename ? filename : "";
    /* A part begins at offset 0; libmicrohttpd may call with 0 bytes
     * there before its data, which is the same part. */
    if (!u->stream ||
        (off == 0 && (u->part_len > 0 || strcmp(filename, u->part_name) != 0))) {
        finish_file(u);
        if (u->failed || start_file(u, u->query_path ? u->query_path : filename) < 0)
            return MHD_NO;
        if (!(u->part_name = strdup(filename))) {
            airlock_error_set(&u->e, AIRLOCK_ERR_INTERNAL, "out of memory");
            u->failed = true;
            return MHD_NO;
        }
        u->part_len = 0;
    }
    u->part_len += size;
    file_write_chunk(u->stream, data, size);
    return MHD_YES;
}

void envd_files_post_begin(struct gw_request *r)
{
    struct files_upload *u = calloc(1, sizeof(*u));
    Airlock__Scheduler__V1__Sandbox *sb = NULL;
    struct airlock_error e;
    const char *type = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Content-Type");
    if (!u || !(u->written = json_array())) {
        free(u);
        airlock_error_set(&e, AIRLOCK_ERR_INTERNAL, "out of memory");
        envd_fail(r, &e);
        return;
    }
    r->upload = u;
    u->r = r;
    u->query_path = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "path");
    bool raw = type && strncmp(type, "application/octet-stream", 24) == 0;
    bool form = type && strncmp(type, "multipart/form-data", 19) == 0;
    if (!raw && !form)
        airlock_error_set(&e, AIRLOCK_ERR_INVALID,
                          "Content-Type: multipart/form-data or application/octet-stream");
    else if (raw && gw_path_check(u->query_path, "path", &e) < 0)
        ;
    else if (envd_sandbox(r, "writing files", &sb, &u->ch, &e) < 0)
        ;
    else if (form && !(u->form = MHD_create_post_processor(r->conn, POST_BUFFER, form_part, u)))
        airlock_error_set(&e, AIRLOCK_ERR_INVALID, "the multipart/form-data body has no boundary");
    else {
        snprintf(u->sandbox_id, sizeof(u->sandbox_id), "%s", sb->id);
        if (raw)
            start_file(u, u->query_path);
        protobuf_c_message_free_unpacked(&sb->base, NULL);
        return;
    }
    if (sb)
        protobuf_c_message_free_unpacked(&sb->base, NULL);
    envd_fail(r, &e);
}

void envd_files_post_chunk(struct gw_request *r, const char *data, size_t len)
{
    struct files_upload *u = r->upload;
    if (u->failed)
        return; /* answered at the end; the rest of the body is drained */
    if (!u->form)
        file_write_chunk(u->stream, data, len);
    else if (MHD_post_process(u->form, data, len) != MHD_YES && !u->failed) {
        airlock_error_set(&u->e, AIRLOCK_ERR_INVALID, "the multipart/form-data body is malformed");
        u->failed = true;
    }
}

enum MHD_Result envd_files_post(struct gw_request *r)
{
    struct files_upload *u = r->upload;
    if (u->form && MHD_destroy_post_processor(u->form) != MHD_YES && !u->failed) {
        airlock_error_set(&u->e, AIRLOCK_ERR_INVALID, "the multipart/form-data body is cut short");
        u->failed = true;
    }
    u->form = NULL;
    finish_file(u);
    if (!u->failed && json_array_size(u->written) == 0) {
        airlock_error_set(&u->e, AIRLOCK_ERR_INVALID, "the form has no \"file\" part");
        u->failed = true;
    }
    if (u->failed)
        return envd_reply_error(r, &u->e);
    json_t *written = u->written;
    u->written = NULL;
    return reply_json(r, 200, written);
}

void envd_files_post_cleanup(struct gw_request *r)
{
    struct files_upload *u = r->upload;
    if (!u)
        return;
    if (u->form)
        MHD_destroy_post_processor(u->form);
    if (u->stream)
        file_write_abort(u->stream); /* cut short: vmhost installs nothing */
    free(u->path);
    free(u->part_name);
    json_decref(u->written);
    free(u);
    r->upload = NULL;
}
