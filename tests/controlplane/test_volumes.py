#!/usr/bin/python3
"""Persistent volumes end to end (docs/api.md "Volumes", docs/volumes.md)
through cp_harness's real stack down to the guest: REST and the public gRPC
Volumes service; bytes written in sandbox A read back in sandbox B after A
is deleted; one holder (a second attach is 409 naming it); another project
neither sees nor attaches them (404); a snapshot and a clone diverge from
their source; a snapshot attached read-only refuses writes; a fork gets its
own clone, named in its answer; the quotas refuse a volume past them; a
delete while attached is 409 naming the sandbox; bad input is refused with
its status, naming the field, and leaves nothing (no sandbox, no claim).

usage: test_volumes.py PROTO_DIR STUB_DIR. No timing assertions."""
import os
import sys

import grpc

import grpc_stubs
from rest_client import (ADMIN, call, check, control, expect_error, new_project_key, psql,
                         report_and_exit)

PROTO_DIR, STUB_DIR = sys.argv[1], sys.argv[2]
grpc_stubs.generate(PROTO_DIR, STUB_DIR, ["airlock/v1/sandboxes.proto"])  # imports volumes
from airlock.v1 import sandboxes_pb2 as spb, sandboxes_pb2_grpc  # noqa: E402
from airlock.v1 import volumes_pb2 as vpb, volumes_pb2_grpc  # noqa: E402

LIMIT_S = 600


def sh(sid, key, script):
    """(exit code, stdout, stderr) of sh -c script in sandbox sid."""
    st, _, r = call("POST", "/v1/sandboxes/%s/exec" % sid, key=key,
                    body={"cmd": ["sh", "-c", script], "timeout_s": 120})
    if st != 200:
        return None, "", "exec: %s %s" % (st, r)
    return r.get("exit_code"), r.get("stdout", ""), r.get("stderr", "")


def create(key, volumes, idempotency_key=None):
    headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
    return call("POST", "/v1/sandboxes", key=key, body={"volumes": volumes}, headers=headers)


def delete_sandbox(key, sid):
    st, _, _ = call("DELETE", "/v1/sandboxes/" + sid, key=key)
    check(st == 204, "delete sandbox %s: %s" % (sid, st))


def volume(key, name):
    st, _, v = call("GET", "/v1/volumes/" + name, key=key)
    return v if st == 200 else {"status": st, "body": v}


def live_sandboxes(key):
    st, _, body = call("GET", "/v1/sandboxes", key=key)
    return sorted(s["id"] for s in body.get("sandboxes", [])) if st == 200 else None


def check_node_restarts(key):
    """A volume and its sandbox survive the node's vmhost killed (-9: the
    VM runs on, adopted) and stopped and started again (a node's make down
    + make up: suspended, resumed on first use); a later sandbox reads it
    all."""
    st, _, _ = call("POST", "/v1/volumes", key=key, body={"name": "kept", "size_mb": 64})
    check(st == 201, "volume kept: %s" % st)
    st, _, d = create(key, [{"name": "kept", "path": "/kept"}])
    did = d.get("id", "none")
    rc, _, _ = sh(did, key, "echo before > /kept/f")
    check(st == 201 and rc == 0, "D writes kept: %s %s" % (st, rc))
    check(control("restart vmhost"), "vmhost killed (-9) and started again")
    rc, out, _ = sh(did, key, "cat /kept/f && echo after-kill >> /kept/f")
    check(rc == 0 and out == "before\n", "after the kill D still has kept: %s %r" % (rc, out))
    st, _, other = create(key, [{"name": "kept", "path": "/kept"}])
    expect_error(st, other, 409, "conflict", did, "after the kill kept is still D's alone")
    check(control("stop-start vmhost"), "vmhost stopped (suspending D) and started again")
    rc, out, _ = sh(did, key, "cat /kept/f")
    check(rc == 0 and out == "before\nafter-kill\n",
          "after the stop and start D resumes with kept: %s %r" % (rc, out))
    delete_sandbox(key, did)
    st, _, e = create(key, [{"name": "kept", "path": "/kept", "read_only": True}])
    rc, out, _ = sh(e.get("id", "none"), key, "cat /kept/f")
    check(st == 201 and rc == 0 and out == "before\nafter-kill\n",
          "a later sandbox reads all of it: %s %s %r" % (st, rc, out))
    delete_sandbox(key, e.get("id", "none"))
    st, _, _ = call("DELETE", "/v1/volumes/kept", key=key)
    check(st == 204, "delete volume kept: %s" % st)


def check_grpc(channel, key):
    """Create, list and get over airlock.v1.Volumes; errors as statuses."""
    stub = volumes_pb2_grpc.VolumesStub(channel)
    md = [("authorization", "Bearer " + key)]
    v = stub.CreateVolume(vpb.CreateVolumeRequest(name="work", size_mb=256), metadata=md,
                          timeout=LIMIT_S)
    check(v.name == "work" and v.size_mb == 256 and v.node == "" and len(v.id) == 36,
          "gRPC CreateVolume: %s" % v)
    lst = stub.ListVolumes(vpb.ListVolumesRequest(), metadata=md, timeout=LIMIT_S)
    check([x.name for x in lst.volumes] == ["work"], "gRPC ListVolumes: %s" % lst)
    got = stub.GetVolume(vpb.VolumeRequest(name="work"), metadata=md, timeout=LIMIT_S)
    check(got.id == v.id and not got.has_usage and got.attached_sandbox == "",
          "gRPC GetVolume of an unused volume: %s" % got)
    for call_, code, fragment, what in (
            (lambda: stub.GetVolume(vpb.VolumeRequest(name="nope"), metadata=md, timeout=LIMIT_S),
             grpc.StatusCode.NOT_FOUND, "volume nope", "GetVolume of an unknown volume"),
            (lambda: stub.CreateVolume(vpb.CreateVolumeRequest(name="x", size_mb=0), metadata=md,
                                       timeout=LIMIT_S),
             grpc.StatusCode.INVALID_ARGUMENT, "size_mb", "CreateVolume of size 0"),
            (lambda: stub.CreateVolume(vpb.CreateVolumeRequest(name="work", size_mb=1),
                                       metadata=md, timeout=LIMIT_S),
             grpc.StatusCode.ALREADY_EXISTS, "work", "CreateVolume of a name taken")):
        try:
            call_()
            check(False, what + ": no error")
        except grpc.RpcError as e:
            check(e.code() == code and fragment in e.details(),
                  "%s -> %s naming %r: %s %s" % (what, code, fragment, e.code(), e.details()))
    return stub, md


def check_grpc_attach(channel, key):
    """Sandboxes.CreateSandbox with volumes, shown in the Sandbox; a
    refusal as a status naming the field."""
    stub = sandboxes_pb2_grpc.SandboxesStub(channel)
    md = [("authorization", "Bearer " + key)]
    sb = stub.CreateSandbox(spb.CreateSandboxRequest(volumes=[
        vpb.VolumeMount(name="copy", path="/copy"),
        vpb.VolumeMount(name="work@s1", path="/s1", read_only=True)]), metadata=md,
        timeout=LIMIT_S)
    check([(m.name, m.path, m.read_only, m.slot) for m in sb.volumes]
          == [("copy", "/copy", False, 0), ("work@s1", "/s1", True, 1)],
          "gRPC CreateSandbox with volumes: %s" % sb)
    rc, out, _ = sh(sb.id, key, "cat /copy/hello /s1/hello")
    check(rc == 0 and out == "x\nwritten-by-a\n", "its guest has them mounted: %r" % out)
    try:
        stub.CreateSandbox(spb.CreateSandboxRequest(volumes=[
            vpb.VolumeMount(name="copy", path="/proc/x")]), metadata=md, timeout=LIMIT_S)
        check(False, "gRPC CreateSandbox with a system path: no error")
    except grpc.RpcError as e:
        check(e.code() == grpc.StatusCode.INVALID_ARGUMENT and "volumes[0].path" in e.details(),
              "gRPC CreateSandbox with a system path: %s %s" % (e.code(), e.details()))
    stub.DeleteSandbox(spb.SandboxRequest(id=sb.id), metadata=md, timeout=LIMIT_S)


def check_bad_input(key, holder):
    """Each refused create with its status naming the field or volume;
    none leaves a sandbox or a claim behind."""
    before = live_sandboxes(key)
    for vols, status, code, fragment in (
            ([{"name": "work", "path": "/"}], 400, "invalid_argument", "volumes[0].path"),
            ([{"name": "work", "path": "/sys/kernel"}], 400, "invalid_argument", "system path"),
            ([{"name": "work", "path": "/dev"}], 400, "invalid_argument", "system path"),
            ([{"name": "work", "path": "/x/../proc"}], 400, "invalid_argument", "volumes[0].path"),
            ([{"name": "Work!", "path": "/w"}], 400, "invalid_argument", "volumes[0].name"),
            ([{"name": "work", "path": "/a"}, {"name": "work", "path": "/b"}], 400,
             "invalid_argument", "volumes[1].name"),
            ([{"name": "work@s1", "path": "/a"}], 400, "invalid_argument", "volumes[0].read_only"),
            ([{"name": "v%d" % i, "path": "/v%d" % i} for i in range(5)], 400, "invalid_argument",
             "at most 4"),
            ([{"name": "nope", "path": "/a"}], 404, "not_found", "volume nope"),
            ([{"name": "work@nope", "path": "/a", "read_only": True}], 404, "not_found",
             "work@nope"),
            ([{"name": "work", "path": "/a"}], 409, "conflict", holder)):
        st, _, body = create(key, vols)
        expect_error(st, body, status, code, fragment, "create with volumes %s" % vols)
    check(live_sandboxes(key) == before, "the refused creates left no sandbox")
    v = volume(key, "work")
    check(v.get("attached_sandbox") == holder, "the claim is still %s's alone: %s" % (holder, v))
    for body, fragment in (({"name": "x", "size_mb": 2 ** 21}, "size_mb"),
                           ({"name": "-x", "size_mb": 1}, "name"),
                           ({"name": "x", "from_snapshot": "work@"}, "from_snapshot")):
        st, _, b = call("POST", "/v1/volumes", key=key, body=body)
        expect_error(st, b, 400, "invalid_argument", fragment, "create volume %s" % body)
    st, _, b = call("POST", "/v1/volumes/work/grow", key=key, body={"size_mb": 1})
    expect_error(st, b, 409, "conflict", "only grows", "shrink")


def check_node_down(key, node):
    """A volume's sandbox goes to its node or nowhere: with that node
    taking no work (draining, set in the table: the API refuses to drain
    the last node), a create with it is 503 naming the node, and leaves
    nothing."""
    before = live_sandboxes(key)
    check(psql("UPDATE nodes SET drain = 'draining' WHERE id = :'n'", n=node) == "UPDATE 1",
          "node %s set draining" % node)
    try:
        st, _, b = create(key, [{"name": "copy", "path": "/copy"}])
    finally:
        psql("UPDATE nodes SET drain = 'active' WHERE id = :'n'", n=node)
    expect_error(st, b, 503, "unavailable", node, "a create with a volume whose node takes no work")
    check(live_sandboxes(key) == before and volume(key, "copy").get("attached_sandbox") is None,
          "the refused create left no sandbox and no claim")
    # Volumes on two nodes cannot meet in one sandbox: copy moved (in the
    # table) to a node long gone, which has its own row for the purpose.
    psql("INSERT INTO nodes (id, vmhost_addr, capacity, sandboxes, free_memory_mb, accel,"
         " last_seen) VALUES ('ghost-node', '', 0, 0, 0, 'tcg', now() - interval '1 day')")
    moved = psql("UPDATE volumes SET node_id = 'ghost-node' WHERE name = 'copy'"
                 " AND node_id = :'n'", n=node)
    try:
        st, _, b = create(key, [{"name": "work@s1", "path": "/s", "read_only": True},
                                {"name": "copy", "path": "/copy"}])
    finally:
        psql("UPDATE volumes SET node_id = :'n' WHERE node_id = 'ghost-node'", n=node)
        psql("DELETE FROM nodes WHERE id = 'ghost-node'")
    check(moved == "UPDATE 1", "copy moved to ghost-node: %s" % moved)
    expect_error(st, b, 409, "conflict", "ghost-node", "volumes on two nodes in one create")
    check(live_sandboxes(key) == before, "nor did the create with volumes on two nodes")


def check_quotas(key, project):
    st, _, q = call("GET", "/v1/projects/%s/quotas" % project, key=key)
    used = q["quotas"]["volumes"]["used"] if st == 200 else -1
    used_mb = q["quotas"]["volume_mb"]["used"] if st == 200 else -1
    check(used >= 1 and used_mb >= 256, "the quotas count the volumes: %s" % q)
    st, _, _ = call("PUT", "/v1/projects/%s/quotas" % project, key=ADMIN,
                    body={"volumes": used, "volume_mb": used_mb + 10})
    check(st == 200, "PUT the volume quotas")
    st, _, b = call("POST", "/v1/volumes", key=key, body={"name": "over", "size_mb": 1})
    expect_error(st, b, 429, "quota_exceeded", "quota exceeded: volumes", "a volume past the count")
    call("PUT", "/v1/projects/%s/quotas" % project, key=ADMIN, body={"volumes": used + 5})
    st, _, b = call("POST", "/v1/volumes", key=key, body={"name": "over", "size_mb": 11})
    expect_error(st, b, 429, "quota_exceeded", "quota exceeded: volume_mb", "a volume past the MiB")
    st, _, b = call("POST", "/v1/volumes/work/grow", key=key, body={"size_mb": 1024})
    expect_error(st, b, 429, "quota_exceeded", "volume_mb", "a grow past the MiB")
    st, _, b = call("POST", "/v1/volumes", key=key, body={"name": "over", "size_mb": 10})
    check(st == 201, "a volume that fits: %s %s" % (st, b))
    call("DELETE", "/v1/volumes/over", key=key)
    call("PUT", "/v1/projects/%s/quotas" % project, key=ADMIN, body={"volumes": 0, "volume_mb": 0})


def main():
    project, key = new_project_key("volumes-a")
    _, key_b = new_project_key("volumes-b")
    channel = grpc.insecure_channel(os.environ["AIRLOCK_GRPC_ADDR"])
    stub, md = check_grpc(channel, key)

    # ---- A writes, is deleted; B reads the same bytes ----
    st, _, a = create(key, [{"name": "work", "path": "/work"}])
    check(st == 201 and a.get("volumes") == [{"name": "work", "path": "/work", "read_only": False,
                                              "slot": 0}], "sandbox A with work: %s %s" % (st, a))
    aid = a.get("id", "none")
    # No sync: the delete below syncs a running guest's volumes, as an
    # unmount would.
    rc, out, err = sh(aid, key, "mountpoint -q /work && echo written-by-a > /work/hello "
                                "&& cat /work/hello")
    check(rc == 0 and out == "written-by-a\n", "A writes /work/hello: %s %r %r" % (rc, out, err))
    v = volume(key, "work")
    check(v.get("attached_sandbox") == aid and v.get("node") == a.get("node")
          and v.get("used_bytes", 0) > 0, "work is A's, on A's node, used: %s" % v)
    got = stub.GetVolume(vpb.VolumeRequest(name="work"), metadata=md, timeout=LIMIT_S)
    check(got.attached_sandbox == aid and got.has_usage, "gRPC GetVolume shows A: %s" % got)
    check_bad_input(key, aid)

    # ---- another project: not seen, not attached ----
    st, _, b = call("GET", "/v1/volumes/work", key=key_b)
    expect_error(st, b, 404, "not_found", "volume work", "B gets A's volume")
    st, _, b = create(key_b, [{"name": "work", "path": "/work"}])
    expect_error(st, b, 404, "not_found", "volume work", "B attaches A's volume")
    check(live_sandboxes(key_b) == [], "B's refused create left nothing")

    st, _, b = call("DELETE", "/v1/volumes/work", key=key)
    expect_error(st, b, 409, "conflict", aid, "delete work while A has it")
    st, _, s1 = call("POST", "/v1/volumes/work/snapshots", key=key, body={"name": "s1"})
    check(st == 201 and s1.get("name") == "s1", "snapshot work@s1 while A runs: %s %s" % (st, s1))
    delete_sandbox(key, aid)
    v = volume(key, "work")
    check(v.get("attached_sandbox") is None and v.get("node") == a.get("node"),
          "deleting A released work and kept it: %s" % v)

    st, _, b_sb = create(key, [{"name": "work", "path": "/data/work"}])
    bid = b_sb.get("id", "none")
    rc, out, _ = sh(bid, key, "cat /data/work/hello")
    check(st == 201 and rc == 0 and out == "written-by-a\n", "B reads A's bytes: %s %r" % (rc, out))
    rc, _, _ = sh(bid, key, "echo changed-in-b > /data/work/hello && sync")
    check(rc == 0, "B writes work")

    # ---- a clone and a read-only snapshot diverge from their source ----
    st, _, c = call("POST", "/v1/volumes", key=key, body={"name": "copy", "from_snapshot": "work@s1"})
    check(st == 201 and c.get("node") == a.get("node") and c.get("from_snapshot") == "work@s1",
          "clone copy of work@s1: %s %s" % (st, c))
    c_volumes = [{"name": "copy", "path": "/copy"},
                 {"name": "work@s1", "path": "/snap", "read_only": True}]
    st, _, csb = create(key, c_volumes, idempotency_key="c-once")
    cid = csb.get("id", "none")
    check(st == 201 and [m["name"] for m in csb.get("volumes", [])] == ["copy", "work@s1"],
          "sandbox C with the clone and the snapshot: %s %s" % (st, csb))
    # A retry is the same sandbox, not a second holder refused.
    st, _, again = create(key, c_volumes, idempotency_key="c-once")
    check(st == 201 and again.get("id") == cid, "a retried create answers C again: %s %s"
          % (st, again))
    rc, out, _ = sh(cid, key, "cat /copy/hello /snap/hello; echo x > /copy/hello;"
                              " cat /copy/hello")
    check(rc == 0 and out == "written-by-a\nwritten-by-a\nx\n",
          "the clone and the snapshot hold s1's bytes, the clone takes writes: %r" % out)
    rc, _, err = sh(cid, key, "echo y > /snap/hello")
    check(rc != 0 and "Read-only" in err, "the snapshot refuses writes: %s %r" % (rc, err))
    rc, out, _ = sh(bid, key, "cat /data/work/hello")
    check(out == "changed-in-b\n", "work kept B's write, not the clone's: %r" % out)
    st, _, b = call("DELETE", "/v1/volumes/work/snapshots/s1", key=key)
    expect_error(st, b, 409, "conflict", cid, "delete work@s1 while C has it")
    delete_sandbox(key, cid)
    check_node_down(key, a.get("node", ""))
    check_grpc_attach(channel, key)

    # ---- a fork gets its own clone ----
    st, _, forks = call("POST", "/v1/sandboxes/%s/fork" % bid, key=key, body={"count": 1})
    fork = (forks.get("sandboxes") or [{}])[0] if st == 201 else {}
    fid = fork.get("id", "none")
    clone = "work-" + fid
    check(st == 201 and fork.get("volumes") == [{"name": clone, "path": "/data/work",
                                                 "read_only": False, "slot": 0}],
          "the fork's volume is its own clone %s: %s %s" % (clone, st, forks))
    rc, out, _ = sh(fid, key, "cat /data/work/hello; echo fork > /data/work/hello")
    check(rc == 0 and out == "changed-in-b\n", "the fork reads B's bytes: %r" % out)
    rc, out, _ = sh(bid, key, "cat /data/work/hello")
    check(out == "changed-in-b\n", "the fork's write is its own: %r" % out)
    check(volume(key, clone).get("attached_sandbox") == fid, "the clone is the fork's")
    delete_sandbox(key, fid)
    check_quotas(key, project)

    check_node_restarts(key)

    # ---- grow while attached, then clean up ----
    st, _, g = call("POST", "/v1/volumes/work/grow", key=key, body={"size_mb": 512})
    check(st == 200 and g.get("size_mb") == 512, "grow work while B has it: %s %s" % (st, g))
    rc, out, _ = sh(bid, key, "df -m /data/work | awk 'NR==2 {print $2}'")
    check(rc == 0 and out.strip().isdigit() and int(out) > 300,
          "B's file system grew with it: %r" % out)
    delete_sandbox(key, bid)
    for name in ("copy", clone, "work"):
        st, _, _ = call("DELETE", "/v1/volumes/" + name, key=key)
        check(st == 204, "delete volume %s: %s" % (name, st))
    st, _, lst = call("GET", "/v1/volumes", key=key)
    check(st == 200 and lst == {"volumes": []}, "nothing is left: %s" % lst)
    report_and_exit()


if __name__ == "__main__":
    main()
