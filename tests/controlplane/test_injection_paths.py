#!/usr/bin/python3
"""Credential injection through the public API, on every path that makes
or moves a sandbox: created over REST and gRPC (restored from the snapshot,
from the warm pool, at another size), forked, restored from a checkpoint
(the guest cold-boots), resumed from suspended, adopted by a restarted
vmhost, re-attached by a restarted egress.

cp_harness --internet runs the whole stack (gateway, scheduler, PostgreSQL,
NATS, vmhost with real VMs, egress, vault); egress dials out of netlab's
uplink namespace, whose only neighbours are the test's DNS and servers, and
the upstream (tests/network/support/upstream_server.py) records every
request it gets. A secret made with POST /v1/secrets is bound to the
upstream's host; curl in the guest must reach it with the secret in the
bound header, the guest must never see the secret, and vault's audit log
(GET /v1/audit) must have the injection. A sandbox of another project gets
nothing.

usage: test_injection_paths.py PROTO_DIR STUB_DIR (the gRPC client is
generated into STUB_DIR as test_public_grpc.py does). Also through the
public API: a live network policy change decides the guest's next
connection, plain HTTP to a TLS-only secret's host is refused (403) and a
"plaintext": true binding is injected into it, a sandbox-scoped secret wins over the project's and its rate
limit answers 429 without forwarding, an org's secret reaches a member
project's sandbox, inspect_tls checks the Host inside TLS (REST and gRPC),
gRPC SetNetworkPolicy decides the guest's next connection, a locked BYOK
project's requests get 503 and an unlocked one's are injected, and a
secret whose row was edited in PostgreSQL behind vault's back (its rule, an
added binding) is refused end to end: 502 credential_unavailable to the
guest, nothing upstream, an inject/DATA_LOSS row in GET /v1/audit. vault's
/metrics counts the injections, the rate-limited and the locked ones. No
timing assertions; every wait only bounds a hang."""
import base64
import json
import os
import subprocess
import sys
import time

import grpc

import grpc_stubs
from prom_metrics import scrape, value
from rest_client import (ADMIN, call, check, control, new_project_key, poll, pool_ready, psql,
                         report_and_exit, vmhost_log_says)

PROTO_DIR, STUB_DIR = sys.argv[1], sys.argv[2]
HOST = os.environ["AIRLOCK_TEST_UPSTREAM_HOST"]
HTTPS_PORT = int(os.environ["AIRLOCK_TEST_UPSTREAM_HTTPS_PORT"])
HTTP_PORT = int(os.environ["AIRLOCK_TEST_UPSTREAM_HTTP_PORT"])
UPSTREAM_LOG = os.environ["AIRLOCK_TEST_UPSTREAM_LOG"]
# Made up per run; reaches the upstream only, never an answer to the guest.
SECRET = "sk-injection-%d-%s" % (os.getpid(), base64.b32encode(os.urandom(10)).decode().lower())
NETWORK = {"allow_domains": [HOST], "allow_ports": [HTTPS_PORT, HTTP_PORT]}
URL = "https://%s:%d" % (HOST, HTTPS_PORT)
CURL = "curl -sS --max-time 30 " + URL
LIMIT_S = 600


grpc_stubs.generate(PROTO_DIR, STUB_DIR, ["airlock/v1/sandboxes.proto"])
from airlock.v1 import sandboxes_pb2 as pb, sandboxes_pb2_grpc  # noqa: E402


def upstream_requests(path):
    """The requests the upstream recorded for path, oldest first."""
    try:
        with open(UPSTREAM_LOG) as f:
            lines = [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []
    return [r for r in lines if r["path"] == path]


def rest_exec(key, sid, script):
    st, _, body = call("POST", "/v1/sandboxes/%s/exec" % sid, key=key,
                       body={"cmd": ["sh", "-c", script], "timeout_s": 120})
    if st != 200 or not isinstance(body, dict):
        return None, "exec answered %s %s" % (st, body)
    return body.get("exit_code"), body.get("stdout", "") + body.get("stderr", "")


def grpc_exec(stub, key, sid, script):
    out, code = b"", None
    for ev in stub.Exec(pb.ExecRequest(id=sid, cmd=["sh", "-c", script]),
                        metadata=[("authorization", "Bearer " + key)], timeout=LIMIT_S):
        kind = ev.WhichOneof("event")
        if kind in ("stdout", "stderr"):
            out += getattr(ev, kind)
        elif kind == "exit":
            code = ev.exit.exit_code
    return code, out.decode(errors="replace")


def expect_injected(key, sid, case, run=None, retry_s=0, value=SECRET):
    """curl from the guest of sid to /inject/CASE: the upstream got it with
    the secret (value) in the bound header, the guest did not see it, and
    the audit log has the injection for the sandbox. retry_s: how long a
    request may keep failing first (a re-attach that is still under way)."""
    path = "/inject/" + case
    run = run or (lambda script: rest_exec(key, sid, script))

    def attempt():
        code, out = run(CURL + path)
        return (code, out) if code == 0 else None
    got = poll(attempt, limit_s=retry_s, every_s=1) if retry_s else attempt()
    code, out = got if got else run(CURL + path)
    check(code == 0 and out == "upstream-ok GET %s\n" % path,
          "%s: the guest's request reached the upstream (%s %r)" % (case, code, out))
    check(value not in (out or ""), "%s: the guest never sees the secret" % case)
    reqs = upstream_requests(path)
    auth = [v for r in reqs for k, v in r["headers"] if k.lower() == "authorization"]
    check(len(reqs) >= 1 and auth == ["Bearer " + value] * len(reqs),
          "%s: the upstream got the secret in the bound header (%d requests, %r)"
          % (case, len(reqs), [a[:12] for a in auth]))

    def audited():
        st, _, body = call("GET", "/v1/audit?sandbox_id=%s&limit=1000" % sid, key=key)
        rows = body.get("entries", []) if st == 200 and isinstance(body, dict) else []
        return [e for e in rows if e.get("action") == "inject" and e.get("path") == path
                and e.get("host") == HOST and e.get("status") == "OK"]
    check(poll(audited, limit_s=30), "%s: vault's audit log has the injection" % case)


def create(key, what, **body):
    body.setdefault("network", NETWORK)
    st, _, sb = call("POST", "/v1/sandboxes", key=key, body=body)
    check(st == 201 and isinstance(sb, dict) and sb.get("state") == "running",
          "%s: POST /v1/sandboxes -> 201 running (%s %s)" % (what, st, sb))
    return sb.get("id") if st == 201 else None


def delete(key, sid):
    if sid:
        st, _, _ = call("DELETE", "/v1/sandboxes/" + sid, key=key)
        check(st == 204, "DELETE %s -> 204 (%s)" % (sid, st))


def check_other_project_gets_nothing(other_key):
    sid = create(other_key, "another project")
    if not sid:
        return
    path = "/inject/other-project"
    # Spliced, not intercepted: the guest sees the upstream's own
    # certificate, from a CA only egress trusts (-k).
    code, out = rest_exec(other_key, sid, CURL.replace("curl ", "curl -k ") + path)
    reqs = upstream_requests(path)
    check(code == 0 and len(reqs) == 1 and
          not any(k.lower() == "authorization" for k, _ in reqs[0]["headers"]),
          "a sandbox of another project reaches the host without the secret (%s %r %s)"
          % (code, out, reqs))
    delete(other_key, sid)


def check_inspect_tls(other_key):
    """network.inspect_tls (REST) / NetworkPolicy.inspect_tls (gRPC): for a
    project without secrets egress terminates TLS to the allowed host all
    the same, so a request inside naming another host is refused (421) and
    a proper one goes through with nothing added."""
    st, _, body = call("POST", "/v1/sandboxes", key=other_key,
                       body={"network": dict(NETWORK, inspect_tls="yes")})
    check(st == 400 and "network.inspect_tls" in json.dumps(body),
          "inspect_tls that is not a boolean -> 400 naming it (%s %s)" % (st, body))
    sid = create(other_key, "inspected (REST)", network=dict(NETWORK, inspect_tls=True))
    if not sid:
        return
    st, _, body = call("GET", "/v1/sandboxes/" + sid, key=other_key)
    check(st == 200 and body.get("network", {}).get("inspect_tls") is True,
          "GET shows inspect_tls (%s %s)" % (st, body.get("network")))
    mismatch = " -w '\\n%{http_code}' -H 'Host: elsewhere.test'"

    def expect_inspected(run, case):
        path = "/inspect/" + case
        code, out = run(CURL + path)
        reqs = upstream_requests(path)
        check(code == 0 and out == "upstream-ok GET %s\n" % path and len(reqs) == 1 and
              not any(k.lower() == "authorization" for k, _ in reqs[0]["headers"]),
              "%s: inspected, the request goes as it is, nothing added (%s %r)"
              % (case, code, out))
        code, out = run(CURL.replace("curl ", "curl" + mismatch + " ") + path + "-mismatch")
        check(code == 0 and out.endswith("\n421") and not upstream_requests(path + "-mismatch"),
              "%s: Host inside TLS naming another host -> 421, nothing upstream (%s %r)"
              % (case, code, out))
    expect_inspected(lambda script: rest_exec(other_key, sid, script), "rest")
    delete(other_key, sid)

    channel = grpc.insecure_channel(os.environ["AIRLOCK_GRPC_ADDR"])
    stub = sandboxes_pb2_grpc.SandboxesStub(channel)
    meta = [("authorization", "Bearer " + other_key)]
    sb = stub.CreateSandbox(pb.CreateSandboxRequest(network=pb.NetworkPolicy(
        allow_domains=[HOST], allow_ports=[HTTPS_PORT, HTTP_PORT], inspect_tls=True)),
        metadata=meta, timeout=LIMIT_S)
    check(sb.state == "running" and sb.network.inspect_tls,
          "gRPC CreateSandbox with inspect_tls -> running, shown (%s)" % sb.state)
    expect_inspected(lambda script: grpc_exec(stub, other_key, sb.id, script), "grpc")
    stub.DeleteSandbox(pb.SandboxRequest(id=sb.id), metadata=meta, timeout=LIMIT_S)
    channel.close()


def check_byok_lock():
    """A BYOK project (POST /v1/secrets with customer_key): while locked
    (POST /v1/secrets/lock) the guest's request to the bound host gets 503
    credential_locked and nothing goes out; unlocked (POST
    /v1/secrets/unlock) it is injected; locked again, 503 again."""
    _, key = new_project_key("inject-byok")
    customer_key = os.urandom(32).hex()
    value = SECRET + "-byok"
    st, _, body = call("POST", "/v1/secrets", key=key, body={
        "name": "byok", "value": value, "customer_key": customer_key,
        "bindings": [{"host": HOST, "header": "Authorization", "format": "Bearer {secret}"}]})
    check(st == 201, "POST /v1/secrets with customer_key -> 201 (%s %s)" % (st, body))
    sid = create(key, "BYOK project")
    if st != 201 or not sid:
        return

    def expect_locked(case):
        path = "/inject/" + case
        code, out = rest_exec(key, sid, CURL.replace("curl ", "curl -w '\\n%{http_code}' -D - ")
                              + path)
        check(code == 0 and out.rstrip().endswith("503") and "credential_locked" in out and
              not upstream_requests(path) and value not in out,
              "%s: locked -> 503 credential_locked, nothing upstream (%s %r)"
              % (case, code, out[-200:]))
    st, _, body = call("POST", "/v1/secrets/lock", key=key)
    check(st == 200 and body.get("unlocked") is False, "POST /v1/secrets/lock -> 200 (%s %s)"
          % (st, body))
    expect_locked("byok-locked")
    st, _, body = call("POST", "/v1/secrets/unlock", key=key,
                       body={"customer_key": customer_key, "ttl_seconds": 600})
    check(st == 200 and body.get("unlocked") is True, "POST /v1/secrets/unlock -> 200 (%s %s)"
          % (st, body))
    expect_injected(key, sid, "byok-unlocked", value=value)
    st, _, _ = call("POST", "/v1/secrets/lock", key=key)
    check(st == 200, "POST /v1/secrets/lock again -> 200 (%s)" % st)
    expect_locked("byok-relocked")
    delete(key, sid)


def check_grpc_create(key):
    channel = grpc.insecure_channel(os.environ["AIRLOCK_GRPC_ADDR"])
    stub = sandboxes_pb2_grpc.SandboxesStub(channel)
    meta = [("authorization", "Bearer " + key)]
    sb = stub.CreateSandbox(pb.CreateSandboxRequest(
        network=pb.NetworkPolicy(allow_domains=[HOST], allow_ports=[HTTPS_PORT, HTTP_PORT])),
        metadata=meta, timeout=LIMIT_S)
    check(sb.state == "running", "gRPC CreateSandbox -> running (%s)" % sb.state)
    run = lambda script: grpc_exec(stub, key, sb.id, script)  # noqa: E731
    expect_injected(key, sb.id, "grpc-create", run=run)
    # SetNetworkPolicy decides the guest's next connection, as PUT does.
    stub.SetNetworkPolicy(pb.SetNetworkPolicyRequest(id=sb.id, network=pb.NetworkPolicy(
        allow_domains=["allowed.test"], allow_ports=[HTTPS_PORT])), metadata=meta,
        timeout=LIMIT_S)
    code, out = run(CURL + "/inject/grpc-denied-now")
    check(code == 6 and not upstream_requests("/inject/grpc-denied-now"),
          "gRPC SetNetworkPolicy without the host: curl cannot resolve it, nothing upstream "
          "(%s %r)" % (code, out))
    stub.SetNetworkPolicy(pb.SetNetworkPolicyRequest(id=sb.id, network=pb.NetworkPolicy(
        allow_domains=[HOST], allow_ports=[HTTPS_PORT, HTTP_PORT])), metadata=meta,
        timeout=LIMIT_S)
    expect_injected(key, sb.id, "grpc-network-back", run=run)
    stub.DeleteSandbox(pb.SandboxRequest(id=sb.id), metadata=meta, timeout=LIMIT_S)
    channel.close()


def check_pooled_create(key):
    st, _, body = call("PUT", "/v1/templates/default/warm-pool", key=ADMIN, body={"target": 1})
    check(st == 200, "PUT warm-pool target 1 -> 200 (%s %s)" % (st, body))
    check(poll(lambda: pool_ready("default", 1), limit_s=300), "the warm pool holds a VM")
    sid = create(key, "pooled")
    if sid:
        check(vmhost_log_says(sid, "from=pool"), "the sandbox came from the warm pool")
        expect_injected(key, sid, "pooled-create")
    st, _, _ = call("PUT", "/v1/templates/default/warm-pool", key=ADMIN, body={"target": 0})
    check(st == 200, "PUT warm-pool target 0 -> 200")
    delete(key, sid)


def check_fork(key, parent):
    st, _, body = call("POST", "/v1/sandboxes/%s/fork" % parent, key=key, body={"count": 1})
    forks = body.get("sandboxes", []) if st == 201 and isinstance(body, dict) else []
    check(len(forks) == 1, "fork -> 201 one sandbox (%s %s)" % (st, body))
    if forks:
        expect_injected(key, forks[0]["id"], "fork")
        delete(key, forks[0]["id"])


def check_checkpoint_restore(key, sid):
    st, _, body = call("POST", "/v1/sandboxes/%s/checkpoints" % sid, key=key,
                       body={"name": "before", "kind": "disk"})
    check(st == 201, "disk checkpoint -> 201 (%s %s)" % (st, body))
    st, _, body = call("POST", "/v1/sandboxes/%s/restore" % sid, key=key,
                       body={"checkpoint": "before"})
    check(st == 200 and body.get("state") == "running",
          "restore (the guest cold-boots) -> 200 running (%s %s)" % (st, body))
    expect_injected(key, sid, "checkpoint-restore")


def check_suspend_resume(key, sid):
    st, _, body = call("POST", "/v1/sandboxes/%s/suspend" % sid, key=key)
    check(st == 200 and body.get("state") == "suspended", "suspend -> suspended (%s %s)"
          % (st, body))
    st, _, body = call("POST", "/v1/sandboxes/%s/resume" % sid, key=key)
    check(st == 200 and body.get("state") == "running", "resume -> running (%s %s)" % (st, body))
    expect_injected(key, sid, "resume")


def check_vmhost_restart(key, sid):
    check(control("restart vmhost"), "vmhost restarted (kill -9, its VMs keep running)")
    ok = poll(lambda: rest_exec(key, sid, "true")[0] == 0, limit_s=120, every_s=0.5)
    check(ok, "the adopted sandbox answers exec")
    expect_injected(key, sid, "vmhost-adopt")


def secret_body(name, value, **extra):
    body = {"name": name, "value": value,
            "bindings": [{"host": HOST, "header": "Authorization", "format": "Bearer {secret}"}]}
    body.update(extra)
    return body


def check_live_network_change(key, sid):
    """PUT /v1/sandboxes/{id}/network decides the guest's next connection."""
    st, _, body = call("PUT", "/v1/sandboxes/%s/network" % sid, key=key,
                       body={"allow_domains": ["allowed.test"], "allow_ports": [HTTPS_PORT]})
    check(st == 200, "PUT network without the host -> 200 (%s %s)" % (st, body))
    code, out = rest_exec(key, sid, CURL + "/inject/denied-now")
    check(code == 6 and not upstream_requests("/inject/denied-now"),
          "the new policy denies the host: curl cannot resolve it, nothing upstream (%s %r)"
          % (code, out))
    st, _, body = call("GET", "/v1/sandboxes/%s/network/log?limit=50" % sid, key=key)
    conns = body.get("connections", []) if st == 200 else []
    check(any(c["protocol"] == "dns" and c["name"] == HOST and c["decision"] == "deny"
              for c in conns), "the network log has the denied lookup")
    st, _, body = call("PUT", "/v1/sandboxes/%s/network" % sid, key=key,
                       body=dict(NETWORK, allow_ech="yes"))
    check(st == 400 and "network.allow_ech" in json.dumps(body),
          "allow_ech that is not a boolean -> 400 naming it (%s %s)" % (st, body))
    st, _, body = call("PUT", "/v1/sandboxes/%s/network" % sid, key=key,
                       body=dict(NETWORK, allow_ech=True))
    check(st == 200 and body.get("network", {}).get("allow_ech") is True,
          "PUT network with allow_ech -> 200, shown (%s %s)" % (st, body))
    st, _, _ = call("PUT", "/v1/sandboxes/%s/network" % sid, key=key, body=NETWORK)
    check(st == 200, "PUT network back -> 200")
    expect_injected(key, sid, "network-back")


def check_sandbox_secret_and_rate_limit(key, sid):
    """A sandbox-scoped secret wins over the project's for its sandbox, and
    its rate limit is enforced by egress (429, not forwarded, audited)."""
    value = SECRET + "-sandbox"
    st, _, body = call("POST", "/v1/secrets", key=key, body=secret_body(
        "only-here", value, scope="sandbox", sandbox_id=sid,
        rate_limit={"per_minute": 1}))
    check(st == 201, "POST /v1/secrets scope sandbox -> 201 (%s %s)" % (st, body))
    expect_injected(key, sid, "sandbox-scope", value=value)
    path = "/inject/over-the-limit"
    code, out = rest_exec(key, sid, "curl -sS --max-time 30 -o /dev/null -w '%{http_code}' "
                          + URL + path)
    check(code == 0 and out == "429" and not upstream_requests(path),
          "over the rate limit egress answers 429 and forwards nothing (%s %r)" % (code, out))
    st, _, body = call("GET", "/v1/audit?sandbox_id=%s&limit=1000" % sid, key=key)
    check(any(e.get("path") == path and e.get("status") == "RESOURCE_EXHAUSTED"
              for e in body.get("entries", [])), "the refused request is audited")
    st, _, _ = call("DELETE", "/v1/secrets/only-here?sandbox_id=" + sid, key=key)
    check(st == 204, "DELETE the sandbox's secret -> 204")
    expect_injected(key, sid, "project-scope-again")


def check_plaintext(key, sid):
    """A binding injects into TLS only unless it says "plaintext": true."""
    plain = "curl -sS --max-time 30 -D - http://%s:%d" % (HOST, HTTP_PORT)
    path = "/inject/plain-refused"
    code, out = rest_exec(key, sid, plain + path)
    check(code == 0 and " 403 " in out and "X-Airlock-Egress-Error: plaintext_refused" in out
          and SECRET not in out and not upstream_requests(path),
          "plain HTTP to a TLS-only secret's host: 403 plaintext_refused, nothing upstream (%r)"
          % out[:300])
    st, _, body = call("GET", "/v1/audit?sandbox_id=%s&limit=1000" % sid, key=key)
    check(any(e.get("path") == path and e.get("status") == "PERMISSION_DENIED"
              for e in body.get("entries", [])), "the refusal is audited")
    for bindings, field in [
            ([{"host": HOST, "header": "Authorization", "plaintext": "yes"}],
             "bindings[0].plaintext"),
            ([{"host": HOST, "header": "Authorization", "plaintext": True},
              {"host": "b." + HOST, "header": "Authorization"}], "bindings[1]")]:
        st, _, body = call("POST", "/v1/secrets", key=key,
                           body={"name": "bad", "value": "v", "bindings": bindings})
        check(st == 400 and field in json.dumps(body), "%s refused, 400 naming %s (%s %s)"
              % (bindings, field, st, body))
    value = SECRET + "-plain"
    st, _, body = call("POST", "/v1/secrets", key=key, body={
        "name": "plain", "value": value, "scope": "sandbox", "sandbox_id": sid,
        "bindings": [{"host": HOST, "header": "Authorization", "format": "Bearer {secret}",
                      "plaintext": True}]})
    check(st == 201 and body.get("bindings", [{}])[0].get("plaintext") is True,
          "POST /v1/secrets with \"plaintext\": true -> 201, shown (%s %s)" % (st, body))
    path = "/inject/plain-allowed"
    code, out = rest_exec(key, sid, "curl -sS --max-time 30 http://%s:%d%s" % (HOST, HTTP_PORT,
                                                                              path))
    reqs = upstream_requests(path)
    check(code == 0 and value not in out and len(reqs) == 1 and
          ["Authorization", "Bearer " + value] in reqs[0]["headers"],
          "plaintext allowed: plain HTTP is injected (%s %r)" % (code, out))
    st, _, _ = call("DELETE", "/v1/secrets/plain?sandbox_id=" + sid, key=key)
    check(st == 204, "DELETE the plaintext secret -> 204")


def check_tampered_row(key, sid, secret_id):
    """docs/security.md C20, C21, C24, C25 end to end: the project secret's
    row edited in PostgreSQL (its value is sealed with an AAD over its
    owner, scope, plain-HTTP flag, bindings and rule) is refused when the
    guest's request asks for it: egress answers 502 credential_unavailable
    and sends nothing upstream, vault audits inject/DATA_LOSS (GET
    /v1/audit). Put back as sealed, the same request is injected again: the
    AAD refused it, nothing else."""
    rule = psql("SELECT injection_rule FROM vault_bindings WHERE secret_id = :'id'",
                id=secret_id)
    check(rule == "Authorization: Bearer {secret}",
          "the secret's rule as vault stored it (%r)" % rule)
    expect_injected(key, sid, "before-tamper")
    plain_url = "http://%s:%d" % (HOST, HTTP_PORT)

    def expect_refused(case, url):
        path = "/inject/" + case
        code, out = rest_exec(key, sid, "curl -sS --max-time 30 -D - -w '\\n%{http_code}' "
                              + url + path)
        out = out or ""
        check(code == 0 and out.startswith("HTTP/1.1 502 ") and out.endswith("\n502") and
              "X-Airlock-Egress-Error: credential_unavailable" in out and
              "vault: DATA_LOSS: secret %s does not decrypt" % secret_id in out and
              SECRET not in out,
              "%s: egress answers 502 credential_unavailable (%s %r)" % (case, code, out[-400:]))
        check(not upstream_requests(path), "%s: nothing went upstream" % case)

        def audited():
            st, _, body = call("GET", "/v1/audit?sandbox_id=%s&limit=1000" % sid, key=key)
            rows = body.get("entries", []) if st == 200 and isinstance(body, dict) else []
            return [e for e in rows if e.get("action") == "inject" and e.get("path") == path
                    and e.get("host") == HOST and e.get("secret_id") == secret_id
                    and e.get("status") == "DATA_LOSS"]
        check(poll(audited, limit_s=30), "%s: GET /v1/audit has inject/DATA_LOSS" % case)

    for case, edit, undo, url in [
            # C20: the value moved into another header (one the upstream may echo).
            ("tampered-rule",
             ("UPDATE vault_bindings SET injection_rule = 'X-Debug: {secret}'"
              " WHERE secret_id = :'id'", "UPDATE 1"),
             ("UPDATE vault_bindings SET injection_rule = :'rule' WHERE secret_id = :'id'",
              "UPDATE 1"), URL),
            # C21: a binding to another host added next to the right one.
            ("tampered-binding",
             ("INSERT INTO vault_bindings (secret_id, host_pattern, injection_rule)"
              " VALUES (:'id', 'attacker.test', :'rule')", "INSERT 0 1"),
             ("DELETE FROM vault_bindings WHERE secret_id = :'id'"
              " AND host_pattern = 'attacker.test'", "DELETE 1"), URL),
            # C24: the TLS-only secret let into plain HTTP (else 403 plaintext_refused).
            ("tampered-plaintext",
             ("UPDATE vault_secrets SET allow_plaintext = true WHERE id = :'id'", "UPDATE 1"),
             ("UPDATE vault_secrets SET allow_plaintext = false WHERE id = :'id'", "UPDATE 1"),
             plain_url),
            # C25: the row claims the old AAD (the id only).
            ("tampered-aad-version",
             ("UPDATE vault_secrets SET aad_version = 1 WHERE id = :'id'", "UPDATE 1"),
             ("UPDATE vault_secrets SET aad_version = 2 WHERE id = :'id'", "UPDATE 1"), URL)]:
        tag = psql(edit[0], id=secret_id, rule=rule)
        check(tag == edit[1], "%s: the row edited in PostgreSQL (%r)" % (case, tag))
        expect_refused(case, url)
        tag = psql(undo[0], id=secret_id, rule=rule)
        check(tag == undo[1], "%s: put back as sealed (%r)" % (case, tag))
        expect_injected(key, sid, case + "-put-back")


def check_org_secret(other_id, other_key):
    """An org's secret is injected for a member project without a binding of
    its own for the host."""
    org = "org-inject-%d" % os.getpid()
    value = SECRET + "-org"
    st, _, _ = call("POST", "/v1/orgs", key=ADMIN, body={"org_id": org})
    st2, _, _ = call("PUT", "/v1/projects/%s/org" % other_id, key=ADMIN, body={"org_id": org})
    st3, _, body = call("POST", "/v1/orgs/%s/secrets" % org, key=ADMIN,
                        body=secret_body("shared", value))
    check((st, st2, st3) == (201, 200, 201), "an org with the other project and a secret (%s %s %s)"
          % (st, st2, st3))
    sid = create(other_key, "a member of the org")
    if sid:
        expect_injected(other_key, sid, "org-secret", value=value)
        delete(other_key, sid)


def check_egress_restart(key, sid):
    check(control("restart egress"), "egress restarted")
    # vmhost notices the new egress and attaches every sandbox again.
    expect_injected(key, sid, "egress-reattach", retry_s=60)


def check_vault_metrics(before):
    """vault's /metrics counted what the requests above met (vault is not
    restarted here, so its counters only grew)."""
    after = scrape("vault")[2]
    n = "airlock_vault_injections_total"
    for outcome in ("injected", "rate_limited", "locked"):
        check(value(after, n, outcome=outcome) > value(before, n, outcome=outcome),
              "vault counted %s injections: %s -> %s" % (outcome, value(before, n, outcome=outcome),
                                                        value(after, n, outcome=outcome)))


def main():
    vault_before = scrape("vault")[2]
    _, key = new_project_key("inject")
    other_id, other_key = new_project_key("inject-other")
    st, _, body = call("POST", "/v1/secrets", key=key, body={
        "name": "upstream", "value": SECRET,
        "bindings": [{"host": HOST, "header": "Authorization", "format": "Bearer {secret}"}]})
    check(st == 201 and SECRET not in json.dumps(body), "POST /v1/secrets -> 201, no value shown")
    secret_id = body.get("id", "") if isinstance(body, dict) else ""

    sid = create(key, "restored (REST)")
    if not sid:
        report_and_exit()
    check(vmhost_log_says(sid, "from=snapshot"), "the sandbox was restored from the snapshot")
    expect_injected(key, sid, "rest-create")
    check_other_project_gets_nothing(other_key)
    check_inspect_tls(other_key)
    check_byok_lock()
    check_grpc_create(key)
    sized = create(key, "at another size", memory_mb=640)
    if sized:
        expect_injected(key, sized, "sized-create")
        delete(key, sized)
    check_pooled_create(key)
    check_fork(key, sid)
    check_checkpoint_restore(key, sid)
    check_suspend_resume(key, sid)
    check_live_network_change(key, sid)
    check_sandbox_secret_and_rate_limit(key, sid)
    check_plaintext(key, sid)
    check_tampered_row(key, sid, secret_id)
    check_org_secret(other_id, other_key)
    check_vmhost_restart(key, sid)
    check_egress_restart(key, sid)
    delete(key, sid)
    check_vault_metrics(vault_before)
    # Nothing the guest got back carried the secret; the upstream log is the
    # control that it went out at all.
    with open(UPSTREAM_LOG) as f:
        check(SECRET in f.read(), "the upstream log has the secret (control)")
    report_and_exit()


if __name__ == "__main__":
    main()
