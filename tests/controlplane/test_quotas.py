#!/usr/bin/python3
"""A project's quotas end to end through cp_harness's real stack: set and
read over REST (the admin key; a project key reads its own), the public
gRPC API and the CLI; refusals at the limit (429 quota_exceeded over REST,
RESOURCE_EXHAUSTED over gRPC) that name the quota, its limit and the
usage, for a create, a fork, a checkpoint, the resume of a suspended
sandbox and a template build; a delete makes room again; concurrent
creates never take the project past its limit; bad input is refused and
changes nothing.

The stack's scheduler runs with --quota-template-builds=0, so a build is
refused before any VM (and the default is shown to come from the flag).

usage: test_quotas.py PROTO_DIR STUB_DIR AIRLOCK_CLI
No timing assertions. At most three VMs at a time (1 vCPU, 512 MiB, the
default template): s1 throughout, then s2, s3, s4 and one of the
concurrent creates, each deleted before the next is needed."""
import json
import os
import re
import subprocess
import sys
import threading

import grpc

import grpc_stubs
from rest_client import ADMIN, call, check, expect_error, new_project_key, report_and_exit
from test_public_grpc import LIMIT_S, Client, pb  # generates the Sandboxes/Templates stubs
from test_public_grpc import expect_error as expect_grpc_error

PROTO_DIR, STUB_DIR, CLI = sys.argv[1], sys.argv[2], sys.argv[3]
grpc_stubs.generate(PROTO_DIR, STUB_DIR, ["airlock/v1/projects.proto"])
from airlock.v1 import projects_pb2 as ppb, projects_pb2_grpc  # noqa: E402
from airlock.v1 import templates_pb2 as tpb  # noqa: E402

KINDS = ["sandboxes", "vcpus", "memory_mb", "checkpoints", "templates", "template_builds",
         "volumes", "volume_mb"]
BUILTIN = {"sandboxes": 50, "vcpus": 100, "memory_mb": 102400, "checkpoints": 500,
           "templates": 50, "template_builds": 0,  # template_builds: this stack's flag
           "volumes": 50, "volume_mb": 204800}
QUOTA = "quota_exceeded"


def quotas_path(project):
    return "/v1/projects/%s/quotas" % project


def get_quotas(project, key=ADMIN):
    st, _, body = call("GET", quotas_path(project), key=key)
    return body.get("quotas", {}) if st == 200 else {"status": st, "body": body}


def limits(project):
    """{kind: (limit, is_default)} as the admin reads them."""
    return {k: (q["limit"], q["is_default"]) for k, q in get_quotas(project).items()}


def refused(fragment_re, status, body, what):
    """A 429 quota_exceeded whose message matches fragment_re."""
    message = body.get("error", {}).get("message", "") if isinstance(body, dict) else ""
    check(status == 429 and body.get("error", {}).get("code") == QUOTA
          and re.search(fragment_re, message) is not None,
          "%s -> 429 %s matching %r (got %s %s)" % (what, QUOTA, fragment_re, status, body))


def create(key, **body):
    return call("POST", "/v1/sandboxes", key=key, body=body)


def live_ids(key):
    st, _, body = call("GET", "/v1/sandboxes", key=key)
    return [s["id"] for s in body.get("sandboxes", [])] if st == 200 else None


def check_defaults_and_bad_input(project, key, other_project, other_key):
    got = get_quotas(project)
    check(set(got) == set(KINDS) and all(got[k] == {"limit": BUILTIN[k], "used": 0,
                                                    "is_default": True} for k in KINDS),
          "a new project has the scheduler's defaults, template_builds from its flag: %s" % got)
    before = limits(project)
    for body, code, fragment, what in [
        ({"vcpus": -5}, 400, "vcpus: -5 is negative", "a negative limit"),
        ({"sandboxes": 2, "memory_mb": -2}, 400, "memory_mb", "one bad value among good ones"),
        ({"vcpus": "8"}, 400, "vcpus: must be an integer", "a string"),
        ({"vcpus": 2.5}, 400, "vcpus: must be an integer", "a fraction"),
        ({"cpus": 2}, 400, "unknown field \"cpus\"", "an unknown quota"),
        ([1, 2], 400, "object", "a body that is no object"),
    ]:
        st, _, b = call("PUT", quotas_path(project), key=ADMIN, body=body)
        expect_error(st, b, code, "invalid_argument", fragment, "PUT quotas with " + what)
    st, _, b = call("PUT", quotas_path(project), key=ADMIN, body="{not json")
    expect_error(st, b, 400, "invalid_argument", "", "PUT quotas with a body that is not JSON")
    st, _, b = call("PUT", quotas_path(project), key=key, body={"sandboxes": 100})
    expect_error(st, b, 403, "permission_denied", "admin key", "PUT quotas with a project key")
    st, _, b = call("PUT", quotas_path("prj_nope"), key=ADMIN, body={"sandboxes": 1})
    expect_error(st, b, 404, "not_found", "prj_nope", "PUT quotas of an unknown project")
    st, _, b = call("PUT", quotas_path("Bad!"), key=ADMIN, body={"sandboxes": 1})
    expect_error(st, b, 400, "invalid_argument", "malformed", "PUT quotas of a malformed id")
    check(limits(project) == before, "the refused PUTs changed nothing")
    # Reading: the admin any project, a project key its own only.
    st, _, b = call("GET", quotas_path("prj_nope"), key=ADMIN)
    expect_error(st, b, 404, "not_found", "prj_nope", "the admin's GET of an unknown project")
    check(get_quotas(project, key) == get_quotas(project), "a project key reads its own quotas")
    for target in (other_project, "prj_nope"):  # the same answer, whether it exists or not
        st, _, b = call("GET", quotas_path(target), key=key)
        expect_error(st, b, 403, "permission_denied", "own project", "a project key's GET of " + target)
    st, _, b = call("PUT", quotas_path(project), key=ADMIN, body={})
    check(st == 200 and limits(project) == before, "PUT {} changes nothing: %s %s" % (st, b))


def check_refusals(project, key):
    """Creates up to the limit, refusals naming quota, limit and usage, a
    delete makes room. Returns the sandbox s1 it keeps running."""
    st, _, b = call("PUT", quotas_path(project), key=ADMIN,
                    body={"sandboxes": 2, "vcpus": 2, "memory_mb": 1024, "checkpoints": 1,
                          "templates": -1})
    got = limits(project)
    check(st == 200 and got["sandboxes"] == (2, False) and got["templates"] == (-1, False)
          and got["template_builds"] == (0, True) and b.get("project_id") == project,
          "PUT sets the given quotas, -1 is unlimited, the others keep the default: %s" % got)
    st, _, s1 = create(key)
    check(st == 201, "create 1 of 2: %s %s" % (st, s1))
    pid = re.escape(project)
    st, _, b = create(key, cpus=2)
    refused(r"^quota exceeded: vcpus: 1 in use \+ 2 requested > limit 2 \(project %s\)$" % pid,
            st, b, "a 2-vCPU create beside a 1-vCPU sandbox, limit 2")
    st, _, b = create(key, memory_mb=1024)
    refused(r"memory_mb: 512 in use \+ 1024 requested > limit 1024", st, b,
            "a 1024 MiB create beside 512 MiB, limit 1024")
    st, _, s2 = create(key)
    check(st == 201, "create 2 of 2: %s %s" % (st, s2))
    st, _, b = create(key)
    refused(r"^quota exceeded: sandboxes: 2 in use \+ 1 requested > limit 2 \(project %s\)$" % pid,
            st, b, "create 3 of 2")
    check(sorted(live_ids(key)) == sorted([s1["id"], s2["id"]]),
          "the refused creates left no sandbox")
    q = get_quotas(project, key)
    check(q["sandboxes"]["used"] == 2 and q["vcpus"]["used"] == 2
          and q["memory_mb"]["used"] == 1024, "usage counts both sandboxes: %s" % q)
    st, _, b = call("POST", "/v1/sandboxes/%s/fork" % s1["id"], key=key, body={"count": 1})
    refused(r"sandboxes: 2 in use \+ 1 requested > limit 2", st, b, "a fork at the limit")
    st, _, _ = call("DELETE", "/v1/sandboxes/%s" % s2["id"], key=key)
    st, _, s3 = create(key)
    check(st == 201, "after a delete, a create fits again: %s %s" % (st, s3))
    # Checkpoints: one allowed.
    st, _, b = call("POST", "/v1/sandboxes/%s/checkpoints" % s1["id"], key=key,
                    body={"name": "c1"})
    check(st == 201, "checkpoint 1 of 1: %s %s" % (st, b))
    st, _, b = call("POST", "/v1/sandboxes/%s/checkpoints" % s1["id"], key=key,
                    body={"name": "c2"})
    refused(r"checkpoints: 1 in use \+ 1 requested > limit 1", st, b, "checkpoint 2 of 1")
    st, _, b = call("GET", "/v1/sandboxes/%s/checkpoints" % s1["id"], key=key)
    check([c["name"] for c in b.get("checkpoints", [])] == ["c1"],
          "the refused checkpoint is not recorded: %s" % b)
    return s1, s3


def check_suspend_resume(project, key, s3):
    """A suspended sandbox counts for nothing; its resume is admitted."""
    st, _, b = call("POST", "/v1/sandboxes/%s/suspend" % s3["id"], key=key)
    check(st == 200 and b.get("state") == "suspended", "suspend s3: %s %s" % (st, b))
    q = get_quotas(project)
    check(q["sandboxes"]["used"] == 1 and q["vcpus"]["used"] == 1,
          "a suspended sandbox counts for nothing: %s" % q)
    st, _, s4 = create(key)
    check(st == 201, "the suspended one's room takes a create: %s %s" % (st, s4))
    st, _, b = call("POST", "/v1/sandboxes/%s/resume" % s3["id"], key=key)
    refused(r"sandboxes: 2 in use \+ 1 requested > limit 2", st, b, "resume at the limit")
    st, _, b = call("GET", "/v1/sandboxes/%s" % s3["id"], key=key)
    check(b.get("state") == "suspended", "the refused resume left it suspended: %s" % b)
    call("DELETE", "/v1/sandboxes/%s" % s4["id"], key=key)
    st, _, b = call("POST", "/v1/sandboxes/%s/resume" % s3["id"], key=key)
    check(st == 200 and b.get("state") == "running", "with room, it resumes: %s %s" % (st, b))
    call("DELETE", "/v1/sandboxes/%s" % s3["id"], key=key)


def check_concurrent_creates(project, key, in_use):
    """Room for one more: of four creates at once exactly one gets in."""
    call("PUT", quotas_path(project), key=ADMIN, body={"sandboxes": in_use + 1, "vcpus": -1,
                                                      "memory_mb": -1})
    results = []

    def one():
        results.append(create(key))

    threads = [threading.Thread(target=one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    made = [b for st, _, b in results if st == 201]
    statuses = sorted(st for st, _, _ in results)
    check(statuses == [201, 429, 429, 429],
          "4 concurrent creates with room for 1: one 201, three 429 (%s)" % statuses)
    check(all(b.get("error", {}).get("code") == QUOTA for st, _, b in results if st == 429),
          "the concurrent refusals are quota_exceeded")
    check(get_quotas(project)["sandboxes"]["used"] == in_use + 1,
          "usage never passed the limit: %s" % get_quotas(project)["sandboxes"])
    for b in made:
        call("DELETE", "/v1/sandboxes/%s" % b["id"], key=key)


def check_template_build(key):
    """This stack's default is no build at a time: refused before a VM."""
    st, _, b = call("POST", "/v1/templates", key=key, body={"name": "tq"})
    refused(r"template_builds: 0 in use \+ 1 requested > limit 0", st, b, "a template build")
    st, _, b = call("POST", "/v1/templates", key=key, body={"name": "tq"},
                    headers={"Accept": "text/event-stream"})
    refused(r"template_builds: 0 in use \+ 1 requested > limit 0", st, b,
            "a template build asking for SSE")
    st, _, b = call("GET", "/v1/templates", key=key)
    check(b.get("templates") == [], "the refused builds left no template: %s" % b)


def check_grpc(project, key, other_project, s1):
    channel = grpc.insecure_channel(os.environ["AIRLOCK_GRPC_ADDR"])
    grpc.channel_ready_future(channel).result(timeout=60)
    stub = projects_pb2_grpc.ProjectsStub(channel)

    def as_key(k):
        auth = [("authorization", "Bearer " + k)]
        return (lambda req: stub.GetQuotas(req, metadata=auth, timeout=LIMIT_S),
                lambda req: stub.SetQuotas(req, metadata=auth, timeout=LIMIT_S))

    admin_get, admin_set = as_key(ADMIN)
    key_get, key_set = as_key(key)
    got = admin_set(ppb.SetQuotasRequest(project_id=project,
                                         limits=ppb.QuotaLimits(sandboxes=1, memory_mb=0)))
    check(got.project_id == project and got.sandboxes.limit == 1 and not got.sandboxes.is_default
          and got.memory_mb.is_default and got.memory_mb.limit == BUILTIN["memory_mb"]
          and got.vcpus.limit == -1 and got.sandboxes.used == 1,
          "SetQuotas sets the given ones (0: the default again), keeps the rest: %s" % got)
    check(key_get(ppb.GetQuotasRequest()) == got, "a project key's GetQuotas of its own (\"\")")
    check(admin_get(ppb.GetQuotasRequest(project_id=project)) == got, "the admin's GetQuotas")
    rest = get_quotas(project)
    check(all(rest[k]["limit"] == getattr(got, k).limit and rest[k]["used"] == getattr(got, k).used
              and rest[k]["is_default"] == getattr(got, k).is_default for k in KINDS),
          "REST and gRPC show the same quotas")
    denied, not_found = grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.NOT_FOUND
    for target in (other_project, "prj_nope"):
        expect_grpc_error(lambda: key_get(ppb.GetQuotasRequest(project_id=target)), denied,
                          "own project", "a project key's GetQuotas of " + target)
    expect_grpc_error(lambda: key_set(ppb.SetQuotasRequest(
        project_id=project, limits=ppb.QuotaLimits(sandboxes=9))), denied, "admin key",
        "SetQuotas with a project key")
    expect_grpc_error(lambda: admin_get(ppb.GetQuotasRequest(project_id="prj_nope")), not_found,
                      "prj_nope", "GetQuotas of an unknown project")
    expect_grpc_error(lambda: admin_set(ppb.SetQuotasRequest(
        project_id=project, limits=ppb.QuotaLimits(vcpus=-7))), grpc.StatusCode.INVALID_ARGUMENT,
        "vcpus: -7 is negative", "SetQuotas with -7")
    expect_grpc_error(lambda: admin_set(ppb.SetQuotasRequest(limits=ppb.QuotaLimits(vcpus=1))),
                      grpc.StatusCode.INVALID_ARGUMENT, "project_id: required",
                      "SetQuotas without a project")
    check(admin_get(ppb.GetQuotasRequest(project_id=project)) == got,
          "the refused SetQuotas changed nothing")
    # A refusal over gRPC: s1 is the one sandbox allowed.
    client = Client(channel, key)
    code, details = None, ""
    try:
        client.CreateSandbox(pb.CreateSandboxRequest())
    except grpc.RpcError as e:
        code, details = e.code(), e.details()
    check(code == grpc.StatusCode.RESOURCE_EXHAUSTED and re.match(
        r"quota exceeded: sandboxes: 1 in use \+ 1 requested > limit 1 \(project %s\)$"
        % re.escape(project), details or ""),
        "CreateSandbox at the limit -> RESOURCE_EXHAUSTED naming it (%s %r)" % (code, details))
    expect_grpc_error(lambda: client.ForkSandbox(pb.ForkSandboxRequest(id=s1["id"])),
                      grpc.StatusCode.RESOURCE_EXHAUSTED, "quota exceeded: sandboxes",
                      "ForkSandbox at the limit")
    expect_grpc_error(lambda: list(client.BuildTemplate(tpb.BuildTemplateRequest(
        spec=tpb.TemplateSpec(name="tq")))), grpc.StatusCode.RESOURCE_EXHAUSTED,
        "quota exceeded: template_builds", "BuildTemplate with no build allowed")


def airlock(*args, key=ADMIN):
    env = dict(os.environ, AIRLOCK_API_KEY=key)
    p = subprocess.run([CLI] + list(args), capture_output=True, env=env, timeout=LIMIT_S)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def check_cli(project, key):
    rc, out, err = airlock("quota", "set", project, "--sandboxes", "3", "--vcpus", "unlimited",
                           "--memory-mb", "4096", "--template-builds", "default")
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[1:] if line.strip()}
    check(rc == 0 and out.startswith("QUOTA") and rows.get("sandboxes", [""])[0] == "3"
          and rows.get("vcpus", [""])[0] == "unlimited" and rows.get("memory_mb", [""])[0] == "4096"
          and rows.get("template_builds", [])[:2] == ["0", "(default)"],
          "airlock quota set prints the quotas: %d %r %r" % (rc, out, err))
    rc, out2, _ = airlock("quota", "show", project, key=key)
    check(rc == 0 and out2 == out, "airlock quota show with the project's own key: %r" % out2)
    rc, out, _ = airlock("--json", "quota", "show", project)
    answer = json.loads(out) if rc == 0 else {}
    check(answer.get("quotas", {}).get("sandboxes", {}).get("limit") == 3
          and answer.get("quotas", {}).get("memory_mb", {}).get("is_default") is False,
          "airlock --json quota show: %r" % out)
    for args, want_rc, fragment, what in [
        (("quota", "set", project, "--vcpus", "lots"), 2, "--vcpus", "a value that is no number"),
        (("quota", "set", project, "--vcpus"), 2, "usage", "a flag without a value"),
        (("quota", "set", project), 2, "usage", "no quota"),
        (("quota", "set", project, "--vcpus", "-5"), 1, "vcpus: -5 is negative", "-5"),
        (("quota", "set", project, "--bogus", "1"), 1, "bogus", "an unknown quota"),
        (("quota", "set", "prj_nope", "--vcpus", "1"), 1, "prj_nope", "an unknown project"),
        (("quota", "frob", project), 2, "usage", "an unknown subcommand"),
    ]:
        rc, _, err = airlock(*args)
        check(rc == want_rc and fragment in err,
              "airlock %s: %s exits %d naming %r (%d %r)" % (" ".join(args), what, want_rc, fragment,
                                                              rc, err))
    rc, _, err = airlock("quota", "set", project, "--sandboxes", "9", key=key)
    check(rc == 1 and "admin key" in err, "quota set with a project key: %d %r" % (rc, err))
    check(limits(project)["sandboxes"] == (3, False), "the refused CLI calls changed nothing")


def main():
    project, key = new_project_key("quota-a")
    other_project, other_key = new_project_key("quota-b")
    check_defaults_and_bad_input(project, key, other_project, other_key)
    s1, s3 = check_refusals(project, key)
    check_suspend_resume(project, key, s3)
    check_concurrent_creates(project, key, in_use=1)
    check_template_build(key)
    check_grpc(project, key, other_project, s1)
    check_cli(project, key)
    # Another project is not held back by this one's quotas or usage.
    call("PUT", quotas_path(project), key=ADMIN, body={"sandboxes": 1})
    st, _, b = create(key)
    check(st == 429, "A is at its limit: %s %s" % (st, b))
    st, _, b = create(other_key)
    check(st == 201, "project B creates while A is at its limit: %s %s" % (st, b))
    for k in (key, other_key):
        for sid in live_ids(k):
            call("DELETE", "/v1/sandboxes/%s" % sid, key=k)
    used = {k: q["used"] for k, q in get_quotas(project).items()}
    check(used == {k: 0 for k in KINDS},
          "with every sandbox deleted nothing is in use (its checkpoint neither): %s" % used)
    report_and_exit()


if __name__ == "__main__":
    main()
