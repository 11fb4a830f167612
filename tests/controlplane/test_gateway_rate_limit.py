#!/usr/bin/python3
"""The gateway's per-key rate limit against a real stack (cp_harness): a
second gateway (argv[1]) beside the stack's, on the same scheduler, NATS
and vault, runs with --rate-limit-per-key 2 --rate-limit-burst 3.

- REST: a key's first 3 requests at once are served, and soon after one is
  429 rate_limited naming the limit, with Retry-After (whole seconds, as
  the message says). Another key of the same project is served meanwhile,
  and so is the limited key by the stack's gateway (counted per gateway);
  a request with an unknown key is 401, not 429; /healthz is never
  limited. Once Retry-After has passed the key is served again.
- gRPC: a key's first 3 calls are served, and soon after one is
  RESOURCE_EXHAUSTED naming the limit, with retry-after trailing metadata.
- Bad values of the flags are refused by name.

usage: test_gateway_rate_limit.py GATEWAY PROTO_DIR STUB_DIR
No VM; bounded waits only, nothing asserts speed (the only sleep is the
Retry-After the gateway asked for)."""
import http.client
import json
import subprocess
import sys
import time

import grpc

import grpc_stubs
from rest_client import ADMIN, call, check, expect_error, report_and_exit
from second_gateway import flagged_gateway, free_port  # noqa: E402 (reads argv[1]: the gateway)

GATEWAY, PROTO_DIR, STUB_DIR = sys.argv[1], sys.argv[2], sys.argv[3]
grpc_stubs.generate(PROTO_DIR, STUB_DIR, ["airlock/v1/sandboxes.proto"])
from airlock.v1 import sandboxes_pb2 as pb, sandboxes_pb2_grpc  # noqa: E402

# A key spends its burst long before it could refill this many: a refusal
# must come within these many requests however slow the machine is.
MAX_TRIES = 50


def list_sandboxes(port, key):
    """(status, headers, parsed body) of GET /v1/sandboxes on port."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("GET", "/v1/sandboxes", headers={"Authorization": "Bearer " + key})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, resp.headers, json.loads(data)


def until_refused(attempt):
    """Calls attempt() until it returns something other than None, at most
    MAX_TRIES times: (how many were served first, what it returned)."""
    for served in range(MAX_TRIES):
        refusal = attempt()
        if refusal is not None:
            return served, refusal
    return MAX_TRIES, None


def limit_message(key_id, retry_after):
    return ("rate limited: key %s made more than 2 requests a second (burst 3) through this "
            "gateway; retry after %s s" % (key_id, retry_after))


def check_rest(gw, k1, k2):
    def attempt():
        st, headers, body = list_sandboxes(gw.port, k1["key"])
        return None if st == 200 else (st, headers, body)

    served, refusal = until_refused(attempt)
    check(served >= 3 and refusal is not None,
          "key 1's burst of 3 is served, then a request is refused (%d served)" % served)
    if refusal is None:
        return
    st, headers, body = refusal
    retry_after = headers.get("Retry-After", "")
    check(retry_after.isdigit() and int(retry_after) >= 1,
          "the refusal says when to retry: Retry-After %r" % retry_after)
    expect_error(st, body, 429, "rate_limited", limit_message(k1["id"], retry_after),
                 "key 1 past its rate (REST)")
    st, _, body = list_sandboxes(gw.port, k2["key"])
    check(st == 200, "key 2 of the same project is not held back: %s %s" % (st, body))
    st, _, body = call("GET", "/v1/sandboxes", key=k1["key"])
    check(st == 200, "the stack's gateway counts key 1 apart: %s %s" % (st, body))
    st, _, body = list_sandboxes(gw.port, "al_no_such_key")
    check(st == 401, "an unknown key is refused by authentication, not the limit: %s" % st)
    healthy = all(gw.call("GET", "/healthz")[0] == 200 for _ in range(10))
    check(healthy, "/healthz is never rate limited")
    if retry_after.isdigit():
        time.sleep(int(retry_after))
        st, _, body = list_sandboxes(gw.port, k1["key"])
        check(st == 200, "after Retry-After, key 1 is served again: %s %s" % (st, body))


def check_grpc(port, k3):
    channel = grpc.insecure_channel("127.0.0.1:%d" % port)
    stub = sandboxes_pb2_grpc.SandboxesStub(channel)

    def attempt():
        try:
            stub.ListSandboxes(pb.ListSandboxesRequest(),
                               metadata=[("authorization", "Bearer " + k3["key"])], timeout=60)
            return None
        except grpc.RpcError as e:
            return e

    served, refusal = until_refused(attempt)
    channel.close()
    check(served >= 3 and refusal is not None,
          "key 3's burst of 3 gRPC calls is served, then one is refused (%d served)" % served)
    if refusal is None:
        return
    trailers = dict(refusal.trailing_metadata() or ())
    retry_after = trailers.get("retry-after", "")
    check(refusal.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and retry_after.isdigit()
          and refusal.details() == limit_message(k3["id"], retry_after),
          "key 3 past its rate over gRPC -> RESOURCE_EXHAUSTED with retry-after: %s %r %r"
          % (refusal.code(), refusal.details(), trailers))


def check_bad_flags():
    for flag, bad in (("--rate-limit-per-key", "-1"), ("--rate-limit-per-key", "fast"),
                      ("--rate-limit-per-key", "0.0001"), ("--rate-limit-burst", "0"),
                      ("--rate-limit-burst", "many")):
        r = subprocess.run([GATEWAY, flag, bad], capture_output=True, timeout=60)
        check(r.returncode == 2 and flag.encode() in r.stderr and bad.encode() in r.stderr,
              "%s %s is refused by name: %s %s" % (flag, bad, r.returncode, r.stderr))


def main():
    check_bad_flags()
    st, _, p = call("POST", "/v1/projects", key=ADMIN, body={"name": "rate-limit"})
    check(st == 201, "a project: %s %s" % (st, p))
    keys = [call("POST", "/v1/projects/%s/keys" % p["id"], key=ADMIN, body={"name": n})[2]
            for n in ("one", "two", "three")]
    grpc_port = free_port()
    with flagged_gateway("gateway-rate-limit.log",
                         ["--rate-limit-per-key", "2", "--rate-limit-burst", "3",
                          "--grpc-listen", "127.0.0.1:%d" % grpc_port],
                         "a rate-limited gateway") as gw:
        check_rest(gw, keys[0], keys[1])
        check_grpc(grpc_port, keys[2])
    report_and_exit()


if __name__ == "__main__":
    main()
