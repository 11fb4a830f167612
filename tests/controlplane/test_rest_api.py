#!/usr/bin/python3
"""The REST API end to end, through a real gateway, scheduler, PostgreSQL,
nats-server and vmhost with a real VM (started by cp_harness, which passes
AIRLOCK_URL and AIRLOCK_ADMIN_KEY). argv[1]: the gateway binary, whose
--routes list every route this test must have exercised.

Standard library only. No timing assertions. One VM in all."""
import http.client
import json
import os
import subprocess
import sys
import urllib.parse

URL = urllib.parse.urlparse(os.environ["AIRLOCK_URL"])
ADMIN = os.environ["AIRLOCK_ADMIN_KEY"]
failures = []


def call(method, path, key=None, body=None, headers=None, raw=False):
    """(status, headers, body): body parsed as JSON unless raw."""
    conn = http.client.HTTPConnection(URL.hostname, URL.port, timeout=600)
    h = dict(headers or {})
    if key:
        h["Authorization"] = "Bearer " + key
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
    elif isinstance(body, str):
        body = body.encode()
    conn.request(method, path, body=body, headers=h)
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    if raw or not data:
        return resp.status, resp.headers, data
    try:
        return resp.status, resp.headers, json.loads(data)
    except ValueError:
        return resp.status, resp.headers, data


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def expect_error(status, body, want_status, want_code, fragment, what):
    ok = (status == want_status and isinstance(body, dict) and "error" in body
          and body["error"].get("code") == want_code
          and fragment in body["error"].get("message", ""))
    check(ok, "%s -> %d %s mentioning %r (got %s %s)" % (what, want_status, want_code, fragment,
                                                      status, body))


def sse_events(text):
    events = []
    for block in text.decode().split("\n\n"):
        lines = dict(l.split(": ", 1) for l in block.split("\n") if ": " in l)
        if "event" in lines:
            events.append((lines["event"], json.loads(lines["data"])))
    return events


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
    st, _, body = call("POST", "/v1/projects", key=KA, body={"name": "x"})
    expect_error(st, body, 403, "permission_denied", "admin", "project key creating a project")
    st, _, body = call("POST", "/v1/projects/prj_doesnotexist/keys", key=ADMIN, body={})
    expect_error(st, body, 404, "not_found", "prj_doesnotexist", "key for unknown project")
    st, _, body = call("POST", "/v1/projects", key=ADMIN, body={"name": 7})
    expect_error(st, body, 400, "invalid_argument", "name", "project name of the wrong type")

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
        ({"template": "nope"}, "template", "unknown template"),
    ]:
        st, _, body = call("POST", "/v1/sandboxes", key=KA, body=payload)
        want = 400
        expect_error(st, body, want, "invalid_argument", fragment, "create with " + what)
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
                           "idle_timeout_s": 3600})
    check(st == 201 and sb["id"].startswith("sb_") and sb["state"] == "running"
          and sb["template"] == "default" and sb["node"] == "cp-node" and "created_at" in sb
          and sb["metadata"] == {"owner": "test"}, "create sandbox: %s %s" % (st, sb))
    if st != 201:
        return
    sid = sb["id"]
    st, _, again = call("POST", "/v1/sandboxes", key=KA, headers=idem, body={})
    check(st == 201 and again["id"] == sid, "a retried create returns the same sandbox")
    st, _, got = call("GET", "/v1/sandboxes/" + sid, key=KA)
    check(st == 200 and got["id"] == sid and got["state"] == "running", "get sandbox")
    st, _, lst = call("GET", "/v1/sandboxes", key=KA)
    check(st == 200 and [s["id"] for s in lst["sandboxes"]] == [sid], "list shows one sandbox")
    st, _, lst = call("GET", "/v1/sandboxes", key=KB)
    check(st == 200 and lst["sandboxes"] == [], "B's list does not show A's sandbox")

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
    st, _, got = call("POST", base + "/resume", key=KA)
    check(st == 200 and got.get("state") == "running", "resume: %s %s" % (st, got))
    st, _, r = call("POST", base + "/exec", key=KA, body={"cmd": ["echo", "back"]})
    check(st == 200 and r.get("stdout") == "back\n", "exec after resume")
    # vmhost cannot suspend yet (issue 3): refused, state unchanged.
    st, _, body = call("POST", base + "/suspend", key=KA)
    check(st == 501 and body["error"]["code"] == "not_implemented", "suspend is not implemented")
    st, _, got = call("GET", base, key=KA)
    check(got.get("state") == "running", "state still running after a refused suspend")

    # ---- tenancy: B gets 404 on every route with A's sandbox ----
    for method, path, payload, hdr in [
        ("GET", base, None, None),
        ("DELETE", base, None, None),
        ("POST", base + "/pause", None, None),
        ("POST", base + "/resume", None, None),
        ("POST", base + "/suspend", None, None),
        ("POST", base + "/exec", {"cmd": ["true"]}, None),
        ("POST", base + "/exec", {"cmd": ["true"]}, {"Accept": "text/event-stream"}),
        ("PUT", base + "/files?path=/root/evil", b"x", None),
        ("GET", base + "/files?path=/root/blob.bin", None, None),
        ("GET", base + "/files/list?path=/root", None, None),
    ]:
        st, _, body = call(method, path, key=KB, body=payload, headers=hdr)
        expect_error(st, body, 404, "not_found", sid, "B: %s %s" % (method, path))
    st, _, r = call("POST", base + "/exec", key=KA, body={"cmd": ["test", "-e", "/root/evil"]})
    check(st == 200 and r["exit_code"] == 1, "B's PUT wrote nothing")

    # ---- delete ----
    st, _, _ = call("DELETE", base, key=KA)
    check(st == 204, "DELETE sandbox")
    st, _, body = call("GET", base, key=KA)
    expect_error(st, body, 404, "not_found", sid, "GET after delete")
    st, _, body = call("DELETE", base, key=KA)
    expect_error(st, body, 404, "not_found", sid, "DELETE twice")
    st, _, body = call("POST", base + "/exec", key=KA, body={"cmd": ["true"]})
    expect_error(st, body, 404, "not_found", sid, "exec after delete")

    # ---- metrics: every route has been served at least once ----
    # (a request is counted when it completes: the second scrape sees the first)
    call("GET", "/metrics", raw=True)
    st, _, text = call("GET", "/metrics", raw=True)
    text = text.decode()
    check(st == 200 and "airlock_gateway_http_requests_total" in text, "GET /metrics")
    routes = subprocess.run([sys.argv[1], "--routes"], capture_output=True, text=True,
                            check=True).stdout.split("\n")
    for route in filter(None, routes):
        check('route="%s"' % route in text, "route exercised: " + route)


if __name__ == "__main__":
    main()
    if failures:
        print("%d check(s) failed:" % len(failures))
        for f in failures:
            print("  " + f)
        sys.exit(1)
    print("all checks passed")
