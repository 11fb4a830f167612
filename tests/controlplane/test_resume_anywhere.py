#!/usr/bin/python3
"""Resume anywhere through the public API: two nodes share a snapshot
store (cp_harness --nodes 2 --shared-store; docs/snapshot-store.md).
- A suspended sandbox resumes on its own node while that node lives: the
  row names the same node and no store object afterwards, and the store
  forgot the suspend.
- A sandbox with a counting process and a file is suspended (the row
  records its object in the store), its node's vmhost is killed (kill -9),
  and POST .../resume brings it back on the other node: same process
  still counting, file intact, the row naming the new node.
- The killed node comes back; reconciliation deletes its stale copy of the
  moved sandbox (its directory goes) and leaves the moved sandbox alone.
- Draining a node moves its paused and suspended sandboxes through the
  store to the other node (a paused one is suspended first), the node
  turns drained, and both resume there with their files and processes.
- A sandbox with a volume moves too (docs/volumes.md "Across nodes"): the
  suspend carries the volume, the resumed sandbox on the other node reads
  it, the volume lives there from then on (a new sandbox with it lands
  there), the old node's image goes and its snapshot stays there (a clone
  of it is made there), and deleting the volume leaves nothing on either.
- Bad input: resuming while no node answers is 503 naming the sandbox and
  its node, and the sandbox stays suspended where it was.

usage: test_resume_anywhere.py
No timing assertions."""
import os
import time

from cluster import NODES, STORE, drain, node_state, sandbox_dirs, sh, volume_files
from rest_client import call, check, control, new_project_key, poll, psql, report_and_exit


def index_of(node_id):
    return next(i for i, n in enumerate(NODES) if n["id"] == node_id)


def row(sid):
    """(node_id, state, store_object) of the sandbox's row."""
    out = psql("SELECT coalesce(node_id, '') || '|' || state || '|' || store_object"
               " FROM sandboxes WHERE id = :'id'", id=sid)
    return tuple(out.strip().split("|")) if out.strip() else None


def lifecycle(key, sid, op, want_state):
    st, _, b = call("POST", "/v1/sandboxes/%s/%s" % (sid, op), key=key)
    check(st == 200 and b.get("state") == want_state,
          "%s %s -> 200 %s (got %s %s)" % (op, sid, want_state, st, b))
    return b


def check_same_node_resume(key):
    st, _, b = call("POST", "/v1/sandboxes", key=key, body={})
    check(st == 201, "create -> 201 (got %s %s)" % (st, b))
    sid, node = b["id"], b["node"]
    lifecycle(key, sid, "suspend", "suspended")
    node_id, _, stored = row(sid)
    check(node_id == node and stored.startswith("sandboxes/%s/" % sid),
          "the row records the suspend's object in the store (%s)" % (row(sid),))
    check(os.path.exists(os.path.join(STORE, stored, "manifest.json")),
          "the store holds %s" % stored)
    b = lifecycle(key, sid, "resume", "running")
    check(b.get("node") == node, "a live node resumes its own sandbox (%s, was %s)"
          % (b.get("node"), node))
    check(row(sid)[2] == "", "no store object once it runs (%s)" % (row(sid),))
    check(not os.path.exists(os.path.join(STORE, stored)), "the store forgot %s" % stored)
    call("DELETE", "/v1/sandboxes/%s" % sid, key=key)


def check_moved_when_its_node_dies(key):
    st, _, b = call("POST", "/v1/sandboxes", key=key, body={})
    check(st == 201, "create -> 201 (got %s %s)" % (st, b))
    sid, home = b["id"], b["node"]
    other = next(n["id"] for n in NODES if n["id"] != home)
    sh(key, sid, "setsid sh -c 'i=0; while true; do i=$((i+1)); echo $i > /root/n; sleep 0.2;"
                 " done' </dev/null >/dev/null 2>&1 & echo $! > /root/pid;"
                 " echo kept > /root/file; sleep 1")
    pid_before = sh(key, sid, "cat /root/pid").strip()
    count_before = int(sh(key, sid, "cat /root/n").strip() or 0)
    lifecycle(key, sid, "suspend", "suspended")

    home_i = index_of(home)
    check(control("kill vmhost %d" % home_i), "kill -9 node %s's vmhost" % home)
    b = lifecycle(key, sid, "resume", "running")
    check(b.get("node") == other, "resumed on the other node %s (got %s)" % (other, b.get("node")))
    check(row(sid)[0] == other and row(sid)[2] == "",
          "the row names %s and no store object (%s)" % (other, row(sid)))
    time.sleep(1)
    out = sh(key, sid, "cat /root/pid; cat /root/n; cat /root/file;"
                       " kill -0 $(cat /root/pid) && echo alive")
    lines = out.split()
    check(len(lines) == 4 and lines[0] == pid_before and int(lines[1]) > count_before
          and lines[2] == "kept" and lines[3] == "alive",
          "the same process counts on, the file is there (%s; before pid %s count %d)"
          % (lines, pid_before, count_before))

    # The dead node returns: its stale suspended copy goes, the sandbox stays.
    check(control("start vmhost %d" % home_i), "node %s's vmhost starts again" % home)
    check(poll(lambda: not sandbox_dirs(NODES[home_i], sid), limit_s=120),
          "reconciliation removed the stale copy of %s on %s" % (sid, home))
    check(row(sid)[:2] == (other, "running"), "the sandbox still runs on %s (%s)"
          % (other, row(sid)))
    sh(key, sid, "true")
    call("DELETE", "/v1/sandboxes/%s" % sid, key=key)


def check_drain_moves_paused_and_suspended(key):
    a, b = NODES[0]["id"], NODES[1]["id"]
    drain(b)  # so both sandboxes start on a
    check(poll(lambda: node_state(b) == "drained", limit_s=60), "%s drained (empty)" % b)
    sids = []
    for n in range(2):
        st, _, body = call("POST", "/v1/sandboxes", key=key, body={})
        check(st == 201 and body.get("node") == a,
              "create %d -> 201 on %s (got %s %s)" % (n, a, st, body))
        sids.append(body.get("id"))
    suspended, paused = sids
    sh(key, suspended, "echo one > /root/file")
    sh(key, paused, "setsid sh -c 'i=0; while true; do i=$((i+1)); echo $i > /root/n; sleep 0.2;"
                    " done' </dev/null >/dev/null 2>&1 & echo $! > /root/pid; sleep 1")
    pid = sh(key, paused, "cat /root/pid").strip()
    lifecycle(key, suspended, "suspend", "suspended")
    lifecycle(key, paused, "pause", "paused")
    drain(b, "undrain")

    drain(a)
    check(poll(lambda: node_state(a) == "drained", limit_s=180),
          "%s turns drained once its sandboxes left (now %s)" % (a, node_state(a)))
    for sid in sids:
        check(row(sid)[:2] == (b, "suspended"),
              "%s moved to %s, suspended (%s)" % (sid, b, row(sid)))
        check(not sandbox_dirs(NODES[0], sid), "%s's copy left %s" % (sid, a))
    lifecycle(key, suspended, "resume", "running")
    check(sh(key, suspended, "cat /root/file") == "one\n", "its file came along")
    lifecycle(key, paused, "resume", "running")
    out = sh(key, paused, "cat /root/pid; kill -0 $(cat /root/pid) && echo alive").split()
    check(out == [pid, "alive"], "the paused one's process lives on on %s (%s)" % (b, out))
    drain(a, "undrain")
    for sid in sids:
        call("DELETE", "/v1/sandboxes/%s" % sid, key=key)


def check_no_node_left(key):
    st, _, b = call("POST", "/v1/sandboxes", key=key, body={})
    check(st == 201, "create -> 201 (got %s %s)" % (st, b))
    sid, home = b["id"], b["node"]
    lifecycle(key, sid, "suspend", "suspended")
    killed = range(len(NODES))
    for i in killed:
        check(control("kill vmhost %d" % i), "kill -9 node %d's vmhost" % i)
    st, _, b = call("POST", "/v1/sandboxes/%s/resume" % sid, key=key)
    message = str(b.get("error", b))
    check(st == 503 and home in message and sid in message,
          "resume with no node answering -> 503 naming the sandbox and its node (got %s %s)"
          % (st, b))
    check(row(sid)[:2] == (home, "suspended"), "it stays suspended on %s (%s)" % (home, row(sid)))
    for i in killed:
        check(control("start vmhost %d" % i), "node %d's vmhost starts again" % i)
    lifecycle(key, sid, "resume", "running")
    call("DELETE", "/v1/sandboxes/%s" % sid, key=key)


def check_volume_moves_with_its_sandbox(key):
    """docs/volumes.md "Across nodes": a suspend in the store carries the
    sandbox's volume; resumed on the other node, the volume is there and
    lives there from then on; its snapshot stays where it was taken."""
    st, _, v = call("POST", "/v1/volumes", key=key, body={"name": "work", "size_mb": 64})
    check(st == 201, "create volume -> 201 (got %s %s)" % (st, v))
    vid = v.get("id", "")
    st, _, b = call("POST", "/v1/sandboxes", key=key,
                    body={"volumes": [{"name": "work", "path": "/work"}]})
    check(st == 201, "create with the volume -> 201 (got %s %s)" % (st, b))
    sid, home = b["id"], b["node"]
    home_i = index_of(home)
    other = next(n["id"] for n in NODES if n["id"] != home)
    sh(key, sid, "echo before > /work/a")
    st, _, snap = call("POST", "/v1/volumes/work/snapshots", key=key, body={"name": "s1"})
    check(st == 201, "snapshot work@s1 -> 201 (got %s %s)" % (st, snap))
    sh(key, sid, "echo after > /work/b")
    lifecycle(key, sid, "suspend", "suspended")
    stored = row(sid)[2]
    manifest = os.path.join(STORE, stored, "manifest.json")
    check(stored and os.path.exists(os.path.join(STORE, stored, "vol0.delta")),
          "the suspend in the store carries the volume (%s)" % stored)
    check(os.path.exists(manifest) and vid in open(manifest).read(),
          "its manifest names volume %s" % vid)

    check(control("kill vmhost %d" % home_i), "kill -9 node %s's vmhost" % home)
    b = lifecycle(key, sid, "resume", "running")
    check(b.get("node") == other, "resumed on the other node %s (got %s)" % (other, b.get("node")))
    check(sh(key, sid, "cat /work/a /work/b") == "before\nafter\n",
          "the volume's bytes came along")
    sh(key, sid, "echo moved > /work/c")
    st, _, v = call("GET", "/v1/volumes/work", key=key)
    check(st == 200 and v.get("node") == other and v.get("attached_sandbox") == sid,
          "the volume lives on %s now, held by %s (got %s %s)" % (other, sid, st, v))
    check(control("start vmhost %d" % home_i), "node %s's vmhost starts again" % home)
    sid_snap = psql("SELECT id FROM volume_snapshots WHERE name = 's1' AND volume_id = :'v'",
                    v=vid).strip()
    check(poll(lambda: not volume_files(NODES[home_i], vid)["disk"], limit_s=120),
          "%s's old image of the volume goes (%s)" % (home, volume_files(NODES[home_i], vid)))
    check(volume_files(NODES[home_i], vid)["snapshots"] == [sid_snap + ".img"],
          "its snapshot stays on %s (%s)" % (home, volume_files(NODES[home_i], vid)))
    call("DELETE", "/v1/sandboxes/%s" % sid, key=key)

    # The volume is attached on its new node; the snapshot clones on its own.
    st, _, b = call("POST", "/v1/sandboxes", key=key,
                    body={"volumes": [{"name": "work", "path": "/work"}]})
    check(st == 201 and b.get("node") == other,
          "a new sandbox with the volume lands on %s (got %s %s)" % (other, st, b))
    check(sh(key, b["id"], "cat /work/a /work/b /work/c") == "before\nafter\nmoved\n",
          "it reads what was written on both nodes")
    call("DELETE", "/v1/sandboxes/%s" % b["id"], key=key)
    st, _, c = call("POST", "/v1/volumes", key=key, body={"name": "old", "from_snapshot": "work@s1"})
    check(st == 201 and c.get("node") == home,
          "a clone of work@s1 is made where the snapshot is, %s (got %s %s)" % (home, st, c))
    st, _, b = call("POST", "/v1/sandboxes", key=key,
                    body={"volumes": [{"name": "old", "path": "/old"}]})
    check(st == 201 and b.get("node") == home, "the clone attaches on %s (got %s %s)"
          % (home, st, b))
    check(sh(key, b["id"], "cat /old/a; test ! -e /old/b && echo no-b") == "before\nno-b\n",
          "the clone has the snapshot's bytes only")
    call("DELETE", "/v1/sandboxes/%s" % b["id"], key=key)

    # Deleting the volume reaches both nodes: its image and the snapshot.
    for name in ("old", "work"):
        st, _, _ = call("DELETE", "/v1/volumes/" + name, key=key)
        check(st == 204, "delete volume %s -> 204 (got %s)" % (name, st))
    check(volume_files(NODES[home_i], vid) == {"disk": False, "snapshots": []} and
          volume_files(NODES[1 - home_i], vid) == {"disk": False, "snapshots": []},
          "nothing of the volume is left on either node (%s, %s)"
          % (volume_files(NODES[home_i], vid), volume_files(NODES[1 - home_i], vid)))


def main():
    check(len(NODES) == 2, "two nodes (%d)" % len(NODES))
    _, key = new_project_key("anywhere")
    check_same_node_resume(key)
    check_moved_when_its_node_dies(key)
    check_volume_moves_with_its_sandbox(key)
    check_drain_moves_paused_and_suspended(key)
    check_no_node_left(key)
    report_and_exit()


if __name__ == "__main__":
    main()
