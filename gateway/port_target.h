/* Which sandbox port a request is for (docs/ports.md): by its Host,
 * "<port>-<sandbox id>.<public domain>" (a wildcard DNS record), or for
 * local use by the headers Airlock-Sandbox-Id and Airlock-Sandbox-Port
 * (E2B's E2b-Sandbox-Id and E2b-Sandbox-Port too, which its SDK sends). */
#ifndef AIRLOCK_GATEWAY_PORT_TARGET_H
#define AIRLOCK_GATEWAY_PORT_TARGET_H

#include <stddef.h>

#include "http_head.h"

/* E2B's in-sandbox API port: the gateway serves it itself (docs/e2b.md),
 * it is never relayed to the guest. */
#define PORT_TARGET_ENVD 49983

struct port_target {
    char sandbox_id[65];
    unsigned port;
};

enum port_target_kind {
    PORT_TARGET_NONE,    /* an API request */
    PORT_TARGET_FOUND,
    PORT_TARGET_INVALID, /* names a port, badly: why says how */
};

enum port_target_kind port_target_find(const struct http_head *h, const char *public_domain,
                                       struct port_target *t, char *why, size_t whylen);

/* "<port>-<sandbox id>.<public domain>" into out; -1 when it does not fit. */
int port_target_host(const char *public_domain, const char *sandbox_id, unsigned port, char *out,
                     size_t outlen);

#endif
