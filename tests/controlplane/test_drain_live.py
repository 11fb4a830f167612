#!/usr/bin/python3
"""Draining a node moves its running sandboxes live, through the public API
(cp_harness --nodes 3 --shared-store; docs/snapshot-store.md "Live
migration").
- Three running sandboxes on node A (B and C drained while they are
  created), each with a counting process, a python process holding a
  random value and a file written and synced all along; B and C undrained.
- POST /v1/nodes/A/drain: A turns drained; every sandbox is running on B or
  C, the row naming its new node; the same processes count on, the value
  and the files are intact (the synced file read back from the disk after
  the guest dropped its caches); each passed migrating and back to running
  (the audit trail says the drain did it); A keeps no directory, QEMU or
  namespace of them.
- A running sandbox with a volume on A is suspended by the drain and moves
  as a suspend (a live migration does not carry volumes): it resumes on
  its new node with the volume's file, and the volume lives there.
- Exec, pause and resume work on the moved sandboxes.

usage: test_drain_live.py
No timing assertions."""
import os

from cluster import NODES, drain, node_state, sandbox_dirs, sh, volume_files
from rest_client import call, check, new_project_key, poll, psql, report_and_exit


def row(sid):
    out = psql("SELECT coalesce(node_id, '') || '|' || state FROM sandboxes WHERE id = :'id'",
               id=sid)
    return tuple(out.strip().split("|")) if out.strip() else None


WORKLOAD = ("setsid sh -c 'i=0; while true; do i=$((i+1)); echo $i > /root/n; sleep 0.2; done'"
            " </dev/null >/dev/null 2>&1 & echo $! > /root/pids;"
            " setsid python3 -c 'import os, time\n"
            "v = os.urandom(8).hex()\n"
            "while True:\n"
            "    open(\"/root/v.tmp\", \"w\").write(v)\n"
            "    os.rename(\"/root/v.tmp\", \"/root/v\")\n"
            "    time.sleep(0.2)\n' </dev/null >/dev/null 2>&1 & echo $! >> /root/pids;"
            " setsid sh -c 'i=0; while true; do i=$((i+1)); echo $i >> /root/synced; sync;"
            " sleep 0.1; done' </dev/null >/dev/null 2>&1 &"
            " echo kept > /root/file;"
            " for i in $(seq 300); do [ -s /root/v ] && [ -s /root/n ] && break; sleep 0.1; done")

READ = ("cat /root/pids | tr '\\n' ,; echo; cat /root/n; cat /root/v; echo; cat /root/file;"
        " for p in $(cat /root/pids); do kill -0 $p || echo dead; done")

# After the guest dropped its caches the synced file comes from the disk:
# its lines are 1..n with no gap.
SYNCED = ("sync; echo 3 > /proc/sys/vm/drop_caches;"
          " awk 'NR != $1 { bad = 1 } END { print NR, bad + 0 }' /root/synced")


def read(key, sid):
    out = sh(key, sid, READ).split()
    return {"pids": out[0], "n": int(out[1]), "v": out[2], "file": out[3],
            "dead": "dead" in out[4:]} if len(out) >= 4 else {}


def check_running_sandboxes_move_live(key):
    a, b, c = (n["id"] for n in NODES)
    for other in (b, c):
        drain(other, "drain")
        check(poll(lambda: node_state(other) == "drained", limit_s=60), "%s drained" % other)
    sids = []
    for n in range(3):
        st, _, body = call("POST", "/v1/sandboxes", key=key, body={})
        check(st == 201 and body.get("node") == a,
              "create %d -> 201 on %s (got %s %s)" % (n, a, st, body))
        sids.append(body.get("id"))
    st, _, v = call("POST", "/v1/volumes", key=key, body={"name": "w", "size_mb": 64})
    check(st == 201, "create volume w -> 201 (got %s %s)" % (st, v))
    st, _, body = call("POST", "/v1/sandboxes", key=key,
                       body={"volumes": [{"name": "w", "path": "/w"}]})
    check(st == 201 and body.get("node") == a,
          "create with volume w -> 201 on %s (got %s %s)" % (a, st, body))
    with_volume = body.get("id", "")
    sh(key, with_volume, "echo kept > /w/f")
    before = {}
    for sid in sids:
        sh(key, sid, WORKLOAD)
        before[sid] = read(key, sid)
    for other in (b, c):
        drain(other, "undrain")

    drain(a, "drain")
    check(poll(lambda: node_state(a) == "drained", limit_s=600),
          "%s turns drained once its running sandboxes moved (now %s)" % (a, node_state(a)))
    for sid in sids:
        node, state = row(sid) or ("", "")
        check(state == "running" and node in (b, c),
              "%s runs on %s or %s now (%s %s)" % (sid, b, c, node, state))
        after = read(key, sid)
        check(after.get("pids") == before[sid]["pids"] and after.get("v") == before[sid]["v"]
              and after.get("file") == "kept" and not after.get("dead")
              and after.get("n", 0) > before[sid]["n"],
              "%s: the same processes count on with their value and file (%s, before %s)"
              % (sid, after, before[sid]))
        lines, gaps = (int(x) for x in sh(key, sid, SYNCED).split())
        check(gaps == 0 and lines > 10,
              "%s: the file synced through the move is whole on the disk (%d lines, gaps %d)"
              % (sid, lines, gaps))
        trail = psql("SELECT string_agg(from_state || '>' || to_state || ':' || who, ',' ORDER BY id)"
                     " FROM sandbox_transitions WHERE sandbox_id = :'id'"
                     " AND (from_state = 'migrating' OR to_state = 'migrating')", id=sid).strip()
        check(trail.startswith("running>migrating:scheduler (drain),migrating>running:"),
              "%s passed migrating, by the drain (%s)" % (sid, trail))
        check(not sandbox_dirs(NODES[0], sid), "%s left nothing on %s" % (sid, a))
    # A live migration does not carry volumes: that one moved as a suspend.
    node, state = row(with_volume) or ("", "")
    check(state == "suspended" and node in (b, c),
          "the sandbox with a volume moved suspended to %s or %s (%s %s)" % (b, c, node, state))
    st, _, body = call("POST", "/v1/sandboxes/%s/resume" % with_volume, key=key)
    check(st == 200 and body.get("node") == node and sh(key, with_volume, "cat /w/f") == "kept\n",
          "it resumes there with its volume's file (got %s %s)" % (st, body))
    st, _, v = call("GET", "/v1/volumes/w", key=key)
    check(st == 200 and v.get("node") == node and not volume_files(NODES[0], v["id"])["disk"],
          "volume w lives on %s, nothing of it on %s (got %s %s)" % (node, a, st, v))
    call("DELETE", "/v1/sandboxes/%s" % with_volume, key=key)
    call("DELETE", "/v1/volumes/w", key=key)
    netns = [n for n in os.listdir("/run/netns") for s in sids if n == "airlock-" + s]
    check(not netns, "no namespace of the moved sandboxes left on %s: %s" % (a, netns))

    # The moved sandboxes are whole sandboxes of their new nodes.
    moved = sids[0]
    check(sh(key, moved, "echo hi") == "hi\n", "exec on a moved sandbox")
    for op, want in (("pause", "paused"), ("resume", "running")):
        st, _, body = call("POST", "/v1/sandboxes/%s/%s" % (moved, op), key=key)
        check(st == 200 and body.get("state") == want,
              "%s a moved sandbox -> %s (got %s %s)" % (op, want, st, body))
    drain(a, "undrain")
    for sid in sids:
        call("DELETE", "/v1/sandboxes/%s" % sid, key=key)


def main():
    check(len(NODES) == 3, "three nodes (%d)" % len(NODES))
    _, key = new_project_key("drainlive")
    check_running_sandboxes_move_live(key)
    report_and_exit()


if __name__ == "__main__":
    main()
