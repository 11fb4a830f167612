"""The test stack's nodes (cp_harness --nodes N: AIRLOCK_TEST_NODE_<i>_*,
AIRLOCK_TEST_SNAPSHOT_STORE with --shared-store) and what the multi-node
tests do with them through the public API."""
import os

from rest_client import ADMIN, call, check


def node_env(i, name):
    return os.environ["AIRLOCK_TEST_NODE_%d_%s" % (i, name)]


NODES = [{"id": node_env(i, "ID"), "dir": node_env(i, "DATA_DIR"),
          "log": node_env(i, "VMHOST_LOG")}
         for i in range(int(os.environ["AIRLOCK_TEST_NODES"]))]
STORE = os.environ.get("AIRLOCK_TEST_SNAPSHOT_STORE", "")


def sh(key, sid, script):
    """stdout of sh -c script in the sandbox, which must exit 0."""
    st, _, r = call("POST", "/v1/sandboxes/%s/exec" % sid, key=key,
                    body={"cmd": ["sh", "-c", script]})
    check(st == 200 and r.get("exit_code") == 0, "exec %r in %s (got %s %s)" % (script, sid, st, r))
    return r.get("stdout", "") if st == 200 else ""


def drain(node_id, op="drain"):
    """POST /v1/nodes/<id>/<op> (drain or undrain) as the admin: 200."""
    st, _, b = call("POST", "/v1/nodes/%s/%s" % (node_id, op), key=ADMIN)
    check(st == 200, "%s %s -> 200 (got %s %s)" % (op, node_id, st, b))
    return b


def node_state(node_id):
    st, _, b = call("GET", "/v1/nodes/%s" % node_id, key=ADMIN)
    return b.get("state") if st == 200 else None


def sandbox_dirs(node, sid):
    """The sandbox's directories that exist in the node's store (the data
    dir itself on btrfs, else its loop-mounted store/)."""
    return [d for d in (os.path.join(node["dir"], "store", "sandboxes", sid),
                        os.path.join(node["dir"], "sandboxes", sid)) if os.path.exists(d)]


def volume_files(node, vid):
    """What the node's store holds of volume vid: {"disk": bool, "snapshots": [names]}."""
    for root in (os.path.join(node["dir"], "store", "volumes", vid),
                 os.path.join(node["dir"], "volumes", vid)):
        if os.path.isdir(root):
            snaps = os.path.join(root, "snapshots")
            return {"disk": os.path.exists(os.path.join(root, "disk.img")),
                    "snapshots": sorted(os.listdir(snaps)) if os.path.isdir(snaps) else []}
    return {"disk": False, "snapshots": []}
