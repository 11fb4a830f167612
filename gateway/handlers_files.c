/* Files: PUT (raw body streamed to vmhost WriteFile as it arrives), GET
 * (vmhost ReadFile streamed out as a chunked body) and files/list. Like
 * exec, the bytes go straight between gateway and the sandbox's vmhost.
 * The other file operations are in handlers_file_ops.c. */
#include <stdlib.h>
#include <string.h>

#include "file_streams.h"
#include "reply.h"
#include "route_handlers.h"
#include "vmhost.pb-c.h"
#include "vmhost_names.h"

/* ---- PUT ---- */

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
    else if (!(r->upload = file_write_open(ch, sb->id, path, false)))
        gw_request_fail(r, 500, "internal", "out of memory");
    protobuf_c_message_free_unpacked(&sb->base, NULL);
}

void file_put_chunk(struct gw_request *r, const char *data, size_t len)
{
    /* A failed send means the call is over; its status, read in
     * handle_file_put, says why. The rest of the body is drained. */
    file_write_chunk(r->upload, data, len);
}

enum MHD_Result handle_file_put(struct gw_request *r)
{
    struct airlock_error e;
    int rc = file_write_finish(r->upload, NULL, &e);
    r->upload = NULL;
    return rc == 0 ? reply_empty(r, 204) : reply_airlock_error(r, &e);
}

void file_put_cleanup(struct gw_request *r)
{
    if (r->upload)
        file_write_abort(r->upload); /* the client went away mid-upload */
    r->upload = NULL;
}

/* ---- GET ---- */

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
    struct MHD_Response *resp;
    struct airlock_error e;
    if (ch)
        rc = file_read_response(ch, sb->id, path, &resp, &e) == 0 ? reply_queue(r, 200, resp)
                                                                  : reply_airlock_error(r, &e);
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
