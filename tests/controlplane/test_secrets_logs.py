#!/usr/bin/python3
"""Secrets, the vault audit log, a sandbox's egress connection log, its
console log and PTY processes through the REST API, against a real stack
(cp_harness: gateway, scheduler, vault, egress, PostgreSQL, nats-server,
vmhost with a real VM). egress dials out of an empty namespace and every
connection made here is denied inside egress: nothing leaves the machine.

Then every service's Prometheus /metrics (prom_metrics.py) shows what was
done: vmhost's create (by path) and the running sandbox, the scheduler's
CreateSandbox, egress's denials, vault's calls.

Standard library only; no timing assertions; one VM."""
import json
import os
import time

from prom_metrics import scrape, scrape_all, value
from rest_client import ADMIN, call, check, expect_error, report_and_exit

# Made up per run; must never appear in any answer or log line.
VALUE = "sv-%d-never-shown" % os.getpid()
answers = []


def api(method, path, key, body=None, headers=None, raw=False):
    """call() that keeps every answer body for the no-value check."""
    st, hdrs, data = call(method, path, key=key, body=body, headers=headers, raw=True)
    answers.append(data)
    if raw or not data:
        return st, hdrs, data
    try:
        return st, hdrs, json.loads(data)
    except ValueError:
        return st, hdrs, data


def project(name):
    """(project id, key id, key) of a fresh project."""
    st, _, p = call("POST", "/v1/projects", key=ADMIN, body={"name": name})
    st2, _, k = call("POST", "/v1/projects/%s/keys" % p["id"], key=ADMIN, body={})
    if st != 201 or st2 != 201:
        raise RuntimeError("cannot create project %s: %s %s" % (name, p, k))
    return p["id"], k["id"], k["key"]


def secret(name, **extra):
    body = {"name": name, "value": VALUE,
            "bindings": [{"host": "api.example.test", "header": "Authorization",
                          "format": "Bearer {secret}"},
                         {"host": "*.example.test", "header": "Authorization",
                          "format": "Bearer {secret}"}]}
    body.update(extra)
    return body


def check_secret_input(key, sid):
    good = [{"host": "api.example.test", "header": "Authorization"}]
    for payload, fragment, what in [
        ({}, "name", "no name"),
        ({"name": "x"}, "value", "no value"),
        ({"name": "x", "value": "v"}, "bindings", "no bindings"),
        ({"name": "x", "value": "v", "bindings": []}, "bindings", "empty bindings"),
        ({"name": "x", "value": "v", "bindings": "api.test"}, "bindings", "bindings as a string"),
        ({"name": "x", "value": "v", "bindings": ["api.test"]}, "bindings[0]", "a binding string"),
        ({"name": "x", "value": "v", "bindings": [{"host": "api.test"}]}, "bindings[0].header",
         "a binding without header"),
        ({"name": "x", "value": "v", "bindings": [{"header": "Authorization"}]},
         "bindings[0].host", "a binding without host"),
        ({"name": "x", "value": "v", "bindings": [dict(good[0], colour="red")]}, "colour",
         "an unknown binding field"),
        ({"name": "x", "value": "v", "bindings": [{"host": "api.test", "header": 5}]},
         "bindings[0].header", "a header that is a number"),
        ({"name": "x", "value": "v", "bindings": [{"host": "api.test", "header": "Bad Header"}]},
         "bindings[0].header", "a header name with a space"),
        ({"name": "x", "value": "v", "bindings": [{"host": "api.test", "header": "X: Y"}]},
         "bindings[0].header", "a header name with a colon"),
        ({"name": "x", "value": "v", "bindings": good + [{"host": "not a host!",
                                                          "header": "Authorization"}]},
         "bindings[1].host", "a host that is not a host name"),
        ({"name": "x", "value": "v", "bindings": [dict(good[0], format="Bearer")]},
         "bindings[0].format", "a format without {secret}"),
        ({"name": "x", "value": "v", "bindings": good + [{"host": "b.test", "header": "X-Key"}]},
         "bindings[1]", "bindings with two headers"),
        ({"name": "x", "value": "a\nb", "bindings": good}, "value", "a value with a newline"),
        ({"name": "bad name", "value": "v", "bindings": good}, "name", "a name with a space"),
        ({"name": "x", "value": "v", "bindings": good, "rate_limit": {"per_minute": 0}},
         "rate_limit.per_minute", "a zero rate"),
        ({"name": "x", "value": "v", "bindings": good, "rate_limit": {"per_minute": "5"}},
         "rate_limit.per_minute", "a rate as a string"),
        ({"name": "x", "value": "v", "bindings": good,
          "rate_limit": {"per_minute": 5, "burst": 5000000}}, "rate_limit.burst", "a huge burst"),
        ({"name": "x", "value": "v", "bindings": good, "rate_limit": {"every": 5}}, "every",
         "an unknown rate_limit field"),
        ({"name": "x", "value": "v", "bindings": good, "scope": "org"}, "scope",
         "scope org (org secrets are the admin's, /v1/orgs/{id}/secrets)"),
        ({"name": "x", "value": "v", "bindings": good, "scope": "sandbox"}, "sandbox_id",
         "scope sandbox without sandbox_id"),
        ({"name": "x", "value": "v", "bindings": good, "sandbox_id": sid}, "sandbox_id",
         "sandbox_id with scope project"),
        ({"name": "x", "value": "v", "bindings": good, "customer_key": "abc"}, "customer_key",
         "a short customer key"),
        ({"name": "x", "value": "v", "bindings": good, "colour": "red"}, "colour",
         "an unknown field"),
    ]:
        st, _, body = api("POST", "/v1/secrets", key, body=payload)
        expect_error(st, body, 400, "invalid_argument", fragment, "secret with " + what)
    st, _, lst = api("GET", "/v1/secrets", key)
    check(st == 200 and lst == {"secrets": []}, "no refused secret was stored: %s" % lst)


def check_secrets(sid, key_id, key, key_b):
    check_secret_input(key, sid)
    st, _, s = api("POST", "/v1/secrets", key,
                   body=secret("github", rate_limit={"per_minute": 60, "burst": 10}))
    check(st == 201 and s.get("id", "").startswith("sec_") and s.get("name") == "github"
          and s.get("scope") == "project" and "sandbox_id" not in s and "value" not in s
          and s.get("rate_limit") == {"per_minute": 60, "burst": 10}
          and sorted(b["host"] for b in s.get("bindings", [])) == ["*.example.test",
                                                                   "api.example.test"]
          and all(b["header"] == "Authorization" and b["format"] == "Bearer {secret}"
                  for b in s.get("bindings", [])), "create a project secret: %s %s" % (st, s))
    st, _, body = api("POST", "/v1/secrets", key, body=secret("github"))
    expect_error(st, body, 409, "conflict", "github", "the same name twice in one scope")
    st, _, s2 = api("POST", "/v1/secrets", key,
                    body=secret("github", scope="sandbox", sandbox_id=sid))
    check(st == 201 and s2.get("scope") == "sandbox" and s2.get("sandbox_id") == sid
          and "rate_limit" not in s2, "the same name scoped to a sandbox: %s %s" % (st, s2))
    st, _, body = api("POST", "/v1/secrets", key_b,
                      body=secret("evil", scope="sandbox", sandbox_id=sid))
    expect_error(st, body, 404, "not_found", sid, "B binds a secret to A's sandbox")

    st, _, lst = api("GET", "/v1/secrets", key)
    names = sorted((x["name"], x["scope"]) for x in lst.get("secrets", [])) if st == 200 else []
    check(names == [("github", "project"), ("github", "sandbox")], "list A's secrets: %s" % lst)
    st, _, lst = api("GET", "/v1/secrets?sandbox_id=" + sid, key)
    check(st == 200 and [x["id"] for x in lst["secrets"]] == [s2.get("id")],
          "list one sandbox's secrets: %s" % lst)
    st, _, lst = api("GET", "/v1/secrets", key_b)
    check(st == 200 and lst == {"secrets": []}, "B sees none of A's secrets: %s" % lst)
    st, _, body = api("GET", "/v1/secrets?sandbox_id=BAD!", key)
    expect_error(st, body, 400, "invalid_argument", "sandbox_id", "list with a malformed id")
    st, _, body = api("DELETE", "/v1/secrets/github", key_b)
    expect_error(st, body, 404, "not_found", "github", "B deletes A's secret")

    st, _, _ = api("DELETE", "/v1/secrets/github", key)
    check(st == 204, "delete the project secret")
    st, _, lst = api("GET", "/v1/secrets", key)
    check(st == 200 and [x["scope"] for x in lst["secrets"]] == ["sandbox"],
          "the sandbox-scoped one is left: %s" % lst)
    st, _, body = api("DELETE", "/v1/secrets/github", key)
    expect_error(st, body, 404, "not_found", "github", "delete it twice")
    st, _, _ = api("DELETE", "/v1/secrets/github?sandbox_id=" + sid, key)
    check(st == 204, "delete the sandbox-scoped secret")

    # The audit log: every change, newest first, with who did it.
    st, _, audit = api("GET", "/v1/audit", key)
    rows = audit.get("entries", []) if st == 200 else []
    actions = [(e["action"], e["sandbox_id"], e["status"]) for e in rows
               if e["action"] != "register_project"]
    check(actions == [("delete_secret", sid, "OK"), ("delete_secret", "", "OK"),
                      ("create_secret", sid, "OK"), ("create_secret", "", "OK")]
          and all(e["actor"] == key_id and e["at"].endswith("Z") for e in rows),
          "the audit log has each change, newest first, by A's key: %s" % rows)
    st, _, audit = api("GET", "/v1/audit?sandbox_id=%s&limit=1" % sid, key)
    check(st == 200 and [(e["action"], e["sandbox_id"]) for e in audit["entries"]]
          == [("delete_secret", sid)], "audit of one sandbox, limit 1: %s" % audit)
    st, _, audit = api("GET", "/v1/audit", key_b)
    check(st == 200 and audit == {"entries": []}, "B's audit log has nothing of A's: %s" % audit)
    for q, fragment in [("?limit=0", "limit"), ("?limit=5000", "limit"), ("?limit=x", "limit"),
                        ("?sandbox_id=../x", "sandbox_id")]:
        st, _, body = api("GET", "/v1/audit" + q, key)
        expect_error(st, body, 400, "invalid_argument", fragment, "audit " + q)


def check_byok():
    _, _, key = project("byok")
    ck = "ab" * 32
    st, _, s = api("POST", "/v1/secrets", key, body=secret("k1", customer_key=ck))
    check(st == 201 and "customer_key" not in s, "the first secret with a customer key: %s" % s)
    st, _, body = api("POST", "/v1/secrets", key, body=secret("k2"))
    expect_error(st, body, 409, "conflict", "customer_key", "a BYOK project's secret without key")
    st, _, body = api("POST", "/v1/secrets", key, body=secret("k3", customer_key="cd" * 32))
    expect_error(st, body, 409, "conflict", "customer_key", "a BYOK project's secret, wrong key")
    st, _, s = api("POST", "/v1/secrets", key, body=secret("k4", customer_key=ck))
    check(st == 201, "a second secret with the right key: %s %s" % (st, s))
    check_byok_unlock(key, ck)


def check_byok_unlock(key, ck):
    """A BYOK project is unlocked (vault holds its data key) and locked
    again through REST; bad input names the problem, a wrong key unlocks
    nothing."""
    for payload, fragment, what in [
        ({}, "customer_key", "no key"),
        ({"customer_key": "ab" * 16}, "customer_key", "a 128-bit key"),
        ({"customer_key": "zz" * 32}, "customer_key", "a key that is not hex"),
        ({"customer_key": ck, "ttl_seconds": 100000}, "ttl_seconds", "a ttl over a day"),
        ({"customer_key": ck, "ttl_seconds": "60"}, "ttl_seconds", "a ttl as a string"),
        ({"customer_key": ck, "colour": "red"}, "colour", "an unknown field"),
    ]:
        st, _, body = api("POST", "/v1/secrets/unlock", key, body=payload)
        expect_error(st, body, 400, "invalid_argument", fragment, "unlock with " + what)
    st, _, body = api("POST", "/v1/secrets/unlock", key, body={"customer_key": "cd" * 32})
    expect_error(st, body, 409, "conflict", "customer_key is wrong", "unlock with a wrong key")
    st, _, body = api("POST", "/v1/secrets", key, body=secret("k5"))
    expect_error(st, body, 409, "conflict", "locked", "a wrong key left the project locked")
    st, _, u = api("POST", "/v1/secrets/unlock", key, body={"customer_key": ck,
                                                             "ttl_seconds": 600})
    check(st == 200 and u.get("unlocked") is True and u.get("expires_at", "").endswith("Z")
          and "customer_key" not in u, "unlock with the right key: %s %s" % (st, u))
    st, _, s = api("POST", "/v1/secrets", key, body=secret("k5"))
    check(st == 201, "a secret without the key while unlocked: %s %s" % (st, s))
    st, _, l1 = api("POST", "/v1/secrets/lock", key)
    st2, _, l2 = api("POST", "/v1/secrets/lock", key)
    check(st == 200 and l1.get("was_unlocked") is True and st2 == 200
          and l2.get("was_unlocked") is False, "lock, twice: %s %s" % (l1, l2))
    st, _, body = api("POST", "/v1/secrets", key, body=secret("k6"))
    expect_error(st, body, 409, "conflict", "locked", "locked again")
    st, _, audit = api("GET", "/v1/audit", key)
    acts = [(e["action"], e["status"]) for e in audit.get("entries", [])
            if e["action"].endswith("_project")]
    check(acts == [("lock_project", "OK"), ("lock_project", "OK"), ("unlock_project", "OK"),
                   ("unlock_project", "FAILED_PRECONDITION"), ("register_project", "OK")],
          "unlocks and locks are audited, newest first: %s" % acts)
    check(not [a for a in answers if ck.encode() in a], "no answer carried the customer key")

    _, _, plain = project("not-byok")
    st, _, body = api("POST", "/v1/secrets/unlock", plain, body={"customer_key": ck})
    expect_error(st, body, 404, "not_found", "nothing to unlock", "unlock a project without keys")
    api("POST", "/v1/secrets", plain, body=secret("p1"))
    st, _, body = api("POST", "/v1/secrets/unlock", plain, body={"customer_key": ck})
    expect_error(st, body, 409, "conflict", "nothing to unlock", "unlock a master-key project")


def check_orgs(key):
    """org → project: an org's secrets reach the projects put into it,
    listed as scope org; only the admin key changes them."""
    org = "acme-%d" % os.getpid()
    pid, _, member = project("org-member")
    _, _, outsider = project("org-outsider")
    st, _, o = api("POST", "/v1/orgs", ADMIN, body={"org_id": org})
    check(st == 201 and o.get("org_id") == org and o.get("created_at", "").endswith("Z"),
          "create an org: %s %s" % (st, o))
    st, _, body = api("POST", "/v1/orgs", ADMIN, body={"org_id": org})
    expect_error(st, body, 409, "conflict", org, "the same org twice")
    for payload, fragment in [({}, "org_id"), ({"org_id": "bad org!"}, "org_id"),
                              ({"org_id": 5}, "org_id"), ({"name": "x"}, "name")]:
        st, _, body = api("POST", "/v1/orgs", ADMIN, body=payload)
        expect_error(st, body, 400, "invalid_argument", fragment, "org with %s" % payload)
    st, _, body = api("POST", "/v1/orgs", key, body={"org_id": "mine"})
    check(st == 403, "a project key cannot create an org: %s %s" % (st, body))
    st, _, body = api("PUT", "/v1/projects/%s/org" % pid, ADMIN, body={"org_id": "no-such-org"})
    expect_error(st, body, 404, "not_found", "no-such-org", "join an unknown org")
    st, _, m = api("PUT", "/v1/projects/%s/org" % pid, ADMIN, body={"org_id": org})
    check(st == 200 and m.get("org_id") == org and m.get("project_id") == pid,
          "put a project into the org: %s %s" % (st, m))

    base = "/v1/orgs/%s/secrets" % org
    st, _, s = api("POST", base, ADMIN, body=secret("shared"))
    check(st == 201 and s.get("scope") == "org" and s.get("org_id") == org and "value" not in s,
          "create an org secret: %s %s" % (st, s))
    st, _, body = api("POST", base, ADMIN, body=secret("x", scope="project"))
    expect_error(st, body, 400, "invalid_argument", "scope", "an org secret with a scope")
    st, _, body = api("POST", "/v1/orgs/no-such-org/secrets", ADMIN, body=secret("x"))
    expect_error(st, body, 404, "not_found", "no-such-org", "a secret of an unknown org")
    st, _, body = api("POST", base, key, body=secret("x"))
    check(st == 403, "a project key cannot add org secrets: %s" % st)
    st, _, lst = api("GET", "/v1/secrets", member)
    check(st == 200 and [(x["name"], x["scope"]) for x in lst["secrets"]] == [("shared", "org")],
          "the member project sees the org secret: %s" % lst)
    st, _, lst = api("GET", "/v1/secrets", outsider)
    check(st == 200 and lst == {"secrets": []}, "a project outside the org does not: %s" % lst)
    st, _, body = api("DELETE", "/v1/secrets/shared", member)
    expect_error(st, body, 404, "not_found", "shared", "a member deletes the org's secret")
    st, _, lst = api("GET", base, ADMIN)
    check(st == 200 and [x["name"] for x in lst["secrets"]] == ["shared"],
          "the org's secrets: %s" % lst)
    st, _, _ = api("DELETE", base + "/shared", ADMIN)
    check(st == 204, "the admin deletes the org secret")
    st, _, audit = api("GET", "/v1/orgs/%s/audit" % org, ADMIN)
    check(st == 200 and [e["action"] for e in audit["entries"]]
          == ["delete_secret", "create_secret", "create_org"]
          and all(e.get("org_id") == org for e in audit["entries"]),
          "the org's audit log: %s" % audit)


def exec_ok(base, key, script):
    st, _, r = api("POST", base + "/exec", key, body={"cmd": ["sh", "-c", script], "timeout_s": 60})
    return st == 200 and r.get("exit_code") == 0, r


def check_network_log(base, sid, key, key_b):
    # A name the policy does not allow (answered by egress itself) and a
    # connection to the sandbox's own gateway address (reserved range):
    # both denied inside egress.
    ok, r = exec_ok(base, key, "getent hosts denied.example.test; "
                               "curl -sS --max-time 20 http://100.96.0.1:8080/; true")
    check(ok, "the guest tried two connections: %s" % r)
    st, _, log = api("GET", base + "/network/log", key)
    conns = log.get("connections", []) if st == 200 else []
    dns = [c for c in conns if c["protocol"] == "dns" and c["name"] == "denied.example.test"]
    tcp = [c for c in conns if c["protocol"] == "tcp" and c["dest_ip"] == "100.96.0.1"
           and c["dest_port"] == 8080]
    check(st == 200 and log.get("id") == sid and dns and dns[0]["decision"] == "deny"
          and dns[0]["time"].endswith("Z") and tcp and tcp[0]["decision"] == "deny"
          and tcp[0]["bytes_received"] == 0, "the connection log shows both denials: %s" % log)
    st, _, last = api("GET", base + "/network/log?limit=1", key)
    check(st == 200 and len(last["connections"]) == 1 and conns
          and last["connections"][0]["seq"] == max(c["seq"] for c in conns),
          "limit=1 is the newest entry: %s" % last)
    if conns:
        newest = max(c["seq"] for c in conns)
        st, _, later = api("GET", base + "/network/log?after_seq=%d" % newest, key)
        check(st == 200 and later["connections"] == [], "after_seq pages: %s" % later)
    for q in ["?limit=0", "?limit=abc", "?limit=-1", "?after_seq=x"]:
        st, _, body = api("GET", base + "/network/log" + q, key)
        expect_error(st, body, 400, "invalid_argument", q[1:q.index("=")], "network/log" + q)
    st, _, body = api("GET", base + "/network/log", key_b)
    expect_error(st, body, 404, "not_found", sid, "B reads A's connection log")


def check_console_log(base, sid, key, key_b):
    marker = "console-marker-%d" % os.getpid()
    ok, r = exec_ok(base, key, "echo %s > /dev/console" % marker)
    check(ok, "write to the guest console: %s" % r)
    # The guest's serial driver sends the bytes after echo returns (UART
    # interrupts): the wait only bounds that.
    for _ in range(100):
        st, hdrs, text = api("GET", base + "/logs", key, raw=True)
        if st != 200 or marker.encode() in text:
            break
        time.sleep(0.1)
    check(st == 200 and hdrs.get("Content-Type", "").startswith("text/plain")
          and marker.encode() in text, "the console log has what the guest wrote: %s %r"
          % (st, text[-300:]))
    st, _, tail = api("GET", base + "/logs?tail=8", key, raw=True)
    check(st == 200 and len(tail) <= 8 and text.endswith(tail), "tail=8: %r" % tail)
    for q in ["?tail=0", "?tail=99999999", "?tail=x"]:
        st, _, body = api("GET", base + "/logs" + q, key)
        expect_error(st, body, 400, "invalid_argument", "tail", "logs" + q)
    st, _, body = api("GET", base + "/logs", key_b)
    expect_error(st, body, 404, "not_found", sid, "B reads A's console")
    st, _, _ = api("POST", base + "/pause", key)
    st2, _, paused = api("GET", base + "/logs", key, raw=True)
    check(st == 200 and st2 == 200 and marker.encode() in paused,
          "the console log of a paused sandbox: %s %s" % (st, st2))
    api("POST", base + "/resume", key)


def sse_text(base, pid, key):
    st, _, raw = api("GET", base + "/processes/%d/output" % pid, key, raw=True)
    out, last = "", None
    for block in raw.decode(errors="replace").split("\n\n"):
        fields = dict(l.split(": ", 1) for l in block.split("\n") if ": " in l)
        if fields.get("event") == "stdout":
            out += json.loads(fields["data"]).get("data", "")
        if "event" in fields:
            last = (fields["event"], json.loads(fields["data"]))
    return st, out, last


def check_tty_processes(base, sid, key, key_b):
    st, _, p = api("POST", base + "/processes", key,
                   body={"cmd": ["sh", "-c", "stty size > /tmp/size1; read x; stty size; exit 4"],
                         "tty": True, "rows": 30, "cols": 100, "stdin_open": True})
    check(st == 201 and p.get("tty") is True, "start a process on a PTY: %s %s" % (st, p))
    if st != 201:
        return
    path = base + "/processes/%d" % p["pid"]
    # Resized only once it has read its first size.
    first = False
    for _ in range(120):
        first, r = exec_ok(base, key, "grep -qx '30 100' /tmp/size1")
        if first:
            break
        time.sleep(0.5)
    st, _, _ = api("POST", path + "/resize", key, body={"rows": 40, "cols": 132})
    check(first and st == 204, "resize its window after it saw 30x100 (%s %s)" % (first, st))
    st2, _, _ = api("POST", path + "/stdin", key, body={"data_b64": "Cg=="})  # "\n"
    st, out, last = sse_text(base, p["pid"], key)
    check(st2 == 204 and "40 132" in out
          and last == ("exit", {"exit_code": 4, "signal": 0, "timed_out": False}),
          "the PTY has the new size: %r %s" % (out, last))
    st, _, plain = api("POST", base + "/processes", key, body={"cmd": ["sleep", "600"]})
    if st == 201:
        st, _, body = api("POST", base + "/processes/%d/resize" % plain["pid"], key,
                          body={"rows": 10, "cols": 10})
        expect_error(st, body, 409, "conflict", "terminal", "resize a process without a PTY")
        api("POST", base + "/processes/%d/signal" % plain["pid"], key, body={"signal": "KILL"})
    for payload, fragment in [({}, "rows"), ({"rows": 0, "cols": 80}, "rows"),
                              ({"rows": 24}, "cols"), ({"rows": "24", "cols": 80}, "rows"),
                              ({"rows": 24, "cols": 70000}, "cols"),
                              ({"rows": 24, "cols": 80, "x": 1}, "x")]:
        st, _, body = api("POST", path + "/resize", key, body=payload)
        expect_error(st, body, 400, "invalid_argument", fragment, "resize with %s" % payload)
    for payload, fragment in [({"cmd": ["true"], "rows": 10}, "rows"),
                              ({"cmd": ["true"], "tty": True, "cols": 0}, "cols"),
                              ({"cmd": ["true"], "tty": "yes"}, "tty")]:
        st, _, body = api("POST", base + "/processes", key, body=payload)
        expect_error(st, body, 400, "invalid_argument", fragment, "start with %s" % payload)
    st, _, body = api("POST", path + "/stdin", key, body={"data_b64": "***"})
    expect_error(st, body, 400, "invalid_argument", "data_b64", "stdin that is not base64")
    st, _, body = api("POST", path + "/resize", key_b, body={"rows": 10, "cols": 10})
    expect_error(st, body, 404, "not_found", sid, "B resizes A's process")


def check_nothing_leaked():
    leaked = [a for a in answers if VALUE.encode() in a]
    check(not leaked, "no answer carried a secret's value (%d answers)" % len(answers))
    logs = os.environ.get("AIRLOCK_TEST_STACK_DIR", "")
    found = []
    for name in ["gateway.log", "vault.log", "scheduler.log"]:
        path = os.path.join(logs, name)
        if os.path.exists(path) and VALUE.encode() in open(path, "rb").read():
            found.append(name)
    check(logs and not found, "no log line carried a secret's value: %s" % found)


def check_metrics(before, running, after):
    """What the sandbox's create, exec and delete moved in each service's
    /metrics: before them, while it ran, after its delete."""
    for service in ("vmhost", "scheduler", "egress", "vault"):
        ctype, text, _ = scrape(service)
        check(ctype.startswith("text/plain; version=0.0.4")
              and "# TYPE airlock_%s_grpc_requests_total counter" % service in text,
              "%s serves /metrics (%s)" % (service, ctype))
    created = "airlock_vmhost_create_duration_seconds_count"
    check(value(after["vmhost"], created) == value(before["vmhost"], created) + 1,
          "vmhost counted one create: %s -> %s" % (value(before["vmhost"], created),
                                                   value(after["vmhost"], created)))
    check(value(running["vmhost"], "airlock_vmhost_sandboxes", state="running") >= 1
          and value(after["vmhost"], "airlock_vmhost_sandboxes", state="running")
          == value(running["vmhost"], "airlock_vmhost_sandboxes", state="running") - 1,
          "vmhost's running sandboxes: one more while it ran, one fewer after its delete")
    check(value(running["vmhost"], "airlock_vmhost_qemu_rss_bytes") > 0,
          "vmhost sums its QEMU's memory")
    # The gateway's exec is gRPC to vmhost (the create and delete come
    # over NATS from the scheduler).
    n = "airlock_vmhost_grpc_requests_total"
    check(value(after["vmhost"], n, method="Exec", code="OK")
          > value(before["vmhost"], n, method="Exec", code="OK"), "vmhost counted Exec OK")
    n = "airlock_scheduler_grpc_requests_total"
    check(value(after["scheduler"], n, method="CreateSandbox", code="OK")
          == value(before["scheduler"], n, method="CreateSandbox", code="OK") + 1,
          "the scheduler counted one CreateSandbox OK")
    check(value(after["scheduler"], "airlock_scheduler_controller_runs_total") > 0
          and value(after["scheduler"], "airlock_scheduler_controller_leader") == 1,
          "the scheduler leads and counts its controller runs")
    for name in ("connections", "dns_answers"):
        n = "airlock_egress_%s_total" % name
        check(value(after["egress"], n, decision="denied")
              > value(before["egress"], n, decision="denied"),
              "egress counted the denied %s" % name)
    n = "airlock_vault_grpc_requests_total"
    check(value(after["vault"], n, method="CreateSecret", code="OK")
          > value(before["vault"], n, method="CreateSecret", code="OK"),
          "vault counted its CreateSecret calls")


def main():
    before = scrape_all()
    _, key_id, key = project("secrets-a")
    _, _, key_b = project("secrets-b")
    st, _, sb = api("POST", "/v1/sandboxes", key,
                    body={"network": {"default": "deny", "allow_domains": ["allowed.example.test"]}})
    check(st == 201, "create A's sandbox: %s %s" % (st, sb))
    if st != 201:
        return
    sid = sb["id"]
    base = "/v1/sandboxes/" + sid
    running = scrape_all()
    check_secrets(sid, key_id, key, key_b)
    check_byok()
    check_orgs(key)
    check_network_log(base, sid, key, key_b)
    check_console_log(base, sid, key, key_b)
    check_tty_processes(base, sid, key, key_b)
    st, _, _ = api("DELETE", base, key)
    check(st == 204, "delete A's sandbox")
    st, _, body = api("GET", base + "/logs", key)
    expect_error(st, body, 404, "not_found", sid, "the console log goes with the sandbox")
    check_metrics(before, running, scrape_all())
    check_nothing_leaked()


if __name__ == "__main__":
    main()
    report_and_exit()
