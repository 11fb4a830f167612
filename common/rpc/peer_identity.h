/* Who a service is on the internal network: a role, and for the services
 * that run on every node (vmhost, egress) the node. Its certificate from
 * the internal CA (scripts/internal-pki.sh) carries it as one DNS subject
 * alternative name, so gRPC's own host name check verifies a server's:
 *
 *   "gateway"        gateway.airlock.internal
 *   "vmhost:node-a"  node-a.vmhost.airlock.internal
 *
 * Servers check a caller's role per method (rpc_server.h). */
#ifndef AIRLOCK_PEER_IDENTITY_H
#define AIRLOCK_PEER_IDENTITY_H

#include <stdbool.h>
#include <stddef.h>

#define PEER_IDENTITY_DOMAIN "airlock.internal"
#define PEER_NODE_MAX 64

/* Bits, so a method lists the roles that may call it. */
enum peer_role {
    PEER_GATEWAY = 1u << 0,
    PEER_SCHEDULER = 1u << 1,
    PEER_VAULT = 1u << 2,
    PEER_VMHOST = 1u << 3, /* per node */
    PEER_EGRESS = 1u << 4, /* per node */
};

struct peer_identity {
    enum peer_role role;
    char node[PEER_NODE_MAX]; /* "" for the roles without one */
};

/* "vmhost:node-a" (as the PKI script and the docs write identities). 0, or
 * -1 when it is not one. */
int peer_identity_parse(const char *text, struct peer_identity *id);
/* From a certificate's DNS name "node-a.vmhost.airlock.internal". */
int peer_identity_from_dns(const char *dns, struct peer_identity *id);

/* "vmhost:node-a" into buf (at least PEER_IDENTITY_TEXT_MAX). */
#define PEER_IDENTITY_TEXT_MAX (PEER_NODE_MAX + 16)
const char *peer_identity_text(const struct peer_identity *id, char *buf, size_t len);
/* "node-a.vmhost.airlock.internal" into buf (PEER_IDENTITY_DNS_MAX). */
#define PEER_IDENTITY_DNS_MAX (PEER_NODE_MAX + 40)
const char *peer_identity_dns(const struct peer_identity *id, char *buf, size_t len);

const char *peer_role_name(enum peer_role role);
/* The roles that carry a node. */
bool peer_role_has_node(enum peer_role role);

#endif
