/* A sandbox's network: a named namespace airlock-<id> (the prefix is
 * vmhost's --netns-prefix) holding loopback and
 * a persistent TAP device (tap0, gateway address and MAC from
 * sandbox_netdefs.h) for the VM's virtio-net NIC, and nftables rules that
 * send all guest TCP to egress's transparent listener, UDP/53 to its DNS
 * listener, and drop and count everything else.
 *
 * Keyed by sandbox id and stateless here: everything is found again by
 * name, so a restarted vmhost can delete what an earlier one created. */
#ifndef AIRLOCK_SANDBOX_NET_H
#define AIRLOCK_SANDBOX_NET_H

#include <stddef.h>
#include <stdint.h>

/* Packets the namespace dropped, by kind. */
struct sandbox_net_counters {
    uint64_t dropped_udp;   /* UDP other than port 53 */
    uint64_t dropped_icmp;
    uint64_t dropped_ipv6;
    uint64_t dropped_other; /* other protocols, unredirected packets, forwarding */
    uint64_t dropped_spoofed; /* from the TAP with a source other than the guest's */
};

/* Namespaces are named prefix + sandbox id from here on (default
 * SANDBOX_NET_NS_PREFIX). Nodes sharing a machine need prefixes of their
 * own: a sandbox moving between them exists on both for a while. Called
 * once, at start, before any other sandbox_net call. */
#define SANDBOX_NET_PREFIX_MAX 40
int sandbox_net_set_prefix(const char *prefix, char *err, size_t errlen);

/* Builds the namespace, the TAP and the rules. On failure nothing is left. */
int sandbox_net_create(const char *sandbox_id, char *err, size_t errlen);

/* The namespace of sandbox old_id becomes that of new_id, with its TAP and
 * rules (a pooled VM handed out under the id a create asked for). Fails
 * when new_id has one; on failure old_id keeps its own. */
int sandbox_net_rename(const char *old_id, const char *new_id, char *err, size_t errlen);

/* /run/netns/airlock-<id>: what egress's AttachSandbox takes. */
int sandbox_net_netns_path(const char *sandbox_id, char *buf, size_t buflen);

/* A new fd on the sandbox's TAP (IFF_VNET_HDR) for QEMU's
 * -netdev tap,fd=N. One per QEMU process: the caller passes it to the
 * child and closes its own copy after the spawn. Works again for a restore
 * of the same sandbox. */
int sandbox_net_open_tap(const char *sandbox_id, int *fd, char *err, size_t errlen);

/* Reads the drop counters of the sandbox's rules. */
int sandbox_net_counters(const char *sandbox_id, struct sandbox_net_counters *out, char *err,
                         size_t errlen);

/* Removes the TAP and the namespace. QEMU should be gone and egress
 * detached: an open TAP fd or an egress socket keeps the (then nameless)
 * namespace alive. A sandbox without a network is not an error. */
int sandbox_net_delete(const char *sandbox_id, char *err, size_t errlen);

#endif
