#!/usr/bin/python3
"""The gateway's own caps against a real stack (cp_harness): a second
gateway (argv[1]) beside the stack's, on the same scheduler, NATS and
vault, runs with small caps.

- --max-execs-per-key 2: a key's third exec at once, over REST (JSON or
  SSE) or the public gRPC API, is 429 quota_exceeded / RESOURCE_EXHAUSTED
  naming the cap and the key; another key of the same project is not
  held back; once one of the key's execs ends, it may exec again; bad
  values of the flag are refused by name.
- --max-connections 3 (another gateway, no VM): with 3 connections open a
  4th gets no answer (libmicrohttpd leaves it in the listen queue) until
  one closes, then it is served. --max-connections-per-ip 2: a 3rd
  connection from the same address is closed unanswered; once one closes
  a new one is served. Bad values are refused by name.

usage: test_gateway_caps.py GATEWAY PROTO_DIR STUB_DIR
One VM (1 vCPU, 512 MiB); bounded waits only, nothing asserts speed."""
import http.client
import json
import socket
import subprocess
import sys

import grpc

import grpc_stubs
from rest_client import ADMIN, call, check, expect_error, poll, report_and_exit
from second_gateway import flagged_gateway, free_port  # noqa: E402 (reads argv[1]: the gateway)

GATEWAY, PROTO_DIR, STUB_DIR = sys.argv[1], sys.argv[2], sys.argv[3]
grpc_stubs.generate(PROTO_DIR, STUB_DIR, ["airlock/v1/sandboxes.proto"])
from airlock.v1 import sandboxes_pb2 as pb, sandboxes_pb2_grpc  # noqa: E402

LIMIT_S = 600


def gw_call(port, method, path, key, body=None, headers=None):
    """(status, parsed JSON or raw bytes) of one request to the gateway on port."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=LIMIT_S)
    h = {"Authorization": "Bearer " + key}
    h.update(headers or {})
    conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=h)
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    try:
        return resp.status, json.loads(data)
    except ValueError:
        return resp.status, data


def open_sse_exec(port, key, sid, cmd):
    """An exec streamed as SSE: (connection, response). The answer's
    headers come once the command has started, so it holds its slot from
    then on until its stream ends."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=LIMIT_S)
    conn.request("POST", "/v1/sandboxes/%s/exec" % sid, body=json.dumps({"cmd": cmd}),
                 headers={"Authorization": "Bearer " + key, "Accept": "text/event-stream"})
    return conn, conn.getresponse()


def wait_for_file(path):
    """A command that runs until path exists (another exec makes it)."""
    return ["sh", "-c", "while [ ! -e %s ]; do sleep 0.2; done" % path]


def check_bad_flags():
    for flag, bad in (("--max-execs-per-key", "-1"), ("--max-execs-per-key", "many"),
                      ("--max-connections", "0"), ("--max-connections", "1001"),
                      ("--max-connections-per-ip", "-2")):
        r = subprocess.run([GATEWAY, flag, bad], capture_output=True, timeout=60)
        check(r.returncode == 2 and flag.encode() in r.stderr and bad.encode() in r.stderr,
              "%s %s is refused by name: %s %s" % (flag, bad, r.returncode, r.stderr))


def check_exec_cap(sid, k1, k2):
    grpc_port = free_port()
    with flagged_gateway("gateway-execs.log", ["--max-execs-per-key", "2", "--grpc-listen",
                         "127.0.0.1:%d" % grpc_port], "a gateway with an exec cap") as gw:
        streams = []
        try:
            for flag in ("/tmp/release-a", "/tmp/release-b"):
                conn, resp = open_sse_exec(gw.port, k1["key"], sid, wait_for_file(flag))
                streams.append((conn, resp))
                check(resp.status == 200, "an exec of key 1 runs (SSE): %s" % resp.status)
            want = "quota exceeded: execs: 2 in use + 1 requested > limit 2 (key %s)" % k1["id"]
            exec_path = "/v1/sandboxes/%s/exec" % sid
            st, body = gw_call(gw.port, "POST", exec_path, k1["key"], {"cmd": ["true"]})
            expect_error(st, body, 429, "quota_exceeded", want, "key 1's third exec (JSON)")
            conn, resp = open_sse_exec(gw.port, k1["key"], sid, ["true"])
            conn.close()
            check(resp.status == 429, "key 1's third exec (SSE) -> 429: %s" % resp.status)
            channel = grpc.insecure_channel("127.0.0.1:%d" % grpc_port)
            stub = sandboxes_pb2_grpc.SandboxesStub(channel)
            code, details = None, ""
            try:
                list(stub.Exec(pb.ExecRequest(id=sid, cmd=["true"]),
                               metadata=[("authorization", "Bearer " + k1["key"])], timeout=LIMIT_S))
            except grpc.RpcError as e:
                code, details = e.code(), e.details()
            channel.close()
            check(code == grpc.StatusCode.RESOURCE_EXHAUSTED and details == want,
                  "key 1's third exec over gRPC -> RESOURCE_EXHAUSTED: %s %r" % (code, details))
            st, _, body = call("POST", exec_path, key=k1["key"], body={"cmd": ["true"]})
            check(st == 200, "the stack's gateway (default cap) runs key 1's exec: %s %s" % (st, body))
            # Key 2 is not held back by key 1's execs; it ends one of them.
            st, body = gw_call(gw.port, "POST", exec_path, k2["key"], {"cmd": ["touch", "/tmp/release-b"]})
            check(st == 200 and body.get("exit_code") == 0,
                  "key 2 of the same project is not held back: %s %s" % (st, body))
            conn, resp = streams.pop()
            ended = b"event: exit" in resp.read()
            conn.close()
            check(ended, "key 1's second exec ended")
            again = poll(lambda: gw_call(gw.port, "POST", exec_path, k1["key"],
                                         {"cmd": ["true"]})[0] == 200, limit_s=60)
            check(again, "once one of key 1's execs has ended, it may exec again")
            gw_call(gw.port, "POST", exec_path, k2["key"], {"cmd": ["touch", "/tmp/release-a"]})
        finally:
            for conn, resp in streams:
                resp.read()
                conn.close()


HEALTHZ = b"GET /healthz HTTP/1.1\r\nHost: gateway\r\n\r\n"


def served_connection(port):
    """A connection the gateway has taken: it answered a request on it
    (kept alive, it holds its place until closed)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    try:
        s.sendall(HEALTHZ)
        if s.recv(4096).startswith(b"HTTP/1.1 200"):
            return s
    except OSError:
        pass
    s.close()
    return None


def answer_on(s, timeout_s):
    """The first bytes the gateway sends on s within timeout_s: b"" when
    it closed s, None when nothing came."""
    s.settimeout(timeout_s)
    try:
        return s.recv(4096)
    except socket.timeout:
        return None
    except OSError:
        return b""


def check_connection_cap(cap):
    """Past --max-connections a connection waits (in the listen queue)
    until one closes."""
    with flagged_gateway("gateway-conns.log", ["--max-connections", str(cap)],
                         "a gateway with a cap") as gw:
        held = []
        try:
            held = [served_connection(gw.port) for _ in range(cap)]
            check(all(held), "--max-connections %d: %d connections served" % (cap, cap))
            waiting = socket.create_connection(("127.0.0.1", gw.port), timeout=60)
            waiting.sendall(HEALTHZ)
            check(answer_on(waiting, 3) is None, "one more gets no answer while %d are open" % cap)
            held.pop().close()
            got = answer_on(waiting, 60) or b""
            check(got.startswith(b"HTTP/1.1 200"), "once one closes, it is served: %r" % got[:40])
            waiting.close()
        finally:
            for s in filter(None, held):
                s.close()


def check_connection_per_ip_cap(cap):
    """Past --max-connections-per-ip a connection from that address is
    closed at once."""
    with flagged_gateway("gateway-conns-ip.log", ["--max-connections-per-ip", str(cap)],
                         "a gateway with a per-IP cap") as gw:
        held = []
        try:
            # Polled: the readiness probe's own connection counts for this
            # address until the gateway has reaped it, which a loaded
            # machine may not have done yet.
            held = [poll(lambda: served_connection(gw.port), limit_s=60) for _ in range(cap)]
            check(all(held), "--max-connections-per-ip %d: %d connections served" % (cap, cap))
            extra = socket.create_connection(("127.0.0.1", gw.port), timeout=60)
            try:
                extra.sendall(HEALTHZ)
            except OSError:
                pass  # closed already
            got = answer_on(extra, 60)
            extra.close()
            check(got == b"", "one more from the same address is closed unanswered: %r" % got)
            held.pop().close()
            again = poll(lambda: served_connection(gw.port), limit_s=60)
            check(again is not None, "once one closes, a new one is served")
            if again:
                again.close()
        finally:
            for s in filter(None, held):
                s.close()


def main():
    check_bad_flags()
    check_connection_cap(3)
    check_connection_per_ip_cap(2)
    st, _, p = call("POST", "/v1/projects", key=ADMIN, body={"name": "caps"})
    keys = [call("POST", "/v1/projects/%s/keys" % p["id"], key=ADMIN, body={"name": n})[2]
            for n in ("one", "two")]
    st, _, sb = call("POST", "/v1/sandboxes", key=keys[0]["key"], body={})
    check(st == 201, "a sandbox: %s %s" % (st, sb))
    if st == 201:
        check_exec_cap(sb["id"], keys[0], keys[1])
        call("DELETE", "/v1/sandboxes/%s" % sb["id"], key=keys[0]["key"])
    report_and_exit()


if __name__ == "__main__":
    main()
