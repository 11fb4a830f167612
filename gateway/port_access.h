/* Who may reach a sandbox's ports (docs/ports.md): anyone when its ports
 * are public; else a request carrying its traffic token (header
 * Airlock-Traffic-Token, or E2B's E2b-Traffic-Access-Token), a signed
 * URL, or the cookie a signed URL leaves. A signed URL is
 * ?airlock_expires=<unix s>&airlock_signature=<hex HMAC-SHA256 keyed by
 * the traffic token over "<sandbox id>:<port>:<expires>">: anyone holding
 * it gets in until it expires, for that one port, and nothing stored
 * needs revoking (a new token would void them all). */
#ifndef AIRLOCK_GATEWAY_PORT_ACCESS_H
#define AIRLOCK_GATEWAY_PORT_ACCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http_head.h"

#define PORT_ACCESS_COOKIE "airlock_port_access"
#define PORT_ACCESS_SIGNATURE_HEX 64
/* A signed URL's life: at least a minute, at most a week. */
#define PORT_ACCESS_EXPIRES_MIN_S 60
#define PORT_ACCESS_EXPIRES_MAX_S (7 * 24 * 3600)
#define PORT_ACCESS_EXPIRES_DEFAULT_S 3600

struct port_grant {
    const char *sandbox_id;
    unsigned port;
    bool public_ports;
    const char *traffic_token;
};

enum port_access_verdict {
    PORT_ACCESS_OPEN,       /* let it through */
    PORT_ACCESS_SIGNED_URL, /* a valid signed URL: answer with the cookie and a redirect */
    PORT_ACCESS_MISSING,    /* no credential at all: 401 */
    PORT_ACCESS_DENIED,     /* a wrong or expired one: 403 */
};

/* The verdict on request head h at unix time now; why says what was
 * wrong; for PORT_ACCESS_SIGNED_URL, cookie gets the Set-Cookie value and
 * location the target without the signature's parameters. */
enum port_access_verdict port_access_check(const struct port_grant *g, const struct http_head *h,
                                           int64_t now, char *why, size_t whylen, char *cookie,
                                           size_t cookielen, char *location, size_t locationlen);

/* The signature of g's port until expires (hex, NUL-terminated). */
void port_access_sign(const struct port_grant *g, int64_t expires,
                      char out[PORT_ACCESS_SIGNATURE_HEX + 1]);

/* The URL of g's port: scheme://<port>-<id>.<domain><listen_port>/, with
 * listen_port ":7070" or "" and, when expires > 0, signed until then. -1
 * when it does not fit. */
int port_access_url(const struct port_grant *g, const char *scheme, const char *domain,
                    const char *listen_port, int64_t expires, char *out, size_t outlen);

#endif
