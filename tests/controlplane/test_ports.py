#!/usr/bin/python3
"""Sandbox ports through the gateway (docs/ports.md) end to end: servers
started in a real VM through the REST API, reached through the gateway's
ingress by host name (<port>-<id>.localhost, the stack's public domain)
and by the header form; HTTP, a streamed upload and download, a WebSocket
echo; the traffic token, signed URLs and their cookie, another project's
key; a paused sandbox; a closed port; bad input; the port list in the
sandbox's GET; the public gRPC API and the CLI.

usage: test_ports.py PROTO_DIR STUB_DIR CLI

Standard library, python3-grpcio; two VMs; no timing assertions."""
import base64
import hashlib
import hmac
import http.client
import json
import os
import socket
import subprocess
import sys
import time
import urllib.parse

import grpc

import grpc_stubs
from rest_client import ADMIN, URL, call, check, new_project_key, poll, report_and_exit

PROTO_DIR, STUB_DIR, CLI = sys.argv[1], sys.argv[2], sys.argv[3]
grpc_stubs.generate(PROTO_DIR, STUB_DIR, ["airlock/v1/sandboxes.proto"])
from airlock.v1 import sandboxes_pb2 as pb, sandboxes_pb2_grpc  # noqa: E402

DOMAIN = "localhost"
SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ports_guest_server.py")
BIG = 8 << 20


def host(sid, port):
    return "%d-%s.%s:%d" % (port, sid, DOMAIN, URL.port)


def port_call(method, path, headers, body=None, chunked=False):
    """(status, headers, body bytes) of one request on a fresh connection
    to the gateway; headers name the port (Host or the header form)."""
    conn = http.client.HTTPConnection(URL.hostname, URL.port, timeout=300)
    conn.request(method, path, body=body, headers=headers, encode_chunked=chunked)
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, resp.headers, data


def error_code(data):
    try:
        return json.loads(data)["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return None


def exec_ok(key, sid, script):
    st, _, r = call("POST", "/v1/sandboxes/%s/exec" % sid, key=key,
                    body={"cmd": ["sh", "-c", script], "timeout_s": 120})
    if st != 200 or r.get("exit_code") != 0:
        raise RuntimeError("exec %r: %s %s" % (script, st, r))
    return r["stdout"]


def start(key, sid, cmd):
    st, _, r = call("POST", "/v1/sandboxes/%s/processes" % sid, key=key, body={"cmd": cmd})
    if st != 201:
        raise RuntimeError("start %s: %s %s" % (cmd, st, r))


def listening(key, sid, want):
    st, _, r = call("GET", "/v1/sandboxes/%s/ports" % sid, key=key)
    ports = {p["port"]: p for p in r.get("ports", [])} if st == 200 else {}
    return ports if all(p in ports for p in want) else None


def serve(key, sid):
    """The guest's servers: http.server on 8000, the test server on 8001,
    one bound to the guest's loopback only on 8002."""
    with open(SERVER, "rb") as f:
        st, _, _ = call("PUT", "/v1/sandboxes/%s/files?path=/srv/server.py" % sid, key=key,
                        body=f.read())
    exec_ok(key, sid, "mkdir -p /srv && echo 'hello from the sandbox' > /srv/index.txt && "
                      "head -c %d /dev/urandom > /srv/big" % BIG)
    start(key, sid, ["python3", "-m", "http.server", "8000", "--directory", "/srv"])
    start(key, sid, ["python3", "/srv/server.py", "8001"])
    start(key, sid, ["python3", "/srv/server.py", "8002", "127.0.0.1"])
    return poll(lambda: listening(key, sid, [8000, 8001, 8002]), limit_s=120)


def check_listing(key, sid, ports):
    check(ports is not None, "GET /ports lists 8000, 8001, 8002: %s" % ports)
    if not ports:
        return
    check(ports[8000]["reachable"] and ports[8001]["reachable"],
          "8000 and 8001 (every address) are reachable: %s" % ports)
    check(ports[8002]["address"] == "127.0.0.1" and not ports[8002]["reachable"],
          "8002 (the guest's loopback) is listed, not reachable: %s" % ports[8002])
    check(ports[8000]["url"] == "http://%s/" % host(sid, 8000),
          "a port's url is http://<port>-<id>.<domain>:<gateway port>/: %s" % ports[8000]["url"])
    st, _, sb = call("GET", "/v1/sandboxes/%s" % sid, key=key)
    in_get = [p["port"] for p in sb.get("ports", [])]
    check(st == 200 and {8000, 8001, 8002} <= set(in_get),
          "the sandbox's GET lists its ports in use: %s" % in_get)


def check_token(sid, token):
    h = {"Host": host(sid, 8000)}
    st, _, data = port_call("GET", "/index.txt", h)
    check(st == 401 and error_code(data) == "unauthenticated" and b"traffic token" in data,
          "no token: 401 naming the traffic token (%s %s)" % (st, data[:200]))
    st, _, data = port_call("GET", "/index.txt", dict(h, **{"Airlock-Traffic-Token": "tt_wrong"}))
    check(st == 403 and error_code(data) == "permission_denied",
          "a wrong token: 403 (%s %s)" % (st, data[:200]))
    st, _, data = port_call("GET", "/index.txt", dict(h, **{"Airlock-Traffic-Token": token}))
    check(st == 200 and data == b"hello from the sandbox\n",
          "python3 -m http.server through the gateway by host name (%s %r)" % (st, data[:100]))
    st, _, data = port_call("GET", "/index.txt", {"Airlock-Sandbox-Id": sid,
                                                  "Airlock-Sandbox-Port": "8000",
                                                  "Airlock-Traffic-Token": token})
    check(st == 200 and data == b"hello from the sandbox\n",
          "the header form (%s %r)" % (st, data[:100]))
    st, _, data = port_call("GET", "/index.txt", {"E2b-Sandbox-Id": sid, "E2b-Sandbox-Port": "8000",
                                                  "E2b-Traffic-Access-Token": token})
    check(st == 200 and data == b"hello from the sandbox\n",
          "E2B's header form and its token header (%s %r)" % (st, data[:100]))
    st, _, data = port_call("GET", "/peer", {"Host": host(sid, 8001),
                                             "Airlock-Traffic-Token": token})
    check(st == 200 and data == b"100.96.0.1",
          "the guest sees the connection come from its namespace's side (%s %r)" % (st, data))


def check_streams(key, sid, token):
    h = {"Host": host(sid, 8001), "Airlock-Traffic-Token": token}
    want = exec_ok(key, sid, "sha256sum /srv/big").split()[0]
    st, _, data = port_call("GET", "/file/big", h)
    check(st == 200 and len(data) == BIG and hashlib.sha256(data).hexdigest() == want,
          "an 8 MiB download streams through whole (%s, %d bytes)" % (st, len(data)))
    payload = os.urandom(BIG)

    def chunks():
        for i in range(0, len(payload), 100000):
            yield payload[i:i + 100000]
    st, _, data = port_call("POST", "/sum", dict(h, **{"Transfer-Encoding": "chunked"}),
                            body=chunks(), chunked=True)
    check(st == 200 and data.decode() == "%d %s" % (BIG, hashlib.sha256(payload).hexdigest()),
          "an 8 MiB chunked upload streams through whole (%s %r)" % (st, data[:100]))


def check_websocket(sid, token):
    s = socket.create_connection((URL.hostname, URL.port), timeout=60)
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(("GET /ws HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n"
               "Airlock-Traffic-Token: %s\r\n\r\n" % (host(sid, 8001), key, token)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        got = s.recv(4096)
        if not got:
            break
        head += got
    accept = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")
                                           .encode()).digest()).decode()
    check(head.startswith(b"HTTP/1.1 101") and accept.encode() in head,
          "WebSocket upgrade through the gateway: %r" % head[:200])
    echoed = []
    for text in (b"hello websocket", b"x" * 1000):
        mask = os.urandom(4)
        frame = bytes([0x81]) + (bytes([0x80 | len(text)]) if len(text) < 126 else
                                 bytes([0xFE]) + len(text).to_bytes(2, "big"))
        s.sendall(frame + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(text)))
        data = head.split(b"\r\n\r\n", 1)[1] if not echoed else b""
        want = (2 if len(text) < 126 else 4) + len(text)
        while len(data) < want:
            got = s.recv(65536)
            if not got:
                break
            data += got
        body = data[2:] if data[1] < 126 else data[4:]
        echoed.append(body[:len(text)] == text)
    check(echoed == [True, True], "WebSocket frames echoed both ways: %s" % echoed)
    s.sendall(bytes([0x88, 0x80]) + os.urandom(4))
    s.close()


def check_signed_urls(key, key2, sid, token):
    st, _, r = call("POST", "/v1/sandboxes/%s/ports/8000/url" % sid, key=key, body={})
    check(st == 200 and "airlock_signature=" in r.get("url", "") and "expires_at" in r,
          "a private port's URL is signed, for an hour by default: %s %s" % (st, r))
    url = urllib.parse.urlsplit(r.get("url", "http://x/"))
    h = {"Host": url.netloc}
    st, hdrs, _ = port_call("GET", "/index.txt?" + url.query + "&keep=1", h)
    cookie = (hdrs.get("Set-Cookie") or "").split(";")[0]
    check(st == 307 and hdrs.get("Location") == "/index.txt?keep=1" and
          cookie.startswith("airlock_port_access="),
          "a signed URL answers 307 to itself without the signature, with a cookie (%s %s %s)"
          % (st, hdrs.get("Location"), cookie))
    st, _, data = port_call("GET", "/index.txt", dict(h, Cookie=cookie))
    check(st == 200 and data == b"hello from the sandbox\n", "the cookie opens the port (%s)" % st)
    st, _, data = port_call("GET", "/index.txt", {"Host": host(sid, 8001), "Cookie": cookie})
    check(st == 403, "the cookie of port 8000 does not open port 8001 (%s %r)" % (st, data[:120]))
    tampered = url.query.replace("airlock_signature=", "airlock_signature=0")
    st, _, data = port_call("GET", "/?" + tampered, h)
    check(st == 403 and error_code(data) == "permission_denied",
          "a tampered signature: 403 (%s %r)" % (st, data[:200]))
    past = int(time.time()) - 10
    sig = hmac.new(token.encode(), ("%s:8000:%d" % (sid, past)).encode(),
                   hashlib.sha256).hexdigest()
    st, _, data = port_call("GET", "/?airlock_expires=%d&airlock_signature=%s" % (past, sig), h)
    check(st == 403 and b"expired" in data, "an expired signed URL: 403 saying so (%s %r)"
          % (st, data[:200]))
    st, _, r = call("POST", "/v1/sandboxes/%s/ports/8000/url" % sid, key=key,
                    body={"expires_in_s": 120})
    exp = int(urllib.parse.parse_qs(urllib.parse.urlsplit(r["url"]).query)["airlock_expires"][0])
    check(st == 200 and 0 < exp - time.time() <= 121, "expires_in_s sets the expiry: %s" % r)
    for body, what in (({"expires_in_s": 5}, "expires_in_s"), ({"expires_in_s": 10 ** 7},
                                                               "expires_in_s")):
        st, _, r = call("POST", "/v1/sandboxes/%s/ports/8000/url" % sid, key=key, body=body)
        check(st == 400 and what in json.dumps(r), "%s -> 400 naming it (%s %s)" % (body, st, r))
    for port in ("0", "65536", "abc"):
        st, _, r = call("POST", "/v1/sandboxes/%s/ports/%s/url" % (sid, port), key=key, body={})
        check(st == 400 and "port" in json.dumps(r), "url of port %s: 400 (%s %s)" % (port, st, r))
    # Another project's key sees nothing and reaches nothing.
    for method, path in (("GET", "/v1/sandboxes/%s/ports" % sid),
                         ("POST", "/v1/sandboxes/%s/ports/8000/url" % sid)):
        st, _, r = call(method, path, key=key2, body={} if method == "POST" else None)
        check(st == 404, "%s %s with another project's key: 404 (%s)" % (method, path, st))
    st, _, data = port_call("GET", "/index.txt", {"Host": host(sid, 8000),
                                                  "Authorization": "Bearer " + key2})
    check(st == 401, "another project's key is no credential for a port (%s)" % st)
    out = subprocess.run([CLI, "--url", URL.geturl(), "--key", key, "port", sid, "8000"],
                         capture_output=True, text=True, timeout=60)
    check(out.returncode == 0 and out.stdout.startswith("http://%s/?airlock_expires=" %
                                                         host(sid, 8000)),
          "airlock port ID 8000 prints the signed URL: %r %r" % (out.stdout, out.stderr))


def check_bad_targets(sid, token):
    t = {"Airlock-Traffic-Token": token}
    st, _, data = port_call("GET", "/", dict(t, Host=host(sid, 8009)))
    check(st == 502 and error_code(data) == "port_unreachable" and b"8009" in data,
          "a closed port: 502 port_unreachable naming it (%s %r)" % (st, data[:200]))
    st, _, data = port_call("GET", "/", dict(t, Host=host(sid, 8002)))
    check(st == 502, "a port bound to the guest's loopback only: 502 (%s %r)" % (st, data[:120]))
    st, _, data = port_call("GET", "/", dict(t, Host=host("sb_nosuchbox", 8000)))
    check(st == 404 and b"sb_nosuchbox" in data, "an unknown sandbox: 404 naming it (%s %r)"
          % (st, data[:200]))
    for bad, what in (("0-%s.%s" % (sid, DOMAIN), "port 0"), ("70000-%s.%s" % (sid, DOMAIN),
                                                              "port 70000")):
        st, _, data = port_call("GET", "/", dict(t, Host=bad))
        check(st == 400 and error_code(data) == "invalid_argument",
              "%s: 400 (%s %r)" % (what, st, data[:200]))
    st, _, data = port_call("GET", "/", dict(t, **{"Airlock-Sandbox-Id": sid}))
    check(st == 400 and b"Airlock-Sandbox-Port" in data,
          "the header form without a port: 400 naming the header (%s %r)" % (st, data[:200]))
    st, _, data = port_call("GET", "/healthz", {"Host": "api.%s" % DOMAIN})
    check(st == 200, "other names of the domain still reach the API (%s)" % st)


def check_paused(key, sid, token):
    st, _, _ = call("POST", "/v1/sandboxes/%s/pause" % sid, key=key)
    h = {"Host": host(sid, 8000), "Airlock-Traffic-Token": token}
    st2, _, data = port_call("GET", "/index.txt", h)
    check(st == 200 and st2 == 409 and b"paused" in data and b"resume" in data,
          "a paused sandbox's port: 409 saying to resume it (%s %s %r)" % (st, st2, data[:200]))
    st, _, _ = call("POST", "/v1/sandboxes/%s/resume" % sid, key=key)
    st2, _, data = port_call("GET", "/index.txt", h)
    check(st == 200 and st2 == 200, "after resume it answers again (%s %s)" % (st, st2))


def check_public(key):
    st, _, sb = call("POST", "/v1/sandboxes", key=key, body={"public_ports": True})
    check(st == 201 and sb.get("public_ports") is True, "create with public_ports (%s)" % st)
    if st != 201:
        return None
    pid = sb["id"]
    exec_ok(key, pid, "mkdir -p /srv && echo public > /srv/index.txt")
    start(key, pid, ["python3", "-m", "http.server", "8000", "--directory", "/srv"])
    poll(lambda: listening(key, pid, [8000]), limit_s=120)
    st, _, data = port_call("GET", "/index.txt", {"Host": host(pid, 8000)})
    check(st == 200 and data == b"public\n", "a public port needs no token (%s %r)" % (st, data))
    st, _, r = call("POST", "/v1/sandboxes/%s/ports/8000/url" % pid, key=key, body={})
    check(st == 200 and r.get("url") == "http://%s/" % host(pid, 8000) and "expires_at" not in r,
          "a public port's URL is not signed: %s" % r)
    return pid


def check_grpc(key, sid):
    channel = grpc.insecure_channel(os.environ["AIRLOCK_GRPC_ADDR"])
    stub = sandboxes_pb2_grpc.SandboxesStub(channel)
    md = [("authorization", "Bearer " + key)]
    got = stub.ListPorts(pb.SandboxRequest(id=sid), metadata=md, timeout=120)
    ports = {p.port: p for p in got.ports}
    check(8000 in ports and ports[8000].reachable and not ports[8002].reachable,
          "gRPC ListPorts: %s" % sorted(ports))
    url = stub.GetPortUrl(pb.GetPortUrlRequest(id=sid, port=8000, expires_in_s=300),
                          metadata=md, timeout=120)
    check("airlock_signature=" in url.url and url.expires_at,
          "gRPC GetPortUrl signs: %s" % url)
    try:
        stub.GetPortUrl(pb.GetPortUrlRequest(id=sid, port=0), metadata=md, timeout=120)
        check(False, "gRPC GetPortUrl of port 0 fails")
    except grpc.RpcError as e:
        check(e.code() == grpc.StatusCode.INVALID_ARGUMENT, "gRPC port 0: %s" % e.code())
    channel.close()


def main():
    _, key = new_project_key("ports")
    _, key2 = new_project_key("ports-other")
    st, _, sb = call("POST", "/v1/sandboxes", key=key, body={})
    check(st == 201 and sb.get("public_ports") is False and sb.get("traffic_token", "")
          .startswith("tt_"), "a sandbox's ports need its traffic token by default: %s" % sb)
    if st != 201:
        report_and_exit()
    sid, token = sb["id"], sb["traffic_token"]
    check_listing(key, sid, serve(key, sid))
    check_token(sid, token)
    check_streams(key, sid, token)
    check_websocket(sid, token)
    check_signed_urls(key, key2, sid, token)
    check_bad_targets(sid, token)
    check_grpc(key, sid)
    check_paused(key, sid, token)
    public = check_public(key)
    for s in (sid, public):
        if s:
            call("DELETE", "/v1/sandboxes/%s" % s, key=key)
    report_and_exit()


main()
