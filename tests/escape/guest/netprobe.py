#!/usr/bin/env python3
"""Network attempts from a sandbox at the host side of its TAP, run as
root in the guest by tests/escape/test_guest_network.c. Each prints one
line per try ("tcp 100.96.0.1:22 refused") and exits 0 once every packet
was sent; what arrived is counted on the host.

usage: netprobe.py connect HOST PORT[,PORT...]
       netprobe.py udp HOST PORT[,PORT...]
       netprobe.py vsock CID PORT
       netprobe.py spoof_bind SRC HOST PORT[,PORT...]   (SRC/32 added to eth0 first)
       netprobe.py raw_spoof SRC HOST PORT[,PORT...]    (forged IPv4 headers, raw frames)
       netprobe.py syn_flood HOST PORT COUNT
       netprobe.py fragments HOST PORT[,PORT...]
       netprobe.py vlan HOST PORT[,PORT...]
       netprobe.py ipv6 HOST6%IFACE PORT[,PORT...]
       netprobe.py icmp HOST COUNT
       netprobe.py martian DST PORT[,PORT...]    (to the gateway's MAC, IPv4 to DST)
       netprobe.py arp_claims ADDR[,ADDR...]     (gratuitous ARP: ADDR is at our MAC)"""
import errno
import os
import random
import socket
import struct
import subprocess
import sys

GUEST = "100.96.0.2"
GATEWAY_MAC = bytes.fromhex("02a100000001")
TIMEOUT_S = 2.0


def ports(arg):
    return [int(p) for p in arg.split(",")]


def outcome(fn):
    try:
        fn()
        return "connected"
    except socket.timeout:
        return "timeout"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))


def tcp_connect(host, port, family=socket.AF_INET, source=None):
    def go():
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.settimeout(TIMEOUT_S)
            if source:
                s.bind((source, 0))
            s.connect((host, port))
            s.sendall(b"escape attempt\r\n")
    return outcome(go)


def connect(host, port_list):
    for p in ports(port_list):
        print("tcp %s:%d %s" % (host, p, tcp_connect(host, p)))


def udp(host, port_list):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for p in ports(port_list):
            for _ in range(3):
                s.sendto(b"escape attempt", (host, p))
            print("udp %s:%d sent" % (host, p))


def vsock(cid, port):
    def go():
        s = socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)
        s.settimeout(TIMEOUT_S)
        s.connect((int(cid), int(port)))
    print("vsock %s:%s %s" % (cid, port, outcome(go)))


def spoof_bind(src, host, port_list):
    subprocess.run(["ip", "addr", "add", src + "/32", "dev", "eth0"], check=True)
    try:
        for p in ports(port_list):
            print("tcp %s->%s:%d %s" % (src, host, p, tcp_connect(host, p, source=src)))
    finally:
        subprocess.run(["ip", "addr", "del", src + "/32", "dev", "eth0"], check=True)


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def tcp_syn(src, dst, sport, dport):
    hdr = struct.pack("!HHIIBBHHH", sport, dport, random.getrandbits(32), 0, 5 << 4, 0x02,
                      65535, 0, 0)
    pseudo = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!BBH", 0, 6, len(hdr))
    return hdr[:16] + struct.pack("!H", checksum(pseudo + hdr)) + hdr[18:]


def ipv4(src, dst, proto, payload, ident=0, frag=0):
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), ident, frag, 64, proto, 0,
                      socket.inet_aton(src), socket.inet_aton(dst))
    return hdr[:10] + struct.pack("!H", checksum(hdr)) + hdr[12:] + payload


def raw_socket():
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_HDRINCL, 1)
    return s


def raw_spoof(src, host, port_list):
    """On the wire by hand: the guest's own stack would refuse a loopback
    source and fill in 0.0.0.0."""
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as s:
        s.bind(("eth0", 0))
        mac = own_mac()
        for p in ports(port_list):
            for _ in range(3):
                syn = tcp_syn(src, host, random.randint(1024, 65535), p)
                s.send(ether(GATEWAY_MAC, mac, 0x0800, ipv4(src, host, 6, syn)))
            print("raw %s->%s:%d sent" % (src, host, p))


def syn_flood(host, port, count):
    with raw_socket() as s:
        for i in range(int(count)):
            s.sendto(ipv4(GUEST, host, 6, tcp_syn(GUEST, host, 1024 + i % 64000, int(port))),
                     (host, 0))
    print("syn flood %s:%s %s sent" % (host, port, count))


def fragments(host, port_list):
    """A SYN cut into 8-byte IP fragments (the first holds only the ports),
    sent last fragment first, and an overlapping rewrite of the ports."""
    with raw_socket() as s:
        for p in ports(port_list):
            seg = tcp_syn(GUEST, host, random.randint(1024, 65535), p)
            ident = random.getrandbits(16)
            pieces = [(off, seg[off:off + 8]) for off in range(0, len(seg), 8)]
            for off, piece in reversed(pieces):
                more = 0x2000 if off + 8 < len(seg) else 0
                s.sendto(ipv4(GUEST, host, 6, piece, ident, more | off // 8), (host, 0))
            print("fragments %s:%d sent" % (host, p))


def ether(dst_mac, src_mac, ethertype, payload):
    return dst_mac + src_mac + struct.pack("!H", ethertype) + payload


def own_mac():
    with open("/sys/class/net/eth0/address") as f:
        return bytes.fromhex(f.read().strip().replace(":", ""))


def vlan(host, port_list):
    """SYNs inside an 802.1Q tag and inside a QinQ double tag."""
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as s:
        s.bind(("eth0", 0))
        mac = own_mac()
        for p in ports(port_list):
            packet = ipv4(GUEST, host, 6, tcp_syn(GUEST, host, random.randint(1024, 65535), p))
            tagged = struct.pack("!HH", 1, 0x0800) + packet
            s.send(ether(GATEWAY_MAC, mac, 0x8100, tagged))
            s.send(ether(GATEWAY_MAC, mac, 0x88A8, struct.pack("!HH", 2, 0x8100) + tagged))
            print("vlan %s:%d sent" % (host, p))


def ipv6(host, port_list):
    for p in ports(port_list):
        address = socket.getaddrinfo(host, p, socket.AF_INET6, socket.SOCK_STREAM)[0][4]

        def go():
            with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
                s.settimeout(TIMEOUT_S)
                s.connect(address)
        print("tcp6 [%s]:%d %s" % (host, p, outcome(go)))


def martian(dst, port_list):
    """SYNs for an address the gateway must not route to from its TAP
    (its own loopback), put on the wire by hand: the guest's own stack
    would keep them."""
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as s:
        s.bind(("eth0", 0))
        mac = own_mac()
        for p in ports(port_list):
            packet = ipv4(GUEST, dst, 6, tcp_syn(GUEST, dst, random.randint(1024, 65535), p))
            for _ in range(3):
                s.send(ether(GATEWAY_MAC, mac, 0x0800, packet))
            print("martian %s:%d sent" % (dst, p))


def arp_claims(addresses):
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as s:
        s.bind(("eth0", 0))
        mac = own_mac()
        for addr in addresses.split(","):
            ip = socket.inet_aton(addr)
            for op, target_mac in ((1, bytes(6)), (2, GATEWAY_MAC)):
                arp = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, op, mac, ip, target_mac, ip)
                s.send(ether(b"\xff" * 6 if op == 1 else GATEWAY_MAC, mac, 0x0806, arp))
            print("arp claim %s sent" % addr)


def icmp(host, count):
    with socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP) as s:
        for i in range(int(count)):
            body = struct.pack("!BBHHH", 8, 0, 0, 0x4142, i) + b"escape" * 10
            body = body[:2] + struct.pack("!H", checksum(body)) + body[4:]
            s.sendto(body, (host, 0))
    print("icmp %s %s sent" % (host, count))


def main():
    verbs = {f.__name__: f for f in (connect, udp, vsock, spoof_bind, raw_spoof, syn_flood,
                                     fragments, vlan, ipv6, icmp, martian, arp_claims)}
    verbs[sys.argv[1]](*sys.argv[2:])


if __name__ == "__main__":
    main()
