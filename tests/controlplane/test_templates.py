#!/usr/bin/python3
"""Templates through the control plane (cp_harness: gateway, scheduler,
PostgreSQL, nats-server, vmhost with real VMs): a build streamed as SSE
carries the run command's output and ends with the template; a JSON build
is the next version; a sandbox of the template has its file, the run
command's result and its env and workdir; bad specs are 400s naming the
field; another project sees none of it (404); a built template's warm pool
fills and serves the create; a template in use cannot be deleted; the CLI
builds, lists and removes. argv[1]: the airlock binary.
Standard library only; no timing assertions. Three builds, one sandbox."""
import http.client
import json
import os
import subprocess
import sys
import tempfile

from rest_client import (ADMIN, URL, call, check, expect_error, new_project_key, poll, pool_ready,
                         report_and_exit, vmhost_log_says)

CLI = sys.argv[1]

SPEC = {
    "name": "web",
    "files": [{"path": "/srv/www/index.html", "content": "hello-template\n", "mode": "0644"},
              {"path": "/srv/www/bin.dat", "content_b64": "AAEC/w=="}],
    "run": ["echo run-output-marker; echo built > /srv/www/built"],
    "env": {"APP_MODE": "test"},
    "workdir": "/srv/www",
}


def build_sse(key, spec):
    """(status, events) of a streamed build: events as (name, data)."""
    conn = http.client.HTTPConnection(URL.hostname, URL.port, timeout=600)
    conn.request("POST", "/v1/templates", body=json.dumps(spec).encode(),
                 headers={"Authorization": "Bearer " + key, "Accept": "text/event-stream",
                          "Content-Type": "application/json"})
    resp = conn.getresponse()
    events, event = [], None
    if resp.status != 200:
        body = json.loads(resp.read() or b"{}")
        conn.close()
        return resp.status, body
    for raw in resp:
        line = raw.decode().rstrip("\n")
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: ") and event:
            events.append((event, json.loads(line[6:])))
            event = None
    conn.close()
    return resp.status, events


def airlock(key, *args):
    env = dict(os.environ, AIRLOCK_API_KEY=key)
    p = subprocess.run([CLI] + list(args), capture_output=True, env=env, timeout=600)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def check_bad_specs(key):
    for body, fragment, what in [
        ('{"name":', "not valid JSON", "truncated JSON"),
        ({"files": []}, "name: required", "no name"),
        ({"name": "Web Site"}, "name", "a name with spaces"),
        ({"name": "x" * 65}, "name", "a name of 65 characters"),
        ({"name": "default"}, "default", "the default template's name"),
        ({"name": "x", "colour": "red"}, "colour", "an unknown field"),
        ({"name": "x", "files": [{"path": "etc/rel", "content": "a"}]}, "files[0].path",
         "a relative file path"),
        ({"name": "x", "files": [{"path": "/a", "content": "a", "content_b64": "YQ=="}]},
         "files[0]", "content and content_b64"),
        ({"name": "x", "files": [{"path": "/a", "content_b64": "!!"}]}, "files[0].content_b64",
         "bad base64"),
        ({"name": "x", "run": ["true", ""]}, "run[1]", "an empty run command"),
        ({"name": "x", "packages": ["Not A Package"]}, "packages[0]", "a bad package name"),
        ({"name": "x", "env": {"A": 1}}, "env.A", "env with a number"),
        ({"name": "x", "memory_mb": 16}, "memory_mb", "too little memory"),
        ({"name": "x", "network": {"default": "maybe"}}, "network.default", "a bad network"),
    ]:
        st, _, got = call("POST", "/v1/templates", key=key, body=body)
        expect_error(st, got, 400, "invalid_argument", fragment, "build with " + what)
    st, events = build_sse(key, {"name": "x", "cpus": 99})
    expect_error(st, events, 400, "invalid_argument", "cpus", "SSE build of a bad spec is a JSON 400")


def main():
    pa, ka = new_project_key("templates-a")
    _, kb = new_project_key("templates-b")
    check_bad_specs(ka)
    st, _, lst = call("GET", "/v1/templates", key=ka)
    check(st == 200 and lst == {"templates": []}, "bad specs left no template: %s" % lst)

    # ---- a streamed build: the run command's output is in the log ----
    st, events = build_sse(ka, SPEC)
    names = [e for e, _ in events]
    lines = [d["line"] for e, d in events if e == "log"]
    check(st == 200 and names and names[-1] == "done", "SSE build ends with done: %s" % names)
    check("| run-output-marker" in lines, "the build log has the run command's output: %s" % lines)
    check(lines and lines[-1].startswith("ready: web:1") and not any(pa in l for l in lines),
          "the log names the template as the project does (no project prefix)")
    done = events[-1][1] if names and names[-1] == "done" else {}
    check(done.get("ref") == "web:1" and done.get("version") == 1 and done.get("node") == "cp-node"
          and done.get("spec", {}).get("files", [{}])[0].get("bytes") == 15
          and "content" not in done.get("spec", {}).get("files", [{}])[0],
          "done carries the template (its spec without file contents): %s" % done)

    # ---- a plain JSON build is the next version ----
    st, _, v2 = call("POST", "/v1/templates", key=ka, body=SPEC)
    check(st == 201 and v2.get("ref") == "web:2", "JSON build answers 201 with web:2: %s %s" % (st, v2))
    st, _, lst = call("GET", "/v1/templates", key=ka)
    check(st == 200 and [t["ref"] for t in lst["templates"]] == ["web:1", "web:2"],
          "list shows both versions: %s" % lst)
    st, _, got = call("GET", "/v1/templates/web", key=ka)
    check(st == 200 and got.get("version") == 2, "GET name is the newest version")
    st, _, got = call("GET", "/v1/templates/web:1", key=ka)
    check(st == 200 and got.get("version") == 1, "GET name:version is that version")

    # ---- tenancy: project B sees none of it ----
    st, _, lst = call("GET", "/v1/templates", key=kb)
    check(st == 200 and lst == {"templates": []}, "B's list is empty: %s" % lst)
    for method, path in [("GET", "/v1/templates/web"), ("GET", "/v1/templates/web:1"),
                         ("DELETE", "/v1/templates/web")]:
        st, _, body = call(method, path, key=kb)
        expect_error(st, body, 404, "not_found", "web", "B: %s %s" % (method, path))
    st, _, body = call("POST", "/v1/sandboxes", key=kb, body={"template": "web"})
    expect_error(st, body, 404, "not_found", "web", "B cannot create from A's template")

    # ---- a sandbox of the template ----
    st, _, body = call("POST", "/v1/sandboxes", key=ka, body={"template": "nope"})
    expect_error(st, body, 404, "not_found", "nope", "create from an unknown template")
    st, _, body = call("POST", "/v1/sandboxes", key=ka, body={"template": "web", "memory_mb": 1024})
    expect_error(st, body, 400, "invalid_argument", "memory_mb", "another size than the template's")
    # A warm pool of the built template (named as nodes name it) fills,
    # and the create below takes its VM.
    pooled = "%s.web:2" % pa
    st, _, body = call("PUT", "/v1/templates/%s/warm-pool" % pooled, key=ADMIN, body={"target": 1})
    check(st == 200 and body.get("target") == 1, "PUT warm-pool of %s: %s %s" % (pooled, st, body))
    check(poll(lambda: pool_ready(pooled, 1), limit_s=300), "the template's warm pool holds a VM")
    st, _, sb = call("POST", "/v1/sandboxes", key=ka, body={"template": "web"})
    check(st == 201 and sb.get("template") == "web:2" and sb.get("memory_mb") == 512,
          "create from web: %s %s" % (st, sb))
    if st != 201:
        report_and_exit()
        return
    check(vmhost_log_says(sb["id"], "from=pool"), "the create took the template's pooled VM")
    st, _, _ = call("PUT", "/v1/templates/%s/warm-pool" % pooled, key=ADMIN, body={"target": 0})
    check(st == 200 and poll(lambda: pool_ready(pooled, 0), limit_s=300),
          "target 0 empties the template's pool")
    st, _, r = call("POST", "/v1/sandboxes/%s/exec" % sb["id"], key=ka,
                    body={"cmd": ["sh", "-c", "cat index.html built; echo $APP_MODE; pwd;"
                                              " od -An -tx1 bin.dat"]})
    check(st == 200 and r.get("stdout") == "hello-template\nbuilt\ntest\n/srv/www\n 00 01 02 ff\n",
          "the sandbox has the file, the run result, env and workdir: %s" % r)
    st, _, body = call("DELETE", "/v1/templates/web", key=ka)
    expect_error(st, body, 409, "conflict", sb["id"], "delete while a sandbox uses it")
    st, _, _ = call("DELETE", "/v1/sandboxes/" + sb["id"], key=ka)
    check(st in (200, 204), "delete the sandbox")
    st, _, _ = call("DELETE", "/v1/templates/web:1", key=ka)
    check(st == 204, "delete one version")
    st, _, lst = call("GET", "/v1/templates", key=ka)
    check([t["ref"] for t in lst.get("templates", [])] == ["web:2"], "web:2 is left: %s" % lst)
    st, _, _ = call("DELETE", "/v1/templates/web", key=ka)
    check(st == 204, "delete the rest once unused")
    st, _, body = call("GET", "/v1/templates/web", key=ka)
    expect_error(st, body, 404, "not_found", "web", "a deleted template is gone")

    # ---- the CLI ----
    with tempfile.TemporaryDirectory() as tmp:
        spec = os.path.join(tmp, "spec.json")
        with open(spec, "w") as f:
            json.dump({"name": "cli", "run": ["echo cli-marker"]}, f)
        rc, out, err = airlock(ka, "template", "build", "-f", spec)
        check(rc == 0 and out == "cli:1\n" and "| cli-marker" in err,
              "template build prints the ref, the log on stderr: %d %r %r" % (rc, out, err))
        bad = os.path.join(tmp, "bad.json")
        with open(bad, "w") as f:
            json.dump({"name": "cli", "run": [""]}, f)
        rc, out, err = airlock(ka, "template", "build", "-f", bad)
        check(rc == 1 and "run[0]" in err and out == "", "a bad spec: exit 1 naming run[0]: %r" % err)
        rc, _, err = airlock(ka, "template", "build")
        check(rc == 2 and "-f" in err, "template build without -f is a usage error")
    rc, out, _ = airlock(ka, "--json", "template", "ls")
    refs = [t["ref"] for t in json.loads(out)["templates"]] if rc == 0 else []
    check(refs == ["cli:1"], "--json template ls: %r" % out)
    rc, out, _ = airlock(ka, "template", "ls")
    check(rc == 0 and out.startswith("TEMPLATE") and "cli:1" in out, "template ls: %r" % out)
    rc, out, _ = airlock(ka, "template", "rm", "cli")
    check(rc == 0 and out == "cli deleted\n", "template rm: %r" % out)
    rc, _, err = airlock(ka, "template", "rm", "cli")
    check(rc == 1 and "cli" in err, "template rm of a gone template: %r" % err)
    report_and_exit()


if __name__ == "__main__":
    main()
