#!/usr/bin/python3
"""airlock's E2B-compatible control-plane API (docs/e2b.md) against a real
stack (cp_harness: PostgreSQL, nats-server, vmhost with real VMs,
scheduler, gateway).

E2B's own JS SDK (npm e2b) does what an agent does with a sandbox
(sdk_sandbox.js: commands, a PTY, files, a watch, a port, pause and
connect) and drives sandboxes' whole life (sdk_lifecycle.js); then raw HTTP checks what the SDK hides: status codes, E2B's error
shape {"code", "message"}, headers, refusals that create nothing, another
project's key, and that airlock's /v1 API keeps its own shape.
argv[1]: the airlock CLI (airlock e2b-key)."""
import json
import os
import subprocess
import sys
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "controlplane"))
from rest_client import call, check, new_project_key, report_and_exit  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
GATEWAY = os.environ["AIRLOCK_URL"]


def e2b_key(key):
    return "e2b_" + key[len("ak_"):]


def e2b(method, path, key, body=None, bearer=False):
    headers = {"Authorization": "Bearer " + key} if bearer else {"X-API-Key": key}
    if body is not None:
        headers["Content-Type"] = "application/json"
    return call(method, path, body=body, headers=headers)


def e2b_error(got, status, fragment, what):
    st, _, body = got
    ok = (st == status and isinstance(body, dict) and set(body) == {"code", "message"}
          and body["code"] == status and fragment in body["message"])
    check(ok, "%s -> %d {code, message} mentioning %r (got %s %s)" % (what, status, fragment,
                                                                    st, body))


def run_sdk(script, key, other_key):
    """Runs a JS program of E2B's SDK (its own checks); the sandbox it
    names on a KEEP line."""
    env = dict(os.environ, E2B_API_URL=GATEWAY, E2B_SANDBOX_URL=GATEWAY, E2B_API_KEY=key,
               E2B_TEST_OTHER_KEY=other_key, E2B_TEST_DOMAIN="localhost")
    proc = subprocess.run(["node", os.path.join(HERE, script)], env=env,
                          capture_output=True, text=True, timeout=1500)
    kept = None
    for line in proc.stdout.splitlines():
        print("sdk: " + line, flush=True)
        if line.startswith("KEEP "):
            kept = line.split()[1:3]
    if proc.stderr.strip():
        print("sdk stderr: " + proc.stderr.strip(), flush=True)
    check(proc.returncode == 0, "the SDK's checks (%s) pass" % script)
    return kept


def check_auth(key):
    e2b_error(e2b("GET", "/sandboxes", "e2b_" + "0" * 64), 401, "unknown API key", "wrong key")
    e2b_error(call("GET", "/v2/sandboxes"), 401, "X-API-Key", "no key")
    e2b_error(e2b("GET", "/sandboxes", "ak_" + "0" * 64), 401, "X-API-Key",
              "an airlock-form key in X-API-Key")
    st, _, body = e2b("GET", "/sandboxes", key, bearer=True)
    check(st == 200 and isinstance(body, list), "Authorization: Bearer e2b_… (%s)" % st)


def check_refusals(key):
    """Bad creates: 400 naming the field, and no sandbox made."""
    before = e2b("GET", "/v2/sandboxes", key)[2]
    for body, fragment in [
            ({"templateID": "base", "mcp": {"srv": {}}}, "mcp is not supported"),
            ({"templateID": "base", "bogus": 1}, "bogus"),
            ({"templateID": "base", "network": {"allowPublicTraffic": "no"}},
             "network.allowPublicTraffic: must be true or false"),
            ({"templateID": "base", "network": {"denyOut": ["0.0.0.0/0"]}}, "network.denyOut"),
            ({"templateID": "base", "autoPauseMemory": False}, "autoPauseMemory"),
            ({"templateID": "base", "autoResume": {"enabled": True}}, "autoResume"),
            ({"templateID": "base", "timeout": 0}, "timeout"),
            ({"timeout": 30}, "templateID: required")]:
        e2b_error(e2b("POST", "/sandboxes", key, body), 400, fragment, "create %s" % body)
    after = e2b("GET", "/v2/sandboxes", key)[2]
    check(isinstance(after, list) and len(after) == len(before),
          "refused creates made no sandbox (%d before, %s after)" % (len(before), after))
    e2b_error(e2b("POST", "/sandboxes", key, {"templateID": "no-such"}), 404, "no-such",
              "unknown template")


def check_sandbox(key, other, sid, suite):
    meta = urllib.parse.quote("suite=" + suite)
    st, _, v1 = e2b("GET", "/sandboxes?metadata=" + meta, key)
    check(st == 200 and [s["sandboxID"] for s in v1] == [sid],
          "v1 list, metadata filter: the running one (%s %s)" % (st, v1))
    listed = v1[0] if v1 else {}
    check(set(listed) >= {"templateID", "sandboxID", "clientID", "startedAt", "endAt", "cpuCount",
                          "memoryMB", "diskSizeMB", "metadata", "state", "envdVersion"},
          "ListedSandbox has E2B's required fields (%s)" % sorted(listed))
    st, hdrs, v2 = e2b("GET", "/v2/sandboxes?limit=1&metadata=" + meta, key)
    check(st == 200 and len(v2) == 1 and hdrs.get("X-Next-Token") is None,
          "v2 list: no x-next-token when all fit (%s)" % hdrs.get("X-Next-Token"))
    e2b_error(e2b("GET", "/v2/sandboxes?state=stopped", key), 400, "state", "v2 bad state")
    e2b_error(e2b("GET", "/v2/sandboxes?limit=0", key), 400, "limit", "v2 limit 0")
    e2b_error(e2b("GET", "/v2/sandboxes?nextToken=zzz", key), 400, "nextToken", "v2 bad token")

    st, _, detail = e2b("GET", "/sandboxes/" + sid, key)
    check(st == 200 and detail.get("state") == "running" and detail.get("envdVersion") >= "0.6.4"
          and detail.get("envdAccessToken") == key and detail.get("domain") == "localhost",
          "GET: SandboxDetail (%s)" % detail)

    # Another project: nothing to see, kill, pause or time out.
    for method, path in [("GET", ""), ("DELETE", ""), ("POST", "/pause"),
                         ("GET", "/metrics")]:
        e2b_error(e2b(method, "/sandboxes/%s%s" % (sid, path), other), 404, sid,
                  "another project's key: %s %s" % (method, path))
    e2b_error(e2b("POST", "/sandboxes/%s/timeout" % sid, other, {"timeout": 1}), 404, sid,
              "another project's key: timeout")
    check(e2b("GET", "/v2/sandboxes", other)[2] == [], "another project's list is empty")
    check(e2b("GET", "/sandboxes/" + sid, key)[0] == 200, "…and the sandbox is still there")

    e2b_error(e2b("GET", "/sandboxes/sb_nosuch", key), 404, "sb_nosuch", "unknown sandbox")
    e2b_error(e2b("GET", "/sandboxes/BAD!", key), 400, "malformed", "malformed id")
    e2b_error(e2b("POST", "/sandboxes/%s/timeout" % sid, key, {}), 400, "timeout", "no timeout")
    e2b_error(e2b("POST", "/sandboxes/%s/resume" % sid, key, {}), 409, "already running",
              "resume of a running one")
    e2b_error(e2b("PUT", "/sandboxes", key, {}), 405, "PUT", "a method the path lacks")
    e2b_error(e2b("GET", "/no/such/route", key), 404, "no route", "an unknown path")
    check(e2b("POST", "/sandboxes/%s/refreshes" % sid, key, {"duration": 60})[0] == 204,
          "refreshes: 204")
    # Logs: airlock's console log (/v1/…/logs), a line per entry.
    console = call("GET", "/v1/sandboxes/%s/logs" % sid, key="ak_" + key[4:], raw=True)[2]
    lines = console.decode(errors="replace").split("\n")
    lines = lines[:-1] if lines and lines[-1] == "" else lines
    st, _, logs = e2b("GET", "/sandboxes/%s/logs" % sid, key)
    check(st == 200 and len(logs.get("logs", [])) == min(len(lines), 1000)
          and len(logs.get("logEntries", [])) == len(logs["logs"]),
          "logs: the console's %d lines (%s, %d)" % (len(lines), st, len(logs.get("logs", []))))
    st, _, logs2 = e2b("GET", "/v2/sandboxes/%s/logs?limit=2&direction=backward" % sid, key)
    check(st == 200 and len(logs2.get("logs", [])) == min(len(lines), 2),
          "v2 logs: limit (%s %s)" % (st, logs2))
    e2b_error(e2b("GET", "/v2/sandboxes/%s/logs?cursor=5" % sid, key), 400, "cursor",
              "v2 logs: cursor")

    # Resume (deprecated route) of a paused one answers 201 with a Sandbox.
    check(e2b("POST", "/sandboxes/%s/pause" % sid, key)[0] == 204, "pause: 204")
    st, _, resumed = e2b("POST", "/sandboxes/%s/resume" % sid, key, {"timeout": 300})
    check(st == 201 and resumed.get("sandboxID") == sid and resumed.get("trafficAccessToken", 1)
          is None, "resume: 201 Sandbox (%s %s)" % (st, resumed))
    st, _, conn = e2b("POST", "/sandboxes/%s/connect" % sid, key, {"timeout": 300})
    check(st == 200 and conn.get("sandboxID") == sid, "connect of a running one: 200 (%s)" % st)

    check(e2b("DELETE", "/sandboxes/" + sid, key)[0] == 204, "kill: 204")
    e2b_error(e2b("DELETE", "/sandboxes/" + sid, key), 404, sid, "kill again")


def check_create_mapping(key, sid):
    """What a create's fields become in airlock (its own /v1 API)."""
    ak = "ak_" + key[4:]
    st, _, sb = call("GET", "/v1/sandboxes/" + sid, key=ak)
    check(st == 200 and sb.get("network", {}).get("default") == "allow",
          "E2B's default: internet allowed (network %s)" % sb.get("network"))
    st, _, made = e2b("POST", "/sandboxes", key,
                      {"templateID": "base", "timeout": 300, "allow_internet_access": False,
                       "envVars": {"GREETING": "hi there"}, "secure": True})
    check(st == 201 and made.get("sandboxID", "").startswith("sb_"), "raw create: 201 (%s)" % st)
    if st != 201:
        return
    sid2 = made["sandboxID"]
    st, _, sb = call("GET", "/v1/sandboxes/" + sid2, key=ak)
    check(sb.get("network", {}).get("default") in ("deny", None) and sb.get("network") is not None,
          "allow_internet_access false: deny everything (network %s)" % sb.get("network"))
    st, _, out = call("POST", "/v1/sandboxes/%s/exec" % sid2, key=ak,
                      body={"cmd": ["sh", "-c", "echo \"$GREETING\""]})
    check(st == 200 and out.get("stdout") == "hi there\n", "envVars reach execs (%s)" % out)
    check(e2b("DELETE", "/sandboxes/" + sid2, key)[0] == 204, "raw create's sandbox killed")


def main():
    _, key = new_project_key("e2b-a")
    _, other_key = new_project_key("e2b-b")
    key, other = e2b_key(key), e2b_key(other_key)

    cli = subprocess.run([sys.argv[1], "e2b-key"], capture_output=True, text=True,
                         env=dict(os.environ, AIRLOCK_API_KEY="ak_" + key[4:]))
    check(cli.returncode == 0 and cli.stdout.strip() == key, "airlock e2b-key prints the key")

    check_auth(key)
    check_refusals(key)
    st, _, templates = e2b("GET", "/templates", key)
    check(st == 200 and any(t["templateID"] == "base" for t in templates),
          "templates: base listed (%s)" % templates)

    # An agent's use of a sandbox: commands, PTY, files, watch, ports.
    run_sdk("sdk_sandbox.js", key, other)
    kept = run_sdk("sdk_lifecycle.js", key, other)
    if kept:
        check_create_mapping(key, kept[0])
        check_sandbox(key, other, *kept)

    # airlock's own API keeps its shape beside E2B's.
    st, _, body = call("GET", "/v1/sandboxes/sb_nosuch", key="ak_" + key[4:])
    check(st == 404 and "error" in body, "/v1 keeps airlock's error shape (%s)" % body)
    report_and_exit()


main()
