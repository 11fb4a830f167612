/* egress from inside a real guest, part 3: TLS first flights and
 * everything that is not TCP. Same lab as test_guest_egress
 * (support/guest_lab.h). ClientHellos are built here (netlab's
 * tls_client_hello) and sent from the guest byte for byte; UDP, ICMP and
 * raw IP come from python3 sockets in the guest and must die in the
 * sandbox namespace (its drop counters grow, no test server hears them). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "guest_lab.h"
#include "netlab.h"

#define assert_prefix(s, prefix) assert_int_equal(strncmp((s), (prefix), strlen(prefix)), 0)

/* python3's ssl against host:443 with this SNI (None: no SNI). */
#define PY_TLS(host, sni)                                                                          \
    "python3 -c 'import socket, ssl; c = ssl.create_default_context(); "                          \
    "c.check_hostname = False; c.verify_mode = ssl.CERT_NONE; "                                    \
    "s = socket.create_connection((\"" host "\", 443), timeout=10); "                              \
    "c.wrap_socket(s, server_hostname=" sni ")'"

/* tcpsend.py with a ClientHello for sni in `records` records, sent to
 * host:443 in step-byte writes (0: at once). */
static void hello_script(const char *host, const uint8_t *hello, size_t len, size_t step,
                         char *script, size_t scriptlen)
{
    int off = snprintf(script, scriptlen, "python3 /tmp/tcpsend.py %s 443 ", host);
    guest_hex(hello, len, script + off);
    if (step)
        snprintf(script + off + 2 * len, scriptlen - (size_t)off - 2 * len, " %zu", step);
}

static void test_tls_without_sni_is_refused(void **state)
{
    (void)state;
    /* A real TLS client (python3's ssl) to an allowed name's address,
     * naming nothing. */
    expect_tcp_denied(PY_TLS(NETLAB_WEB1, "None"), NETLAB_WEB1, "ip_literal");
}

static void test_tls_with_a_denied_sni_is_refused(void **state)
{
    (void)state;
    expect_tcp_denied(PY_TLS(NETLAB_WEB1, "\"denied.test\""), "denied.test",
                      "name_not_resolved_to_destination");
}

static void test_allowed_sni_to_another_address_is_refused(void **state)
{
    (void)state;
    /* Domain fronting by address: the allowed name in the SNI, the
     * connection to the denied name's address. */
    assert_int_equal(guest_sh("getent hosts allowed.test", NULL, 0), 0);
    expect_tcp_denied(PY_TLS(NETLAB_WEB3, "\"allowed.test\""), NETLAB_WEB3,
                      "name_not_resolved_to_destination");
}

static void test_fragmented_client_hello_is_reassembled(void **state)
{
    (void)state;
    uint8_t hello[2048];
    char script[8192], out[256];
    /* One record over 7-byte TCP segments, and over 8 records at once. */
    const struct {
        int records;
        size_t step;
    } shapes[] = { { 1, 7 }, { 8, 0 }, { 6, 5 } };
    for (size_t i = 0; i < sizeof(shapes) / sizeof(*shapes); i++) {
        size_t len = tls_client_hello("denied.test", shapes[i].records, hello, sizeof(hello));
        assert_true(len > 0);
        hello_script("allowed.test", hello, len, shapes[i].step, script, sizeof(script));
        expect_tcp_denied(script, "denied.test", "name_not_resolved_to_destination");
    }
    /* The control: the same shapes naming the allowed name go through
     * (netlab's server is no TLS server: it answers HELLO). */
    for (size_t i = 0; i < sizeof(shapes) / sizeof(*shapes); i++) {
        size_t len = tls_client_hello("allowed.test", shapes[i].records, hello, sizeof(hello));
        hello_script("allowed.test", hello, len, shapes[i].step, script, sizeof(script));
        unsigned accepted = netlab_tcp_accepted();
        assert_int_equal(guest_sh(script, out, sizeof(out)), 0);
        assert_prefix(out, "HELLO " NETLAB_WEB1 ":443 got=");
        assert_int_equal(netlab_tcp_accepted(), accepted + 1);
    }
}

static void test_malformed_client_hellos_are_refused(void **state)
{
    (void)state;
    uint8_t hello[2048];
    char script[8192];
    size_t len = tls_client_hello("allowed.test", 1, hello, sizeof(hello));
    /* 1. the extensions' length one more than there is */
    uint8_t bad[2048];
    memcpy(bad, hello, len);
    size_t ext_len_at = 5 + 4 + 2 + 32 + 1 + 2 + 2 + 1 + 1;
    bad[ext_len_at + 1]++;
    hello_script("allowed.test", bad, len, 0, script, sizeof(script));
    expect_tcp_denied(script, NETLAB_WEB1, "malformed_first_bytes");
    /* 2. a handshake record that is not a ClientHello (type 2) */
    memcpy(bad, hello, len);
    bad[5] = 2;
    hello_script("allowed.test", bad, len, 0, script, sizeof(script));
    expect_tcp_denied(script, NETLAB_WEB1, "malformed_first_bytes");
    /* 3. an SSLv2-style record version byte */
    memcpy(bad, hello, len);
    bad[1] = 2;
    hello_script("allowed.test", bad, len, 0, script, sizeof(script));
    expect_tcp_denied(script, NETLAB_WEB1, "malformed_first_bytes");
}

static void test_encrypted_client_hello_is_refused(void **state)
{
    (void)state;
    uint8_t hello[2048];
    char script[8192], out[256];
    /* The outer SNI names the allowed host; ECH (0xfe0d) or the older ESNI
     * (0xffce) would carry the real one, hidden from egress. */
    const uint16_t hiding[] = { 0xfe0d, 0xffce };
    for (size_t i = 0; i < sizeof(hiding) / sizeof(*hiding); i++) {
        size_t len = tls_client_hello_ext("allowed.test", 1, hiding[i], hello, sizeof(hello));
        hello_script("allowed.test", hello, len, 0, script, sizeof(script));
        expect_tcp_denied(script, "allowed.test", "encrypted_client_hello");
    }
    /* A policy with allow_ech decides by the outer name (as for Chromium's
     * ECH GREASE); the server answers. */
    Airlock__Egress__V1__Policy p;
    guest_lab_policy(&p, NULL);
    p.allow_ech = true;
    assert_int_equal(guest_lab_set_policy(lab.sandbox_id, &p, NULL), GRPC_STATUS_OK);
    size_t len = tls_client_hello_ext("allowed.test", 1, 0xfe0d, hello, sizeof(hello));
    hello_script("allowed.test", hello, len, 0, script, sizeof(script));
    unsigned accepted = netlab_tcp_accepted();
    assert_int_equal(guest_sh(script, out, sizeof(out)), 0);
    assert_prefix(out, "HELLO " NETLAB_WEB1 ":443 got=");
    assert_int_equal(netlab_tcp_accepted(), accepted + 1);
    /* And still only by an allowed outer name. */
    len = tls_client_hello_ext("denied.test", 1, 0xfe0d, hello, sizeof(hello));
    hello_script("allowed.test", hello, len, 0, script, sizeof(script));
    expect_tcp_denied(script, "denied.test", "name_not_resolved_to_destination");
    guest_lab_policy(&p, NULL);
    assert_int_equal(guest_lab_set_policy(lab.sandbox_id, &p, NULL), GRPC_STATUS_OK);
}

static void test_very_long_sni_is_refused(void **state)
{
    (void)state;
    /* 5 labels of 60 bytes: over DNS's 253, so no name at all. */
    char sni[400] = "";
    for (int i = 0; i < 5; i++) {
        memset(sni + strlen(sni), 'a' + i, 60);
        strcat(sni, ".");
    }
    strcat(sni, "allowed.test");
    uint8_t hello[2048];
    char script[8192];
    size_t len = tls_client_hello(sni, 1, hello, sizeof(hello));
    assert_true(len > 0);
    hello_script("allowed.test", hello, len, 0, script, sizeof(script));
    expect_tcp_denied(script, NETLAB_WEB1, "malformed_first_bytes");
}

static void test_half_a_client_hello_is_refused(void **state)
{
    (void)state;
    /* The first 40 bytes, then silence: reset after the sniff timeout. */
    uint8_t hello[2048];
    char script[8192];
    tls_client_hello("allowed.test", 1, hello, sizeof(hello));
    hello_script("allowed.test", hello, 40, 0, script, sizeof(script));
    expect_tcp_denied(script, NETLAB_WEB1, "malformed_first_bytes");
}

/* python3 one-liner sending datagrams; the guest must not fail to send. */
static void guest_py(const char *code)
{
    char script[2048];
    snprintf(script, sizeof(script), "python3 -c '%s'", code);
    assert_int_equal(guest_sh(script, NULL, 0), 0);
}

static void test_udp_is_dropped(void **state)
{
    (void)state;
    struct sandbox_net_counters before = guest_counters();
    unsigned udp = netlab_udp_received();
    /* netlab's UDP server, NTP, QUIC (an Initial-shaped first byte). */
    guest_py("import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
             "s.sendto(b\"x\", (\"" NETLAB_WEB1 "\", 9999)); "
             "s.sendto(b\"\\x1b\" + bytes(47), (\"" NETLAB_WEB1 "\", 123)); "
             "s.sendto(b\"\\xc3\\x00\\x00\\x00\\x01\" + bytes(1195), (\"" NETLAB_WEB1 "\", 443))");
    struct sandbox_net_counters after = guest_counters();
    assert_true(after.dropped_udp >= before.dropped_udp + 3);
    assert_int_equal(netlab_udp_received(), udp);
}

static void test_broadcast_and_multicast_are_dropped(void **state)
{
    (void)state;
    struct sandbox_net_counters before = guest_counters();
    guest_py("import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
             "s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1); "
             "s.sendto(b\"x\", (\"255.255.255.255\", 9999)); "
             "s.sendto(b\"x\", (\"100.96.0.3\", 9999)); "
             "s.sendto(bytes(12), (\"224.0.0.251\", 5353)); "
             "s.sendto(b\"M-SEARCH\", (\"239.255.255.250\", 1900))");
    assert_true(guest_counters().dropped_udp >= before.dropped_udp + 4);
}

static void test_icmp_is_dropped(void **state)
{
    (void)state;
    struct sandbox_net_counters before = guest_counters();
    /* An echo request carrying data (ICMP tunnelling), a timestamp
     * request; checksums do not matter, nothing reads them. */
    guest_py("import socket; s = socket.socket(socket.AF_INET, socket.SOCK_RAW, "
             "socket.IPPROTO_ICMP); "
             "s.sendto(b\"\\x08\\x00\\x00\\x00\\x00\\x01\\x00\\x01\" + b\"secret\" * 10, (\""
             NETLAB_WEB1 "\", 0)); "
             "s.sendto(b\"\\x0d\\x00\\x00\\x00\\x00\\x01\\x00\\x01\" + bytes(12), (\""
             NETLAB_WEB3 "\", 0))");
    assert_true(guest_counters().dropped_icmp >= before.dropped_icmp + 2);
}

static void test_other_ip_protocols_are_dropped(void **state)
{
    (void)state;
    struct sandbox_net_counters before = guest_counters();
    /* SCTP (132), GRE (47) and a raw protocol 253 (experimental). */
    guest_py("import socket\n"
             "for proto in (132, 47, 253):\n"
             "    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, proto)\n"
             "    s.sendto(bytes(32), (\"" NETLAB_WEB1 "\", 0))");
    assert_true(guest_counters().dropped_other >= before.dropped_other + 3);
}

static void test_spoofed_source_is_dropped(void **state)
{
    (void)state;
    struct sandbox_net_counters before = guest_counters();
    unsigned accepted = netlab_tcp_accepted();
    /* SYNs to an allowed server from sources that are not the guest's:
     * another address of its subnet, the server itself, a private one. */
    guest_py("import socket, struct\n"
             "s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)\n"
             "dst = socket.inet_aton(\"" NETLAB_WEB1 "\")\n"
             "tcp = struct.pack(\"!HHIIBBHHH\", 40000, 80, 1, 0, 5 << 4, 2, 64240, 0, 0)\n"
             "for src in (\"100.96.0.3\", \"" NETLAB_WEB1 "\", \"10.0.0.1\"):\n"
             "    ip = struct.pack(\"!BBHHHBBH4s4s\", 0x45, 0, 40, 1, 0, 64, 6, 0,\n"
             "                     socket.inet_aton(src), dst)\n"
             "    s.sendto(ip + tcp, (\"" NETLAB_WEB1 "\", 0))");
    assert_true(guest_counters().dropped_spoofed >= before.dropped_spoofed + 3);
    assert_int_equal(netlab_tcp_accepted(), accepted);
    /* The guest's own address is not spoofed: its connections still go. */
    char out[256];
    assert_int_equal(guest_sh(GUEST_CURL "http://allowed.test/", out, sizeof(out)), 0);
    assert_int_equal(guest_counters().dropped_spoofed, before.dropped_spoofed + 3);
}

static void test_ipv6_is_dropped(void **state)
{
    (void)state;
    struct sandbox_net_counters before = guest_counters();
    /* The gateway's link-local address (EUI-64 of its fixed MAC). */
    assert_int_not_equal(guest_sh(GUEST_CURL "--max-time 5 -g 'http://[fe80::a1:ff:fe00:1%25eth0]/'",
                                  NULL, 0),
                         0);
    assert_true(guest_counters().dropped_ipv6 > before.dropped_ipv6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tls_without_sni_is_refused),
        cmocka_unit_test(test_tls_with_a_denied_sni_is_refused),
        cmocka_unit_test(test_allowed_sni_to_another_address_is_refused),
        cmocka_unit_test(test_fragmented_client_hello_is_reassembled),
        cmocka_unit_test(test_malformed_client_hellos_are_refused),
        cmocka_unit_test(test_encrypted_client_hello_is_refused),
        cmocka_unit_test(test_very_long_sni_is_refused),
        cmocka_unit_test(test_half_a_client_hello_is_refused),
        cmocka_unit_test(test_udp_is_dropped),
        cmocka_unit_test(test_broadcast_and_multicast_are_dropped),
        cmocka_unit_test(test_icmp_is_dropped),
        cmocka_unit_test(test_other_ip_protocols_are_dropped),
        cmocka_unit_test(test_spoofed_source_is_dropped),
        cmocka_unit_test(test_ipv6_is_dropped),
    };
    return GUEST_LAB_RUN(tests);
}
