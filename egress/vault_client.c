#include "vault_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "names.h"
#include "rpc_client.h"

#define VAULT_METHOD(name) "/airlock.vault.v1.Vault/" name
/* A local call with one indexed query; the bound keeps a wedged vault from
 * holding a guest's request for long. */
#define VAULT_TIMEOUT_MS 5000

struct vault_client {
    struct rpc_channel *ch;
    char *actor;
};

struct vault_client *vault_client_open(const char *addr, const struct rpc_channel_auth *auth,
                                       const char *actor)
{
    struct vault_client *vc = calloc(1, sizeof(*vc));
    if (!vc)
        return NULL;
    vc->ch = rpc_channel_open(addr, auth);
    vc->actor = strdup(actor);
    if (!vc->ch || !vc->actor) {
        vault_client_close(vc);
        return NULL;
    }
    return vc;
}

void vault_client_close(struct vault_client *vc)
{
    if (!vc)
        return;
    if (vc->ch)
        rpc_channel_close(vc->ch);
    free(vc->actor);
    free(vc);
}

static grpc_status_code call(struct vault_client *vc, const char *method,
                             const ProtobufCMessage *req, const ProtobufCMessageDescriptor *desc,
                             ProtobufCMessage **resp, char *err, size_t errlen)
{
    char *details = NULL;
    grpc_status_code st = rpc_unary(vc->ch, method, req, desc, resp, &details, VAULT_TIMEOUT_MS);
    if (st != GRPC_STATUS_OK)
        snprintf(err, errlen, "vault: %s: %s", rpc_status_name(st), details ? details : "");
    free(details);
    return st;
}

int vault_client_host_bound(struct vault_client *vc, const char *project_id,
                            const char *sandbox_id, const char *host, char *err, size_t errlen)
{
    Airlock__Vault__V1__ListSecretsRequest req = AIRLOCK__VAULT__V1__LIST_SECRETS_REQUEST__INIT;
    req.project_id = (char *)project_id;
    req.for_sandbox_id = (char *)sandbox_id;
    ProtobufCMessage *msg = NULL;
    if (call(vc, VAULT_METHOD("ListSecrets"), &req.base,
             &airlock__vault__v1__list_secrets_response__descriptor, &msg, err,
             errlen) != GRPC_STATUS_OK)
        return -1;
    Airlock__Vault__V1__ListSecretsResponse *resp = (void *)msg;
    int bound = 0;
    for (size_t i = 0; i < resp->n_secrets && !bound; i++) {
        const Airlock__Vault__V1__SecretMetadata *s = resp->secrets[i];
        /* Another sandbox's secrets are not this one's. */
        if (s->sandbox_id[0] && strcmp(s->sandbox_id, sandbox_id) != 0)
            continue;
        for (size_t k = 0; k < s->n_host_patterns && !bound; k++)
            bound = name_matches(s->host_patterns[k], host);
    }
    protobuf_c_message_free_unpacked(msg, NULL);
    return bound;
}

grpc_status_code vault_client_resolve(struct vault_client *vc, const char *project_id,
                                      const char *sandbox_id, const char *host,
                                      const char *method, const char *path, bool plaintext,
                                      Airlock__Vault__V1__Injection **out, char *err,
                                      size_t errlen)
{
    Airlock__Vault__V1__ResolveInjectionRequest req =
        AIRLOCK__VAULT__V1__RESOLVE_INJECTION_REQUEST__INIT;
    req.project_id = (char *)project_id;
    req.sandbox_id = (char *)sandbox_id;
    req.host = (char *)host;
    req.method = (char *)method;
    req.path = (char *)path;
    req.actor = vc->actor;
    req.plaintext = plaintext;
    *out = NULL;
    return call(vc, VAULT_METHOD("ResolveInjection"), &req.base,
                &airlock__vault__v1__injection__descriptor, (ProtobufCMessage **)out, err, errlen);
}

void vault_injection_free(Airlock__Vault__V1__Injection *inj)
{
    if (!inj)
        return;
    if (inj->header_value)
        OPENSSL_cleanse(inj->header_value, strlen(inj->header_value));
    if (inj->secret_value.data)
        OPENSSL_cleanse(inj->secret_value.data, inj->secret_value.len);
    protobuf_c_message_free_unpacked(&inj->base, NULL);
}
