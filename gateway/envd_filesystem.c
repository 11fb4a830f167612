/* envd's filesystem.Filesystem on the sandbox's vmhost file calls: Stat
 * (StatFile), ListDir to a depth (ListDir per directory), MakeDir
 * (already_exists when it is there, as envd answers), Move (RenameFile)
 * and Remove (RemoveFile, recursive); WatchDir is envd_watch.c. Paths
 * are absolute. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envd_routes.h"
#include "reply.h"
#include "sandbox_access.h"
#include "vmhost.pb-c.h"

typedef Airlock__Guest__V1__FileInfo FileInfo;

#define MKDIR_MODE 0755
/* Entries one ListDir answers at most, whatever the depth. */
#define LIST_MAX_ENTRIES 100000

static const char *type_name(Airlock__Guest__V1__FileType t)
{
    switch (t) {
    case AIRLOCK__GUEST__V1__FILE_TYPE__FILE_TYPE_FILE: return "FILE_TYPE_FILE";
    case AIRLOCK__GUEST__V1__FILE_TYPE__FILE_TYPE_DIR: return "FILE_TYPE_DIRECTORY";
    case AIRLOCK__GUEST__V1__FILE_TYPE__FILE_TYPE_SYMLINK: return "FILE_TYPE_SYMLINK";
    default: return "FILE_TYPE_UNSPECIFIED";
    }
}

/* "drwxr-xr-x", as Go's FileMode prints it (envd's permissions). */
static void permissions(const FileInfo *fi, char out[11])
{
    static const char rwx[] = "rwxrwxrwx";
    out[0] = fi->type == AIRLOCK__GUEST__V1__FILE_TYPE__FILE_TYPE_DIR       ? 'd'
             : fi->type == AIRLOCK__GUEST__V1__FILE_TYPE__FILE_TYPE_SYMLINK ? 'L'
                                                                          : '-';
    for (int i = 0; i < 9; i++)
        out[1 + i] = fi->mode & (0400u >> i) ? rwx[i] : '-';
    out[10] = '\0';
}

/* A uid or gid as envd names it: root for 0, else the number. */
static json_t *owner_json(uint32_t id)
{
    return id == 0 ? json_string("root") : json_sprintf("%u", id);
}

/* envd's EntryInfo for fi at path (NULL when the path is not UTF-8). */
static json_t *entry_json(const FileInfo *fi, const char *path)
{
    json_t *name = reply_utf8_string(fi->name.data, fi->name.len);
    json_t *jpath = json_string(path);
    if (!name || !jpath) {
        json_decref(name);
        json_decref(jpath);
        return NULL;
    }
    char perms[11], mtime[40];
    permissions(fi, perms);
    reply_rfc3339(fi->mtime_unix_ms, mtime, sizeof(mtime));
    json_t *e = json_pack("{s:o,s:s,s:o,s:I,s:i,s:s,s:o,s:o,s:s}", "name", name, "type",
                          type_name(fi->type), "path", jpath, "size", (json_int_t)fi->size,
                          "mode", (int)fi->mode, "permissions", perms, "owner",
                          owner_json(fi->uid), "group", owner_json(fi->gid), "modifiedTime",
                          mtime);
    if (fi->type == AIRLOCK__GUEST__V1__FILE_TYPE__FILE_TYPE_SYMLINK) {
        json_t *target = reply_utf8_string(fi->link_target.data, fi->link_target.len);
        if (target)
            json_object_set_new(e, "symlinkTarget", target);
    }
    return e;
}

/* The request's absolute path field name; NULL with c->e. */
static const char *path_field(struct envd_call *c, const char *name)
{
    const char *path = json_string_value(json_object_get(c->msg, name));
    return gw_path_check(path, name, &c->e) == 0 ? path : NULL;
}

static int stat_path(struct envd_call *c, const char *path, FileInfo **fi)
{
    Airlock__Guest__V1__StatRequest sr = AIRLOCK__GUEST__V1__STAT_REQUEST__INIT;
    sr.path.data = (uint8_t *)path;
    sr.path.len = strlen(path);
    Airlock__Vmhost__V1__StatFileRequest req = AIRLOCK__VMHOST__V1__STAT_FILE_REQUEST__INIT;
    req.sandbox_id = c->sb->id;
    req.request = &sr;
    *fi = NULL;
    return gw_unary(c->ch, VMHOST_METHOD("StatFile"), &req.base,
                    &airlock__guest__v1__file_info__descriptor, (ProtobufCMessage **)fi,
                    GW_SCHEDULER_TIMEOUT_MS, &c->e);
}

/* {"entry": EntryInfo of path}, or NULL with c->e. */
static json_t *entry_response(struct envd_call *c, const char *path)
{
    FileInfo *fi;
    if (stat_path(c, path, &fi) < 0)
        return NULL;
    json_t *e = entry_json(fi, path);
    protobuf_c_message_free_unpacked(&fi->base, NULL);
    if (!e)
        airlock_error_set(&c->e, AIRLOCK_ERR_INVALID, "%s: the name is not UTF-8", path);
    return e ? json_pack("{s:o}", "entry", e) : NULL;
}

enum MHD_Result envd_fs_stat(struct gw_request *r)
{
    static const struct json_field fields[] = { { "path", JF_STRING } };
    struct envd_call c;
    const char *path;
    if (envd_call_begin(r, "stat", fields, 1, &c) < 0 || !(path = path_field(&c, "path")))
        return envd_call_end(r, &c, NULL);
    return envd_call_end(r, &c, entry_response(&c, path));
}

/* Appends the entries of dir to out, and those of its subdirectories
 * while depth > 1. -1 with c->e. */
static int list_into(struct envd_call *c, const char *dir, uint64_t depth, json_t *out)
{
    Airlock__Guest__V1__ListRequest lr = AIRLOCK__GUEST__V1__LIST_REQUEST__INIT;
    lr.path.data = (uint8_t *)dir;
    lr.path.len = strlen(dir);
    Airlock__Vmhost__V1__ListDirRequest req = AIRLOCK__VMHOST__V1__LIST_DIR_REQUEST__INIT;
    req.sandbox_id = c->sb->id;
    req.request = &lr;
    Airlock__Vmhost__V1__ListDirResponse *resp = NULL;
    if (gw_unary(c->ch, VMHOST_METHOD("ListDir"), &req.base,
                 &airlock__vmhost__v1__list_dir_response__descriptor, (ProtobufCMessage **)&resp,
                 GW_SCHEDULER_TIMEOUT_MS, &c->e) < 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < resp->n_entries && rc == 0; i++) {
        const FileInfo *fi = resp->entries[i];
        char *path = NULL;
        bool root = strcmp(dir, "/") == 0;
        if (asprintf(&path, "%s%s%.*s", dir, root ? "" : "/", (int)fi->name.len,
                     (const char *)fi->name.data) < 0) {
            rc = airlock_error_set(&c->e, AIRLOCK_ERR_INTERNAL, "out of memory");
            break;
        }
        json_t *e = memchr(fi->name.data, '\0', fi->name.len) ? NULL : entry_json(fi, path);
        if (e) /* a name that is not UTF-8 cannot be a JSON string: left out */
            json_array_append_new(out, e);
        if (json_array_size(out) > LIST_MAX_ENTRIES)
            rc = airlock_error_set(&c->e, AIRLOCK_ERR_RANGE,
                                   "more than %d entries under the path; list with a smaller "
                                   "depth",
                                   LIST_MAX_ENTRIES);
        else if (e && depth > 1 && fi->type == AIRLOCK__GUEST__V1__FILE_TYPE__FILE_TYPE_DIR)
            rc = list_into(c, path, depth - 1, out);
        free(path);
    }
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    return rc;
}

enum MHD_Result envd_fs_list_dir(struct gw_request *r)
{
    static const struct json_field fields[] = { { "path", JF_STRING }, { "depth", JF_UINT } };
    struct envd_call c;
    const char *path;
    uint64_t depth = 1;
    if (envd_call_begin(r, "listing files", fields, 2, &c) < 0 ||
        !(path = path_field(&c, "path")) ||
        json_input_uint(c.msg, "depth", 1024, 1, &depth, &c.e) < 0)
        return envd_call_end(r, &c, NULL);
    json_t *entries = json_array();
    if (list_into(&c, path, depth ? depth : 1, entries) < 0) {
        json_decref(entries);
        return envd_call_end(r, &c, NULL);
    }
    return envd_call_end(r, &c, json_pack("{s:o}", "entries", entries));
}

enum MHD_Result envd_fs_make_dir(struct gw_request *r)
{
    static const struct json_field fields[] = { { "path", JF_STRING } };
    struct envd_call c;
    const char *path;
    FileInfo *fi = NULL;
    if (envd_call_begin(r, "making a directory", fields, 1, &c) < 0 ||
        !(path = path_field(&c, "path")))
        return envd_call_end(r, &c, NULL);
    /* envd answers already_exists for a path that is there (the SDK's
     * makeDir then returns false); airlock's mkdir -p would not. */
    if (stat_path(&c, path, &fi) == 0) {
        protobuf_c_message_free_unpacked(&fi->base, NULL);
        airlock_error_set(&c.e, AIRLOCK_ERR_EXISTS, "%s already exists", path);
        return envd_call_end(r, &c, NULL);
    }
    if (c.e.class != AIRLOCK_ERR_NOT_FOUND)
        return envd_call_end(r, &c, NULL);
    Airlock__Guest__V1__MkdirRequest mr = AIRLOCK__GUEST__V1__MKDIR_REQUEST__INIT;
    mr.path.data = (uint8_t *)path;
    mr.path.len = strlen(path);
    mr.mode = MKDIR_MODE;
    mr.parents = true;
    Airlock__Vmhost__V1__MakeDirRequest req = AIRLOCK__VMHOST__V1__MAKE_DIR_REQUEST__INIT;
    req.sandbox_id = c.sb->id;
    req.request = &mr;
    if (envd_vmhost_empty(&c, VMHOST_METHOD("MakeDir"), &req.base) < 0)
        return envd_call_end(r, &c, NULL);
    return envd_call_end(r, &c, entry_response(&c, path));
}

enum MHD_Result envd_fs_move(struct gw_request *r)
{
    static const struct json_field fields[] = { { "source", JF_STRING },
                                                { "destination", JF_STRING } };
    struct envd_call c;
    const char *from, *to;
    if (envd_call_begin(r, "moving files", fields, 2, &c) < 0 ||
        !(from = path_field(&c, "source")) || !(to = path_field(&c, "destination")))
        return envd_call_end(r, &c, NULL);
    Airlock__Guest__V1__RenameRequest rr = AIRLOCK__GUEST__V1__RENAME_REQUEST__INIT;
    rr.from.data = (uint8_t *)from;
    rr.from.len = strlen(from);
    rr.to.data = (uint8_t *)to;
    rr.to.len = strlen(to);
    Airlock__Vmhost__V1__RenameFileRequest req = AIRLOCK__VMHOST__V1__RENAME_FILE_REQUEST__INIT;
    req.sandbox_id = c.sb->id;
    req.request = &rr;
    if (envd_vmhost_empty(&c, VMHOST_METHOD("RenameFile"), &req.base) < 0)
        return envd_call_end(r, &c, NULL);
    return envd_call_end(r, &c, entry_response(&c, to));
}

enum MHD_Result envd_fs_remove(struct gw_request *r)
{
    static const struct json_field fields[] = { { "path", JF_STRING } };
    struct envd_call c;
    const char *path;
    if (envd_call_begin(r, "removing files", fields, 1, &c) < 0 ||
        !(path = path_field(&c, "path")))
        return envd_call_end(r, &c, NULL);
    Airlock__Guest__V1__RemoveRequest rr = AIRLOCK__GUEST__V1__REMOVE_REQUEST__INIT;
    rr.path.data = (uint8_t *)path;
    rr.path.len = strlen(path);
    rr.recursive = true;
    Airlock__Vmhost__V1__RemoveFileRequest req = AIRLOCK__VMHOST__V1__REMOVE_FILE_REQUEST__INIT;
    req.sandbox_id = c.sb->id;
    req.request = &rr;
    return envd_call_end(r, &c, envd_vmhost_empty(&c, VMHOST_METHOD("RemoveFile"), &req.base) < 0
                                    ? NULL
                                    : json_object());
}
