#include "cidr.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cidr_parse(const char *s, struct cidr *out)
{
    char addr[16];
    const char *slash = strchr(s, '/');
    size_t alen = slash ? (size_t)(slash - s) : strlen(s);
    if (alen == 0 || alen >= sizeof(addr))
        return -1;
    memcpy(addr, s, alen);
    addr[alen] = '\0';
    struct in_addr in;
    /* inet_pton accepts exactly four decimal parts, unlike inet_aton. */
    if (inet_pton(AF_INET, addr, &in) != 1)
        return -1;
    unsigned long bits = 32;
    if (slash) {
        char *end;
        if (slash[1] < '0' || slash[1] > '9')
            return -1;
        bits = strtoul(slash + 1, &end, 10);
        if (*end != '\0' || bits > 32)
            return -1;
    }
    out->mask = bits == 0 ? 0 : 0xffffffffu << (32 - bits);
    out->addr = ntohl(in.s_addr);
    return (out->addr & ~out->mask) ? -1 : 0;
}

bool cidr_contains(const struct cidr *c, uint32_t addr)
{
    return (addr & c->mask) == c->addr;
}

#define CIDR(a, b, c, d, bits) { ((uint32_t)(a) << 24) | ((b) << 16) | ((c) << 8) | (d), \
                                 (bits) == 0 ? 0 : 0xffffffffu << (32 - (bits)) }

static const struct cidr reserved_ranges[] = {
    CIDR(0, 0, 0, 0, 8),        /* "this network" */
    CIDR(10, 0, 0, 0, 8),       /* private */
    CIDR(100, 64, 0, 0, 10),    /* shared address space, the sandbox's own /30 */
    CIDR(127, 0, 0, 0, 8),      /* loopback */
    CIDR(169, 254, 0, 0, 16),   /* link-local, cloud metadata */
    CIDR(172, 16, 0, 0, 12),    /* private */
    CIDR(192, 0, 0, 0, 24),     /* IETF protocol assignments */
    CIDR(192, 168, 0, 0, 16),   /* private */
    CIDR(198, 18, 0, 0, 15),    /* benchmarking */
    CIDR(224, 0, 0, 0, 4),      /* multicast */
    CIDR(240, 0, 0, 0, 4),      /* reserved, broadcast */
};

bool addr_is_reserved(uint32_t addr)
{
    for (size_t i = 0; i < sizeof(reserved_ranges) / sizeof(*reserved_ranges); i++)
        if (cidr_contains(&reserved_ranges[i], addr))
            return true;
    return false;
}

static const struct cidr never_ranges[] = {
    CIDR(0, 0, 0, 0, 8),
    CIDR(127, 0, 0, 0, 8),
    CIDR(169, 254, 0, 0, 16),
};

bool addr_is_never_reachable(uint32_t addr)
{
    for (size_t i = 0; i < sizeof(never_ranges) / sizeof(*never_ranges); i++)
        if (cidr_contains(&never_ranges[i], addr))
            return true;
    return false;
}

const char *addr_format(uint32_t addr, char buf[16])
{
    snprintf(buf, 16, "%u.%u.%u.%u", addr >> 24, (addr >> 16) & 0xff, (addr >> 8) & 0xff,
             addr & 0xff);
    return buf;
}
