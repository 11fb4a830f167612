/* The small file operations, each one unary vmhost call: stat
 * (GET files/stat?path=), mkdir (POST files/mkdir), remove
 * (DELETE files?path=&recursive=) and rename (POST files/rename). */
#include <stdlib.h>
#include <string.h>

#include "reply.h"
#include "route_handlers.h"

#define MKDIR_DEFAULT_MODE 0755

/* A path field of a JSON body: present and absolute; NULL with e. */
static const char *body_path(json_t *body, const char *name, struct airlock_error *e)
{
    const char *path = json_input_string(body, name, NULL);
    return gw_path_check(path, name, e) == 0 ? path : NULL;
}

static void set_path(ProtobufCBinaryData *field, const char *path)
{
    field->data = (uint8_t *)path;
    field->len = strlen(path);
}

enum MHD_Result handle_file_stat(struct gw_request *r)
{
    Airlock__Scheduler__V1__Sandbox *sb = NULL;
    const char *path;
    enum MHD_Result rc = MHD_NO;
    struct rpc_channel *ch = gw_file_target(r, "stat", &sb, &path, &rc);
    if (ch) {
        Airlock__Guest__V1__StatRequest sr = AIRLOCK__GUEST__V1__STAT_REQUEST__INIT;
        set_path(&sr.path, path);
        Airlock__Vmhost__V1__StatFileRequest req = AIRLOCK__VMHOST__V1__STAT_FILE_REQUEST__INIT;
        req.sandbox_id = sb->id;
        req.request = &sr;
        Airlock__Guest__V1__FileInfo *fi = NULL;
        char *details = NULL;
        grpc_status_code st = rpc_unary(ch, VMHOST_METHOD("StatFile"), &req.base,
                                        &airlock__guest__v1__file_info__descriptor,
                                        (ProtobufCMessage **)&fi, &details, GW_SCHEDULER_TIMEOUT_MS);
        if (st == GRPC_STATUS_OK) {
            json_t *j = gw_file_info_json(fi);
            if (fi->type == AIRLOCK__GUEST__V1__FILE_TYPE__FILE_TYPE_SYMLINK) {
                json_t *target = reply_utf8_string(fi->link_target.data, fi->link_target.len);
                json_object_set_new(j, target ? "link_target" : "link_target_b64",
                                    target ? target
                                           : reply_base64(fi->link_target.data, fi->link_target.len));
            }
            rc = reply_json(r, 200, j);
            protobuf_c_message_free_unpacked(&fi->base, NULL);
        } else {
            rc = reply_grpc_error(r, st, details);
        }
        free(details);
    }
    if (sb)
        protobuf_c_message_free_unpacked(&sb->base, NULL);
    return rc;
}

enum MHD_Result handle_file_remove(struct gw_request *r)
{
    const char *recursive = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "recursive");
    if (recursive && strcmp(recursive, "true") != 0 && strcmp(recursive, "false") != 0)
        return reply_error(r, 400, "invalid_argument", "recursive: must be true or false");
    enum MHD_Result rc = MHD_NO;
    const char *path = gw_query_path(r, &rc);
    if (!path)
        return rc;
    Airlock__Guest__V1__RemoveRequest rm = AIRLOCK__GUEST__V1__REMOVE_REQUEST__INIT;
    set_path(&rm.path, path);
    rm.recursive = recursive && strcmp(recursive, "true") == 0;
    Airlock__Vmhost__V1__RemoveFileRequest req = AIRLOCK__VMHOST__V1__REMOVE_FILE_REQUEST__INIT;
    req.request = &rm;
    return gw_vmhost_call_no_content(r, "removing files", VMHOST_METHOD("RemoveFile"), &req.base,
                                     &req.sandbox_id);
}

enum MHD_Result handle_file_mkdir(struct gw_request *r)
{
    static const struct json_field fields[] = {
        { "path", JF_STRING }, { "parents", JF_BOOL }, { "mode", JF_UINT },
    };
    enum MHD_Result rc = MHD_NO;
    json_t *body = gw_json_body(r, fields, sizeof(fields) / sizeof(*fields), &rc);
    if (!body)
        return rc;
    struct airlock_error e;
    uint64_t mode;
    const char *path = body_path(body, "path", &e);
    if (!path || json_input_uint(body, "mode", 07777, MKDIR_DEFAULT_MODE, &mode, &e) < 0) {
        rc = reply_airlock_error(r, &e);
    } else {
        Airlock__Guest__V1__MkdirRequest m = AIRLOCK__GUEST__V1__MKDIR_REQUEST__INIT;
        set_path(&m.path, path);
        m.mode = (uint32_t)mode;
        m.parents = json_is_true(json_object_get(body, "parents"));
        Airlock__Vmhost__V1__MakeDirRequest req = AIRLOCK__VMHOST__V1__MAKE_DIR_REQUEST__INIT;
        req.request = &m;
        rc = gw_vmhost_call_no_content(r, "making directories", VMHOST_METHOD("MakeDir"), &req.base,
                                       &req.sandbox_id);
    }
    json_decref(body);
    return rc;
}

enum MHD_Result handle_file_rename(struct gw_request *r)
{
    static const struct json_field fields[] = { { "from", JF_STRING }, { "to", JF_STRING } };
    enum MHD_Result rc = MHD_NO;
    json_t *body = gw_json_body(r, fields, sizeof(fields) / sizeof(*fields), &rc);
    if (!body)
        return rc;
    struct airlock_error e;
    const char *from = body_path(body, "from", &e);
    const char *to = from ? body_path(body, "to", &e) : NULL;
    if (!to) {
        rc = reply_airlock_error(r, &e);
    } else {
        Airlock__Guest__V1__RenameRequest mv = AIRLOCK__GUEST__V1__RENAME_REQUEST__INIT;
        set_path(&mv.from, from);
        set_path(&mv.to, to);
        Airlock__Vmhost__V1__RenameFileRequest req = AIRLOCK__VMHOST__V1__RENAME_FILE_REQUEST__INIT;
        req.request = &mv;
        rc = gw_vmhost_call_no_content(r, "renaming files", VMHOST_METHOD("RenameFile"), &req.base,
                                       &req.sandbox_id);
    }
    json_decref(body);
    return rc;
}
