/* The request loop of an intercepted connection (a host with a credential
 * binding), once TLS, if any, is terminated: every HTTP/1.x request the
 * guest sends on the connection — not only the first — must name the
 * connection's host; vault is asked for the injection; the bound header is
 * added (replacing any the guest sent), or, where the guest's bound header
 * holds the placeholder the agent was given, the placeholder in it is
 * replaced by the secret (in no other header: upstreams echo and log
 * those);
 * then the request goes upstream and the response comes back. A request
 * over the secret's rate limit is answered 429 by egress and not
 * forwarded. The secret goes only upstream: never to the guest, never to a
 * log. */
#ifndef AIRLOCK_EGRESS_HTTP_INJECT_H
#define AIRLOCK_EGRESS_HTTP_INJECT_H

#include <grpc/status.h>
#include <stddef.h>
#include <stdint.h>

#include "conn_stream.h"
#include "vault.pb-c.h"

/* What the loop needs from the connection around it. */
struct http_inject_env {
    const char *sandbox_id;  /* for logs */
    const char *name;        /* the connection's host: SNI, or the first Host */
    void *ctx;
    /* A fresh upstream stream (any earlier one was disconnected); -1 with
     * err saying why. */
    int (*connect)(void *ctx, struct conn_stream *up, char *err, size_t errlen);
    void (*disconnect)(void *ctx, struct conn_stream *up);
    /* vault's ResolveInjection for one request (vault_client_resolve).
     * NULL: inspection only (a policy's inspect_tls, no binding): every
     * request is checked and forwarded as it is. */
    grpc_status_code (*resolve)(void *ctx, const char *method, const char *path,
                                Airlock__Vault__V1__Injection **out, char *err, size_t errlen);
};

struct http_inject_stats {
    uint64_t sent;           /* bytes to the upstream */
    uint64_t received;       /* bytes to the guest */
    unsigned requests;
    unsigned injected;
    unsigned redacted;       /* echoes of the secret masked in responses */
    const char *failure;     /* why it ended early (static), or NULL */
};

/* Serves requests until the guest or the upstream ends the connection or
 * one of them breaks the protocol. prefix: bytes read from the guest
 * already (plain HTTP). The guest stream stays open. */
void http_inject_serve(const struct http_inject_env *env, struct conn_stream *guest,
                       const uint8_t *prefix, size_t prefix_len, struct http_inject_stats *st);

#endif
