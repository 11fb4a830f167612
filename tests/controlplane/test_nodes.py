#!/usr/bin/python3
"""The nodes and their drain state end to end through cp_harness's real
stack, over REST, the public gRPC API (airlock.v1.Nodes) and the CLI:
listing shows the stack's node with its capacity and counts that follow a
create; a project key is refused; an unknown node is 404 naming it; the
last live active node cannot be drained (409, nothing changed); drain and
undrain are idempotent; a draining node gets no new sandbox, no fork and
no resume of a suspended one, and turns drained once its sandboxes are
gone; undrain brings placement back.

The second node is the stack's CP_OTHER_NODE_ID ("cp-node-b"): no vmhost
runs for it, cp_node_heartbeat sends its heartbeats with a budget far
above the real node's, so placement prefers it. A create placed there
fails naming it ("not answering"): that is how this test sees where the
scheduler places, and a create that succeeds ran on cp-node.

usage: test_nodes.py PROTO_DIR STUB_DIR AIRLOCK_CLI CP_NODE_HEARTBEAT
No timing assertions. At most two VMs at a time (1 vCPU, 512 MiB)."""
import json
import os
import subprocess
import sys

import grpc

import grpc_stubs
from rest_client import ADMIN, call, check, expect_error, new_project_key, poll, report_and_exit
from test_public_grpc import LIMIT_S, expect_error as expect_grpc_error  # Sandboxes stubs

PROTO_DIR, STUB_DIR, CLI, HEARTBEAT = sys.argv[1:5]
grpc_stubs.generate(PROTO_DIR, STUB_DIR, ["airlock/v1/nodes.proto"])
from airlock.v1 import nodes_pb2 as npb, nodes_pb2_grpc  # noqa: E402

A, B = "cp-node", "cp-node-b"  # cp_nats.h: CP_NODE_ID, CP_OTHER_NODE_ID
# The real node's share of the fake one's: placement takes the most
# memory left first.
B_VCPUS, B_MEMORY_MB = "64", "1048576"
LAST = "last node that could take work"


class Nodes:
    """The Nodes stub with one key's metadata on every call."""

    def __init__(self, channel, key):
        self.stub = nodes_pb2_grpc.NodesStub(channel)
        self.metadata = [("authorization", "Bearer " + key)]

    def __getattr__(self, name):
        method = getattr(self.stub, name)
        return lambda request: method(request, metadata=self.metadata, timeout=LIMIT_S)


def node(nid, key=ADMIN):
    st, _, body = call("GET", "/v1/nodes/%s" % nid, key=key)
    return body if st == 200 else {"status": st, "body": body}


def drain(nid, op="drain", key=ADMIN):
    return call("POST", "/v1/nodes/%s/%s" % (nid, op), key=key)


def create(key):
    return call("POST", "/v1/sandboxes", key=key, body={})


def placed_on_b(st, body, what):
    """A create the scheduler placed on B, whose node never answers."""
    message = body.get("error", {}).get("message", "") if isinstance(body, dict) else ""
    check(st == 503 and "node %s failed" % B in message,
          "%s: placed on %s, which does not answer (got %s %s)" % (what, B, st, body))


def airlock(*args, key=ADMIN):
    env = dict(os.environ, AIRLOCK_API_KEY=key)
    p = subprocess.run([CLI] + list(args), capture_output=True, env=env, timeout=LIMIT_S)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def check_list_and_counts(key, admin):
    st, _, body = call("GET", "/v1/nodes", key=ADMIN)
    nodes = {n["id"]: n for n in body.get("nodes", [])} if st == 200 else {}
    a = nodes.get(A, {})
    cap = a.get("capacity", {})
    check(st == 200 and a.get("state") == "active" and a.get("live") is True
          and a.get("last_heartbeat_at") and a.get("state_changed_at") is None
          and cap.get("vcpus_limit", 0) > 0 and cap.get("memory_limit_mb", 0) > 0
          and cap.get("sandbox_slots", 0) > 0 and isinstance(a.get("templates"), list),
          "GET /v1/nodes shows %s active, live, with its budget: %s %s" % (A, st, body))
    running = a.get("sandboxes", {}).get("running", 0)
    st, _, s1 = create(key)
    check(st == 201 and s1.get("node") == A, "a create lands on %s: %s %s" % (A, st, s1))
    after = node(A)
    check(after.get("sandboxes", {}).get("running") == running + 1,
          "its running count went %d -> %d: %s" % (running, running + 1, after))
    got = admin.GetNode(npb.NodeRequest(id=A))
    check(got.state == "active" and got.live and got.sandboxes.get("running") == running + 1
          and got.capacity.vcpus_limit == cap.get("vcpus_limit"),
          "Nodes.GetNode agrees: %s" % got)
    listed = admin.ListNodes(npb.ListNodesRequest())
    check(A in [n.id for n in listed.nodes], "Nodes.ListNodes lists %s: %s" % (A, listed))
    return s1["id"]


def check_refusals(key, project_nodes, admin):
    for method, path in [("GET", "/v1/nodes"), ("GET", "/v1/nodes/" + A),
                         ("POST", "/v1/nodes/%s/drain" % A), ("POST", "/v1/nodes/%s/undrain" % A)]:
        st, _, body = call(method, path, key=key)
        expect_error(st, body, 403, "permission_denied", "admin", "%s %s with a project key"
                     % (method, path))
    for name, request in [("ListNodes", npb.ListNodesRequest()),
                          ("GetNode", npb.NodeRequest(id=A)),
                          ("DrainNode", npb.NodeRequest(id=A)),
                          ("UndrainNode", npb.NodeRequest(id=A))]:
        expect_grpc_error(lambda: getattr(project_nodes, name)(request),
                          grpc.StatusCode.PERMISSION_DENIED, "admin",
                          "Nodes.%s with a project key" % name)
    for method, path in [("GET", "/v1/nodes/no-such-node"),
                         ("POST", "/v1/nodes/no-such-node/drain"),
                         ("POST", "/v1/nodes/no-such-node/undrain")]:
        st, _, body = call(method, path, key=ADMIN)
        expect_error(st, body, 404, "not_found", "node no-such-node", "%s %s" % (method, path))
    expect_grpc_error(lambda: admin.DrainNode(npb.NodeRequest(id="no-such-node")),
                      grpc.StatusCode.NOT_FOUND, "node no-such-node", "Nodes.DrainNode unknown")
    expect_grpc_error(lambda: admin.GetNode(npb.NodeRequest()),
                      grpc.StatusCode.INVALID_ARGUMENT, "id", "Nodes.GetNode without an id")
    # The only node: nothing else could take work.
    st, _, body = drain(A)
    expect_error(st, body, 409, "conflict", LAST, "draining the only node")
    expect_grpc_error(lambda: admin.DrainNode(npb.NodeRequest(id=A)),
                      grpc.StatusCode.FAILED_PRECONDITION, LAST, "Nodes.DrainNode of the only node")
    a = node(A)
    check(a.get("state") == "active" and a.get("state_changed_at") is None,
          "the refused drains changed nothing: %s" % a)


def start_b():
    beat = subprocess.Popen([HEARTBEAT, B, B_VCPUS, B_MEMORY_MB], stdout=subprocess.PIPE)
    check(beat.stdout.readline().strip() == b"beating", "%s beats" % B)
    check(poll(lambda: node(B).get("live") is True, limit_s=60),
          "%s is listed live: %s" % (B, node(B)))
    return beat


def check_placement(key, admin, s1):
    """B live (preferred by its budget) beside A."""
    st, _, body = create(key)
    placed_on_b(st, body, "a create with both active")
    st, _, b = drain(B)
    check(st == 200 and b.get("state") == "drained" and b.get("state_changed_at")
          and b.get("state_changed_by", "").startswith("key_"),
          "draining %s, which holds nothing: drained at once, by the admin key: %s %s"
          % (B, st, b))
    st, _, again = drain(B)
    check(st == 200 and again.get("state") == "drained"
          and again.get("state_changed_at") == b.get("state_changed_at"),
          "draining it again answers it as it is: %s %s" % (st, again))
    st, _, s2 = create(key)
    check(st == 201 and s2.get("node") == A, "with %s drained the create lands on %s: %s %s"
          % (B, A, st, s2))
    st, _, body = drain(A)
    expect_error(st, body, 409, "conflict", LAST, "draining %s while %s is drained" % (A, B))
    check(node(A).get("state") == "active", "... changed nothing")

    got = admin.UndrainNode(npb.NodeRequest(id=B))
    check(got.state == "active", "Nodes.UndrainNode %s: active: %s" % (B, got))
    got = admin.UndrainNode(npb.NodeRequest(id=B))
    check(got.state == "active", "undraining an active node answers it as it is: %s" % got)
    got = admin.DrainNode(npb.NodeRequest(id=A))
    check(got.state == "draining" and got.sandboxes.get("running") == 2,
          "Nodes.DrainNode %s with %s live and active: draining, its two sandboxes still there: %s"
          % (A, B, got))
    got = admin.DrainNode(npb.NodeRequest(id=A))
    check(got.state == "draining", "Nodes.DrainNode again: as it is: %s" % got)
    st, _, body = create(key)
    placed_on_b(st, body, "a create with %s draining" % A)

    # No new work on A for the sandboxes there either.
    st, _, body = call("POST", "/v1/sandboxes/%s/fork" % s1, key=key, body={})
    expect_error(st, body, 409, "conflict", "node %s is draining" % A, "a fork on draining %s" % A)
    st, _, body = call("POST", "/v1/sandboxes/%s/suspend" % s2["id"], key=key)
    check(st == 200 and body.get("state") == "suspended",
          "a sandbox on draining %s suspends: %s %s" % (A, st, body))
    st, _, body = call("POST", "/v1/sandboxes/%s/resume" % s2["id"], key=key)
    expect_error(st, body, 409, "conflict", "node %s is draining" % A,
                 "resuming a suspended sandbox on draining %s" % A)
    a = node(A)
    check(a.get("state") == "draining" and a.get("sandboxes") == {"running": 1, "suspended": 1},
          "%s holds a running and a suspended sandbox, still draining: %s" % (A, a))

    # Gone, A holds nothing: the drain controller marks it drained.
    for sid in (s1, s2["id"]):
        st, _, _ = call("DELETE", "/v1/sandboxes/%s" % sid, key=key)
        check(st in (200, 204), "delete %s: %s" % (sid, st))
    check(poll(lambda: node(A).get("state") == "drained", limit_s=60),
          "%s with no sandbox left is drained: %s" % (A, node(A)))


def check_cli(key):
    rc, out, err = airlock("node", "undrain", A)
    check(rc == 0 and "state:           active" in out, "airlock node undrain %s: %d %r %r"
          % (A, rc, out, err))
    rc, out, err = airlock("--json", "node", "drain", B)
    check(rc == 0 and json.loads(out or "{}").get("state") == "drained",
          "airlock --json node drain %s: %d %r %r" % (B, rc, out, err))
    st, _, s3 = create(key)
    check(st == 201 and s3.get("node") == A, "undrained, %s takes creates again: %s %s"
          % (A, st, s3))
    rc, out, err = airlock("node", "ls")
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[1:] if line.strip()}
    check(rc == 0 and out.startswith("ID") and rows.get(A, [])[:2] == ["active", "yes"]
          and rows.get(B, [])[:2] == ["drained", "yes"] and "running=1" in rows.get(A, []),
          "airlock node ls: %d %r %r" % (rc, out, err))
    rc, out, err = airlock("--json", "node", "get", A)
    got = json.loads(out or "{}") if rc == 0 else {}
    check(got.get("id") == A and got.get("sandboxes") == {"running": 1},
          "airlock --json node get %s: %d %r" % (A, rc, out))
    rc, _, err = airlock("node", "drain", A)
    check(rc == 1 and LAST in err, "airlock node drain of the last active node: %d %r" % (rc, err))
    for args, want_rc, fragment, what in [
        (("node", "get", "no-such-node"), 1, "no-such-node", "an unknown node"),
        (("node", "frob", A), 2, "usage", "an unknown subcommand"),
        (("node", "drain"), 2, "usage", "no id"),
    ]:
        rc, _, err = airlock(*args)
        check(rc == want_rc and fragment in err, "airlock %s: %s exits %d naming %r (%d %r)"
              % (" ".join(args), what, want_rc, fragment, rc, err))
    rc, _, err = airlock("node", "ls", key=key)
    check(rc == 1 and "admin" in err, "airlock node ls with a project key: %d %r" % (rc, err))
    call("DELETE", "/v1/sandboxes/%s" % s3.get("id"), key=key)


def check_gone(beat):
    """B silent past --node-dead-after: listed gone, and no taker of work."""
    beat.terminate()
    beat.wait(timeout=60)
    check(poll(lambda: node(B).get("live") is False, limit_s=120),
          "%s, silent, is listed not live: %s" % (B, node(B)))
    st, _, b = drain(B, "undrain")
    check(st == 200 and b.get("state") == "active" and b.get("live") is False,
          "undraining gone %s: active, not live: %s %s" % (B, st, b))
    st, _, body = drain(A)
    expect_error(st, body, 409, "conflict", LAST, "draining %s while %s is gone" % (A, B))
    st, _, b = drain(B)
    check(st == 200 and b.get("state") == "drained",
          "draining a gone node needs no other taker: %s %s" % (st, b))


def main():
    _, key = new_project_key("nodes")
    channel = grpc.insecure_channel(os.environ["AIRLOCK_GRPC_ADDR"])
    grpc.channel_ready_future(channel).result(timeout=60)
    admin, project_nodes = Nodes(channel, ADMIN), Nodes(channel, key)
    s1 = check_list_and_counts(key, admin)
    check_refusals(key, project_nodes, admin)
    beat = start_b()
    try:
        check_placement(key, admin, s1)
        check_cli(key)
        check_gone(beat)
    finally:
        beat.kill()
    report_and_exit()


if __name__ == "__main__":
    main()
