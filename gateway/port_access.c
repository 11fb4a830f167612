#include "port_access.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "port_target.h"

void port_access_sign(const struct port_grant *g, int64_t expires,
                      char out[PORT_ACCESS_SIGNATURE_HEX + 1])
{
    char msg[128];
    int n = snprintf(msg, sizeof(msg), "%s:%u:%lld", g->sandbox_id, g->port, (long long)expires);
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    HMAC(EVP_sha256(), g->traffic_token, (int)strlen(g->traffic_token), (unsigned char *)msg,
         (size_t)n, mac, &len);
    for (unsigned i = 0; i < len && i < PORT_ACCESS_SIGNATURE_HEX / 2; i++)
        snprintf(out + 2 * i, 3, "%02x", mac[i]);
    out[PORT_ACCESS_SIGNATURE_HEX] = 0;
}

static bool same_secret(const char *a, const char *b)
{
    size_t n = strlen(a);
    return n == strlen(b) && CRYPTO_memcmp(a, b, n) == 0;
}

/* "<expires>" and its signature: valid for g now, or why not. */
static enum port_access_verdict signed_until(const struct port_grant *g, const char *expires,
                                             const char *signature, int64_t now, char *why,
                                             size_t whylen)
{
    char *end;
    long long exp = strtoll(expires, &end, 10);
    char want[PORT_ACCESS_SIGNATURE_HEX + 1];
    if (*expires && !*end && exp > 0) {
        port_access_sign(g, exp, want);
        if (same_secret(signature, want)) {
            if (exp >= now)
                return PORT_ACCESS_OPEN;
            snprintf(why, whylen, "the signed URL of port %u of sandbox %s expired %lld s ago",
                     g->port, g->sandbox_id, (long long)(now - exp));
            return PORT_ACCESS_DENIED;
        }
    }
    snprintf(why, whylen, "the signature is not valid for port %u of sandbox %s", g->port,
             g->sandbox_id);
    return PORT_ACCESS_DENIED;
}

/* The target without the signature's parameters (what the redirect
 * after a signed URL asks for). */
static void target_unsigned(const struct http_head *h, char *out, size_t outlen)
{
    size_t o = 0;
    const char *t = h->target, *end = h->target + h->target_len;
    const char *q = memchr(t, '?', h->target_len);
    const char *path_end = q ? q : end;
    o = (size_t)snprintf(out, outlen, "%.*s", (int)(path_end - t), t);
    char sep = '?';
    for (const char *p = q ? q + 1 : end; p < end && o < outlen;) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        const char *stop = amp ? amp : end;
        if (strncmp(p, "airlock_expires=", 16) != 0 && strncmp(p, "airlock_signature=", 18) != 0 &&
            stop > p) {
            o += (size_t)snprintf(out + o, outlen - o, "%c%.*s", sep, (int)(stop - p), p);
            sep = '&';
        }
        p = amp ? amp + 1 : end;
    }
    if (o >= outlen)
        snprintf(out, outlen, "/");
}

enum port_access_verdict port_access_check(const struct port_grant *g, const struct http_head *h,
                                           int64_t now, char *why, size_t whylen, char *cookie,
                                           size_t cookielen, char *location, size_t locationlen)
{
    if (g->public_ports)
        return PORT_ACCESS_OPEN;
    char token[128], expires[32], signature[80], jar[128];
    if (http_head_get(h, "Airlock-Traffic-Token", token, sizeof(token)) ||
        http_head_get(h, "E2b-Traffic-Access-Token", token, sizeof(token))) {
        if (same_secret(token, g->traffic_token))
            return PORT_ACCESS_OPEN;
        snprintf(why, whylen, "wrong traffic token for sandbox %s", g->sandbox_id);
        return PORT_ACCESS_DENIED;
    }
    bool has_sig = http_head_query(h, "airlock_signature", signature, sizeof(signature));
    bool has_exp = http_head_query(h, "airlock_expires", expires, sizeof(expires));
    if (has_sig || has_exp) {
        enum port_access_verdict v =
            signed_until(g, has_exp ? expires : "", has_sig ? signature : "", now, why, whylen);
        if (v != PORT_ACCESS_OPEN)
            return v;
        /* Host-only (no Domain): it goes back to this one port's name. */
        snprintf(cookie, cookielen, PORT_ACCESS_COOKIE "=%s.%s; Path=/; Max-Age=%lld; HttpOnly; "
                 "SameSite=Lax", expires, signature, (long long)(strtoll(expires, NULL, 10) - now));
        target_unsigned(h, location, locationlen);
        return PORT_ACCESS_SIGNED_URL;
    }
    if (http_head_cookie(h, PORT_ACCESS_COOKIE, jar, sizeof(jar))) {
        char *dot = strchr(jar, '.');
        if (dot) {
            *dot = 0;
            return signed_until(g, jar, dot + 1, now, why, whylen);
        }
        snprintf(why, whylen, "the " PORT_ACCESS_COOKIE " cookie is malformed");
        return PORT_ACCESS_DENIED;
    }
    snprintf(why, whylen,
             "port %u of sandbox %s needs its traffic token (header Airlock-Traffic-Token) or "
             "a signed URL (POST /v1/sandboxes/%s/ports/%u/url)",
             g->port, g->sandbox_id, g->sandbox_id, g->port);
    return PORT_ACCESS_MISSING;
}

int port_access_url(const struct port_grant *g, const char *scheme, const char *domain,
                    const char *listen_port, int64_t expires, char *out, size_t outlen)
{
    char host[256];
    if (port_target_host(domain, g->sandbox_id, g->port, host, sizeof(host)) < 0)
        return -1;
    int n;
    if (expires > 0) {
        char sig[PORT_ACCESS_SIGNATURE_HEX + 1];
        port_access_sign(g, expires, sig);
        n = snprintf(out, outlen, "%s://%s%s/?airlock_expires=%lld&airlock_signature=%s", scheme,
                     host, listen_port, (long long)expires, sig);
    } else {
        n = snprintf(out, outlen, "%s://%s%s/", scheme, host, listen_port);
    }
    return n < 0 || (size_t)n >= outlen ? -1 : 0;
}
