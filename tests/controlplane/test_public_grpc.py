#!/usr/bin/python3
"""The public gRPC API (protos/airlock/v1) end to end, through a real
gateway, scheduler, PostgreSQL, nats-server and vmhost with real VMs
(started by cp_harness, which passes AIRLOCK_GRPC_ADDR, AIRLOCK_URL and
AIRLOCK_ADMIN_KEY). The client is generated here with Debian's
python3-grpc-tools and runs on python3-grpcio.

usage: test_public_grpc.py PROTO_DIR STUB_DIR
  PROTO_DIR: the repository's protos/; STUB_DIR: where the Python stubs are
  generated (in the build tree).

No timing assertions. Four VMs in all (A's sandbox, one fork of it, and
one each for the idle and TTL controllers);
projects and keys are made with the admin key over REST, the only API that
has them."""
import os
import time
import queue
import sys
import threading

import grpc

import grpc_stubs
from rest_client import (ADMIN, call, check, collect_until, control, new_project_key, poll,
                         report_and_exit)

PROTO_DIR, STUB_DIR = sys.argv[1], sys.argv[2]
PROTOS = ["airlock/v1/sandboxes.proto", "airlock/v1/events.proto", "airlock/v1/templates.proto"]


grpc_stubs.generate(PROTO_DIR, STUB_DIR, PROTOS)
from airlock.v1 import events_pb2, events_pb2_grpc, sandboxes_pb2 as pb, sandboxes_pb2_grpc  # noqa: E402
from airlock.v1 import templates_pb2_grpc  # noqa: E402

# Every bound only stops a hang (a missing answer fails a check); none is
# asserted.
LIMIT_S = 600
# Every field of NetworkPolicy. The stack's vmhost checks a policy with
# egress's code and keeps it.
POLICY = pb.NetworkPolicy(default="deny", allow_domains=["example.com", "*.pypi.org"],
                          deny_domains=["bad.example.com"], allow_cidrs=["198.51.100.0/24"],
                          deny_cidrs=["198.51.100.7"], allow_ports=[80, 443], deny_ports=[25])


class Client:
    """The Sandboxes, Templates and Events stubs with one key's metadata on
    every call (a method is looked up in Sandboxes, then Templates)."""

    def __init__(self, channel, key):
        self.sandboxes = sandboxes_pb2_grpc.SandboxesStub(channel)
        self.templates = templates_pb2_grpc.TemplatesStub(channel)
        self.events = events_pb2_grpc.EventsStub(channel)
        self.metadata = [("authorization", "Bearer " + key)] if key is not None else []

    def __getattr__(self, name):
        stub = self.sandboxes if hasattr(self.sandboxes, name) else self.templates
        method = getattr(stub, name)
        return lambda request, **kw: method(request, metadata=self.metadata, timeout=LIMIT_S, **kw)


def error_of(call):
    """(status code, details) of a call that should fail (None, None if it
    did not); call is a thunk, streams are drained."""
    try:
        result = call()
        if hasattr(result, "__iter__") and not hasattr(result, "ListFields"):
            list(result)
        return None, None
    except grpc.RpcError as e:
        return e.code(), e.details()


def expect_error(call, code, fragment, what):
    got, details = error_of(call)
    check(got == code and fragment in (details or ""),
          "%s -> %s mentioning %r (got %s %r)" % (what, code.name, fragment, got, details))


def exec_output(client, sid, cmd, **kw):
    """(stdout bytes, stderr bytes, exit message or None) of an Exec."""
    out, err, exit_msg = b"", b"", None
    for ev in client.Exec(pb.ExecRequest(id=sid, cmd=cmd, **kw)):
        kind = ev.WhichOneof("event")
        if kind == "stdout":
            out += ev.stdout
        elif kind == "stderr":
            err += ev.stderr
        elif kind == "exit":
            exit_msg = ev.exit
    return out, err, exit_msg


def events_output(stream):
    out, exit_msg = b"", None
    for ev in stream:
        kind = ev.WhichOneof("event")
        if kind in ("stdout", "stderr"):
            out += getattr(ev, kind)
        elif kind == "exit":
            exit_msg = ev.exit
    return out, exit_msg


class EventReader:
    """Events.Subscribe read by a thread; the constructor returns once the
    first message (subscribed) is in, so transitions from then on arrive."""

    def __init__(self, client):
        self.call = client.events.Subscribe(events_pb2.SubscribeRequest(), metadata=client.metadata)
        self.queue = queue.Queue()
        self.received = []
        self.ended = False
        first = next(self.call, None)
        self.subscribed = first is not None and first.WhichOneof("event") == "subscribed"
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        try:
            for ev in self.call:
                if ev.WhichOneof("event") == "sandbox":
                    self.queue.put(ev.sandbox)
        except grpc.RpcError:
            pass  # cancelled by close(), or the gateway went away
        self.ended = True
        self.queue.put(None)

    def wait_for(self, match):
        return collect_until(self.queue, self.received, match, LIMIT_S)

    def close(self):
        self.call.cancel()


def main():
    channel = grpc.insecure_channel(os.environ["AIRLOCK_GRPC_ADDR"])
    grpc.channel_ready_future(channel).result(timeout=60)
    _, key_a = new_project_key("grpc-a")
    _, key_b = new_project_key("grpc-b")
    a, b = Client(channel, key_a), Client(channel, key_b)

    check_auth(channel)
    events = EventReader(a)
    check(events.subscribed, "Events.Subscribe answers subscribed first")
    check_bad_input(a)

    # ---- create (idempotent), get, list, network ----
    sb = a.CreateSandbox(pb.CreateSandboxRequest(
        cpus=1, memory_mb=512, env={"GREETING": "hello"}, metadata={"owner": "test"},
        idle_timeout_s=3600, network=POLICY, idempotency_key="grpc-create-1"))
    check(sb.id.startswith("sb_") and sb.state == "running" and sb.template == "default"
          and sb.node == "cp-node" and dict(sb.metadata) == {"owner": "test"}
          and sb.network == POLICY and sb.created_at.endswith("Z"), "CreateSandbox: %s" % sb)
    sid = sb.id
    again = a.CreateSandbox(pb.CreateSandboxRequest(idempotency_key="grpc-create-1"))
    check(again.id == sid, "a retried create answers with the same sandbox")
    got = a.GetSandbox(pb.SandboxRequest(id=sid))
    check(got.id == sid and got.state == "running" and got.network == POLICY, "GetSandbox")
    check([s.id for s in a.ListSandboxes(pb.ListSandboxesRequest()).sandboxes] == [sid],
          "ListSandboxes shows A's sandbox")
    check(list(b.ListSandboxes(pb.ListSandboxesRequest()).sandboxes) == [],
          "B's ListSandboxes does not show A's sandbox")
    new = pb.NetworkPolicy(default="allow", deny_cidrs=["203.0.113.0/24"])
    got = a.SetNetworkPolicy(pb.SetNetworkPolicyRequest(id=sid, network=new))
    check(got.network == new, "SetNetworkPolicy answers with the new policy: %s" % got.network)
    expect_error(lambda: a.SetNetworkPolicy(pb.SetNetworkPolicyRequest(
        id=sid, network=pb.NetworkPolicy(allow_cidrs=["10.0.0.0/99"]))),
        grpc.StatusCode.INVALID_ARGUMENT, "allow_cidrs[0]", "SetNetworkPolicy with a bad CIDR")
    check(a.GetSandbox(pb.SandboxRequest(id=sid)).network == new, "a refused policy changed nothing")

    check_exec(a, sid)
    check_processes(a, sid)
    check_files(a, sid)
    check_logs(a, sid)
    check_checkpoints(a, sid)
    check_lifecycle(a, sid)
    check_tenancy(a, b, sid)
    check_controllers(a)

    got = events.wait_for(lambda e: e.id == sid and e.state == "suspended")
    mine = [(e.state, e.previous) for e in got if e.id == sid]
    check(("creating", "") in mine and ("running", "creating") in mine
          and ("paused", "running") in mine and all(e.at.endswith("Z") for e in got),
          "A's event stream has A's transitions: %s" % mine)
    events.close()
    check_gateway_restart(a, sid)

    # ---- delete ----
    check(isinstance(a.DeleteSandbox(pb.SandboxRequest(id=sid)), pb.Empty), "DeleteSandbox")
    expect_error(lambda: a.GetSandbox(pb.SandboxRequest(id=sid)), grpc.StatusCode.NOT_FOUND, sid,
                 "GetSandbox after delete")
    expect_error(lambda: a.DeleteSandbox(pb.SandboxRequest(id=sid)), grpc.StatusCode.NOT_FOUND, sid,
                 "DeleteSandbox twice")
    channel.close()


def check_auth(channel):
    for key, fragment, what in [(None, "authorization", "no metadata"),
                                ("ak_" + "0" * 64, "unknown API key", "an unknown key"),
                                ("nonsense", "malformed", "a malformed key")]:
        client = Client(channel, key)
        expect_error(lambda: client.ListSandboxes(pb.ListSandboxesRequest()),
                     grpc.StatusCode.UNAUTHENTICATED, fragment, "ListSandboxes with " + what)
    basic = sandboxes_pb2_grpc.SandboxesStub(channel)
    expect_error(lambda: basic.GetSandbox(pb.SandboxRequest(id="sb_x"),
                                          metadata=[("authorization", "Basic eDp5")]),
                 grpc.StatusCode.UNAUTHENTICATED, "Bearer", "a Basic authorization")
    events = events_pb2_grpc.EventsStub(channel)
    expect_error(lambda: events.Subscribe(events_pb2.SubscribeRequest()),
                 grpc.StatusCode.UNAUTHENTICATED, "authorization", "Subscribe without a key")
    # A key the gateway has cached (used twice) and then revokes: the very
    # next gRPC call is refused (docs/api.md "Auth").
    project, key = new_project_key("grpc-revoked")
    doomed = Client(channel, key)
    for _ in range(2):
        doomed.ListSandboxes(pb.ListSandboxesRequest())
    st, _, keys = call("GET", "/v1/projects/%s/keys" % project, key=ADMIN)
    key_ids = [k["id"] for k in keys.get("keys", [])] if st == 200 else []
    st, _, _ = call("DELETE", "/v1/projects/%s/keys/%s" % (project, key_ids[0] if key_ids else "-"),
                    key=ADMIN)
    check(st == 204, "revoke a key used over gRPC")
    expect_error(lambda: doomed.ListSandboxes(pb.ListSandboxesRequest()),
                 grpc.StatusCode.UNAUTHENTICATED, "unknown API key",
                 "ListSandboxes with the key just revoked")


def check_bad_input(a):
    inval = grpc.StatusCode.INVALID_ARGUMENT
    for request, fragment, what in [
        (pb.CreateSandboxRequest(cpus=99), "cpus", "too many cpus"),
        (pb.CreateSandboxRequest(memory_mb=16), "memory_mb", "too little memory"),
        (pb.CreateSandboxRequest(idle_timeout_s=400 * 86400), "idle_timeout_s", "a long idle timeout"),
        (pb.CreateSandboxRequest(network=pb.NetworkPolicy(default="maybe")), "network.default",
         "default neither deny nor allow"),
        (pb.CreateSandboxRequest(idempotency_key="k" * 201), "idempotency_key", "a long key"),
        (pb.CreateSandboxRequest(checkpoint_every_s=5), "checkpoint_every_s",
         "a short checkpoint period"),
    ]:
        expect_error(lambda: a.CreateSandbox(request), inval, fragment, "CreateSandbox with " + what)
    expect_error(lambda: a.GetSandbox(pb.SandboxRequest(id="BAD ID!")), inval, "malformed",
                 "GetSandbox of a malformed id")
    expect_error(lambda: a.GetSandbox(pb.SandboxRequest()), inval, "id: required",
                 "GetSandbox without an id")
    expect_error(lambda: a.GetSandbox(pb.SandboxRequest(id="sb_00000000000000000000")),
                 grpc.StatusCode.NOT_FOUND, "sb_00000000000000000000", "GetSandbox of an unknown id")
    check(list(a.ListSandboxes(pb.ListSandboxesRequest()).sandboxes) == [],
          "refused creates leave no sandbox")


def check_exec(a, sid):
    out, err, x = exec_output(a, sid, ["sh", "-c", "echo $GREETING; echo oops >&2; exit 3"])
    check(out == b"hello\n" and err == b"oops\n" and x is not None and x.exit_code == 3,
          "Exec streams stdout, stderr and the exit code: %r %r %s" % (out, err, x))
    out, _, x = exec_output(a, sid, ["cat"], stdin=b"\x00\xffbytes", cwd="/tmp", env={"X": "1"},
                            timeout_s=30)
    check(out == b"\x00\xffbytes" and x.exit_code == 0, "Exec with binary stdin: %r" % out)
    out, _, _ = exec_output(a, sid, ["printf", "\\377\\376"])
    check(out == b"\xff\xfe", "Exec output that is not UTF-8 comes as it is")
    inval = grpc.StatusCode.INVALID_ARGUMENT
    for request, fragment in [(pb.ExecRequest(id=sid), "cmd"),
                              (pb.ExecRequest(id=sid, cmd=["true"], timeout_s=86401), "timeout_s"),
                              (pb.ExecRequest(id=sid, cmd=["true"], stdin_open=True), "stdin_open"),
                              (pb.ExecRequest(id="bad id", cmd=["true"]), "malformed")]:
        expect_error(lambda: list(a.Exec(request)), inval, fragment, "Exec with %s" % fragment)
    expect_error(lambda: list(a.Exec(pb.ExecRequest(id=sid, cmd=["no-such-program"]))),
                 grpc.StatusCode.NOT_FOUND, "no-such-program", "Exec of a missing program")

    # Cancelling an Exec kills its command.
    stream = a.Exec(pb.ExecRequest(id=sid, cmd=["sh", "-c", "echo ready; exec sleep 4242"]))
    first = next(stream)
    check(first.WhichOneof("event") == "stdout" and first.stdout == b"ready\n",
          "a long Exec streams its first output")
    stream.cancel()
    check(poll(lambda: exec_output(a, sid, ["pgrep", "-f", "^sleep 4242$"])[2].exit_code == 1),
          "the cancelled Exec's command was killed")


def check_processes(a, sid):
    cmd = ["sh", "-c", "echo started; cat; echo done >&2"]
    p = a.StartProcess(pb.ExecRequest(id=sid, cmd=cmd, stdin_open=True))
    check(p.pid > 0 and p.running and list(p.cmd) == cmd and p.started_at.endswith("Z"),
          "StartProcess: %s" % p)
    listed = [q for q in a.ListProcesses(pb.SandboxRequest(id=sid)).processes if q.pid == p.pid]
    check(listed and listed[0].running, "ListProcesses shows it running")
    a.WriteProcessStdin(pb.WriteProcessStdinRequest(id=sid, pid=p.pid, data=b"hello\n"))
    a.WriteProcessStdin(pb.WriteProcessStdinRequest(id=sid, pid=p.pid, eof=True))
    # Attach replays the ring (stdout and stderr as written) and follows to the exit.
    out, x = events_output(a.AttachProcess(pb.ProcessRequest(id=sid, pid=p.pid)))
    check(out == b"started\nhello\ndone\n" and x is not None and x.exit_code == 0,
          "AttachProcess replays and follows to the exit: %r %s" % (out, x))
    listed = [q for q in a.ListProcesses(pb.SandboxRequest(id=sid)).processes if q.pid == p.pid]
    check(listed and not listed[0].running and listed[0].exit_code == 0,
          "ListProcesses shows it exited")
    sleeper = a.StartProcess(pb.ExecRequest(id=sid, cmd=["sleep", "1000"]))
    a.SignalProcess(pb.SignalProcessRequest(id=sid, pid=sleeper.pid, signal="SIGTERM"))
    _, x = events_output(a.AttachProcess(pb.ProcessRequest(id=sid, pid=sleeper.pid)))
    check(x is not None and x.signal == 15, "SignalProcess TERM ended the sleeper: %s" % x)
    inval = grpc.StatusCode.INVALID_ARGUMENT
    expect_error(lambda: a.SignalProcess(pb.SignalProcessRequest(id=sid, pid=p.pid, signal="NOPE")),
                 inval, "signal", "SignalProcess with an unknown signal")
    expect_error(lambda: a.SignalProcess(pb.SignalProcessRequest(id=sid, pid=p.pid)),
                 inval, "signal: required", "SignalProcess without a signal")
    expect_error(lambda: a.WriteProcessStdin(pb.WriteProcessStdinRequest(id=sid, pid=p.pid)),
                 inval, "data", "WriteProcessStdin without data")
    expect_error(lambda: list(a.AttachProcess(pb.ProcessRequest(id=sid, pid=-4))), inval, "pid",
                 "AttachProcess to pid -4")
    expect_error(lambda: list(a.AttachProcess(pb.ProcessRequest(id=sid, pid=999999))),
                 grpc.StatusCode.NOT_FOUND, "999999", "AttachProcess to an unknown process")
    expect_error(lambda: a.StartProcess(pb.ExecRequest(id=sid, cmd=["no-such-program"])),
                 grpc.StatusCode.NOT_FOUND, "no-such-program", "StartProcess of a missing program")


def write_file(client, sid, path, data, chunk=256 * 1024):
    def messages():
        yield pb.WriteFileRequest(id=sid, path=path, data=data[:chunk])
        for i in range(chunk, len(data), chunk):
            yield pb.WriteFileRequest(data=data[i:i + chunk])
    return client.WriteFile(messages())


def read_file(client, sid, path):
    return b"".join(c.data for c in client.ReadFile(pb.PathRequest(id=sid, path=path)))


def check_files(a, sid):
    blob = bytes(range(256)) * 4096  # 1 MiB, not UTF-8
    check(isinstance(write_file(a, sid, "/root/blob.bin", blob), pb.Empty), "WriteFile, streamed")
    check(read_file(a, sid, "/root/blob.bin") == blob, "ReadFile returns the same bytes")
    entries = a.ListDir(pb.PathRequest(id=sid, path="/root")).entries
    mine = [e for e in entries if e.name == b"blob.bin"]
    check(mine and mine[0].type == "file" and mine[0].size == len(blob), "ListDir shows the file")
    a.MakeDir(pb.MakeDirRequest(id=sid, path="/root/d/e", parents=True))
    info = a.StatFile(pb.PathRequest(id=sid, path="/root/d/e"))
    check(info.type == "dir" and info.mode == 0o755, "MakeDir with parents, StatFile: %s" % info)
    write_file(a, sid, "/root/d/e/f", b"12345")
    a.RenameFile(pb.RenameFileRequest(id=sid, from_path="/root/d/e/f", to_path="/root/d/g"))
    info = a.StatFile(pb.PathRequest(id=sid, path="/root/d/g"))
    check(info.type == "file" and info.size == 5, "RenameFile moved the file")
    expect_error(lambda: a.RemoveFile(pb.PathRequest(id=sid, path="/root/d")),
                 grpc.StatusCode.FAILED_PRECONDITION, "/root/d", "RemoveFile of a non-empty directory")
    a.RemoveFile(pb.PathRequest(id=sid, path="/root/d", recursive=True))
    expect_error(lambda: a.StatFile(pb.PathRequest(id=sid, path="/root/d")),
                 grpc.StatusCode.NOT_FOUND, "/root/d", "StatFile after RemoveFile")
    expect_error(lambda: read_file(a, sid, "/root/missing"), grpc.StatusCode.NOT_FOUND, "missing",
                 "ReadFile of a missing file")
    inval = grpc.StatusCode.INVALID_ARGUMENT
    expect_error(lambda: read_file(a, sid, "relative"), inval, "path: must be absolute",
                 "ReadFile of a relative path")
    expect_error(lambda: a.ListDir(pb.PathRequest(id=sid)), inval, "path: required",
                 "ListDir without a path")
    expect_error(lambda: a.MakeDir(pb.MakeDirRequest(id=sid, path="/x", mode=99999)), inval, "mode",
                 "MakeDir with mode 99999")
    expect_error(lambda: a.RenameFile(pb.RenameFileRequest(id=sid, from_path="/a")), inval,
                 "to_path", "RenameFile without to_path")
    expect_error(lambda: a.WriteFile(iter([])), inval, "first message", "WriteFile of no messages")
    expect_error(lambda: write_file(a, sid, "rel", b"x"), inval, "path", "WriteFile to a relative path")


def check_logs(a, sid):
    """GetConsoleLog has what the guest wrote to its console (tail bounded);
    ListConnections has the DNS question the guest just asked."""
    marker = "grpc-console-marker-%d" % os.getpid()
    exec_output(a, sid, ["sh", "-c", "echo %s > /dev/console; getent hosts grpc-log.test; true"
                         % marker])
    # The guest's UART sends after echo returns: the loop only bounds that.
    for _ in range(100):
        log = a.GetConsoleLog(pb.ConsoleLogRequest(id=sid))
        if marker.encode() in log.data:
            break
        time.sleep(0.1)
    check(marker.encode() in log.data, "GetConsoleLog has what the guest wrote")
    tail = a.GetConsoleLog(pb.ConsoleLogRequest(id=sid, tail_bytes=8))
    check(len(tail.data) <= 8 and tail.truncated and log.data.endswith(tail.data),
          "GetConsoleLog tail_bytes=8: %r" % tail.data)
    expect_error(lambda: a.GetConsoleLog(pb.ConsoleLogRequest(id=sid, tail_bytes=2 << 20)),
                 grpc.StatusCode.INVALID_ARGUMENT, "tail_bytes", "GetConsoleLog over 1 MiB")
    conns = a.ListConnections(pb.ListConnectionsRequest(id=sid)).connections
    asked = [c for c in conns if c.protocol == "dns" and c.name == "grpc-log.test"]
    check(asked and asked[-1].decision in ("allow", "deny") and asked[-1].time.endswith("Z"),
          "ListConnections has the guest's DNS question: %s" % list(conns))
    newest = a.ListConnections(pb.ListConnectionsRequest(id=sid, limit=1)).connections
    check(len(newest) == 1 and newest[0].seq == max(c.seq for c in conns),
          "ListConnections limit=1 is the newest entry")
    expect_error(lambda: a.ListConnections(pb.ListConnectionsRequest(id=sid, limit=99999)),
                 grpc.StatusCode.INVALID_ARGUMENT, "limit", "ListConnections limit over 10000")


def check_full_checkpoint(a, sid):
    """A full checkpoint keeps memory: restored (and forked from) a
    background process of that moment runs again, a later file is gone."""
    a.StartProcess(pb.ExecRequest(id=sid, cmd=["sh", "-c",
                                               "echo $$ > /root/sleeper.pid; exec sleep 4243"]))
    alive = ["sh", "-c", "kill -0 $(cat /root/sleeper.pid) && echo alive"]
    poll(lambda: exec_output(a, sid, alive)[0] == b"alive\n", limit_s=60)
    cp = a.CreateCheckpoint(pb.CreateCheckpointRequest(id=sid, name="with-memory", kind="full"))
    check(cp.kind == "full", "CreateCheckpoint full: %s" % cp)
    exec_output(a, sid, ["sh", "-c", "kill $(cat /root/sleeper.pid); echo x > /root/after-full"])
    got = a.RestoreCheckpoint(pb.RestoreCheckpointRequest(id=sid, checkpoint="with-memory"))
    check(got.state == "running", "RestoreCheckpoint full: %s" % got.state)
    out, _, _ = exec_output(a, sid, ["sh", "-c", "kill -0 $(cat /root/sleeper.pid) && echo alive;"
                                     " test -e /root/after-full || echo gone"])
    check(out == b"alive\ngone\n", "after a full restore the process runs, the later file is "
          "gone: %r" % out)
    forks = a.ForkSandbox(pb.ForkSandboxRequest(id=sid, checkpoint="with-memory")).sandboxes
    check(len(forks) == 1, "ForkSandbox from the full checkpoint: %s" % [f.id for f in forks])
    for f in forks:
        check(exec_output(a, f.id, alive)[0] == b"alive\n", "the fork runs the process too")
        a.DeleteSandbox(pb.SandboxRequest(id=f.id))
    exec_output(a, sid, ["sh", "-c", "kill $(cat /root/sleeper.pid)"])
    a.DeleteCheckpoint(pb.DeleteCheckpointRequest(id=sid, name="with-memory"))


def check_checkpoints(a, sid):
    inval = grpc.StatusCode.INVALID_ARGUMENT
    for request, fragment in [(pb.CreateCheckpointRequest(id=sid), "name"),
                              (pb.CreateCheckpointRequest(id=sid, name="Bad Name"), "name"),
                              (pb.CreateCheckpointRequest(id=sid, name="x", kind="memory"), "kind")]:
        expect_error(lambda: a.CreateCheckpoint(request), inval, fragment,
                     "CreateCheckpoint with a bad %s" % fragment)
    expect_error(lambda: a.ForkSandbox(pb.ForkSandboxRequest(id=sid, count=99)), inval, "count",
                 "ForkSandbox of 99")
    cp = a.CreateCheckpoint(pb.CreateCheckpointRequest(id=sid, name="before-write", kind="disk"))
    check(cp.name == "before-write" and cp.kind == "disk" and cp.created_at.endswith("Z"),
          "CreateCheckpoint: %s" % cp)
    code, _ = error_of(lambda: a.CreateCheckpoint(pb.CreateCheckpointRequest(id=sid, name="before-write")))
    check(code == grpc.StatusCode.ALREADY_EXISTS, "a checkpoint name taken twice: %s" % code)
    names = [c.name for c in a.ListCheckpoints(pb.SandboxRequest(id=sid)).checkpoints]
    check(names == ["before-write"], "ListCheckpoints: %s" % names)
    write_file(a, sid, "/root/after.txt", b"later")
    got = a.RestoreCheckpoint(pb.RestoreCheckpointRequest(id=sid, checkpoint="before-write"))
    check(got.id == sid and got.state == "running", "RestoreCheckpoint: %s" % got.state)
    expect_error(lambda: a.StatFile(pb.PathRequest(id=sid, path="/root/after.txt")),
                 grpc.StatusCode.NOT_FOUND, "after.txt", "a file written after the checkpoint is gone")
    check(a.StatFile(pb.PathRequest(id=sid, path="/root/blob.bin")).size == 1 << 20,
          "a file written before the checkpoint is still there")
    expect_error(lambda: a.RestoreCheckpoint(pb.RestoreCheckpointRequest(id=sid, checkpoint="nope")),
                 grpc.StatusCode.NOT_FOUND, "nope", "RestoreCheckpoint of an unknown checkpoint")

    forks = a.ForkSandbox(pb.ForkSandboxRequest(id=sid)).sandboxes
    check(len(forks) == 1 and forks[0].state == "running" and forks[0].id != sid,
          "ForkSandbox (count 0 = 1): %s" % [f.id for f in forks])
    for f in forks:
        _, _, x = exec_output(a, f.id, ["test", "-e", "/root/blob.bin"])
        check(x.exit_code == 0, "the fork has the parent's files")
        a.DeleteSandbox(pb.SandboxRequest(id=f.id))
    check_full_checkpoint(a, sid)
    a.DeleteCheckpoint(pb.DeleteCheckpointRequest(id=sid, name="before-write"))
    check(list(a.ListCheckpoints(pb.SandboxRequest(id=sid)).checkpoints) == [],
          "DeleteCheckpoint removed it")
    expect_error(lambda: a.DeleteCheckpoint(pb.DeleteCheckpointRequest(id=sid, name="before-write")),
                 grpc.StatusCode.NOT_FOUND, "before-write", "DeleteCheckpoint twice")


def check_lifecycle(a, sid):
    pre = grpc.StatusCode.FAILED_PRECONDITION
    ref = pb.SandboxRequest(id=sid)
    expect_error(lambda: a.ResumeSandbox(ref), pre, "is running; resume needs paused or suspended",
                 "ResumeSandbox of a running sandbox")
    check(a.PauseSandbox(ref).state == "paused", "PauseSandbox")
    expect_error(lambda: a.PauseSandbox(ref), pre, "is paused; pause needs running", "PauseSandbox twice")
    expect_error(lambda: list(a.Exec(pb.ExecRequest(id=sid, cmd=["true"]))), pre,
                 "is paused; exec needs running", "Exec while paused")
    expect_error(lambda: read_file(a, sid, "/root/blob.bin"), pre, "is paused", "ReadFile while paused")
    check(a.ResumeSandbox(ref).state == "running", "ResumeSandbox")
    check(a.SuspendSandbox(ref).state == "suspended", "SuspendSandbox")
    expect_error(lambda: a.StatFile(pb.PathRequest(id=sid, path="/root")), pre, "is suspended",
                 "StatFile while suspended")
    check(a.ResumeSandbox(ref).state == "running", "ResumeSandbox from suspended")
    check(read_file(a, sid, "/root/blob.bin") == bytes(range(256)) * 4096,
          "the file survived suspend and resume")


def check_controllers(a):
    """CreateSandbox's idle_timeout_s and ttl_s reach the scheduler's
    controllers: an idle sandbox is suspended (GetSandbox says so, its
    guest answers again after ResumeSandbox), one past its ttl_s is
    deleted (NOT_FOUND)."""
    idle = a.CreateSandbox(pb.CreateSandboxRequest(idle_timeout_s=3, network=POLICY))
    check(idle.state == "running" and idle.idle_timeout_s == 3,
          "CreateSandbox with idle_timeout_s: %s %s" % (idle.state, idle.idle_timeout_s))
    ref = pb.SandboxRequest(id=idle.id)
    got = poll(lambda: a.GetSandbox(ref).state == "suspended", limit_s=180, every_s=0.5)
    check(got, "an idle sandbox made over gRPC is suspended by the controller")
    check(a.ResumeSandbox(ref).state == "running", "ResumeSandbox after the idle suspend")
    out, _, ex = exec_output(a, idle.id, ["echo", "back"])
    check(ex is not None and ex.exit_code == 0 and out == b"back\n",
          "the guest answers after the idle suspend (%r %s)" % (out, ex))
    a.DeleteSandbox(ref)

    ttl = a.CreateSandbox(pb.CreateSandboxRequest(ttl_s=3, idle_timeout_s=3600, network=POLICY))
    check(ttl.state == "running" and ttl.ttl_s == 3, "CreateSandbox with ttl_s: %s" % ttl.ttl_s)

    def gone():
        try:
            a.GetSandbox(pb.SandboxRequest(id=ttl.id))
            return False
        except grpc.RpcError as e:
            return e.code() == grpc.StatusCode.NOT_FOUND
    check(poll(gone, limit_s=180, every_s=0.5), "a sandbox past its ttl_s is deleted (NOT_FOUND)")

    every = a.CreateSandbox(pb.CreateSandboxRequest(checkpoint_every_s=10, network=POLICY))
    check(every.checkpoint_every_s == 10, "CreateSandbox with checkpoint_every_s: %s"
          % every.checkpoint_every_s)
    ref = pb.SandboxRequest(id=every.id)
    autos = poll(lambda: [c for c in a.ListCheckpoints(ref).checkpoints
                          if c.name.startswith("auto-") and c.kind == "full"],
                 limit_s=180, every_s=0.5)
    check(autos, "the controller makes a periodic full checkpoint (auto-<ms>)")
    a.DeleteSandbox(ref)


def check_gateway_restart(a, sid):
    """The gateway stops cleanly (exit 0, checked by cp_harness) with an
    Exec and an Events stream in flight; the Exec's command is killed, the
    streams end, and the API is back on the same port afterwards."""
    events = EventReader(a)
    stream = a.Exec(pb.ExecRequest(id=sid, cmd=["sh", "-c", "echo ready; exec sleep 4243"]))
    first = next(stream)
    check(first.WhichOneof("event") == "stdout", "a long Exec is running")
    check(control("restart gateway"), "the gateway stops cleanly with streams open, and starts")
    code, _ = error_of(lambda: list(stream))
    check(code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED),
          "the open Exec stream ends with an error: %s" % code)
    events.wait_for(lambda e: False)  # returns once the stream has ended
    check(events.ended, "the open Events stream ended")

    def answers():
        try:
            return a.GetSandbox(pb.SandboxRequest(id=sid)).state == "running"
        except grpc.RpcError:
            return False
    check(poll(answers), "the gRPC API answers again after the restart")

    def killed():
        return exec_output(a, sid, ["pgrep", "-f", "^sleep 4243$"])[2].exit_code == 1
    check(poll(killed), "the Exec relayed at the stop was killed")


def check_tenancy(a, b, sid):
    """B gets NOT_FOUND naming the id for A's sandbox on every call, and
    changes nothing."""
    ref = pb.SandboxRequest(id=sid)
    for name, call in [
        ("GetSandbox", lambda: b.GetSandbox(ref)),
        ("DeleteSandbox", lambda: b.DeleteSandbox(ref)),
        ("PauseSandbox", lambda: b.PauseSandbox(ref)),
        ("ResumeSandbox", lambda: b.ResumeSandbox(ref)),
        ("SuspendSandbox", lambda: b.SuspendSandbox(ref)),
        ("SetNetworkPolicy", lambda: b.SetNetworkPolicy(pb.SetNetworkPolicyRequest(
            id=sid, network=pb.NetworkPolicy(default="allow")))),
        ("Exec", lambda: list(b.Exec(pb.ExecRequest(id=sid, cmd=["touch", "/root/evil"])))),
        ("StartProcess", lambda: b.StartProcess(pb.ExecRequest(id=sid, cmd=["touch", "/root/evil"]))),
        ("ListProcesses", lambda: b.ListProcesses(ref)),
        ("AttachProcess", lambda: list(b.AttachProcess(pb.ProcessRequest(id=sid, pid=1)))),
        ("WriteProcessStdin", lambda: b.WriteProcessStdin(pb.WriteProcessStdinRequest(
            id=sid, pid=1, data=b"x"))),
        ("SignalProcess", lambda: b.SignalProcess(pb.SignalProcessRequest(id=sid, pid=1,
                                                                          signal="KILL"))),
        ("ReadFile", lambda: read_file(b, sid, "/root/blob.bin")),
        ("WriteFile", lambda: write_file(b, sid, "/root/evil", b"x")),
        ("ListDir", lambda: b.ListDir(pb.PathRequest(id=sid, path="/root"))),
        ("GetConsoleLog", lambda: b.GetConsoleLog(pb.ConsoleLogRequest(id=sid))),
        ("ListConnections", lambda: b.ListConnections(pb.ListConnectionsRequest(id=sid))),
        ("StatFile", lambda: b.StatFile(pb.PathRequest(id=sid, path="/root/blob.bin"))),
        ("MakeDir", lambda: b.MakeDir(pb.MakeDirRequest(id=sid, path="/root/evil-dir"))),
        ("RemoveFile", lambda: b.RemoveFile(pb.PathRequest(id=sid, path="/root/blob.bin"))),
        ("RenameFile", lambda: b.RenameFile(pb.RenameFileRequest(id=sid, from_path="/root/blob.bin",
                                                                 to_path="/root/evil"))),
        ("CreateCheckpoint", lambda: b.CreateCheckpoint(pb.CreateCheckpointRequest(id=sid, name="evil"))),
        ("ListCheckpoints", lambda: b.ListCheckpoints(ref)),
        ("DeleteCheckpoint", lambda: b.DeleteCheckpoint(pb.DeleteCheckpointRequest(id=sid, name="x"))),
        ("RestoreCheckpoint", lambda: b.RestoreCheckpoint(pb.RestoreCheckpointRequest(
            id=sid, checkpoint="x"))),
        ("ForkSandbox", lambda: b.ForkSandbox(pb.ForkSandboxRequest(id=sid))),
    ]:
        expect_error(call, grpc.StatusCode.NOT_FOUND, sid, "B: " + name)
    _, _, x = exec_output(a, sid, ["sh", "-c", "test -e /root/evil || test -e /root/evil-dir || "
                                               "! test -e /root/blob.bin"])
    check(x.exit_code == 1, "B's calls changed nothing in A's sandbox")
    check(a.GetSandbox(ref).state == "running" and not a.ListCheckpoints(ref).checkpoints,
          "A's sandbox is still running, with no checkpoint of B's")


if __name__ == "__main__":
    main()
    report_and_exit()
