#!/usr/bin/python3
"""Node admission by the node's budget (vmhost/node_budget.h) end to end:
cp_harness's vmhost offers 1 CPU x overcommit 2 = 2 vCPUs, so two default
sandboxes (1 vCPU, 512 MiB) fill it. A third create is refused over REST
(503 unavailable) and gRPC (RESOURCE_EXHAUSTED), naming the room it
lacks, and leaves no live sandbox behind; a suspend gives its room to
another; a resume that does not fit is refused and leaves the sandbox
suspended; once room is made it resumes and answers exec. The
scheduler's placement_failures count the refused placements by op
(create, resume).

usage: test_node_capacity.py PROTO_DIR STUB_DIR
No timing assertions. At most two VMs at a time."""
import os
import re
import sys

import grpc

from prom_metrics import scrape, value
from rest_client import call, check, new_project_key, poll, report_and_exit
from test_public_grpc import Client, pb  # generates the Sandboxes stubs

# The scheduler's placement (heartbeat figures) or the node's own check
# (a heartbeat behind): either names the room it lacks.
NO_ROOM = re.compile(r"no live node has room for a sandbox of 1 vCPUs and 512 MiB|"
                     r"node has no room for 1 more vCPUs: 2 of 2 committed")


def create(key):
    return call("POST", "/v1/sandboxes", key=key, body={})


def refused_for_room(st, body, what):
    message = body.get("error", {}).get("message", "") if isinstance(body, dict) else ""
    check(st == 503 and body.get("error", {}).get("code") == "unavailable"
          and NO_ROOM.search(message) is not None,
          "%s -> 503 unavailable naming the room (got %s %s)" % (what, st, body))


def live(key):
    st, _, b = call("GET", "/v1/sandboxes", key=key)
    return sorted(s["id"] for s in b.get("sandboxes", [])) if st == 200 else None


def state_of(key, sid):
    st, _, b = call("GET", "/v1/sandboxes/%s" % sid, key=key)
    return b.get("state") if st == 200 else st


def exec_says(key, sid, word):
    st, _, r = call("POST", "/v1/sandboxes/%s/exec" % sid, key=key,
                    body={"cmd": ["echo", word]})
    return st == 200 and r.get("stdout") == word + "\n"


def placement_failures(op):
    return value(scrape("scheduler")[2], "airlock_scheduler_placement_failures_total", op=op)


def main():
    _, key = new_project_key("capacity")
    creates_failed = placement_failures("create")
    st, _, a = create(key)
    st2, _, b = create(key)
    check(st == 201 and st2 == 201, "two sandboxes fill the node's 2 vCPUs: %s %s" % (st, st2))
    a, b = a["id"], b["id"]

    st, _, body = create(key)
    refused_for_room(st, body, "a third create over REST")
    check(live(key) == sorted([a, b]), "the refused create left no live sandbox: %s" % live(key))
    # Once the node's heartbeat shows its budget full, the scheduler's
    # placement refuses without asking it.
    placed = poll(lambda: "no live node has room" in
                  create(key)[2].get("error", {}).get("message", ""), limit_s=30, every_s=0.5)
    check(placed, "placement refuses by the heartbeat's budget")
    check(placement_failures("create") > creates_failed,
          "the scheduler counts the refused placement as op=create")
    check(live(key) == sorted([a, b]), "still only the two: %s" % live(key))

    channel = grpc.insecure_channel(os.environ["AIRLOCK_GRPC_ADDR"])
    client = Client(channel, key)
    try:
        client.CreateSandbox(pb.CreateSandboxRequest())
        check(False, "a third create over gRPC is refused")
    except grpc.RpcError as e:
        check(e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and NO_ROOM.search(e.details()),
              "a third create over gRPC -> RESOURCE_EXHAUSTED naming the room (got %s %r)"
              % (e.code(), e.details()))

    # A suspended sandbox's VM is gone: its room takes another create.
    st, _, r = call("POST", "/v1/sandboxes/%s/suspend" % a, key=key)
    check(st == 200 and r.get("state") == "suspended", "suspend a: %s %s" % (st, r))
    # The node's heartbeat tells the scheduler ahead of the suspend's reply;
    # the poll only covers a heartbeat processed after it.
    c = poll(lambda: (lambda r: r[2] if r[0] == 201 else None)(create(key)), limit_s=30,
             every_s=0.5) or {}
    check("id" in c, "the suspended one's room takes a create: %s" % c)
    resumes_failed = placement_failures("resume")
    st, _, r = call("POST", "/v1/sandboxes/%s/resume" % a, key=key)
    refused_for_room(st, r, "resuming a on a full node")
    # Its node refused it and no other node has room: one failed placement.
    check(placement_failures("resume") == resumes_failed + 1,
          "the scheduler counts the refused resume as op=resume (%s -> %s)"
          % (resumes_failed, placement_failures("resume")))
    check(state_of(key, a) == "suspended", "the refused resume left a suspended: %s"
          % state_of(key, a))

    # Room again: a comes back, with its guest.
    if c.get("id"):
        st, _, _ = call("DELETE", "/v1/sandboxes/%s" % c["id"], key=key)
        check(st in (200, 204), "delete c: %s" % st)
    # The node's heartbeat shows the freed room within a period or two.
    resumed = poll(lambda: call("POST", "/v1/sandboxes/%s/resume" % a, key=key)[0] == 200,
                   limit_s=60, every_s=1)
    check(resumed and state_of(key, a) == "running", "a resumes once there is room: %s"
          % state_of(key, a))
    check(exec_says(key, a, "back"), "the resumed sandbox answers exec")
    check(exec_says(key, b, "still"), "the other one answered throughout")

    for sid in (a, b):
        call("DELETE", "/v1/sandboxes/%s" % sid, key=key)
    check(live(key) == [], "every sandbox deleted: %s" % live(key))
    report_and_exit()


if __name__ == "__main__":
    main()
