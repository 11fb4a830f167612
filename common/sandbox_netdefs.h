/* The fixed shape of every sandbox's network namespace, shared by vmhost
 * (which builds it) and egress (which listens inside it). Every sandbox
 * uses the same addresses and MACs: they never leave the namespace, and a
 * snapshot restored or forked anywhere finds its network unchanged. */
#ifndef AIRLOCK_SANDBOX_NETDEFS_H
#define AIRLOCK_SANDBOX_NETDEFS_H

/* 100.96.0.0/30 of the shared address space (RFC 6598): never routed on
 * the internet, unlikely to clash with a customer's private ranges. */
#define SANDBOX_NET_GATEWAY_ADDR "100.96.0.1" /* the TAP inside the namespace */
#define SANDBOX_NET_GUEST_ADDR "100.96.0.2"   /* eth0 inside the guest */
#define SANDBOX_NET_PREFIX_LEN 30
#define SANDBOX_NET_GATEWAY_MAC "02:a1:00:00:00:01"
#define SANDBOX_NET_GUEST_MAC "52:54:00:a1:00:02"
#define SANDBOX_NET_TAP_NAME "tap0"
/* Namespace name: SANDBOX_NET_NS_PREFIX + sandbox id. */
#define SANDBOX_NET_NS_PREFIX "airlock-"

/* Where nftables in the namespace sends guest traffic: egress listens on
 * these ports inside the namespace. */
#define SANDBOX_NET_EGRESS_TCP_PORT 15001
#define SANDBOX_NET_EGRESS_DNS_PORT 15053

#endif
