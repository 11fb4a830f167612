#!/usr/bin/python3
"""A local cluster: cp_harness --nodes 3 runs three nodes (an egress and a
vmhost each, with its own node id, data directory, identities and NATS
user) beside one control plane, as `make up NODES=3` does. Through REST
and the stack's database:
- every node heartbeats (its row in `nodes` is seen again and again);
- creates spread over more than one node (placement takes the node with
  the most memory left, and each sandbox takes some), and each sandbox is
  where the scheduler says: that node's vmhost logged it, no other did;
- exec works in a sandbox on each node;
- deleting them leaves no VM, directory or namespace on any node.

usage: test_local_cluster.py
No timing assertions."""
import os
import time

from cluster import NODES, sandbox_dirs
from rest_client import call, check, new_project_key, poll, psql, report_and_exit

CREATES = 6


def heartbeats():
    """{node id: last_seen} of the nodes heard within the last 10 s."""
    out = psql("SELECT id || ' ' || last_seen FROM nodes "
               "WHERE last_seen > now() - interval '10 seconds'")
    return dict(line.split(" ", 1) for line in out.splitlines() if " " in line)


def qemus_under(directory):
    """Pids of QEMUs whose working directory lies under directory (a
    jailed QEMU runs in its sandbox's directory)."""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                if b"qemu-system" not in f.read():
                    continue
            if os.readlink("/proc/%s/cwd" % pid).startswith(directory + "/"):
                pids.append(pid)
        except OSError:
            continue
    return pids


def logged(node, sid):
    with open(node["log"], errors="replace") as f:
        return any("sandbox=%s " % sid in line for line in f)


def main():
    ids = [n["id"] for n in NODES]
    check(len(NODES) == 3 and len(set(ids)) == 3, "three nodes with ids of their own: %s" % ids)

    first = poll(lambda: (lambda hb: hb if set(hb) >= set(ids) else None)(heartbeats()))
    check(bool(first), "every node heartbeats (nodes rows: %s)" % first)
    time.sleep(5)  # heartbeats come every 2 s
    again = heartbeats()
    check(all(again.get(i) and again[i] != (first or {}).get(i) for i in ids),
          "every node heartbeats again (%s, then %s)" % (first, again))

    _, key = new_project_key("cluster")
    placed = {}
    for n in range(CREATES):
        st, _, b = call("POST", "/v1/sandboxes", key=key, body={})
        check(st == 201 and b.get("node") in ids,
              "create %d -> 201 on one of the nodes (got %s %s)" % (n, st, b))
        if st == 201:
            placed[b["id"]] = b["node"]
    used = sorted(set(placed.values()))
    check(len(used) > 1, "the creates spread over more than one node: %s" % placed)
    for sid, node_id in placed.items():
        where = [n["id"] for n in NODES if logged(n, sid)]
        check(where == [node_id], "%s is on %s and only there (vmhost logs: %s)"
              % (sid, node_id, where))

    for node_id in used:
        sid = next(s for s, n in placed.items() if n == node_id)
        st, _, r = call("POST", "/v1/sandboxes/%s/exec" % sid, key=key,
                        body={"cmd": ["sh", "-c", "echo on-$(hostname)"]})
        check(st == 200 and r.get("exit_code") == 0 and r.get("stdout") == "on-%s\n" % sid,
              "exec in %s on %s (got %s %s)" % (sid, node_id, st, r))

    for sid in placed:
        st, _, b = call("DELETE", "/v1/sandboxes/%s" % sid, key=key)
        check(st == 204, "delete %s -> 204 (got %s %s)" % (sid, st, b))
    for node in NODES:
        mine = [s for s, n in placed.items() if n == node["id"]]
        check(poll(lambda: not qemus_under(node["dir"]), limit_s=60),
              "no VM left on %s (QEMUs: %s)" % (node["id"], qemus_under(node["dir"])))
        left = [d for s in mine for d in sandbox_dirs(node, s)]
        check(not left, "no sandbox directory left on %s: %s" % (node["id"], left))
    # Each node names its namespaces with its own prefix (airlock-, airlock-<node>-).
    netns = [n for n in os.listdir("/run/netns") for s in placed
             if n.startswith("airlock-") and n.endswith("-" + s)]
    check(not netns, "no sandbox namespace left on any node: %s" % netns)
    report_and_exit()


if __name__ == "__main__":
    main()
