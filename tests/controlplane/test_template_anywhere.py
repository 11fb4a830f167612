#!/usr/bin/python3
"""A named template built on one node creates sandboxes on another: three
nodes share a snapshot store (cp_harness --nodes 3 --shared-store;
docs/templates.md "Across nodes").
- Two templates are built (POST /v1/templates); each row records its set
  in the store, which holds it (manifest and deltas).
- The nodes that built them are drained, leaving a node C that has
  neither; two concurrent creates of the good template both land on C,
  which fetched it once (its log says so once), and each sandbox has the
  template's file, env, workdir and running start_cmd. C's heartbeat then
  lists the version.
- Bad input: the other template's memory delta in the store is corrupted;
  a create of it on C fails naming the template and the object, and C
  keeps nothing of it (no version directory, no build directory, not in
  its heartbeat).
- Deleting the templates removes their sets from the store and C's
  fetched copy.

usage: test_template_anywhere.py
No timing assertions."""
import os
import threading

from cluster import NODES, STORE, drain, node_state, sh
from rest_client import call, check, new_project_key, poll, psql, report_and_exit


GOOD = {
    "name": "shared-good",
    "files": [{"path": "/opt/app/marker", "content": "built-on-another-node\n"}],
    "env": {"APP_MODE": "anywhere"},
    "workdir": "/opt/app",
    "start_cmd": "echo started > /opt/app/started; exec sleep 100000",
}
BAD = {"name": "shared-bad", "run": ["echo bad > /root/bad"]}


def template_row(project, name):
    """(node_id, store_object) of name:1's row."""
    out = psql("SELECT coalesce(node_id, '') || '|' || store_object FROM templates"
               " WHERE project_id = :'p' AND name = :'n' AND version = 1", p=project, n=name)
    return tuple(out.strip().split("|")) if "|" in out else None


def node_lists(node_id, template_id):
    out = psql("SELECT :'t' = ANY(templates) FROM nodes WHERE id = :'id'",
               t=template_id, id=node_id)
    return out.strip() == "t"


def version_dir(node, template_id):
    name, version = template_id.rsplit(":", 1)
    return os.path.join(node["dir"], "store", "templates", "named", name, version)


def build_dirs(node):
    tdir = os.path.join(node["dir"], "store", "templates")
    return [d for d in os.listdir(tdir) if d.startswith(".build-")]


def fetched_lines(node, template_id):
    with open(node["log"], errors="replace") as f:
        return sum(1 for line in f if "template fetched from the snapshot store" in line
                   and "template=%s " % template_id in line)


def build(key, project, spec):
    st, _, b = call("POST", "/v1/templates", key=key, body=spec)
    check(st == 201 and b.get("ref") == spec["name"] + ":1",
          "build %s -> 201 (got %s %s)" % (spec["name"], st, b))
    node, stored = template_row(project, spec["name"]) or ("", "")
    check(node == b.get("node") and stored.startswith("templates/"),
          "%s's row records its node and its set in the store (%s %s)"
          % (spec["name"], node, stored))
    check(all(os.path.exists(os.path.join(STORE, stored, f)) for f in
              ("manifest.json", "disk.ext4.delta", "mem.delta", "state.delta")),
          "the store holds %s" % stored)
    return node, stored


def concurrent_creates(key, n):
    results = [None] * n

    def one(i):
        results[i] = call("POST", "/v1/sandboxes", key=key, body={"template": GOOD["name"]})

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def check_created_elsewhere(key, good_id, c):
    results = concurrent_creates(key, 2)
    sids = []
    for st, _, b in results:
        check(st == 201 and b.get("node") == c["id"] and b.get("template") == GOOD["name"] + ":1",
              "create of %s -> 201 on %s (got %s %s)" % (GOOD["name"], c["id"], st, b))
        sids.append(b.get("id"))
    check(fetched_lines(c, good_id) == 1, "%s fetched %s once (%d log lines)"
          % (c["id"], good_id, fetched_lines(c, good_id)))
    check(os.path.exists(os.path.join(version_dir(c, good_id), "manifest.json")),
          "%s keeps the fetched version" % c["id"])
    for sid in sids:
        if not sid:
            continue
        out = sh(key, sid, "cat marker; echo $APP_MODE; pwd; cat started;"
                           " for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done"
                           " | grep -q '^sleep 100000' && echo running")
        check(out.split() == ["built-on-another-node", "anywhere", "/opt/app", "started",
                              "running"],
              "%s has the template's file, env, workdir and start_cmd (%r)" % (sid, out))
    check(poll(lambda: node_lists(c["id"], good_id), limit_s=60),
          "%s's heartbeat lists %s" % (c["id"], good_id))
    return sids


def check_corrupt_refused(key, bad_id, bad_set, c):
    delta = os.path.join(STORE, bad_set, "mem.delta")
    with open(delta, "r+b") as f:
        f.seek(os.path.getsize(delta) // 2)
        f.write(b"\xde\xad\xbe\xef" * 64)
    st, _, b = call("POST", "/v1/sandboxes", key=key, body={"template": BAD["name"]})
    message = str(b.get("error", b))
    check(st >= 400 and bad_id in message and bad_set + "/mem.delta" in message,
          "a create of a corrupt template fails naming it and the object (got %s %s)" % (st, b))
    check(not os.path.exists(version_dir(c, bad_id)) and not build_dirs(c),
          "%s keeps nothing of %s (%s)" % (c["id"], bad_id, build_dirs(c)))
    check(not node_lists(c["id"], bad_id), "%s does not list %s" % (c["id"], bad_id))


def main():
    check(len(NODES) == 3, "three nodes (%d)" % len(NODES))
    project, key = new_project_key("anywhere-templates")
    good_id, bad_id = project + "." + GOOD["name"] + ":1", project + "." + BAD["name"] + ":1"
    good_node, good_set = build(key, project, GOOD)
    bad_node, bad_set = build(key, project, BAD)
    c = next(n for n in NODES if n["id"] not in (good_node, bad_node))
    others = [n["id"] for n in NODES if n is not c]
    for n in others:
        drain(n)
    check(poll(lambda: all(node_state(n) == "drained" for n in others), limit_s=60),
          "%s drained, %s takes the work" % (others, c["id"]))

    sids = check_created_elsewhere(key, good_id, c)
    check_corrupt_refused(key, bad_id, bad_set, c)

    for sid in sids:
        call("DELETE", "/v1/sandboxes/%s" % sid, key=key)
    for name, stored in ((GOOD["name"], good_set), (BAD["name"], bad_set)):
        st, _, b = call("DELETE", "/v1/templates/%s" % name, key=key)
        check(st in (200, 204), "delete %s -> 200 (got %s %s)" % (name, st, b))
        check(not os.path.exists(os.path.join(STORE, stored)), "the store forgot %s" % stored)
    check(poll(lambda: not os.path.exists(version_dir(c, good_id)), limit_s=60),
          "%s's fetched copy of %s is gone" % (c["id"], good_id))
    for n in others:
        drain(n, "undrain")
    report_and_exit()


if __name__ == "__main__":
    main()
