#include "vmhost_service.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "sandbox_stop.h"

grpc_status_code service_status_from_errno(int err)
{
    switch (err) {
    case 0: return GRPC_STATUS_OK;
    case ENOENT:
    case ESRCH: return GRPC_STATUS_NOT_FOUND;
    case EINVAL:
    case ENAMETOOLONG:
    case EISDIR:
    case ENOTDIR:
    case ELOOP:
    case E2BIG: return GRPC_STATUS_INVALID_ARGUMENT;
    case EEXIST: return GRPC_STATUS_ALREADY_EXISTS;
    case EACCES:
    case EPERM:
    case EROFS: return GRPC_STATUS_PERMISSION_DENIED;
    case ENOTEMPTY:
    case ENOTTY:
    case EBUSY:
    case EXDEV: return GRPC_STATUS_FAILED_PRECONDITION;
    case EAGAIN:
    case ENOSPC:
    case EDQUOT:
    case ENOMEM: return GRPC_STATUS_RESOURCE_EXHAUSTED;
    case ETIMEDOUT: return GRPC_STATUS_DEADLINE_EXCEEDED;
    default: return GRPC_STATUS_INTERNAL;
    }
}

/* activity: the call counts as the sandbox's activity (the idle
 * timeout), and wakes one vmhost's stop suspended; observing it (its
 * ports in a GET, metrics) must do neither, or polling would keep it
 * awake. */
static struct guest_channel *running_sandbox(struct rpc_call *call, struct vmhost *vh,
                                             const char *id, bool activity,
                                             struct sandbox **sb_out)
{
    *sb_out = NULL;
    if (!id || !*id) {
        rpc_call_finish(call, GRPC_STATUS_INVALID_ARGUMENT, "sandbox_id: required");
        return NULL;
    }
    struct sandbox *sb = sandbox_get(vh, id);
    if (!sb) {
        rpc_call_finishf(call, GRPC_STATUS_NOT_FOUND, "sandbox %.80s not found", id);
        return NULL;
    }
    struct airlock_error e = { 0 };
    /* A sandbox vmhost's stop suspended runs again for its first request. */
    struct guest_channel *ch =
        !activity || sandbox_wake(sb, &e) == 0 ? sandbox_channel(sb, &e) : NULL;
    if (!ch) {
        rpc_call_finish_error(call, &e);
        sandbox_put(sb);
        return NULL;
    }
    if (activity)
        sandbox_touch(sb);
    *sb_out = sb;
    return ch;
}

struct guest_channel *service_running_sandbox(struct rpc_call *call, struct vmhost *vh,
                                              const char *id, struct sandbox **sb_out)
{
    return running_sandbox(call, vh, id, true, sb_out);
}

void service_done(struct sandbox *sb, struct guest_channel *ch)
{
    if (ch)
        guest_channel_release(ch);
    sandbox_put(sb);
}

void service_finish_from_result(struct rpc_call *call, const GuestFrame *ans)
{
    if (ans->body_case != AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_RESULT) {
        rpc_call_finish(call, GRPC_STATUS_INTERNAL, "guest sent an unexpected answer");
        return;
    }
    int e = ans->result->errno_value;
    rpc_call_finish(call, service_status_from_errno(e), e ? ans->result->message : NULL);
}

GuestFrame *service_guest_call(struct rpc_call *call, struct sandbox *sb, struct guest_channel *ch,
                               GuestFrame *req)
{
    GuestFrame *ans;
    enum guest_recv_status st = guest_call(ch, req, SERVICE_GUEST_TIMEOUT_MS, &ans);
    if (st != GUEST_RECV_OK) {
        service_finish_guest_failure(call, sb, st);
        return NULL;
    }
    return ans;
}

GuestFrame *service_guest_ask(struct rpc_call *call, struct vmhost *vh, const char *id,
                              bool activity, GuestFrame *req,
                              Airlock__Guest__V1__GuestFrame__BodyCase want)
{
    struct sandbox *sb = NULL;
    struct guest_channel *ch = running_sandbox(call, vh, id, activity, &sb);
    GuestFrame *ans = ch ? service_guest_call(call, sb, ch, req) : NULL;
    service_done(sb, ch);
    if (ans && ans->body_case != want) {
        service_finish_from_result(call, ans);
        frame_free(ans);
        ans = NULL;
    }
    return ans;
}

void service_finish_empty(struct rpc_call *call, const GuestFrame *ans)
{
    if (ans->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_RESULT &&
        ans->result->errno_value == 0) {
        Airlock__Vmhost__V1__Empty e = AIRLOCK__VMHOST__V1__EMPTY__INIT;
        rpc_call_send(call, &e.base);
    }
    service_finish_from_result(call, ans);
}

void service_finish_guest_failure(struct rpc_call *call, struct sandbox *sb,
                                  enum guest_recv_status st)
{
    if (st == GUEST_RECV_TIMEOUT) {
        rpc_call_finishf(call, GRPC_STATUS_DEADLINE_EXCEEDED,
                         "sandbox %s: guest did not answer within %d ms", sandbox_id(sb),
                         SERVICE_GUEST_TIMEOUT_MS);
        return;
    }
    char reason[256] = "channel closed";
    struct airlock_error e = { 0 };
    struct guest_channel *ch = sandbox_channel(sb, &e);
    if (!ch) {
        rpc_call_finish(call, GRPC_STATUS_UNAVAILABLE, e.message);
        return;
    }
    guest_channel_alive(ch, reason, sizeof(reason));
    guest_channel_release(ch);
    rpc_call_finishf(call, GRPC_STATUS_UNAVAILABLE, "sandbox %s: %s", sandbox_id(sb), reason);
}

struct guest_stream *service_open_stream(struct rpc_call *call, struct sandbox *sb,
                                         struct guest_channel *ch, GuestFrame *req)
{
    struct guest_stream *s = guest_stream_open(ch);
    if (s && guest_stream_send(s, req, SERVICE_GUEST_TIMEOUT_MS) == 0)
        return s;
    guest_stream_close(s);
    service_finish_guest_failure(call, sb, GUEST_RECV_CLOSED);
    return NULL;
}

void service_simple_op(struct rpc_call *call, struct vmhost *vh, const char *sandbox_id,
                       GuestFrame *req)
{
    struct sandbox *sb = NULL;
    struct guest_channel *ch = service_running_sandbox(call, vh, sandbox_id, &sb);
    if (!ch)
        return;
    GuestFrame *ans = service_guest_call(call, sb, ch, req);
    if (ans)
        service_finish_empty(call, ans);
    frame_free(ans);
    service_done(sb, ch);
}

bool service_check_pid(struct rpc_call *call, int32_t pid)
{
    if (pid > 0)
        return true;
    rpc_call_finish(call, GRPC_STATUS_INVALID_ARGUMENT, "pid: must be a positive process id");
    return false;
}

bool service_check_mode(struct rpc_call *call, uint32_t mode)
{
    if (mode <= 07777)
        return true;
    rpc_call_finishf(call, GRPC_STATUS_INVALID_ARGUMENT, "mode: %o is not a permission mode", mode);
    return false;
}

bool service_check_path(struct rpc_call *call, const char *field, ProtobufCBinaryData path)
{
    if (path.len == 0) {
        rpc_call_finishf(call, GRPC_STATUS_INVALID_ARGUMENT, "%s: required", field);
        return false;
    }
    if (path.len >= PATH_MAX) {
        rpc_call_finishf(call, GRPC_STATUS_INVALID_ARGUMENT, "%s: longer than %d bytes", field,
                         PATH_MAX - 1);
        return false;
    }
    if (memchr(path.data, '\0', path.len)) {
        rpc_call_finishf(call, GRPC_STATUS_INVALID_ARGUMENT, "%s: contains a NUL byte", field);
        return false;
    }
    return true;
}

struct sandbox *service_lookup_sandbox(struct rpc_call *call, struct vmhost *vh, const char *id)
{
    struct sandbox *sb;
    struct airlock_error e = { 0 };
    if (op_lookup(vh, id, &sb, &e) < 0) {
        rpc_call_finish_error(call, &e);
        return NULL;
    }
    return sb;
}
