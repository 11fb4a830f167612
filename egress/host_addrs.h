/* The node's own IPv4 addresses (those of egress's uplink namespace),
 * which no sandbox may reach whatever its policy says ("host_address").
 * Scanned at start and followed live over rtnetlink: an address the node
 * gains later (DHCP, a new interface, a floating IP) is protected within
 * milliseconds of the kernel announcing it. Addresses are never dropped
 * again — one the node lost may come back, and protecting a stale one
 * costs nothing. Thread-safe. */
#ifndef AIRLOCK_EGRESS_HOST_ADDRS_H
#define AIRLOCK_EGRESS_HOST_ADDRS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HOST_ADDRS_MAX 1024

struct host_addrs;

/* netns_path NULL: the namespace egress runs in. NULL with err set. */
struct host_addrs *host_addrs_start(const char *netns_path, char *err, size_t errlen);
void host_addrs_stop(struct host_addrs *h);

/* addr in host byte order. */
bool host_addrs_contains(struct host_addrs *h, uint32_t addr);

#endif
