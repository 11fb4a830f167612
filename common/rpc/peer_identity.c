/* Identities of the internal PKI: text form and certificate DNS form. */
#include "peer_identity.h"

#include <stdio.h>
#include <string.h>

static const struct {
    enum peer_role role;
    const char *name;
} roles[] = {
    { PEER_GATEWAY, "gateway" }, { PEER_SCHEDULER, "scheduler" }, { PEER_VAULT, "vault" },
    { PEER_VMHOST, "vmhost" },   { PEER_EGRESS, "egress" },
};

const char *peer_role_name(enum peer_role role)
{
    for (size_t i = 0; i < sizeof(roles) / sizeof(*roles); i++)
        if (roles[i].role == role)
            return roles[i].name;
    return "?";
}

bool peer_role_has_node(enum peer_role role)
{
    return role == PEER_VMHOST || role == PEER_EGRESS;
}

static int role_from(const char *name, size_t len, enum peer_role *role)
{
    for (size_t i = 0; i < sizeof(roles) / sizeof(*roles); i++) {
        if (strlen(roles[i].name) == len && memcmp(roles[i].name, name, len) == 0) {
            *role = roles[i].role;
            return 0;
        }
    }
    return -1;
}

/* Node ids are NATS subject tokens and host name labels alike. */
static int node_from(const char *node, size_t len, struct peer_identity *id)
{
    if (len == 0 || len >= sizeof(id->node))
        return -1;
    for (size_t i = 0; i < len; i++) {
        char c = node[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-'))
            return -1;
    }
    memcpy(id->node, node, len);
    id->node[len] = '\0';
    return 0;
}

static int identity_from(const char *role, size_t role_len, const char *node, size_t node_len,
                         bool has_node, struct peer_identity *id)
{
    memset(id, 0, sizeof(*id));
    if (role_from(role, role_len, &id->role) < 0 || peer_role_has_node(id->role) != has_node)
        return -1;
    return has_node ? node_from(node, node_len, id) : 0;
}

int peer_identity_parse(const char *text, struct peer_identity *id)
{
    const char *colon = strchr(text, ':');
    if (!colon)
        return identity_from(text, strlen(text), NULL, 0, false, id);
    return identity_from(text, (size_t)(colon - text), colon + 1, strlen(colon + 1), true, id);
}

int peer_identity_from_dns(const char *dns, struct peer_identity *id)
{
    static const char suffix[] = "." PEER_IDENTITY_DOMAIN;
    size_t len = strlen(dns), slen = sizeof(suffix) - 1;
    if (len <= slen || strcmp(dns + len - slen, suffix) != 0)
        return -1;
    len -= slen; /* "node-a.vmhost" or "gateway" */
    const char *dot = memchr(dns, '.', len);
    if (!dot)
        return identity_from(dns, len, NULL, 0, false, id);
    return identity_from(dot + 1, len - (size_t)(dot + 1 - dns), dns, (size_t)(dot - dns), true,
                         id);
}

const char *peer_identity_text(const struct peer_identity *id, char *buf, size_t len)
{
    if (peer_role_has_node(id->role))
        snprintf(buf, len, "%s:%s", peer_role_name(id->role), id->node);
    else
        snprintf(buf, len, "%s", peer_role_name(id->role));
    return buf;
}

const char *peer_identity_dns(const struct peer_identity *id, char *buf, size_t len)
{
    if (peer_role_has_node(id->role))
        snprintf(buf, len, "%s.%s." PEER_IDENTITY_DOMAIN, id->node, peer_role_name(id->role));
    else
        snprintf(buf, len, "%s." PEER_IDENTITY_DOMAIN, peer_role_name(id->role));
    return buf;
}
