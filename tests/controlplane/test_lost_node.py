#!/usr/bin/python3
"""A lost node through the public API (issue 16 item 4): two nodes share a
snapshot store (cp_harness --nodes 2 --shared-store;
docs/snapshot-store.md "A lost node").
- Node A's vmhost alone killed (its VMs run on, as in a network split):
  its running sandbox turns lost, and is running again once A answers.
- On node A: a running sandbox with a full checkpoint (listed as stored,
  its set in the store), one created with checkpoint_every_s (periodic
  checkpoints appear, and only the newest stays), a suspended one, and a
  running one without any checkpoint.
- A's vmhost and its QEMUs are killed (kill -9, by PID: only the
  processes this stack started). Once A is silent past
  --node-dead-after, the running sandboxes show "lost" with their newest
  stored checkpoint as restore_point; the suspended one resumes on B.
- POST .../restore brings the lost ones back on B from their checkpoints
  (the named one, or the newest without a name): the checkpoint's files
  are there, what was written after it is not; the named one's volume too
  (the checkpoint's set carries it), which lives on B from then on.
- Bad input: checkpoint_every_s out of range is 400 naming the field; a
  lost sandbox without a stored checkpoint is 409 naming it; a restore
  while no other node answers is 503 naming the sandbox, which stays lost.
- A comes back: its stale copies of the restored sandboxes go (and its
  stale image of the moved volume), their checkpoint sets stay; the one without a checkpoint stays lost. A
  checkpoint made on A is deleted from B (its set leaves the store), and
  deleting a sandbox removes its checkpoint sets.

usage: test_lost_node.py
No timing assertions."""
import json
import os
import signal
import subprocess

from cluster import NODES, STORE, drain, sandbox_dirs, volume_files
from rest_client import (call, check, control, new_project_key, poll, psql,
                         report_and_exit)


A, B = NODES[0]["id"], NODES[1]["id"]


def qemus_of(node):
    """{sandbox id: QEMU pid} from the node's sandbox records (vmhost's
    sandbox.json), each checked to be a QEMU still: this stack's own."""
    pids = {}
    for root, _, files in os.walk(node["dir"]):
        if "sandbox.json" not in files:
            continue
        try:
            with open(os.path.join(root, "sandbox.json")) as f:
                pid = json.load(f).get("qemu", {}).get("pid", 0)
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                if b"qemu-system" in f.read():
                    pids[os.path.basename(root)] = pid
        except (OSError, ValueError):
            continue
    return pids


def stored_set(sid, name):
    return os.path.exists(os.path.join(STORE, "checkpoints", sid, name, "manifest.json"))


def get(key, sid):
    st, _, b = call("GET", "/v1/sandboxes/%s" % sid, key=key)
    return b if st == 200 else {}


def sh(key, sid, script):
    st, _, r = call("POST", "/v1/sandboxes/%s/exec" % sid, key=key,
                    body={"cmd": ["sh", "-c", script]})
    check(st == 200, "exec %r in %s (got %s %s)" % (script, sid, st, r))
    return r.get("stdout", "") if st == 200 else ""


def create(key, body=None):
    st, _, b = call("POST", "/v1/sandboxes", key=key, body=body or {})
    check(st == 201 and b.get("node") == A, "create on %s -> 201 (got %s %s)" % (A, st, b))
    return b.get("id", "")


def checkpoints(key, sid):
    st, _, b = call("GET", "/v1/sandboxes/%s/checkpoints" % sid, key=key)
    return b.get("checkpoints", []) if st == 200 else []


def autos(key, sid):
    return [c for c in checkpoints(key, sid) if c["name"].startswith("auto-")]


def node_started(node_id):
    """The start of the node's vmhost process, as its heartbeats say."""
    return psql("SELECT started_unix_ms FROM nodes WHERE id = :'id'", id=node_id)


def check_bad_input(key):
    st, _, b = call("POST", "/v1/sandboxes", key=key, body={"checkpoint_every_s": 5})
    check(st == 400 and "checkpoint_every_s" in str(b),
          "checkpoint_every_s 5 -> 400 naming the field (got %s %s)" % (st, b))
    st, _, b = call("POST", "/v1/sandboxes", key=key, body={"checkpoint_every_s": 86401})
    check(st == 400 and "checkpoint_every_s" in str(b),
          "checkpoint_every_s 86401 -> 400 naming the field (got %s %s)" % (st, b))


def check_split(key):
    """Node A silent while its VMs run on (only its vmhost killed, as a
    network split would look): the running sandbox turns lost, and when A
    answers again with the VM it is running again, its process alive."""
    drain(B, "drain")
    sid = create(key)
    drain(B, "undrain")
    sh(key, sid, "setsid sh -c 'while true; do sleep 1; done' </dev/null >/dev/null 2>&1 &"
                 " echo $! > /root/pid")
    pid = sh(key, sid, "cat /root/pid").strip()
    check(control("kill vmhost 0"), "kill -9 node %s's vmhost (its VMs run on)" % A)
    check(poll(lambda: get(key, sid).get("state") == "lost", limit_s=120),
          "%s turns lost while node A is silent (%s)" % (sid, get(key, sid).get("state")))
    check(control("start vmhost 0"), "node %s's vmhost starts again" % A)
    check(poll(lambda: get(key, sid).get("state") == "running", limit_s=120),
          "node A answers with the VM: %s is running again (%s)"
          % (sid, get(key, sid).get("state")))
    out = sh(key, sid, "kill -0 $(cat /root/pid) && cat /root/pid").strip()
    check(out == pid and get(key, sid).get("node") == A,
          "on %s, its process alive (%r, was %r)" % (A, out, pid))
    st, _, b = call("DELETE", "/v1/sandboxes/%s" % sid, key=key)
    check(st == 204, "delete %s -> 204 (got %s %s)" % (sid, st, b))


def make_sandboxes(key):
    """Everything on A (B drained meanwhile): (named, periodic, suspended,
    bare) ids; the first auto checkpoint's name."""
    drain(B, "drain")
    st, _, v = call("POST", "/v1/volumes", key=key, body={"name": "data", "size_mb": 64})
    check(st == 201, "create volume data -> 201 (got %s %s)" % (st, v))
    named = create(key, {"volumes": [{"name": "data", "path": "/data"}]})
    sh(key, named, "echo before > /root/file; echo before > /data/f; sync")
    st, _, c = call("POST", "/v1/sandboxes/%s/checkpoints" % named, key=key,
                    body={"name": "c1", "kind": "full"})
    check(st == 201 and c.get("stored") is True,
          "a full checkpoint on a node with a store is stored (got %s %s)" % (st, c))
    check(stored_set(named, "c1"), "the store holds checkpoints/%s/c1" % named)
    sh(key, named, "echo after > /root/after; echo after > /data/g; sync")

    periodic = create(key, {"checkpoint_every_s": 10})
    check(get(key, periodic).get("checkpoint_every_s") == 10, "GET shows checkpoint_every_s")
    sh(key, periodic, "echo periodic > /root/file; sync")
    first = poll(lambda: autos(key, periodic), limit_s=120)
    check(len(first) == 1 and first[0].get("stored") is True,
          "a stored periodic checkpoint appears (%s)" % first)
    first_name = first[0]["name"] if first else ""
    # The next one replaces it: only the newest periodic checkpoint stays.
    newer = poll(lambda: [c for c in autos(key, periodic) if c["name"] != first_name],
                 limit_s=120)
    check(newer and poll(lambda: len(autos(key, periodic)) == 1, limit_s=60),
          "a newer periodic checkpoint replaces %s (%s)" % (first_name, autos(key, periodic)))
    check(poll(lambda: not stored_set(periodic, first_name), limit_s=60),
          "the older periodic checkpoint left the store")

    suspended = create(key)
    sh(key, suspended, "echo suspended > /root/file; sync")
    st, _, b = call("POST", "/v1/sandboxes/%s/suspend" % suspended, key=key)
    check(st == 200 and b.get("state") == "suspended", "suspend -> 200 (got %s %s)" % (st, b))

    bare = create(key)
    drain(B, "undrain")
    return named, periodic, suspended, bare


def kill_node_a():
    """The node goes as a machine would: its vmhost, egress and QEMUs
    (kill -9, by PID), and the network namespaces it made (on one machine
    their names would clash with node B's for the same sandboxes)."""
    qemus = qemus_of(NODES[0])
    check(len(qemus) >= 3, "found node A's QEMUs (%s)" % qemus)
    check(control("kill vmhost 0"), "kill -9 node %s's vmhost" % A)
    check(control("kill egress 0"), "kill -9 node %s's egress" % A)
    for pid in qemus.values():
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for sid in qemus:
        subprocess.run(["ip", "netns", "delete", "airlock-" + sid], capture_output=True)
    check(poll(lambda: not qemus_of(NODES[0]), limit_s=60), "node A's QEMUs are gone")


def check_no_other_node(key, sid):
    """While B answers nothing either: 503 naming the sandbox, still lost."""
    started = node_started(B)
    check(control("kill vmhost 1"), "kill -9 node %s's vmhost" % B)
    st, _, b = call("POST", "/v1/sandboxes/%s/restore" % sid, key=key, body={})
    check(st == 503 and sid in str(b), "restore with no other node -> 503 naming %s (got %s %s)"
          % (sid, st, b))
    check(get(key, sid).get("state") == "lost", "%s stays lost" % sid)
    check(control("start vmhost 1"), "node %s's vmhost starts again" % B)
    check(poll(lambda: node_started(B) not in ("", started), limit_s=120),
          "node %s's new vmhost heartbeats" % B)


def main():
    check(len(NODES) == 2, "two nodes (%d)" % len(NODES))
    _, key = new_project_key("lost")
    check_bad_input(key)
    check_split(key)
    named, periodic, suspended, bare = make_sandboxes(key)
    auto_name = autos(key, periodic)[0]["name"] if autos(key, periodic) else ""

    kill_node_a()
    for sid in (named, periodic, bare):
        check(poll(lambda: get(key, sid).get("state") == "lost", limit_s=120),
              "%s turns lost once node A is silent (%s)" % (sid, get(key, sid).get("state")))
    point = get(key, named).get("restore_point", {})
    check(point.get("checkpoint") == "c1" and point.get("created_at"),
          "a lost sandbox shows its newest stored checkpoint (%s)" % point)
    check("restore_point" not in get(key, bare), "one without a checkpoint shows none")

    st, _, b = call("POST", "/v1/sandboxes/%s/resume" % suspended, key=key)
    check(st == 200 and b.get("node") == B and b.get("state") == "running",
          "the suspended sandbox resumes on %s (got %s %s)" % (B, st, b))
    check(sh(key, suspended, "cat /root/file") == "suspended\n", "with its file")

    st, _, b = call("POST", "/v1/sandboxes/%s/restore" % bare, key=key, body={})
    check(st == 409 and bare in str(b),
          "restore of a lost sandbox without a stored checkpoint -> 409 naming it (got %s %s)"
          % (st, b))
    check_no_other_node(key, named)

    st, _, b = call("POST", "/v1/sandboxes/%s/restore" % named, key=key,
                    body={"checkpoint": "c1"})
    check(st == 200 and b.get("state") == "running" and b.get("node") == B,
          "restore c1 of the lost sandbox -> running on %s (got %s %s)" % (B, st, b))
    out = sh(key, named, "cat /root/file; test -e /root/after && echo after-too")
    check(out == "before\n", "the checkpoint's file is there, the later one is not (%r)" % out)
    out = sh(key, named, "cat /data/f; test -e /data/g && echo after-too")
    check(out == "before\n", "its volume came along as the checkpoint had it (%r)" % out)
    st, _, v = call("GET", "/v1/volumes/data", key=key)
    check(st == 200 and v.get("node") == B, "the volume lives on %s now (got %s %s)" % (B, st, v))
    vid = v.get("id", "")
    st, _, b = call("POST", "/v1/sandboxes/%s/restore" % periodic, key=key, body={})
    check(st == 200 and b.get("state") == "running" and b.get("node") == B,
          "restore without a name: the newest (%s) -> running on %s (got %s %s)"
          % (auto_name, B, st, b))
    check(sh(key, periodic, "cat /root/file") == "periodic\n", "the periodic checkpoint's file")

    # A returns: the restored sandboxes' stale copies go, their sets stay.
    check(control("start egress 0") and control("start vmhost 0"),
          "node %s's egress and vmhost start again" % A)
    check(poll(lambda: not sandbox_dirs(NODES[0], named), limit_s=120),
          "reconciliation removed %s's stale copy on %s" % (named, A))
    check(stored_set(named, "c1"), "checkpoint c1 stays in the store")
    check(poll(lambda: not volume_files(NODES[0], vid)["disk"], limit_s=120),
          "%s's stale image of the volume goes (%s)" % (A, volume_files(NODES[0], vid)))
    check(get(key, named).get("node") == B and get(key, bare).get("state") == "lost",
          "the restored one stays on %s, the bare one lost" % B)

    st, _, _ = call("DELETE", "/v1/sandboxes/%s/checkpoints/c1" % named, key=key)
    check(st == 204 and not stored_set(named, "c1"),
          "checkpoint c1 (made on %s) deleted from %s: its set left the store (%s)" % (A, B, st))
    st, _, c = call("POST", "/v1/sandboxes/%s/checkpoints" % named, key=key,
                    body={"name": "c2", "kind": "full"})
    check(st == 201 and stored_set(named, "c2"), "a checkpoint on %s is stored too" % B)
    for sid in (named, periodic, suspended, bare):
        st, _, b = call("DELETE", "/v1/sandboxes/%s" % sid, key=key)
        check(st == 204, "delete %s -> 204 (got %s %s)" % (sid, st, b))
    check(not os.path.exists(os.path.join(STORE, "checkpoints", named)),
          "deleting a sandbox removes its checkpoint sets")
    st, _, _ = call("DELETE", "/v1/volumes/data", key=key)
    check(st == 204 and volume_files(NODES[1], vid)["disk"] is False,
          "the volume deleted from %s (got %s)" % (B, st))
    report_and_exit()


if __name__ == "__main__":
    main()
