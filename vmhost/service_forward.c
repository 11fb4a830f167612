/* MakeDir, RemoveFile, RenameFile, ChmodFile, StatFile: each request names
 * the sandbox (sandbox_id) and carries the guest's own request (request,
 * guest.proto), which goes to the guest as it is once its paths and mode
 * passed their checks; the guest's answer comes back as FileInfo for
 * StatFile, Empty for the rest. One table, one forwarding path. */
#include <string.h>

#include "vmhost_service.h"

static const struct forward_op {
    const char *method;
    const ProtobufCMessageDescriptor *request;
    Airlock__Guest__V1__GuestFrame__BodyCase body; /* the GuestFrame field carrying it */
    bool answers_file_info;
} forward_ops[] = {
    { "MakeDir", &airlock__vmhost__v1__make_dir_request__descriptor,
      AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_MKDIR, false },
    { "RemoveFile", &airlock__vmhost__v1__remove_file_request__descriptor,
      AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_REMOVE, false },
    { "RenameFile", &airlock__vmhost__v1__rename_file_request__descriptor,
      AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_RENAME, false },
    { "ChmodFile", &airlock__vmhost__v1__chmod_file_request__descriptor,
      AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_CHMOD, false },
    { "StatFile", &airlock__vmhost__v1__stat_file_request__descriptor,
      AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_STAT, true },
};

static const struct forward_op *forward_op_for(const char *path)
{
    const char *method = strrchr(path, '/');
    for (size_t i = 0; method && i < sizeof(forward_ops) / sizeof(*forward_ops); i++)
        if (strcmp(forward_ops[i].method, method + 1) == 0)
            return &forward_ops[i];
    return NULL;
}

/* A field of msg by name (every request of the table has sandbox_id and
 * request; the guest requests have path, from, to and mode as they need). */
static void *field_at(const ProtobufCMessage *msg, const char *name,
                      const ProtobufCFieldDescriptor **fd)
{
    *fd = protobuf_c_message_descriptor_get_field_by_name(msg->descriptor, name);
    return *fd ? (char *)msg + (*fd)->offset : NULL;
}

/* The guest request's paths and mode, whichever it has, as every path and
 * mode of the API is checked (vmhost_service.h). */
static bool guest_request_valid(struct rpc_call *call, const ProtobufCMessage *g)
{
    static const char *const paths[] = { "path", "from", "to" };
    const ProtobufCFieldDescriptor *fd;
    for (size_t i = 0; i < sizeof(paths) / sizeof(*paths); i++) {
        const ProtobufCBinaryData *p = field_at(g, paths[i], &fd);
        if (p && fd->type == PROTOBUF_C_TYPE_BYTES && !service_check_path(call, paths[i], *p))
            return false;
    }
    const uint32_t *mode = field_at(g, "mode", &fd);
    return !mode || fd->type != PROTOBUF_C_TYPE_UINT32 || service_check_mode(call, *mode);
}

/* f carries g as its op->body member, as the generated setter would. */
static void frame_carry(GuestFrame *f, Airlock__Guest__V1__GuestFrame__BodyCase body,
                        ProtobufCMessage *g)
{
    const ProtobufCFieldDescriptor *fd =
        protobuf_c_message_descriptor_get_field(&airlock__guest__v1__guest_frame__descriptor, body);
    *(ProtobufCMessage **)((char *)f + fd->offset) = g;
    f->body_case = body;
}

void service_forward_frame(struct rpc_call *call, struct sandbox *sb, struct guest_channel *ch,
                           GuestFrame *f, bool answers_file_info)
{
    GuestFrame *ans = service_guest_call(call, sb, ch, f);
    if (!ans)
        return; /* finished with the guest's failure */
    if (!answers_file_info) {
        service_finish_empty(call, ans);
    } else if (ans->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_FILE_INFO) {
        rpc_call_send(call, &ans->file_info->base);
        rpc_call_finish(call, GRPC_STATUS_OK, NULL);
    } else {
        service_finish_from_result(call, ans);
    }
    frame_free(ans);
}

static void forward(struct rpc_call *call, struct vmhost *vh, const char *sandbox_id,
                    GuestFrame *f, bool answers_file_info)
{
    struct sandbox *sb = NULL;
    struct guest_channel *ch = service_running_sandbox(call, vh, sandbox_id, &sb);
    if (!ch)
        return;
    service_forward_frame(call, sb, ch, f, answers_file_info);
    service_done(sb, ch);
}

void service_file_forward(struct rpc_call *call, void *ctx)
{
    const struct forward_op *op = forward_op_for(rpc_call_method(call));
    if (!op) { /* vmhost_service.c registers only the table's methods here */
        rpc_call_finish(call, GRPC_STATUS_UNIMPLEMENTED, "no such file operation");
        return;
    }
    ProtobufCMessage *req = rpc_call_recv_request(call, op->request);
    if (!req)
        return;
    const ProtobufCFieldDescriptor *fd;
    char *const *sandbox_id = field_at(req, "sandbox_id", &fd);
    ProtobufCMessage *const *g = field_at(req, "request", &fd);
    if (!*g) {
        rpc_call_finish(call, GRPC_STATUS_INVALID_ARGUMENT, "request: required");
    } else if (guest_request_valid(call, *g)) {
        GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
        frame_carry(&f, op->body, *g);
        forward(call, ctx, *sandbox_id, &f, op->answers_file_info);
    }
    protobuf_c_message_free_unpacked(req, NULL);
}

const char *service_forward_method(size_t i)
{
    return i < sizeof(forward_ops) / sizeof(*forward_ops) ? forward_ops[i].method : NULL;
}
