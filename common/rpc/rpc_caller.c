/* Reads the client certificate gRPC kept in the call's auth context and
 * checks it against the CA and the method's callers. */
#include "rpc_caller.h"

#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "rpc_server.h"

/* The client's leaf certificate as PEM (malloc'd), or NULL. */
static char *call_peer_pem(grpc_call *call)
{
    grpc_auth_context *ac = grpc_call_auth_context(call);
    if (!ac)
        return NULL;
    grpc_auth_property_iterator it =
        grpc_auth_context_find_properties_by_name(ac, GRPC_X509_PEM_CERT_PROPERTY_NAME);
    const grpc_auth_property *p = grpc_auth_property_iterator_next(&it);
    char *pem = p && p->value_length > 0 ? strndup(p->value, p->value_length) : NULL;
    grpc_auth_context_release(ac);
    return pem;
}

static void refuse(grpc_call *call, const char *method, const char *identity, const char *why)
{
    char *peer = grpc_call_get_peer(call);
    log_warn("rpc call refused", "method=%s peer=%s identity=%s reason=\"%s\"", method,
             peer ? peer : "?", identity, why);
    gpr_free(peer);
}

static bool caller_allowed(const struct peer_identity *caller, unsigned callers,
                           const struct peer_identity *self)
{
    if (!(callers & caller->role))
        return false;
    /* Another node's vmhost or egress is only let in where the method
     * says so: a node's services speak to their own node. */
    if (peer_role_has_node(caller->role) && (callers & RPC_CALLER_SAME_NODE))
        return peer_role_has_node(self->role) && strcmp(caller->node, self->node) == 0;
    return true;
}

int rpc_caller_check(grpc_call *call, const char *method, unsigned callers,
                     struct tls_credentials *tls, struct peer_identity *caller,
                     grpc_status_code *code, char *msg, size_t msglen)
{
    char why[256], text[PEER_IDENTITY_TEXT_MAX];
    char *pem = call_peer_pem(call);
    int rc = tls_credentials_verify_peer(tls, pem, caller, why, sizeof(why));
    free(pem);
    if (rc < 0) {
        refuse(call, method, "unknown", why);
        *code = GRPC_STATUS_UNAUTHENTICATED;
        snprintf(msg, msglen, "client certificate refused: %s", why);
        return -1;
    }
    peer_identity_text(caller, text, sizeof(text));
    if (!caller_allowed(caller, callers, tls_credentials_identity(tls))) {
        refuse(call, method, text, "role not allowed for this method");
        *code = GRPC_STATUS_PERMISSION_DENIED;
        snprintf(msg, msglen, "%s may not call %s", text, method);
        return -1;
    }
    return 0;
}
