#include "port_target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sandbox_id.h"

static enum port_target_kind port_number(const char *s, unsigned *port, char *why, size_t whylen)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (!*s || *end || s[0] == '0' || v < 1 || v > 65535) {
        snprintf(why, whylen, "port \"%.20s\" is not a TCP port (1-65535)", s);
        return PORT_TARGET_INVALID;
    }
    *port = (unsigned)v;
    return PORT_TARGET_FOUND;
}

static enum port_target_kind id_and_port(const char *id, const char *port, struct port_target *t,
                                         char *why, size_t whylen)
{
    if (!sandbox_id_valid(id)) {
        snprintf(why, whylen, "\"%.70s\" is not a sandbox id", id);
        return PORT_TARGET_INVALID;
    }
    snprintf(t->sandbox_id, sizeof(t->sandbox_id), "%s", id);
    return port_number(port, &t->port, why, whylen);
}

/* The headers' form: both headers of one pair, or neither. */
static enum port_target_kind from_headers(const struct http_head *h, const char *id_header,
                                          const char *port_header, struct port_target *t,
                                          char *why, size_t whylen)
{
    char id[128], port[32];
    bool has_id = http_head_get(h, id_header, id, sizeof(id));
    bool has_port = http_head_get(h, port_header, port, sizeof(port));
    if (!has_id && !has_port)
        return PORT_TARGET_NONE;
    if (!has_id || !has_port) {
        snprintf(why, whylen, "%s needs %s beside it", has_id ? id_header : port_header,
                 has_id ? port_header : id_header);
        return PORT_TARGET_INVALID;
    }
    return id_and_port(id, port, t, why, whylen);
}

static enum port_target_kind from_host(const struct http_head *h, const char *domain,
                                       struct port_target *t, char *why, size_t whylen)
{
    char host[320];
    if (!http_head_get(h, "Host", host, sizeof(host)) || host[0] == '[')
        return PORT_TARGET_NONE; /* absent, too long for a port's name, or an IPv6 literal */
    char *colon = strchr(host, ':');
    if (colon)
        *colon = 0; /* the listener's port, not the sandbox's */
    size_t n = strlen(host), d = strlen(domain);
    if (n < d + 2 || host[n - d - 1] != '.' || strcasecmp(host + n - d, domain) != 0)
        return PORT_TARGET_NONE;
    host[n - d - 1] = 0;
    if (strchr(host, '.'))
        return PORT_TARGET_NONE; /* a deeper name: not one of ours */
    char *dash = strchr(host, '-');
    if (!dash || dash == host || strspn(host, "0123456789") != (size_t)(dash - host))
        return PORT_TARGET_NONE; /* e.g. api.<domain>: the API itself */
    *dash = 0;
    for (char *p = dash + 1; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a'); /* host names are case-blind; ids lowercase */
    return id_and_port(dash + 1, host, t, why, whylen);
}

enum port_target_kind port_target_find(const struct http_head *h, const char *public_domain,
                                       struct port_target *t, char *why, size_t whylen)
{
    memset(t, 0, sizeof(*t));
    enum port_target_kind k =
        from_headers(h, "Airlock-Sandbox-Id", "Airlock-Sandbox-Port", t, why, whylen);
    if (k == PORT_TARGET_NONE)
        k = from_headers(h, "E2b-Sandbox-Id", "E2b-Sandbox-Port", t, why, whylen);
    if (k == PORT_TARGET_NONE)
        k = from_host(h, public_domain, t, why, whylen);
    return k;
}

int port_target_host(const char *public_domain, const char *sandbox_id, unsigned port, char *out,
                     size_t outlen)
{
    int n = snprintf(out, outlen, "%u-%s.%s", port, sandbox_id, public_domain);
    return n < 0 || (size_t)n >= outlen ? -1 : 0;
}
