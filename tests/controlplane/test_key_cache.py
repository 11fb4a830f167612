#!/usr/bin/python3
"""The gateway's API key cache against a real stack (cp_harness): a second
gateway (argv[1], the gateway binary) runs beside the stack's on the same
scheduler, NATS and vault, with a one-hour cache TTL so that only the
scheduler's NATS message can make it forget a key.

- Both gateways serve a key from their cache (their /metrics count hits).
- A key revoked through the stack's gateway is refused by that gateway on
  the very next request, and by the second gateway once the NATS message
  is in (polled; the hour-long TTL cannot be what ends it).
- Unknown keys stay refused (failures are never cached) and other keys of
  the same project keep working.
- A gateway that cannot reach NATS starts, answers, and never uses its
  cache (it could miss revocations).
- Bad --key-cache-ttl-ms values are refused with a clear message.
No VM; bounded waits only, nothing asserts speed."""
import os
import subprocess

from rest_client import (ADMIN, call, check, expect_error, poll, report_and_exit)
from second_gateway import GATEWAY, SecondGateway, free_port


def cache_count(get, which="hits"):
    """airlock_gateway_key_cache_<which>_total from a gateway's /metrics."""
    st, text = get()
    for line in text.decode().splitlines() if st == 200 else []:
        if line.startswith("airlock_gateway_key_cache_%s_total " % which):
            return int(line.split()[1])
    return -1


def stack_metrics():
    st, _, text = call("GET", "/metrics", raw=True)
    return st, text


def check_bad_ttl():
    for bad in ("-1", "abc", "3600001"):
        r = subprocess.run([GATEWAY, "--key-cache-ttl-ms", bad], capture_output=True, timeout=60)
        check(r.returncode == 2 and b"--key-cache-ttl-ms" in r.stderr and bad.encode() in r.stderr,
              "--key-cache-ttl-ms %s is refused by name: %s %s" % (bad, r.returncode, r.stderr))


def main():
    check_bad_ttl()
    st, _, p = call("POST", "/v1/projects", key=ADMIN, body={"name": "key-cache"})
    check(st == 201, "create a project")
    keys = []
    for name in ("doomed", "kept"):
        st, _, k = call("POST", "/v1/projects/%s/keys" % p["id"], key=ADMIN, body={"name": name})
        check(st == 201, "create key %s" % name)
        keys.append(k)
    doomed, kept = keys

    gw2 = SecondGateway(3600 * 1000, os.environ["AIRLOCK_TEST_NATS_URL"], "gateway2.log")
    try:
        check(poll(gw2.ready, 60) and gw2.proc.poll() is None, "the second gateway answers")
        gw2_metrics = lambda: gw2.call("GET", "/metrics")  # noqa: E731
        hits1, hits2 = cache_count(stack_metrics), cache_count(gw2_metrics)
        for key in (doomed["key"], kept["key"]):
            for _ in range(2):
                st, _, _ = call("GET", "/v1/sandboxes", key=key)
                check(st == 200, "the stack's gateway accepts the key")
                st, _ = gw2.call("GET", "/v1/sandboxes", key=key)
                check(st == 200, "the second gateway accepts the key")
        check(cache_count(stack_metrics) >= hits1 + 2,
              "the stack's gateway served the keys from its cache")
        check(cache_count(gw2_metrics) >= hits2 + 2,
              "the second gateway served the keys from its cache")

        st, _, _ = call("DELETE", "/v1/projects/%s/keys/%s" % (p["id"], doomed["id"]), key=ADMIN)
        check(st == 204, "revoke a cached key through the stack's gateway")
        st, _, body = call("GET", "/v1/sandboxes", key=doomed["key"])
        expect_error(st, body, 401, "unauthenticated", "unknown API key",
                     "the revoking gateway refuses the key on the next request")
        refused = poll(lambda: gw2.call("GET", "/v1/sandboxes", key=doomed["key"])[0] == 401, 60)
        check(refused, "the second gateway refuses the key once the NATS message is in "
                       "(its cache TTL is an hour)")
        st, _ = gw2.call("GET", "/v1/sandboxes", key=doomed["key"])
        check(st == 401, "and keeps refusing it: %s" % st)
        st, _ = gw2.call("GET", "/v1/sandboxes", key=kept["key"])
        check(st == 200, "the project's other key still works on the second gateway")
        st, _, _ = call("GET", "/v1/sandboxes", key=kept["key"])
        check(st == 200, "and on the stack's gateway")

        unknown = "ak_" + "1" * 64
        for _ in range(2):
            st, _ = gw2.call("GET", "/v1/sandboxes", key=unknown)
            check(st == 401, "an unknown key is refused every time (never cached)")
    finally:
        rc = gw2.stop()
    check(rc == 0, "the second gateway stops cleanly on TERM: %s" % rc)
    check_without_nats(kept["key"])
    report_and_exit()


def check_without_nats(key):
    """A gateway whose NATS is unreachable starts, authenticates every
    request with the scheduler and never uses its cache (it could miss
    revocations)."""
    gw3 = SecondGateway(3600 * 1000, "nats://127.0.0.1:%d" % free_port(), "gateway3.log")
    try:
        check(poll(gw3.ready, 60) and gw3.proc.poll() is None,
              "a gateway without NATS starts and answers")
        for _ in range(3):
            st, _ = gw3.call("GET", "/v1/sandboxes", key=key)
            check(st == 200, "it accepts a valid key: %s" % st)
        st, _ = gw3.call("GET", "/v1/events", key=key)
        check(st == 503, "its /v1/events is 503 without NATS: %s" % st)
        metrics = lambda: gw3.call("GET", "/metrics")  # noqa: E731
        check(cache_count(metrics, "hits") == 0 and cache_count(metrics, "misses") == 0,
              "without NATS its key cache is not used")
    finally:
        rc = gw3.stop()
    check(rc == 0, "the gateway without NATS stops cleanly on TERM: %s" % rc)


if __name__ == "__main__":
    main()
