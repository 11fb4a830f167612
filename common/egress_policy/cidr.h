/* IPv4 prefixes and the address ranges no sandbox reaches unless a policy
 * names them. Addresses are in host byte order. */
#ifndef AIRLOCK_EGRESS_CIDR_H
#define AIRLOCK_EGRESS_CIDR_H

#include <stdbool.h>
#include <stdint.h>

struct cidr {
    uint32_t addr;
    uint32_t mask;
};

/* "198.51.100.0/24" or a bare address (/32). Dotted quad only: the guest
 * cannot smuggle "0x7f.1" or "2130706433" past a rule, because rules and
 * destinations are both numbers by the time they are compared. -1 when
 * invalid or when host bits are set. */
int cidr_parse(const char *s, struct cidr *out);

bool cidr_contains(const struct cidr *c, uint32_t addr);

/* Loopback, link-local (incl. 169.254.169.254 metadata), RFC 1918,
 * shared/CGNAT (incl. the sandbox's own 100.96.0.0/30), "this network",
 * IETF protocol assignments, benchmarking, multicast, reserved and
 * broadcast. */
bool addr_is_reserved(uint32_t addr);

/* "This network" (0/8: 0.0.0.0 reaches the local host), loopback and
 * link-local (cloud metadata at 169.254.169.254): no policy opens these. */
bool addr_is_never_reachable(uint32_t addr);

/* "a.b.c.d" into buf (16 bytes). */
const char *addr_format(uint32_t addr, char buf[16]);

#endif
