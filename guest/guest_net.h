/* The guest's side of the sandbox network (common/sandbox_netdefs.h):
 * loopback up, eth0 up with SANDBOX_NET_GUEST_ADDR/30, a default route via
 * the gateway, and /etc/resolv.conf naming the gateway (egress's DNS).
 * Over rtnetlink directly: the guest rootfs has no libnl. */
#ifndef GUESTD_GUEST_NET_H
#define GUESTD_GUEST_NET_H

/* Idempotent (a few netlink messages; resolv.conf is rewritten only when
 * it differs). Runs at boot, and at a new host session only when the boot's
 * attempt failed: a restored or forked guest keeps its configuration in
 * memory. Returns 0, or -1 after logging what failed (a VM without a NIC is
 * such a case). */
int guest_net_configure(void);

#endif
