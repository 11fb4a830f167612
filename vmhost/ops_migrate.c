/* The steps of a live migration (sandbox_migrate.h) as node operations. */
#include <stdio.h>
#include <string.h>

#include "ops.h"
#include "sandbox_migrate.h"

static int required(const char *what, const char *value, struct airlock_error *e)
{
    if (value && *value)
        return 0;
    return airlock_error_set(e, AIRLOCK_ERR_INVALID, "%s: required", what);
}

int op_migrate_begin(struct vmhost *vh, const ProtobufCMessage *msg, struct op_answer *out,
                     struct airlock_error *e)
{
    const Airlock__Vmhost__V1__SandboxRef *req = (const void *)msg;
    struct sandbox *sb;
    if (op_lookup(vh, req->id, &sb, e) < 0)
        return -1;
    int rc = sandbox_migrate_begin(sb, out->migration.store_object,
                                   sizeof(out->migration.store_object), e);
    sandbox_put(sb);
    snprintf(out->sandbox_id, sizeof(out->sandbox_id), "%s", req->id);
    return rc;
}

int op_migrate_prepare(struct vmhost *vh, const ProtobufCMessage *msg, struct op_answer *out,
                       struct airlock_error *e)
{
    const Airlock__Vmhost__V1__Migration *req = (const void *)msg;
    struct sandbox *sb;
    if (required("id", req->id, e) < 0 || required("store_object", req->store_object, e) < 0 ||
        required("peer_node", req->peer_node, e) < 0 ||
        sandbox_migrate_prepare(vh, req->id, req->store_object, req->peer_node, &sb,
                                out->migration.address, out->migration.token, e) < 0)
        return -1;
    sandbox_put(sb);
    snprintf(out->sandbox_id, sizeof(out->sandbox_id), "%s", req->id);
    return 0;
}

int op_migrate_send(struct vmhost *vh, const ProtobufCMessage *msg, struct op_answer *out,
                    struct airlock_error *e)
{
    const Airlock__Vmhost__V1__Migration *req = (const void *)msg;
    struct sandbox *sb;
    if (required("address", req->address, e) < 0 || required("token", req->token, e) < 0 ||
        required("peer_node", req->peer_node, e) < 0 || op_lookup(vh, req->id, &sb, e) < 0)
        return -1;
    int rc = sandbox_migrate_send(sb, req->address, req->token, req->peer_node,
                                  &out->migration.stopped_ms, e);
    sandbox_put(sb);
    snprintf(out->sandbox_id, sizeof(out->sandbox_id), "%s", req->id);
    return rc;
}

int op_migrate_finish(struct vmhost *vh, const ProtobufCMessage *msg, struct op_answer *out,
                      struct airlock_error *e)
{
    const Airlock__Vmhost__V1__SandboxRef *req = (const void *)msg;
    struct sandbox *sb;
    if (op_lookup(vh, req->id, &sb, e) < 0)
        return -1;
    if (sandbox_migrate_finish(sb, e) < 0) {
        sandbox_put(sb);
        return -1;
    }
    return op_answer_sandbox(out, sb, e);
}

int op_migrate_abort(struct vmhost *vh, const ProtobufCMessage *msg, struct op_answer *out,
                     struct airlock_error *e)
{
    (void)out;
    const Airlock__Vmhost__V1__SandboxRef *req = (const void *)msg;
    struct sandbox *sb;
    if (op_lookup(vh, req->id, &sb, e) < 0)
        return e->class == AIRLOCK_ERR_NOT_FOUND ? 0 : -1; /* nothing left to give up */
    int rc = sandbox_migrate_abort(sb, e);
    sandbox_put(sb);
    return rc;
}
