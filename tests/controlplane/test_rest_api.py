#!/usr/bin/python3
"""The REST API end to end, through a real gateway, scheduler, PostgreSQL,
nats-server and vmhost with a real VM (started by cp_harness, which passes
AIRLOCK_URL and AIRLOCK_ADMIN_KEY). argv[1]: the gateway binary, whose
--routes list every route this test must have exercised.

Standard library only. No timing assertions. Four VMs in all (A's, two forks of it,
and one of B's that proves B's event stream works)."""
import subprocess
import time
import sys

from rest_client import (ADMIN, EventStream, call, check, expect_error, poll, report_and_exit,
                         sse_events)


def check_whoami(a, ka):
    """GET /v1/whoami names the calling key: a project key with its
    project, the admin key as admin; none is 401."""
    st, _, me = call("GET", "/v1/whoami", key=ka["key"])
    check(st == 200 and me == {"key_id": ka["id"], "project_id": a["id"], "admin": False},
          "whoami names a project key and its project (%s %s)" % (st, me))
    st, _, me = call("GET", "/v1/whoami", key=ADMIN)
    check(st == 200 and me["admin"] is True and me["project_id"] is None,
          "whoami says the admin key is the admin key (%s %s)" % (st, me))
    st, _, body = call("GET", "/v1/whoami")
    expect_error(st, body, 401, "unauthenticated", "Authorization", "whoami without a key")


def check_keys(a, ka):
    """The admin lists projects and keys (never a secret) and revokes a key,
    which stops working at once; the last admin key cannot be revoked."""
    st, _, lst = call("GET", "/v1/projects", key=ADMIN)
    names = [p["name"] for p in lst.get("projects", [])] if st == 200 else []
    check("project-a" in names and "project-b" in names, "GET /v1/projects: %s" % lst)
    st, _, extra = call("POST", "/v1/projects/%s/keys" % a["id"], key=ADMIN, body={"name": "tmp"})
    check(st == 201, "a second key for A")
    st, _, keys = call("GET", "/v1/projects/%s/keys" % a["id"], key=ADMIN)
    listed = keys.get("keys", []) if st == 200 else []
    check([k["id"] for k in listed] == [ka["id"], extra["id"]]
          and all("key" not in k and k["admin"] is False and "revoked_at" not in k for k in listed),
          "GET …/keys lists both, without secrets: %s" % keys)
    st, _, body = call("GET", "/v1/projects", key=ka["key"])
    expect_error(st, body, 403, "permission_denied", "admin", "a project key listing projects")
    st, _, _ = call("GET", "/v1/sandboxes", key=extra["key"])
    check(st == 200, "the second key works before it is revoked")
    st, _, _ = call("DELETE", "/v1/projects/%s/keys/%s" % (a["id"], extra["id"]), key=ADMIN)
    check(st == 204, "revoke the second key: %s" % st)
    st, _, body = call("GET", "/v1/sandboxes", key=extra["key"])
    expect_error(st, body, 401, "unauthenticated", "unknown API key", "a revoked key")
    st, _, keys = call("GET", "/v1/projects/%s/keys" % a["id"], key=ADMIN)
    revoked = [k for k in keys.get("keys", []) if k["id"] == extra["id"]]
    check(revoked and revoked[0].get("revoked_at", "").endswith("Z"),
          "the listing shows when it was revoked: %s" % keys)
    st, _, body = call("DELETE", "/v1/projects/%s/keys/%s" % (a["id"], extra["id"]), key=ADMIN)
    expect_error(st, body, 409, "conflict", "revoked already", "revoking it twice")
    st, _, body = call("DELETE", "/v1/projects/prj_doesnotexist/keys/%s" % ka["id"], key=ADMIN)
    expect_error(st, body, 404, "not_found", ka["id"], "a key of another project")
    st, _, body = call("GET", "/v1/projects/prj_doesnotexist/keys", key=ADMIN)
    expect_error(st, body, 404, "not_found", "prj_doesnotexist", "keys of an unknown project")
    # The stack's one admin key: revoking it would lock everyone out.
    st, _, who = call("GET", "/v1/projects", key=ADMIN)
    default_keys = []
    for p in who.get("projects", []):
        st, _, ks = call("GET", "/v1/projects/%s/keys" % p["id"], key=ADMIN)
        default_keys += [(p["id"], k["id"]) for k in ks.get("keys", [])
                         if k["admin"] and "revoked_at" not in k]
    check(len(default_keys) == 1, "one admin key in force: %s" % default_keys)
    if default_keys:
        st, _, body = call("DELETE", "/v1/projects/%s/keys/%s" % default_keys[0], key=ADMIN)
        expect_error(st, body, 409, "conflict", "last admin key", "revoking the last admin key")


def main():
    # ---- unauthenticated routes and auth failures ----
    st, _, body = call("GET", "/healthz")
    check(st == 200 and body == {"status": "ok"}, "GET /healthz")
    st, _, body = call("GET", "/v1/sandboxes")
    expect_error(st, body, 401, "unauthenticated", "Authorization", "no key")
    st, _, body = call("GET", "/v1/sandboxes", key="ak_" + "0" * 64)
    expect_error(st, body, 401, "unauthenticated", "unknown API key", "unknown key")
    st, _, body = call("GET", "/v1/sandboxes", key="nonsense")
    expect_error(st, body, 401, "unauthenticated", "malformed", "malformed key")
    st, _, body = call("GET", "/v1/events")
    expect_error(st, body, 401, "unauthenticated", "Authorization", "events without a key")
    st, _, body = call("GET", "/v1/nothing", key=ADMIN)
    expect_error(st, body, 404, "not_found", "no route", "unknown route")
    st, _, body = call("PATCH", "/v1/sandboxes", key=ADMIN)
    expect_error(st, body, 405, "invalid_argument", "PATCH", "wrong method")

    # ---- projects and keys (admin) ----
    st, _, a = call("POST", "/v1/projects", key=ADMIN, body={"name": "project-a"})
    check(st == 201 and a["id"].startswith("prj_") and a["name"] == "project-a", "create project A")
    st, _, b = call("POST", "/v1/projects", key=ADMIN, body={"name": "project-b"})
    check(st == 201, "create project B")
    st, _, ka = call("POST", "/v1/projects/%s/keys" % a["id"], key=ADMIN, body={"name": "ci"})
    check(st == 201 and ka["key"].startswith("ak_") and ka["project_id"] == a["id"],
          "create key for A")
    st, _, kb = call("POST", "/v1/projects/%s/keys" % b["id"], key=ADMIN, body={})
    check(st == 201, "create key for B")
    KA, KB = ka["key"], kb["key"]
    # Opened before anything happens in either project (checked at the end).
    events_a, events_b = EventStream(KA), EventStream(KB)
    check(events_a.status == 200 and events_a.subscribed and events_b.subscribed,
          "GET /v1/events answers 200 and says it is subscribed")
    st, _, body = call("POST", "/v1/projects", key=KA, body={"name": "x"})
    expect_error(st, body, 403, "permission_denied", "admin", "project key creating a project")
    st, _, body = call("POST", "/v1/projects/prj_doesnotexist/keys", key=ADMIN, body={})
    expect_error(st, body, 404, "not_found", "prj_doesnotexist", "key for unknown project")
    st, _, body = call("POST", "/v1/projects", key=ADMIN, body={"name": 7})
    expect_error(st, body, 400, "invalid_argument", "name", "project name of the wrong type")
    check_whoami(a, ka)
    check_keys(a, ka)

    # ---- bad input on create ----
    for payload, fragment, what in [
        ('{"cpus":', "malformed JSON", "truncated JSON"),
        ('[1,2]', "JSON object", "array body"),
        ({"cpus": "two"}, "cpus", "cpus as a string"),
        ({"cpus": -1}, "cpus", "negative cpus"),
        ({"cpus": 99}, "cpus", "too many cpus"),
        ({"memory_mb": 16}, "memory_mb", "too little memory"),
        ({"env": {"A": 1}}, "env", "env with a number"),
        ({"metadata": []}, "metadata", "metadata as an array"),
        ({"colour": "red"}, "colour", "unknown field"),
        ({"network": []}, "network", "network as an array"),
        ({"network": {"allow_domains": ["a.test", 5]}}, "network.allow_domains[1]: must be a string",
         "a number among allow_domains"),
        ({"network": {"default": "maybe"}}, "network.default", "default neither deny nor allow"),
        ({"network": {"allow_ports": ["80"]}}, "network.allow_ports[0]", "a port as a string"),
        ({"network": {"colour": "red"}}, "colour", "unknown network field"),
    ]:
        st, _, body = call("POST", "/v1/sandboxes", key=KA, body=payload)
        want = 400
        expect_error(st, body, want, "invalid_argument", fragment, "create with " + what)
    st, _, body = call("POST", "/v1/sandboxes", key=KA, body={"template": "nope"})
    expect_error(st, body, 404, "not_found", "nope", "create from an unknown template")
    st, _, body = call("POST", "/v1/sandboxes", key=KA, body=b"{" + b" " * (2 << 20) + b"}")
    expect_error(st, body, 413, "invalid_argument", "larger than", "huge body")
    st, _, body = call("GET", "/v1/sandboxes/BAD%20ID!", key=KA)
    expect_error(st, body, 400, "invalid_argument", "malformed", "malformed id")
    st, _, body = call("GET", "/v1/sandboxes/sb_00000000000000000000", key=KA)
    expect_error(st, body, 404, "not_found", "sb_00000000000000000000", "unknown id")

    # ---- create (idempotent), get, list ----
    idem = {"Idempotency-Key": "test-create-1"}
    st, _, sb = call("POST", "/v1/sandboxes", key=KA, headers=idem,
                     body={"template": "default", "cpus": 1, "memory_mb": 512,
                           "env": {"GREETING": "hello"}, "metadata": {"owner": "test"},
                           "idle_timeout_s": 3600, "network": POLICY})
    check(st == 201 and sb["id"].startswith("sb_") and sb["state"] == "running"
          and sb["template"] == "default" and sb["node"] == "cp-node" and "created_at" in sb
          and sb["metadata"] == {"owner": "test"} and sb.get("network") == POLICY,
          "create sandbox: %s %s" % (st, sb))
    if st != 201:
        return
    sid = sb["id"]
    st, _, again = call("POST", "/v1/sandboxes", key=KA, headers=idem, body={})
    check(st == 201 and again["id"] == sid, "a retried create returns the same sandbox")
    st, _, got = call("GET", "/v1/sandboxes/" + sid, key=KA)
    check(st == 200 and got["id"] == sid and got["state"] == "running"
          and got.get("network") == POLICY, "get sandbox shows its network policy")
    st, _, lst = call("GET", "/v1/sandboxes", key=KA)
    check(st == 200 and [s["id"] for s in lst["sandboxes"]] == [sid], "list shows one sandbox")
    st, _, lst = call("GET", "/v1/sandboxes", key=KB)
    check(st == 200 and lst["sandboxes"] == [], "B's list does not show A's sandbox")
    check_network(sid, KA)

    # ---- exec ----
    base = "/v1/sandboxes/" + sid
    st, _, r = call("POST", base + "/exec", key=KA,
                    body={"cmd": ["sh", "-c", "echo $GREETING; echo oops >&2; exit 3"]})
    check(st == 200 and r["exit_code"] == 3 and r["stdout"] == "hello\n" and r["stderr"] == "oops\n",
          "exec JSON: %s" % r)
    st, _, r = call("POST", base + "/exec", key=KA,
                    body={"cmd": ["cat"], "stdin": "from stdin", "cwd": "/tmp", "env": {"X": "1"},
                          "timeout_s": 30})
    check(st == 200 and r["stdout"] == "from stdin", "exec with stdin")
    st, _, r = call("POST", base + "/exec", key=KA, body={"cmd": ["printf", "\\377\\376"]})
    check(st == 200 and r.get("stdout_b64") == "//4=", "exec non-UTF-8 output as stdout_b64")
    st, hdrs, raw = call("POST", base + "/exec", key=KA, raw=True,
                         headers={"Accept": "text/event-stream"},
                         body={"cmd": ["sh", "-c", "echo one; printf '\\377' >&2; echo two"]})
    events = sse_events(raw) if st == 200 else []
    kinds = [e[0] for e in events]
    out = "".join(e[1].get("data", "") for e in events if e[0] == "stdout")
    check(st == 200 and hdrs.get("Content-Type") == "text/event-stream"
          and out == "one\ntwo\n" and ("stderr", {"data_b64": "/w=="}) in events
          and kinds[-1] == "exit" and events[-1][1]["exit_code"] == 0,
          "exec SSE: %s %s" % (st, events))
    for payload, fragment in [({}, "cmd"), ({"cmd": []}, "cmd"), ({"cmd": "ls"}, "cmd"),
                              ({"cmd": ["ls"], "timeout_s": "x"}, "timeout_s"),
                              ({"cmd": ["ls"], "shell": True}, "shell")]:
        st, _, body = call("POST", base + "/exec", key=KA, body=payload)
        expect_error(st, body, 400, "invalid_argument", fragment, "exec with %s" % payload)
    st, _, body = call("POST", base + "/exec", key=KA, body={"cmd": ["no-such-program"]})
    check(st == 404 and "no-such-program" in body["error"]["message"], "exec of a missing program")

    # ---- files ----
    blob = bytes(range(256)) * 4096  # 1 MiB, not UTF-8
    st, _, _ = call("PUT", base + "/files?path=/root/blob.bin", key=KA, body=blob)
    check(st == 204, "PUT file")
    st, _, data = call("GET", base + "/files?path=/root/blob.bin", key=KA, raw=True)
    check(st == 200 and data == blob, "GET file returns the same bytes")
    st, _, listing = call("GET", base + "/files/list?path=/root", key=KA)
    entry = [e for e in listing.get("entries", []) if e["name"] == "blob.bin"] if st == 200 else []
    check(entry and entry[0]["type"] == "file" and entry[0]["size"] == len(blob),
          "files/list shows the file")
    st, _, body = call("GET", base + "/files?path=/root/missing", key=KA)
    expect_error(st, body, 404, "not_found", "missing", "GET a missing file")
    st, _, body = call("GET", base + "/files?path=relative", key=KA)
    expect_error(st, body, 400, "invalid_argument", "path", "relative path")
    st, _, body = call("PUT", base + "/files", key=KA, body=b"x")
    expect_error(st, body, 400, "invalid_argument", "path", "PUT without path")
    st, _, body = call("GET", base + "/files/list", key=KA)
    expect_error(st, body, 400, "invalid_argument", "path", "list without path")

    check_processes(base, KA)
    check_file_ops(base, KA)
    check_checkpoints(base, sid, KA, KB)
    check_ports(base, sid, KA)

    # ---- state machine through the API ----
    st, _, body = call("POST", base + "/resume", key=KA)
    expect_error(st, body, 409, "conflict", "is running; resume needs paused or suspended",
                 "resume a running sandbox")
    st, _, got = call("POST", base + "/pause", key=KA)
    check(st == 200 and got.get("state") == "paused", "pause: %s %s" % (st, got))
    st, _, body = call("POST", base + "/pause", key=KA)
    expect_error(st, body, 409, "conflict", "is paused; pause needs running", "pause twice")
    st, _, body = call("POST", base + "/exec", key=KA, body={"cmd": ["true"]})
    expect_error(st, body, 409, "conflict", "is paused; exec needs running", "exec while paused")
    st, _, body = call("GET", base + "/files?path=/root/blob.bin", key=KA)
    expect_error(st, body, 409, "conflict", "is paused", "read a file while paused")
    st, _, body = call("POST", base + "/processes", key=KA, body={"cmd": ["true"]})
    expect_error(st, body, 409, "conflict", "is paused", "start a process while paused")
    st, _, body = call("GET", base + "/files/stat?path=/root", key=KA)
    expect_error(st, body, 409, "conflict", "is paused", "stat while paused")
    st, _, got = call("POST", base + "/resume", key=KA)
    check(st == 200 and got.get("state") == "running", "resume: %s %s" % (st, got))
    st, _, r = call("POST", base + "/exec", key=KA, body={"cmd": ["echo", "back"]})
    check(st == 200 and r.get("stdout") == "back\n", "exec after resume")
    st, _, got = call("POST", base + "/suspend", key=KA)
    check(st == 200 and got.get("state") == "suspended", "suspend: %s %s" % (st, got))
    st, _, body = call("POST", base + "/exec", key=KA, body={"cmd": ["true"]})
    expect_error(st, body, 409, "conflict", "is suspended; exec needs running", "exec while suspended")
    st, _, got = call("POST", base + "/resume", key=KA)
    check(st == 200 and got.get("state") == "running", "resume from suspended: %s %s" % (st, got))
    st, _, data = call("GET", base + "/files?path=/root/blob.bin", key=KA, raw=True)
    check(st == 200 and data == blob, "the file survived suspend and resume")

    # ---- tenancy: B gets 404 on every route with A's sandbox ----
    for method, path, payload, hdr in [
        ("GET", base, None, None),
        ("DELETE", base, None, None),
        ("POST", base + "/pause", None, None),
        ("POST", base + "/resume", None, None),
        ("POST", base + "/suspend", None, None),
        ("PUT", base + "/network", {"default": "allow"}, None),
        ("POST", base + "/exec", {"cmd": ["true"]}, None),
        ("POST", base + "/exec", {"cmd": ["true"]}, {"Accept": "text/event-stream"}),
        ("PUT", base + "/files?path=/root/evil", b"x", None),
        ("GET", base + "/files?path=/root/blob.bin", None, None),
        ("GET", base + "/files/list?path=/root", None, None),
        ("GET", base + "/files/stat?path=/root/blob.bin", None, None),
        ("POST", base + "/files/mkdir", {"path": "/root/evil-dir"}, None),
        ("POST", base + "/files/rename", {"from": "/root/blob.bin", "to": "/root/evil"}, None),
        ("DELETE", base + "/files?path=/root/blob.bin", None, None),
        ("POST", base + "/processes", {"cmd": ["touch", "/root/evil"]}, None),
        ("GET", base + "/processes", None, None),
        ("GET", base + "/processes/1/output", None, None),
        ("POST", base + "/processes/1/stdin", {"data": "x"}, None),
        ("POST", base + "/processes/1/signal", {"signal": "KILL"}, None),
        ("POST", base + "/processes/1/resize", {"rows": 10, "cols": 10}, None),
        ("GET", base + "/network/log", None, None),
        ("GET", base + "/logs", None, None),
    ]:
        st, _, body = call(method, path, key=KB, body=payload, headers=hdr)
        expect_error(st, body, 404, "not_found", sid, "B: %s %s" % (method, path))
    st, _, r = call("POST", base + "/exec", key=KA,
                    body={"cmd": ["sh", "-c", "test -e /root/evil || test -e /root/evil-dir || "
                                              "! test -e /root/blob.bin"]})
    check(st == 200 and r["exit_code"] == 1, "B's calls changed nothing in A's sandbox")

    # ---- delete ----
    st, _, _ = call("DELETE", base, key=KA)
    check(st == 204, "DELETE sandbox")
    st, _, body = call("GET", base, key=KA)
    expect_error(st, body, 404, "not_found", sid, "GET after delete")
    st, _, body = call("DELETE", base, key=KA)
    expect_error(st, body, 404, "not_found", sid, "DELETE twice")
    st, _, body = call("POST", base + "/exec", key=KA, body={"cmd": ["true"]})
    expect_error(st, body, 404, "not_found", sid, "exec after delete")

    check_events(sid, events_a, events_b, KB)

    # ---- secrets and audit (test_secrets_logs.py has the rest) ----
    st, _, body = call("POST", "/v1/secrets", key=KB, body={"name": "x"})
    expect_error(st, body, 400, "invalid_argument", "value", "a secret without a value")
    st, _, body = call("GET", "/v1/secrets", key=KB)
    check(st == 200 and body == {"secrets": []}, "B has no secrets: %s" % body)
    st, _, body = call("DELETE", "/v1/secrets/nope", key=KB)
    expect_error(st, body, 404, "not_found", "nope", "delete an unknown secret")
    st, _, body = call("GET", "/v1/audit", key=KB)
    check(st == 200 and body == {"entries": []}, "B's audit log is empty: %s" % body)
    st, _, body = call("POST", "/v1/secrets/unlock", key=KB, body={"customer_key": "zz" * 32})
    expect_error(st, body, 400, "invalid_argument", "customer_key", "unlock with a key not in hex")
    st, _, body = call("POST", "/v1/secrets/lock", key=KB)
    check(st == 200 and body.get("was_unlocked") is False, "lock of a locked project: %s" % body)
    # Orgs are the admin's (test_secrets_logs.py shows them working).
    for method, path in [("POST", "/v1/orgs"), ("PUT", "/v1/projects/%s/org" % b["id"]),
                         ("POST", "/v1/orgs/acme/secrets"), ("GET", "/v1/orgs/acme/secrets"),
                         ("DELETE", "/v1/orgs/acme/secrets/x"), ("GET", "/v1/orgs/acme/audit")]:
        st, _, body = call(method, path, key=KB,
                           body={"org_id": "acme"} if method in ("POST", "PUT") else None)
        expect_error(st, body, 403, "permission_denied", "admin", "a project key on " + path)

    # ---- warm-pool targets (admin; test_controllers.py shows them working) ----
    st, _, body = call("GET", "/v1/templates/default/warm-pool", key=KA)
    expect_error(st, body, 403, "permission_denied", "admin", "a project key reading a warm pool")
    st, _, body = call("PUT", "/v1/templates/nope/warm-pool", key=ADMIN, body={"target": 1})
    expect_error(st, body, 404, "not_found", "nope", "warm pool of an unknown template")

    # ---- templates (test_templates.py builds them) ----
    st, _, body = call("POST", "/v1/templates", key=KB, body={"name": "x", "run": [""]})
    expect_error(st, body, 400, "invalid_argument", "run[0]", "a template spec with an empty command")
    st, _, body = call("GET", "/v1/templates", key=KB)
    check(st == 200 and body == {"templates": []}, "B has no templates: %s" % body)
    for method in ("GET", "DELETE"):
        st, _, body = call(method, "/v1/templates/nope:2", key=KB)
        expect_error(st, body, 404, "not_found", "nope:2", method + " an unknown template")

    # ---- quotas (test_quotas.py drives them to their limits) ----
    st, _, body = call("PUT", "/v1/projects/%s/quotas" % b["id"], key=ADMIN, body={"templates": 7})
    check(st == 200 and body["quotas"]["templates"] == {"limit": 7, "used": 0, "is_default": False},
          "PUT B's templates quota: %s %s" % (st, body))
    st, _, body = call("GET", "/v1/projects/%s/quotas" % b["id"], key=KB)
    check(st == 200 and body["quotas"]["templates"]["limit"] == 7, "B reads its own quotas: %s" % body)
    st, _, body = call("GET", "/v1/projects/%s/quotas" % b["id"], key=KA)
    expect_error(st, body, 403, "permission_denied", "own project", "A reading B's quotas")

    # ---- nodes (admin; docs/api.md "Nodes"; in depth: controlplane.nodes) ----
    st, _, body = call("GET", "/v1/nodes", key=ADMIN)
    check(st == 200 and len(body.get("nodes", [])) >= 1, "GET /v1/nodes: %s %s" % (st, body))
    nid = body["nodes"][0]["id"] if st == 200 and body.get("nodes") else "none"
    st, _, body = call("GET", "/v1/nodes/%s" % nid, key=ADMIN)
    check(st == 200 and body.get("id") == nid and body.get("state") == "active",
          "GET /v1/nodes/%s: %s %s" % (nid, st, body))
    st, _, body = call("POST", "/v1/nodes/%s/drain" % nid, key=ADMIN)
    expect_error(st, body, 409, "conflict", "last live active node", "draining the only node")
    st, _, body = call("POST", "/v1/nodes/%s/undrain" % nid, key=ADMIN)
    check(st == 200 and body.get("state") == "active",
          "undrain of an active node answers it: %s %s" % (st, body))
    st, _, body = call("GET", "/v1/nodes", key=KA)
    expect_error(st, body, 403, "permission_denied", "admin", "a project key listing nodes")

    # ---- volumes (no VM: records only; controlplane.volumes attaches them) ----
    check_volumes(KA, KB)

    # ---- metrics: every route has been served at least once ----
    # A request is counted when the gateway has finished sending it, which
    # can be just after the client already has the body: scrape until the
    # first scrape shows up (bounded), instead of assuming it already does.
    call("GET", "/metrics", raw=True)
    for _ in range(100):
        st, _, text = call("GET", "/metrics", raw=True)
        text = text.decode()
        if 'route="GET /metrics"' in text:
            break
        time.sleep(0.02)
    check(st == 200 and "airlock_gateway_http_requests_total" in text, "GET /metrics")
    routes = subprocess.run([sys.argv[1], "--routes"], capture_output=True, text=True,
                            check=True).stdout.split("\n")
    for route in filter(None, routes):
        check('route="%s"' % route in text, "route exercised: " + route)


def check_volumes(key, key_b):
    """Every volume route on volumes no sandbox has used yet (records only:
    no node is involved), each refusal with its status and the field or
    volume named, and a create of a sandbox whose volumes are refused
    leaving nothing behind."""
    st, _, v = call("POST", "/v1/volumes", key=key, body={"name": "repo", "size_mb": 64})
    check(st == 201 and v.get("name") == "repo" and v.get("size_mb") == 64 and v.get("node") == ""
          and v.get("attached_sandbox") is None and len(v.get("id", "")) == 36,
          "POST /v1/volumes: %s %s" % (st, v))
    st, _, body = call("POST", "/v1/volumes", key=key, body={"name": "repo", "size_mb": 64})
    expect_error(st, body, 409, "conflict", "repo", "a volume name taken")
    for bad, field in (({"name": "Bad", "size_mb": 1}, "name"), ({"name": "", "size_mb": 1}, "name"),
                       ({"name": "x", "size_mb": 0}, "size_mb"),
                       ({"name": "x", "size_mb": 1048577}, "size_mb"),
                       ({"name": "x", "size_mb": "1"}, "size_mb"),
                       ({"name": "x", "from_snapshot": "repo"}, "from_snapshot"),
                       ({"name": "x", "size_mb": 1, "color": "red"}, "color")):
        st, _, body = call("POST", "/v1/volumes", key=key, body=bad)
        expect_error(st, body, 400, "invalid_argument", field, "create volume %s" % bad)
    st, _, body = call("POST", "/v1/volumes", key=key, body={"name": "x", "from_snapshot": "repo@nope"})
    expect_error(st, body, 404, "not_found", "repo@nope", "a clone of an unknown snapshot")
    st, _, snap = call("POST", "/v1/volumes/repo/snapshots", key=key, body={"name": "s1"})
    check(st == 201 and snap.get("name") == "s1" and snap.get("created_at", "").endswith("Z"),
          "POST /v1/volumes/repo/snapshots: %s %s" % (st, snap))
    st, _, body = call("POST", "/v1/volumes/repo/snapshots", key=key, body={"name": "s1"})
    expect_error(st, body, 409, "conflict", "repo@s1", "a snapshot name taken")
    st, _, body = call("POST", "/v1/volumes/repo/snapshots", key=key, body={"name": "S 1"})
    expect_error(st, body, 400, "invalid_argument", "name", "a bad snapshot name")
    st, _, body = call("GET", "/v1/volumes/repo/snapshots", key=key)
    check(st == 200 and [s["name"] for s in body.get("snapshots", [])] == ["s1"],
          "GET /v1/volumes/repo/snapshots: %s %s" % (st, body))
    st, _, c = call("POST", "/v1/volumes", key=key, body={"name": "copy", "from_snapshot": "repo@s1"})
    check(st == 201 and c.get("from_snapshot") == "repo@s1" and c.get("size_mb") == 64
          and c.get("node") == "", "a clone of a never-used volume's snapshot: %s %s" % (st, c))
    st, _, g = call("POST", "/v1/volumes/repo/grow", key=key, body={"size_mb": 128})
    check(st == 200 and g.get("size_mb") == 128, "POST /v1/volumes/repo/grow: %s %s" % (st, g))
    st, _, body = call("POST", "/v1/volumes/repo/grow", key=key, body={"size_mb": 100})
    expect_error(st, body, 409, "conflict", "only grows", "shrinking a volume")
    st, _, got = call("GET", "/v1/volumes/repo", key=key)
    check(st == 200 and got.get("size_mb") == 128 and [s["name"] for s in got["snapshots"]] == ["s1"]
          and "used_bytes" not in got, "GET /v1/volumes/repo: %s %s" % (st, got))
    st, _, lst = call("GET", "/v1/volumes", key=key)
    check(st == 200 and [x["name"] for x in lst.get("volumes", [])] == ["copy", "repo"],
          "GET /v1/volumes: %s %s" % (st, lst))
    # Another project sees none of them.
    st, _, lst = call("GET", "/v1/volumes", key=key_b)
    check(st == 200 and lst == {"volumes": []}, "B lists no volumes: %s" % lst)
    for method, path in (("GET", "/v1/volumes/repo"), ("DELETE", "/v1/volumes/repo"),
                         ("GET", "/v1/volumes/repo/snapshots"),
                         ("DELETE", "/v1/volumes/repo/snapshots/s1")):
        st, _, body = call(method, path, key=key_b)
        expect_error(st, body, 404, "not_found", "repo", "B: %s %s" % (method, path))
    # A create whose volumes are refused: each naming the field or volume.
    for vols, status, fragment in (
            ([{"name": "repo", "path": "/"}], 400, "volumes[0].path"),
            ([{"name": "repo", "path": "/proc/x"}], 400, "system path"),
            ([{"name": "repo", "path": "/a/../b"}], 400, "volumes[0].path"),
            ([{"name": "repo", "path": "work"}], 400, "not absolute"),
            ([{"name": "repo", "path": "/a"}, {"name": "repo@s1", "path": "/b", "read_only": True}],
             400, "volumes[1].name"),
            ([{"name": "repo@s1", "path": "/a"}], 400, "volumes[0].read_only"),
            ([{"name": "v%d" % i, "path": "/v%d" % i} for i in range(5)], 400, "at most 4"),
            ([{"name": "nope", "path": "/a"}], 404, "volume nope"),
            ([{"name": "repo@nope", "path": "/a", "read_only": True}], 404, "repo@nope"),
            ([{"name": "repo@s1", "path": "/a", "read_only": True}], 409, "empty"),
            ([{"name": "repo", "path": 7}], 400, "volumes[0]"),
            ([{"name": "repo", "path": "/a"}], 404, "volume repo")):
        k = key_b if fragment == "volume repo" else key
        st, _, body = call("POST", "/v1/sandboxes", key=k, body={"volumes": vols})
        expect_error(st, body, status, {400: "invalid_argument", 404: "not_found",
                                        409: "conflict"}[status], fragment,
                     "a sandbox with volumes %s" % vols)
    st, _, lst = call("GET", "/v1/sandboxes", key=key_b)
    check(st == 200 and lst.get("sandboxes") == [], "refused creates left no sandbox: %s" % lst)
    st, _, got = call("GET", "/v1/volumes/repo", key=key)
    check(st == 200 and got.get("attached_sandbox") is None and got.get("node") == "",
          "refused creates left no claim: %s" % got)
    st, _, body = call("DELETE", "/v1/volumes/repo/snapshots/nope", key=key)
    expect_error(st, body, 404, "not_found", "repo@nope", "deleting an unknown snapshot")
    st, _, _ = call("DELETE", "/v1/volumes/repo/snapshots/s1", key=key)
    check(st == 204, "DELETE /v1/volumes/repo/snapshots/s1: %s" % st)
    for name in ("repo", "copy"):
        st, _, _ = call("DELETE", "/v1/volumes/" + name, key=key)
        check(st == 204, "DELETE /v1/volumes/%s: %s" % (name, st))
    st, _, body = call("GET", "/v1/volumes/repo", key=key)
    expect_error(st, body, 404, "not_found", "volume repo", "a deleted volume")


# Every field of egress.proto's Policy; egress on the node checks the values
# (the stack's egress dials out of an empty namespace: nothing leaves).
POLICY = {"default": "deny", "allow_domains": ["example.com", "*.pypi.org"],
          "deny_domains": ["bad.example.com"], "allow_cidrs": ["198.51.100.0/24"],
          "deny_cidrs": ["198.51.100.7"], "allow_ports": [80, 443], "deny_ports": [25]}


def check_network(sid, key):
    """PUT /network live, its bad input, and a create egress refuses."""
    path = "/v1/sandboxes/%s/network" % sid
    new = {"default": "allow", "deny_cidrs": ["203.0.113.0/24"]}
    st, _, r = call("PUT", path, key=key, body=new)
    check(st == 200 and r == {"id": sid, "network": new}, "PUT network: %s %s" % (st, r))
    st, _, got = call("GET", "/v1/sandboxes/" + sid, key=key)
    check(st == 200 and got.get("network") == new, "GET shows the new network policy")
    for payload, fragment, what in [
        ({"deny_domains": "x.test"}, "network.deny_domains: must be an array", "a string list"),
        ({"allow_cidrs": ["10.0.0.0/99"]}, "allow_cidrs[0]", "a bad CIDR"),
        ({"allow_ports": [70000]}, "allow_ports[0]", "a port above 65535"),
    ]:
        st, _, body = call("PUT", path, key=key, body=payload)
        expect_error(st, body, 400, "invalid_argument", fragment, "PUT network with " + what)
    st, _, got = call("GET", "/v1/sandboxes/" + sid, key=key)
    check(st == 200 and got.get("network") == new, "a refused PUT changed nothing")
    idem = {"Idempotency-Key": "refused-create"}
    bad = {"network": {"deny_cidrs": ["198.51.100.0/24", "not-a-cidr"]}}
    st, _, body = call("POST", "/v1/sandboxes", key=key, headers=idem, body=bad)
    expect_error(st, body, 400, "invalid_argument", "deny_cidrs[1]", "create with a bad CIDR")
    # A create the node refused leaves nothing behind: no sandbox in any
    # state, the id it would have had is unknown, and the idempotency key
    # is free again.
    refused = body.get("error", {}).get("message", "").split(":")[0].replace("sandbox ", "")
    st, _, lst = call("GET", "/v1/sandboxes", key=key)
    check(st == 200 and [s["id"] for s in lst["sandboxes"]] == [sid],
          "a refused create leaves no sandbox: %s" % lst)
    st, _, body = call("GET", "/v1/sandboxes/" + refused, key=key)
    check(refused.startswith("sb_") and st == 404, "the refused sandbox %s is unknown: %s %s"
          % (refused, st, body))
    st, _, body = call("POST", "/v1/sandboxes", key=key, headers=idem, body=bad)
    expect_error(st, body, 400, "invalid_argument", "deny_cidrs[1]",
                 "a retry with the same key is refused again, not answered with a ghost")


def check_processes(base, key):
    """Background processes: start, list, stdin, re-attach, signal."""
    st, _, p = call("POST", base + "/processes", key=key,
                    body={"cmd": ["sh", "-c", "echo started; cat; echo done >&2"],
                          "stdin_open": True})
    check(st == 201 and p.get("pid", 0) > 0 and p.get("running") is True
          and p.get("cmd") == ["sh", "-c", "echo started; cat; echo done >&2"],
          "start a background process: %s %s" % (st, p))
    if st != 201:
        return
    pid = p["pid"]
    procs = base + "/processes/%d" % pid
    st, _, lst = call("GET", base + "/processes", key=key)
    mine = [q for q in lst.get("processes", []) if q["pid"] == pid] if st == 200 else []
    check(mine and mine[0]["running"] is True, "list shows the process running: %s" % lst)
    st, _, _ = call("POST", procs + "/stdin", key=key, body={"data": "hello\n"})
    check(st == 204, "write to the process's stdin")
    st, _, _ = call("POST", procs + "/stdin", key=key, body={"eof": True})
    check(st == 204, "close the process's stdin")
    # Re-attach replays what it printed so far and follows it to its exit.
    st, hdrs, raw = call("GET", procs + "/output", key=key, raw=True)
    events = sse_events(raw) if st == 200 else []
    # The guest's ring keeps which stream each byte came from.
    out = "".join(e[1].get("data", "") for e in events if e[0] == "stdout")
    err = "".join(e[1].get("data", "") for e in events if e[0] == "stderr")
    check(st == 200 and hdrs.get("Content-Type") == "text/event-stream"
          and out == "started\nhello\n" and err == "done\n"
          and events[-1] == ("exit", {"exit_code": 0, "signal": 0, "timed_out": False}),
          "re-attach to the output: %s %s" % (st, events))
    st, _, lst = call("GET", base + "/processes", key=key)
    mine = [q for q in lst.get("processes", []) if q["pid"] == pid] if st == 200 else []
    check(mine and mine[0]["running"] is False and mine[0]["exit_code"] == 0,
          "list shows the process exited: %s" % mine)

    st, _, sleeper = call("POST", base + "/processes", key=key, body={"cmd": ["sleep", "1000"]})
    check(st == 201, "start a sleeper")
    sleeper_path = base + "/processes/%d" % sleeper.get("pid", 0)
    st, _, _ = call("POST", sleeper_path + "/signal", key=key, body={"signal": "TERM"})
    check(st == 204, "signal TERM")
    st, _, raw = call("GET", sleeper_path + "/output", key=key, raw=True)
    events = sse_events(raw) if st == 200 else []
    check(events and events[-1][0] == "exit" and events[-1][1]["signal"] == 15,
          "the sleeper ended by SIGTERM: %s" % events)

    for method, path, payload, fragment in [
        ("POST", base + "/processes", {"cmd": []}, "cmd"),
        ("POST", base + "/processes", {"cmd": ["true"], "stdin_open": "yes"}, "stdin_open"),
        ("POST", procs + "/signal", {"signal": "NOPE"}, "signal"),
        ("POST", procs + "/signal", {}, "signal"),
        ("POST", procs + "/signal", {"signal": 9}, "signal"),
        ("POST", procs + "/stdin", {}, "data"),
        ("POST", procs + "/stdin", {"data": 5}, "data"),
        ("POST", base + "/processes/abc/signal", {"signal": "TERM"}, "pid"),
        ("GET", base + "/processes/-4/output", None, "pid"),
    ]:
        st, _, body = call(method, path, key=key, body=payload)
        expect_error(st, body, 400, "invalid_argument", fragment, "%s %s %s" % (method, path, payload))
    st, _, body = call("POST", base + "/exec", key=key, body={"cmd": ["true"], "stdin_open": True})
    expect_error(st, body, 400, "invalid_argument", "stdin_open", "exec refuses stdin_open")
    st, _, body = call("GET", base + "/processes/999999/output", key=key)
    expect_error(st, body, 404, "not_found", "999999", "re-attach to an unknown process")
    st, _, body = call("POST", base + "/processes", key=key, body={"cmd": ["no-such-program"]})
    expect_error(st, body, 404, "not_found", "no-such-program", "start a missing program")


def check_file_ops(base, key):
    """stat, mkdir, rename, remove."""
    st, _, _ = call("POST", base + "/files/mkdir", key=key, body={"path": "/root/d/e", "parents": True})
    check(st == 204, "mkdir with parents")
    st, _, info = call("GET", base + "/files/stat?path=/root/d/e", key=key)
    check(st == 200 and info.get("type") == "dir" and info.get("mode") == 0o755,
          "stat a directory: %s" % info)
    st, _, body = call("POST", base + "/files/mkdir", key=key, body={"path": "/root/d/e"})
    expect_error(st, body, 409, "conflict", "/root/d/e", "mkdir of an existing directory")
    call("PUT", base + "/files?path=/root/d/e/f", key=key, body=b"12345")
    st, _, _ = call("POST", base + "/files/rename", key=key,
                    body={"from": "/root/d/e/f", "to": "/root/d/g"})
    check(st == 204, "rename a file")
    st, _, info = call("GET", base + "/files/stat?path=/root/d/g", key=key)
    check(st == 200 and info.get("type") == "file" and info.get("size") == 5,
          "stat the renamed file: %s" % info)
    st, _, body = call("GET", base + "/files/stat?path=/root/d/e/f", key=key)
    expect_error(st, body, 404, "not_found", "/root/d/e/f", "stat the old name")
    st, _, body = call("DELETE", base + "/files?path=/root/d", key=key)
    expect_error(st, body, 409, "conflict", "/root/d", "remove a non-empty directory")
    st, _, _ = call("DELETE", base + "/files?path=/root/d&recursive=true", key=key)
    check(st == 204, "remove a directory recursively")
    st, _, body = call("GET", base + "/files/stat?path=/root/d", key=key)
    expect_error(st, body, 404, "not_found", "/root/d", "stat after remove")
    # Watches' events: controlplane.watch; here the route's refusal.
    st, _, body = call("GET", base + "/files/watch?path=/root/d", key=key)
    expect_error(st, body, 404, "not_found", "/root/d", "watch a removed directory")
    for method, path, payload, fragment in [
        ("GET", base + "/files/stat", None, "path"),
        ("POST", base + "/files/mkdir", {}, "path"),
        ("POST", base + "/files/mkdir", {"path": "rel"}, "path"),
        ("POST", base + "/files/mkdir", {"path": "/x", "mode": 99999}, "mode"),
        ("POST", base + "/files/rename", {"from": "/a"}, "to"),
        ("POST", base + "/files/rename", {"from": "a", "to": "/b"}, "from"),
        ("DELETE", base + "/files?path=/root&recursive=maybe", None, "recursive"),
        ("DELETE", base + "/files", None, "path"),
    ]:
        st, _, body = call(method, path, key=key, body=payload)
        expect_error(st, body, 400, "invalid_argument", fragment, "%s %s %s" % (method, path, payload))


def check_full_checkpoint(base, key):
    """A full checkpoint keeps memory: restored, a background process that
    was running then runs again and a file written since is gone; a fork
    from it starts from that moment too."""
    st, _, proc = call("POST", base + "/processes", key=key,
                       body={"cmd": ["sh", "-c", "echo $$ > /root/sleeper.pid; exec sleep 4242"]})
    check(st == 201, "start a background process: %s %s" % (st, proc))
    alive = "kill -0 $(cat /root/sleeper.pid) && echo alive"
    poll(lambda: call("POST", base + "/exec", key=key,
                      body={"cmd": ["sh", "-c", alive]})[2].get("stdout") == "alive\n", limit_s=60)
    st, _, cp = call("POST", base + "/checkpoints", key=key,
                     body={"name": "with-memory", "kind": "full"})
    check(st == 201 and cp.get("kind") == "full", "create a full checkpoint: %s %s" % (st, cp))
    call("POST", base + "/exec", key=key,
         body={"cmd": ["sh", "-c", "kill $(cat /root/sleeper.pid); echo x > /root/after-full"]})
    st, _, got = call("POST", base + "/restore", key=key, body={"checkpoint": "with-memory"})
    check(st == 200 and got.get("state") == "running", "restore the full checkpoint: %s %s"
          % (st, got))
    st, _, r = call("POST", base + "/exec", key=key,
                    body={"cmd": ["sh", "-c", alive + "; test -e /root/after-full || echo gone"]})
    check(st == 200 and r.get("stdout") == "alive\ngone\n",
          "after a full restore the process runs again and the later file is gone: %s" % r)
    st, _, forks = call("POST", base + "/fork", key=key,
                        body={"count": 1, "checkpoint": "with-memory"})
    ids = [f["id"] for f in forks.get("sandboxes", [])] if st == 201 else []
    check(len(ids) == 1, "fork from the full checkpoint: %s %s" % (st, forks))
    for i in ids:
        st, _, r = call("POST", "/v1/sandboxes/%s/exec" % i, key=key,
                        body={"cmd": ["sh", "-c", alive]})
        check(st == 200 and r.get("stdout") == "alive\n",
              "the fork from it runs the process too: %s" % r)
        call("DELETE", "/v1/sandboxes/" + i, key=key)
    call("POST", base + "/exec", key=key, body={"cmd": ["sh", "-c", "kill $(cat /root/sleeper.pid)"]})
    st, _, _ = call("DELETE", base + "/checkpoints/with-memory", key=key)
    check(st == 204, "delete the full checkpoint")


def check_ports(base, sid, key):
    """The ports routes' shapes (controlplane.ports drives them through the
    ingress to servers in the guest)."""
    st, _, body = call("GET", base + "/ports", key=key)
    check(st == 200 and isinstance(body.get("ports"), list), "GET ports: %s %s" % (st, body))
    st, _, body = call("POST", base + "/ports/8080/url", key=key, body={})
    check(st == 200 and body.get("url", "").startswith("http://8080-%s." % sid) and
          "airlock_signature=" in body["url"] and "expires_at" in body,
          "POST ports/8080/url: a signed URL (%s %s)" % (st, body))


def check_checkpoints(base, sid, key, key_b):
    """Checkpoint (disk), restore, list, fork, delete; bad bodies, an
    unknown or duplicate name, and project B. One cold-booting restore and
    a fork of two from the live sandbox."""
    for method, path, payload, fragment in [
        ("POST", base + "/checkpoints", {}, "name"),
        ("POST", base + "/checkpoints", {"name": 7}, "name"),
        ("POST", base + "/checkpoints", {"name": "Bad Name"}, "name"),
        ("POST", base + "/checkpoints", {"name": "x", "kind": "memory"}, "kind"),
        ("POST", base + "/checkpoints", {"name": "x", "colour": "red"}, "colour"),
        ("POST", base + "/restore", {}, "checkpoint"),
        ("POST", base + "/fork", {"count": 99}, "count"),
        ("POST", base + "/fork", {"count": "2"}, "count"),
    ]:
        st, _, body = call(method, path, key=key, body=payload)
        expect_error(st, body, 400, "invalid_argument", fragment, "%s %s %s" % (method, path, payload))
    st, _, cp = call("POST", base + "/checkpoints", key=key,
                     body={"name": "before-write", "kind": "disk"})
    check(st == 201 and cp.get("name") == "before-write" and cp.get("kind") == "disk"
          and cp.get("created_at", "").endswith("Z"), "create a disk checkpoint: %s %s" % (st, cp))
    st, _, body = call("POST", base + "/checkpoints", key=key, body={"name": "before-write"})
    expect_error(st, body, 409, "conflict", "before-write", "a checkpoint name taken twice")
    st, _, lst = call("GET", base + "/checkpoints", key=key)
    check(st == 200 and [c["name"] for c in lst.get("checkpoints", [])] == ["before-write"],
          "list checkpoints: %s" % lst)
    call("PUT", base + "/files?path=/root/after.txt", key=key, body=b"later")
    st, _, got = call("POST", base + "/restore", key=key, body={"checkpoint": "before-write"})
    check(st == 200 and got.get("id") == sid and got.get("state") == "running",
          "restore: %s %s" % (st, got))
    st, _, body = call("GET", base + "/files/stat?path=/root/after.txt", key=key)
    expect_error(st, body, 404, "not_found", "after.txt", "a file written after the checkpoint is gone")
    st, _, info = call("GET", base + "/files/stat?path=/root/blob.bin", key=key)
    check(st == 200, "a file written before the checkpoint is still there")
    st, _, body = call("POST", base + "/restore", key=key, body={"checkpoint": "nope"})
    expect_error(st, body, 404, "not_found", "nope", "restore an unknown checkpoint")

    check_full_checkpoint(base, key)

    st, _, parent = call("GET", base, key=key)
    st, _, forks = call("POST", base + "/fork", key=key, body={"count": 2})
    ids = [f["id"] for f in forks.get("sandboxes", [])] if st == 201 else []
    check(len(ids) == 2 and all(f["state"] == "running" for f in forks["sandboxes"])
          and sid not in ids, "fork two: %s %s" % (st, forks))
    # Forks get the parent's egress policy as it is now (check_network
    # changed it after the create), recorded on their rows.
    check(parent.get("network") and all(f.get("network") == parent["network"]
                                        for f in forks.get("sandboxes", [])),
          "the forks have the parent's network policy: %s %s" % (parent.get("network"), forks))
    st, _, lst = call("GET", "/v1/sandboxes", key=key)
    listed = {s["id"]: s for s in lst.get("sandboxes", [])}
    check(all(i in listed and listed[i]["state"] == "running" and listed[i]["node"] == "cp-node"
              for i in ids), "the forks are running sandboxes of the project: %s" % lst)
    if ids:
        st, _, r = call("POST", "/v1/sandboxes/%s/exec" % ids[0], key=key,
                        body={"cmd": ["test", "-e", "/root/blob.bin"]})
        check(st == 200 and r.get("exit_code") == 0, "a fork has the parent's files: %s" % r)
    for i in ids:
        st, _, _ = call("DELETE", "/v1/sandboxes/" + i, key=key)
        check(st == 204, "delete fork " + i)

    for method, path, payload in [
        ("POST", base + "/checkpoints", {"name": "evil"}),
        ("GET", base + "/checkpoints", None),
        ("DELETE", base + "/checkpoints/before-write", None),
        ("POST", base + "/restore", {"checkpoint": "before-write"}),
        ("POST", base + "/fork", {}),
    ]:
        st, _, body = call(method, path, key=key_b, body=payload)
        expect_error(st, body, 404, "not_found", sid, "B: %s %s" % (method, path))
    st, _, _ = call("DELETE", base + "/checkpoints/before-write", key=key)
    check(st == 204, "delete a checkpoint")
    st, _, lst = call("GET", base + "/checkpoints", key=key)
    check(st == 200 and lst.get("checkpoints") == [], "no checkpoints left: %s" % lst)
    st, _, body = call("DELETE", base + "/checkpoints/before-write", key=key)
    expect_error(st, body, 404, "not_found", "before-write", "delete a checkpoint twice")


def check_events(sid, events_a, events_b, key_b):
    """A's stream saw A's sandbox being created, paused and deleted, in
    that order; B's saw nothing of A's (proved by waiting for an event of
    B's own, published after all of A's)."""
    got = events_a.wait_for(lambda e: e[1].get("id") == sid and e[1].get("state") == "deleted")
    mine = [(e[1]["state"], e[1]["previous"]) for e in got if e[0] == "sandbox" and e[1]["id"] == sid]
    wanted = [("creating", None), ("running", "creating"), ("paused", "running"),
              ("deleted", "deleting")]
    position = 0
    for item in mine:
        if position < len(wanted) and item == wanted[position]:
            position += 1
    check(position == len(wanted) and all(e[1].get("at", "").endswith("Z") for e in got),
          "A's event stream: created, paused, deleted in order: %s" % mine)
    st, _, other = call("POST", "/v1/sandboxes", key=key_b, body={})
    check(st == 201, "B creates a sandbox")
    if st != 201:
        return
    got_b = events_b.wait_for(lambda e: e[1].get("id") == other["id"])
    check(got_b and all(e[1]["id"] == other["id"] for e in got_b),
          "B's event stream has B's sandbox and nothing of A's: %s" % got_b)
    call("DELETE", "/v1/sandboxes/" + other["id"], key=key_b)
    events_a.close()
    events_b.close()


if __name__ == "__main__":
    main()
    report_and_exit()
