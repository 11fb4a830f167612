/* The gRPC handlers: unpack, call the part of vault that does the work,
 * answer. Requests carrying secret bytes are zeroed by those parts. */
#include "vault_service.h"

#include "placement.h"

#include <openssl/crypto.h>

#include "audit.h"
#include "inject.h"
#include "log.h"
#include "orgs.h"
#include "project_keys.h"
#include "rpc_err.h"
#include "secrets.h"
#include "vault.pb-c.h"

#define VAULT_METHOD(name) "/airlock.vault.v1.Vault/" name

/* Sends msg when rc is 0, then finishes: OK, or e's status and message. */
static void answer(struct rpc_call *call, int rc, const ProtobufCMessage *msg,
                   const struct airlock_error *e)
{
    if (rc == 0)
        rpc_call_send(call, msg);
    rpc_call_finish_result(call, rc, e);
}

static void handle_register_project(struct rpc_call *call, void *ctx)
{
    Airlock__Vault__V1__RegisterProjectRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__vault__v1__register_project_request__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    struct customer_key ck = { req->customer_key.data, req->customer_key.len };
    int rc = vault_check_id("project_id", req->project_id, true, &e);
    if (rc == 0)
        rc = project_register(ctx, req->project_id, ck, *req->actor ? req->actor : "unknown", &e);
    Airlock__Vault__V1__RegisterProjectResponse resp =
        AIRLOCK__VAULT__V1__REGISTER_PROJECT_RESPONSE__INIT;
    resp.customer_key = ck.len != 0;
    if (req->customer_key.data)
        OPENSSL_cleanse(req->customer_key.data, req->customer_key.len);
    answer(call, rc, &resp.base, &e);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

static void handle_create_secret(struct rpc_call *call, void *ctx)
{
    Airlock__Vault__V1__CreateSecretRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__vault__v1__create_secret_request__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    Airlock__Vault__V1__SecretMetadata resp = AIRLOCK__VAULT__V1__SECRET_METADATA__INIT;
    int rc = secret_create(ctx, req, &resp, &e);
    answer(call, rc, &resp.base, &e);
    secret_metadata_clear(&resp);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

static void handle_list_secrets(struct rpc_call *call, void *ctx)
{
    Airlock__Vault__V1__ListSecretsRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__vault__v1__list_secrets_request__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    Airlock__Vault__V1__ListSecretsResponse resp = AIRLOCK__VAULT__V1__LIST_SECRETS_RESPONSE__INIT;
    /* egress asks which hosts are bound for a sandbox of its node (the
     * names and hosts, never a value): that sandbox's only. */
    const struct peer_identity *caller = rpc_call_peer(call);
    int rc = caller && caller->role == PEER_EGRESS
                 ? placement_check(ctx, caller->node, req->project_id, req->for_sandbox_id, &e)
                 : 0;
    if (rc == 0)
        rc = secret_list(ctx, req, &resp, &e);
    answer(call, rc, &resp.base, &e);
    secret_list_clear(&resp);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

static void handle_delete_secret(struct rpc_call *call, void *ctx)
{
    Airlock__Vault__V1__DeleteSecretRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__vault__v1__delete_secret_request__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    Airlock__Vault__V1__DeleteSecretResponse resp = AIRLOCK__VAULT__V1__DELETE_SECRET_RESPONSE__INIT;
    int rc = secret_delete(ctx, req, &e);
    answer(call, rc, &resp.base, &e);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

static void handle_resolve_injection(struct rpc_call *call, void *ctx)
{
    Airlock__Vault__V1__ResolveInjectionRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__vault__v1__resolve_injection_request__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    Airlock__Vault__V1__Injection resp = AIRLOCK__VAULT__V1__INJECTION__INIT;
    const struct peer_identity *caller = rpc_call_peer(call);
    int rc = inject_resolve(ctx, req, caller ? caller->node : NULL, &resp, &e);
    vault_metrics_injection(&((struct vault *)ctx)->metrics, rc, &e);
    answer(call, rc, &resp.base, &e);
    injection_clear(&resp);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

static void handle_list_audit(struct rpc_call *call, void *ctx)
{
    Airlock__Vault__V1__ListAuditRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__vault__v1__list_audit_request__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    PGresult *rows = NULL;
    Airlock__Vault__V1__ListAuditResponse resp = AIRLOCK__VAULT__V1__LIST_AUDIT_RESPONSE__INIT;
    int rc = audit_list(ctx, req, &resp, &rows, &e);
    answer(call, rc, &resp.base, &e);
    audit_list_clear(&resp, rows);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

static void handle_unlock_project(struct rpc_call *call, void *ctx)
{
    Airlock__Vault__V1__UnlockProjectRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__vault__v1__unlock_project_request__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    Airlock__Vault__V1__UnlockProjectResponse resp =
        AIRLOCK__VAULT__V1__UNLOCK_PROJECT_RESPONSE__INIT;
    struct customer_key ck = { req->customer_key.data, req->customer_key.len };
    int rc = project_unlock(ctx, req->project_id, ck, req->ttl_s,
                            *req->actor ? req->actor : "unknown", &resp.expires_unix_ms, &e);
    if (req->customer_key.data)
        OPENSSL_cleanse(req->customer_key.data, req->customer_key.len);
    answer(call, rc, &resp.base, &e);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

static void handle_lock_project(struct rpc_call *call, void *ctx)
{
    Airlock__Vault__V1__LockProjectRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__vault__v1__lock_project_request__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    Airlock__Vault__V1__LockProjectResponse resp = AIRLOCK__VAULT__V1__LOCK_PROJECT_RESPONSE__INIT;
    bool was_unlocked = false;
    int rc = project_lock(ctx, req->project_id, *req->actor ? req->actor : "unknown",
                          &was_unlocked, &e);
    resp.was_unlocked = was_unlocked;
    answer(call, rc, &resp.base, &e);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

/* CreateOrg and GetOrg: the same request, one answer. */
static void handle_org(struct rpc_call *call, void *ctx,
                       int (*op)(struct vault *, const Airlock__Vault__V1__OrgRequest *,
                                 Airlock__Vault__V1__Org *, struct airlock_error *))
{
    Airlock__Vault__V1__OrgRequest *req =
        (void *)rpc_call_recv_request(call, &airlock__vault__v1__org_request__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    Airlock__Vault__V1__Org resp = AIRLOCK__VAULT__V1__ORG__INIT;
    int rc = op(ctx, req, &resp, &e);
    answer(call, rc, &resp.base, &e);
    org_clear(&resp);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

static void handle_create_org(struct rpc_call *call, void *ctx)
{
    handle_org(call, ctx, org_create);
}

static void handle_get_org(struct rpc_call *call, void *ctx)
{
    handle_org(call, ctx, org_get);
}

static void handle_set_project_org(struct rpc_call *call, void *ctx)
{
    Airlock__Vault__V1__SetProjectOrgRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__vault__v1__set_project_org_request__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    Airlock__Vault__V1__Org resp = AIRLOCK__VAULT__V1__ORG__INIT;
    int rc = org_set_project(ctx, req, &resp, &e);
    answer(call, rc, &resp.base, &e);
    org_clear(&resp);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

/* With mutual TLS: secrets are administered by the gateway alone; egress
 * resolves injections and lists what is bound, for the sandboxes of its
 * node only. */
static const struct rpc_method vault_methods[] = {
    { VAULT_METHOD("RegisterProject"), handle_register_project, PEER_GATEWAY },
    { VAULT_METHOD("CreateSecret"), handle_create_secret, PEER_GATEWAY },
    { VAULT_METHOD("ListSecrets"), handle_list_secrets, PEER_GATEWAY | PEER_EGRESS },
    { VAULT_METHOD("DeleteSecret"), handle_delete_secret, PEER_GATEWAY },
    { VAULT_METHOD("ResolveInjection"), handle_resolve_injection, PEER_EGRESS },
    { VAULT_METHOD("ListAudit"), handle_list_audit, PEER_GATEWAY },
    { VAULT_METHOD("UnlockProject"), handle_unlock_project, PEER_GATEWAY },
    { VAULT_METHOD("LockProject"), handle_lock_project, PEER_GATEWAY },
    { VAULT_METHOD("CreateOrg"), handle_create_org, PEER_GATEWAY },
    { VAULT_METHOD("GetOrg"), handle_get_org, PEER_GATEWAY },
    { VAULT_METHOD("SetProjectOrg"), handle_set_project_org, PEER_GATEWAY },
};

struct rpc_server *vault_service_start(struct vault *v, const char *listen,
                                       const struct rpc_security *sec, char *err, size_t errlen)
{
    return rpc_server_start(listen, vault_methods, sizeof(vault_methods) / sizeof(*vault_methods),
                            v, sec, err, errlen);
}
