/* A private little internet for network tests, made of namespaces that
 * have no route to anything but each other:
 *
 *   guest ns ── veth ── sandbox ns (vmhost's sandbox_net, nftables)
 *   100.96.1.2          100.96.1.1      egress listens here
 *
 *   uplink ns ── veth ── inet ns: the test's "internet" servers
 *   198.51.100.1          198.51.100.10 .11 .12 .53, 10.9.9.9
 *
 * egress dials from the uplink namespace, so even a bug in egress cannot
 * reach past the inet namespace. The guest's veth stands in for the TAP
 * (the rules match every non-loopback interface). */
#ifndef AIRLOCK_NETLAB_H
#define AIRLOCK_NETLAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress.pb-c.h"
#include "rpc_client.h"

#define NETLAB_SANDBOX_ID "nettest"
#define NETLAB_GUEST_NS "airlock-nettest-guest"
#define NETLAB_UPLINK_NS "airlock-nettest-uplink"
#define NETLAB_INET_NS "airlock-nettest-inet"
#define NETLAB_GUEST_GW "100.96.1.1"
#define NETLAB_UPLINK_ADDR "198.51.100.1"
#define NETLAB_WEB1 "198.51.100.10"   /* allowed.test */
#define NETLAB_WEB2 "198.51.100.11"   /* www.wild.test, other.test */
#define NETLAB_WEB3 "198.51.100.12"   /* denied.test */
#define NETLAB_DNS "198.51.100.53"
#define NETLAB_PRIVATE "10.9.9.9"     /* rebind.test; flip.test from its second query on */
#define NETLAB_UDP_PORT 9999          /* UDP servers also listen on 123 (NTP), 443 (QUIC) */

/* Builds every namespace and starts the servers. Removes leftovers of an
 * earlier crashed run first. */
int netlab_up(void);
/* Only the uplink and inet namespaces with the servers: for tests whose
 * guest is a real VM behind vmhost's own sandbox namespace. */
int netlab_uplink_up(void);
/* Stops the servers and removes every namespace and device; safe to call
 * twice and after a partial netlab_up. */
void netlab_down(void);

/* /run/netns/<name> */
const char *netlab_ns_path(const char *ns);

/* A TCP listener of the caller's own on ip:port in the inet namespace
 * (a server of one test, beside netlab's); the fd, or -1 after printing
 * why. */
int netlab_inet_listen(const char *ip, uint16_t port, int backlog);

/* Connections the inet servers accepted, bytes those connections
 * delivered, UDP datagrams they received. A TCP server answers a read with
 * "HELLO <its ip>:<port> got=<bytes>" and closes, or, when the request
 * says "Connection: keep-alive", with an HTTP/1.1 response and reads on. */
unsigned netlab_tcp_accepted(void);
unsigned netlab_tcp_bytes(void);
unsigned netlab_udp_received(void);
/* Queries the test DNS server received for name (any type); NULL: all. */
unsigned netlab_dns_queries(const char *name);

/* ListConnections (egress's connection log) of sandbox id, the entries
 * after after_seq, on an egress channel; the call must succeed. Free with
 * protobuf_c_message_free_unpacked. */
Airlock__Egress__V1__ListConnectionsResponse *netlab_connections(struct rpc_channel *egress,
                                                                 const char *id,
                                                                 uint64_t after_seq);

/* Runs in the guest namespace. DNS query to server:53; returns the rcode
 * (-1 on no answer) and the A records. */
int guest_dns_query(const char *server, const char *name, uint16_t qtype, uint32_t *addrs,
                    size_t max, size_t *n);

enum guest_tcp_result { GUEST_TCP_REPLY, GUEST_TCP_RESET, GUEST_TCP_FAILED };

/* Runs in the guest namespace: connects to ip:port, sends payload, reads
 * the reply until EOF into reply (NUL-terminated). */
enum guest_tcp_result guest_tcp_exchange(const char *ip, uint16_t port, const void *payload,
                                         size_t len, char *reply, size_t replylen);

/* Runs in the guest namespace: one TCP SYN (a non-blocking connect that
 * is abandoned), one UDP datagram, one ICMP echo request. 0 once sent. */
int guest_tcp_syn(const char *ip, uint16_t port);
int guest_udp_send(const char *ip, uint16_t port);
int guest_icmp_echo(const char *ip);

/* A TLS 1.3-shaped ClientHello naming sni (NULL: no SNI extension), split
 * over `records` handshake records. Returns its length. */
size_t tls_client_hello(const char *sni, int records, uint8_t *out, size_t outlen);
/* The same with one more extension of type extra (0: none) carrying 32
 * opaque bytes: 0xfe0d is Encrypted Client Hello, 0xffce ESNI. */
size_t tls_client_hello_ext(const char *sni, int records, uint16_t extra, uint8_t *out,
                            size_t outlen);

#endif
