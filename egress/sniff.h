/* The name a TCP connection claims, from its first bytes: the SNI of a TLS
 * ClientHello or the Host of an HTTP/1.x request. Pure functions over a
 * buffer that grows as bytes arrive; they never read past len and never
 * allocate, so garbage from a guest can only make them say MALFORMED.
 * Fuzzed by tests/fuzz. */
#ifndef AIRLOCK_EGRESS_SNIFF_H
#define AIRLOCK_EGRESS_SNIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "names.h"

/* Largest first flight egress buffers before deciding: a ClientHello with
 * post-quantum key shares is ~1.8 KiB; 16 KiB is one full TLS record. */
#define SNIFF_MAX_BYTES (16 * 1024 + 5)

enum sniff_result {
    SNIFF_NEED_MORE, /* could still become a complete ClientHello/request */
    SNIFF_FOUND,     /* name holds the normalized name */
    SNIFF_NONE,      /* complete (or not TLS/HTTP at all) and names nothing */
    SNIFF_MALFORMED, /* TLS/HTTP that egress refuses: broken, ambiguous, CONNECT */
    /* A ClientHello with Encrypted Client Hello or ESNI: the name the
     * server sees may not be the one in name (the outer SNI, "" if none). */
    SNIFF_NAME_HIDDEN,
};

/* Dispatches on the first byte: 0x16 is a TLS handshake, anything else is
 * tried as HTTP. name must hold NAME_MAX_LEN + 1 bytes. */
enum sniff_result sniff_name(const uint8_t *buf, size_t len, char *name);

enum sniff_result sniff_tls_sni(const uint8_t *buf, size_t len, char *name);
enum sniff_result sniff_http_host(const uint8_t *buf, size_t len, char *name);

/* "host[:port]" (a Host value or an absolute URI's authority) → the
 * normalized host in name. -1 when not a host name (bracketed IPv6
 * literals are refused too). */
int sniff_authority_host(const char *s, size_t len, char *name);

/* A request target's form. Origin ("/x?y") and asterisk ("*") name no
 * host: 0. Absolute form with any scheme, any case ("http://h/",
 * "HTTPS://h:443/x", "ws://h"): 1, *auth and *alen its authority (up to the
 * first '/', '?' or '#'). Anything else -- authority form, "http:h",
 * an empty authority -- is a target a server might read as a host egress
 * did not see: -1. */
int sniff_target_authority(const char *t, size_t len, const char **auth, size_t *alen);

/* True when buf starts with a complete HTTP/1.x request line
 * ("METHOD target HTTP/1.x" CRLF): plaintext HTTP, which egress follows
 * request by request (http_follow.h). */
bool sniff_http_is_request(const uint8_t *buf, size_t len);

#endif
