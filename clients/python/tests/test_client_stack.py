#!/usr/bin/python3
"""The Python client (clients/python) against the real stack that
cp_harness starts (gateway, scheduler, PostgreSQL, nats-server, vmhost with
real VMs; AIRLOCK_URL, AIRLOCK_ADMIN_KEY). One sandbox serves almost every
case; a fork of it is the only other VM. argv[1]: the directory holding
the airlock package. No timing assertions: limits only bound a hang."""
import hashlib
import http.client
import io
import os
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else
                os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from airlock import (AirlockError, Checkpoint, Client, Exit, FileInfo, Output, Process,  # noqa: E402
                     Sandbox, Template)

URL = os.environ["AIRLOCK_URL"]
ADMIN = os.environ["AIRLOCK_ADMIN_KEY"]
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def expect_error(fn, status, code, fragment, what):
    """fn() raises AirlockError with this status and code, its message
    holding fragment."""
    try:
        got = fn()
    except AirlockError as e:
        check(e.status == status and e.code == code and fragment in e.message,
              "%s -> AirlockError %d %s mentioning %r (got %d %s %r)"
              % (what, status, code, fragment, e.status, e.code, e.message))
        return
    check(False, "%s -> AirlockError %d %s (got %r)" % (what, status, code, got))


def poll(fn, limit_s=120, every_s=0.25):
    deadline = time.monotonic() + limit_s
    while True:
        value = fn()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(every_s)


def new_project_key(name):
    admin = Client(URL, ADMIN).transport
    p = admin.call("POST", "/v1/projects", json_body={"name": name})
    k = admin.call("POST", "/v1/projects/%s/keys" % p["id"], json_body={})
    return k["key"]


def gather(stream):
    """(stdout bytes, stderr bytes, Exit) of an ExecStream read to its end."""
    out: list = []
    err: list = []
    with stream:
        for ev in stream:
            if isinstance(ev, Output):
                (err if ev.stream == "stderr" else out).append(ev.data)
    return b"".join(out), b"".join(err), stream.exit


def check_sandboxes(c, key):
    sb = c.sandboxes.create(metadata={"suite": "pyclient"}, env={"GREETING": "hello"},
                            idle_timeout_s=3600, ttl_s=7200, idempotency_key="pyclient-1")
    check(isinstance(sb, Sandbox) and sb.id.startswith("sb_") and sb.state == "running",
          "create: a running sandbox: %r" % sb)
    check((sb.metadata, sb.idle_timeout_s, sb.ttl_s, sb.cpus, sb.memory_mb, sb.template)
          == ({"suite": "pyclient"}, 3600, 7200, 1, 512, "default"),
          "create: the options given and the defaults: %r" % sb)
    check(sb.created_at.endswith("Z") and sb.node != "", "create: created_at and node: %r" % sb)
    again = c.sandboxes.create(idempotency_key="pyclient-1")
    check(again.id == sb.id, "create with the same Idempotency-Key: the same sandbox")
    got = c.sandboxes.get(sb.id)
    check(got.id == sb.id and got.state == "running" and got.metadata == {"suite": "pyclient"},
          "get: %r" % got)
    check(sb.id in [s.id for s in c.sandboxes.list()], "list holds it")
    other = Client(URL, new_project_key("pyclient-other"))
    expect_error(lambda: other.sandboxes.get(sb.id), 404, "not_found", sb.id,
                 "another project's key getting it")
    check(sb.id not in [s.id for s in other.sandboxes.list()], "another project's list lacks it")
    expect_error(lambda: Client(URL, "ak_" + "0" * 64).sandboxes.list(), 401, "unauthenticated",
                 "", "an unknown key")
    expect_error(lambda: c.sandboxes.create(cpus=99), 400, "invalid_argument", "cpus",
                 "create with cpus 99")
    expect_error(lambda: c.sandboxes.get("sb_nosuchsandbox0"), 404, "not_found",
                 "sb_nosuchsandbox0", "get of an unknown sandbox")
    net = c.sandboxes.set_network(sb.id, {"default": "deny", "allow_domains": ["example.com"]})
    check(net.get("allow_domains") == ["example.com"], "set_network answers the policy: %r" % net)
    check((c.sandboxes.get(sb.id).network or {}).get("allow_domains") == ["example.com"],
          "get shows the policy set")
    return sb


def check_exec(c, sid):
    r = c.exec.run(sid, ["sh", "-c", "echo $GREETING; echo err >&2; exit 3"])
    check((r.stdout, r.stderr, r.exit_code, r.signal, r.timed_out, r.ok)
          == (b"hello\n", b"err\n", 3, 0, False, False),
          "exec: the create's env, stdout, stderr, exit code: %r" % r)
    r = c.exec.run(sid, ["sh", "-c", "pwd; cat; echo $X"], cwd="/tmp", stdin="in put\n",
                   env={"X": "own"})
    check(r.stdout_text == "/tmp\nin put\nown\n" and r.ok, "exec: cwd, stdin, env: %r" % r)
    r = c.exec.run(sid, ["printf", "\\377\\000"])
    check(r.stdout == b"\xff\x00", "exec: output that is not UTF-8 as bytes: %r" % r)
    r = c.exec.run(sid, ["stty", "size"], tty=True, rows=30, cols=90)
    check(r.stdout_text.strip() == "30 90", "exec: tty of 30x90: %r" % r)
    r = c.exec.run(sid, ["sleep", "60"], timeout_s=1)
    check(r.timed_out and not r.ok, "exec: timeout_s 1 on sleep 60 -> timed_out: %r" % r)
    expect_error(lambda: c.exec.run(sid, []), 400, "invalid_argument", "cmd", "exec with cmd []")
    expect_error(lambda: c.exec.run(sid, ["no-such-program-x"]), 404, "not_found",
                 "no-such-program-x", "exec of a program not in PATH")
    expect_error(lambda: c.exec.run("sb_nosuchsandbox0", ["true"]), 404, "not_found",
                 "sb_nosuchsandbox0", "exec in an unknown sandbox")

    # Streamed: the second line is written only once the client has the
    # first (it creates /tmp/go when it sees "one"): a client that handed
    # nothing out before the end would wait out the timeout.
    if c.files.exists(sid, "/tmp/go"):
        c.files.remove(sid, "/tmp/go")
    events = []
    with c.exec.stream(sid, ["sh", "-c", "echo one; while [ ! -e /tmp/go ]; do sleep 0.1; done;"
                             " echo two >&2; exit 4"], timeout_s=120) as s:
        for ev in s:
            events.append(ev)
            if ev == Output("stdout", b"one\n"):
                c.files.write(sid, "/tmp/go", "")
    check(events == [Output("stdout", b"one\n"), Output("stderr", b"two\n"), Exit(4, 0, False)],
          "exec stream: stdout, then stderr once asked for, then the exit: %r" % events)
    out, err, ex = gather(c.exec.stream(sid, ["sh", "-c", "printf '\\377'; echo e >&2"]))
    check((out, err, ex) == (b"\xff", b"e\n", Exit(0, 0, False)),
          "exec stream: bytes that are not UTF-8: %r" % ((out, err, ex),))
    r = c.exec.stream(sid, ["sh", "-c", "seq 1 3; exit 7"]).collect()
    check(r.stdout == b"1\n2\n3\n" and r.exit_code == 7, "exec stream collect: %r" % r)
    expect_error(lambda: c.exec.stream("sb_nosuchsandbox0", ["true"]), 404, "not_found",
                 "sb_nosuchsandbox0", "exec stream in an unknown sandbox")


def check_processes(c, sid):
    p = c.processes.start(sid, ["cat"], stdin_open=True)
    check(isinstance(p, Process) and p.pid > 0 and p.running and p.cmd == ["cat"],
          "process start: %r" % p)
    c.processes.write_stdin(sid, p.pid, "hello\n")
    c.processes.write_stdin(sid, p.pid, b"\xfe\n")
    c.processes.close_stdin(sid, p.pid)
    out, err, ex = gather(c.processes.output(sid, p.pid))
    check(out == b"hello\n\xfe\n" and ex == Exit(0, 0, False),
          "process output: what was written to stdin, then the exit: %r" % ((out, ex),))
    listed = c.processes.get(sid, p.pid)
    check(listed is not None and not listed.running and listed.exit_code == 0,
          "process list: exited with 0: %r" % listed)

    p = c.processes.start(sid, ["sleep", "300"])
    c.processes.signal(sid, p.pid, "TERM")
    _, _, ex = gather(c.processes.output(sid, p.pid))
    check(ex is not None and ex.signal == 15, "process signal TERM: ended by 15: %r" % ex)
    expect_error(lambda: c.processes.signal(sid, p.pid, "BOGUS"), 400, "invalid_argument",
                 "BOGUS", "signal BOGUS")

    p = c.processes.start(sid, ["sh", "-c", "read x; stty size"], stdin_open=True, tty=True,
                          rows=24, cols=80)
    c.processes.resize(sid, p.pid, 40, 100)
    c.processes.write_stdin(sid, p.pid, "\n")
    out, _, ex = gather(c.processes.output(sid, p.pid))
    check(b"40 100" in out and ex is not None and ex.exit_code == 0,
          "process resize to 40x100, seen by stty: %r" % ((out, ex),))
    q = c.processes.start(sid, ["sleep", "300"])
    expect_error(lambda: c.processes.resize(sid, q.pid, 10, 10), 409, "conflict", "",
                 "resize of a process without a tty")
    c.processes.signal(sid, q.pid, "KILL")
    expect_error(lambda: c.processes.output(sid, 999999), 404, "not_found", "999999",
                 "output of an unknown pid")
    pids = [x.pid for x in c.processes.list(sid)]
    check(p.pid in pids and q.pid in pids, "process list holds them: %s" % pids)


def check_files(c, sid):
    big = os.urandom(3 * 1024 * 1024 + 17)
    c.files.upload(sid, "/root/big.bin", io.BytesIO(big))  # chunked
    out = io.BytesIO()
    n = c.files.download(sid, "/root/big.bin", out)
    check(n == len(big) and out.getvalue() == big, "upload (chunked) and download of 3 MiB")
    st = c.files.stat(sid, "/root/big.bin")
    check(isinstance(st, FileInfo) and (st.name, st.type, st.size, st.mode & 0o777)
          == ("big.bin", "file", len(big), 0o644), "stat: %r" % st)
    with tempfile.TemporaryFile() as f:
        f.write(b"from a real file\n")
        f.seek(0)
        c.files.upload(sid, "/root/real.txt", f)  # with Content-Length
    check(c.files.read(sid, "/root/real.txt") == b"from a real file\n", "upload of a real file")
    r = c.exec.run(sid, ["sha256sum", "/root/big.bin"])
    check(r.stdout_text.split(" ")[0] == hashlib.sha256(big).hexdigest(),
          "the guest sees the uploaded bytes")
    c.files.mkdir(sid, "/root/d1/d2", parents=True)
    expect_error(lambda: c.files.mkdir(sid, "/root/d1/d2"), 409, "conflict", "", "mkdir again")
    c.files.mkdir(sid, "/root/d1/m700", mode=0o700)
    check(c.files.stat(sid, "/root/d1/m700").mode & 0o777 == 0o700, "mkdir with mode 0700")
    c.files.write(sid, "/root/d1/d2/f.txt", "text")
    names = sorted(e.name for e in c.files.list(sid, "/root/d1"))
    check(names == ["d2", "m700"], "list: %s" % names)
    check([(e.name, e.type, e.size) for e in c.files.list(sid, "/root/d1/d2")]
          == [("f.txt", "file", 4)], "list of d2")
    c.files.rename(sid, "/root/d1/d2/f.txt", "/root/d1/g.txt")
    check(not c.files.exists(sid, "/root/d1/d2/f.txt")
          and c.files.read(sid, "/root/d1/g.txt") == b"text", "rename")
    expect_error(lambda: c.files.remove(sid, "/root/d1"), 409, "conflict", "",
                 "remove of a non-empty directory without recursive")
    c.files.remove(sid, "/root/d1", recursive=True)
    check(not c.files.exists(sid, "/root/d1"), "remove recursive")
    c.files.remove(sid, "/root/real.txt")
    check(not c.files.exists(sid, "/root/real.txt"), "remove a file")
    expect_error(lambda: c.files.read(sid, "/root/nope"), 404, "not_found", "",
                 "download of a missing file")
    expect_error(lambda: c.files.stat(sid, "relative"), 400, "invalid_argument", "path",
                 "stat of a relative path")
    expect_error(lambda: c.files.upload("sb_nosuchsandbox0", "/root/x", io.BytesIO(b"x" * 100000)),
                 404, "not_found", "sb_nosuchsandbox0", "upload into an unknown sandbox")


def check_checkpoints(c, sid):
    c.files.write(sid, "/root/mark", "before")
    cp = c.checkpoints.create(sid, "c1")
    check(isinstance(cp, Checkpoint) and (cp.name, cp.kind) == ("c1", "disk"),
          "checkpoint create: %r" % cp)
    expect_error(lambda: c.checkpoints.create(sid, "c1"), 409, "conflict", "c1",
                 "checkpoint with a name taken")
    check([x.name for x in c.checkpoints.list(sid)] == ["c1"], "checkpoint list")
    c.files.write(sid, "/root/mark", "after")
    sb = c.checkpoints.restore(sid, "c1")
    check(sb.state == "running", "restore: running again: %r" % sb)
    check(c.files.read(sid, "/root/mark") == b"before", "restore: the file as checkpointed")
    expect_error(lambda: c.checkpoints.restore(sid, "nope"), 404, "not_found", "nope",
                 "restore of an unknown checkpoint")
    c.checkpoints.delete(sid, "c1")
    check(c.checkpoints.list(sid) == [], "checkpoint delete")
    expect_error(lambda: c.checkpoints.delete(sid, "c1"), 404, "not_found", "c1",
                 "checkpoint delete again")


def check_fork(c, sid):
    forks = c.sandboxes.fork(sid, count=1)
    check(len(forks) == 1 and forks[0].id != sid and forks[0].state == "running",
          "fork: one running sandbox: %r" % forks)
    if forks:
        f = forks[0].id
        check(c.files.read(f, "/root/mark") == b"before", "the fork has the parent's files")
        c.files.write(f, "/root/mark", "fork")
        check(c.files.read(sid, "/root/mark") == b"before", "the parent keeps its own")
        c.sandboxes.delete(f)
        gone = poll(lambda: f not in [s.id for s in c.sandboxes.list()])
        check(gone, "the deleted fork leaves the list")
    expect_error(lambda: c.sandboxes.fork(sid, count=17), 400, "invalid_argument", "count",
                 "fork of 17")


def check_ports(c, sid):
    """A server in the sandbox: listed, and fetched through the gateway
    by its signed URL (a private port) with urllib."""
    c.processes.start(sid, ["python3", "-m", "http.server", "8000", "--directory", "/root"])
    ports = poll(lambda: [p for p in c.ports.list(sid) if p.port == 8000])
    check(bool(ports) and ports[0].reachable and ports[0].url.startswith("http://8000-"),
          "ports.list: 8000 listening, reachable: %r" % ports)
    url = c.ports.url(sid, 8000, expires_in_s=300)
    check("airlock_signature=" in url.url and url.expires_at is not None,
          "ports.url: signed: %r" % url)
    sb = c.sandboxes.get(sid)
    check(not sb.public_ports and sb.traffic_token.startswith("tt_") and
          any(p.port == 8000 for p in sb.ports), "the sandbox shows its token and ports: %r"
          % sb.ports)
    # The URL's host name is <port>-<id>.localhost: sent to the gateway
    # with that Host (this test machine need not resolve it).
    parts = urllib.parse.urlsplit(URL)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=120)
    conn.request("GET", "/", headers={"Host": urllib.parse.urlsplit(url.url).netloc,
                                      "Airlock-Traffic-Token": sb.traffic_token})
    resp = conn.getresponse()
    body = resp.read()
    conn.close()
    check(resp.status == 200 and b"mark" in body, "a port fetched through the gateway: %s %r"
          % (resp.status, body[:100]))


def check_watch(c, sid):
    c.files.mkdir(sid, "/root/watched")
    with c.watch.directory(sid, "/root/watched") as events:
        c.files.write(sid, "/root/watched/a.txt", "x")
        seen = None
        for ev in events:
            if ev.path == "/root/watched/a.txt" and ev.type == "create":
                seen = ev
                break
    check(seen is not None and not seen.is_dir, "watch.directory: the file's create: %r" % seen)
    expect_error(lambda: c.watch.directory(sid, "/root/no-such-dir"), 404, "not_found",
                 "/root/no-such-dir", "watch of a missing directory")


def check_lifecycle(c, sid):
    check(c.sandboxes.pause(sid).state == "paused", "pause")
    expect_error(lambda: c.exec.run(sid, ["true"]), 409, "conflict", "paused", "exec when paused")
    expect_error(lambda: c.sandboxes.pause(sid), 409, "conflict", "paused", "pause when paused")
    check(c.sandboxes.resume(sid).state == "running", "resume from paused")
    check(c.exec.run(sid, ["true"]).ok, "exec after resume")
    check(c.sandboxes.suspend(sid).state == "suspended", "suspend")
    check(c.sandboxes.get(sid).state == "suspended", "get: suspended")
    check(c.sandboxes.resume(sid).state == "running", "resume from suspended")
    check(c.files.read(sid, "/root/mark") == b"before", "the disk kept across suspend")


def check_templates(c):
    ts = c.templates.list()
    check(isinstance(ts, list) and all(isinstance(t, Template) for t in ts),
          "templates list: %r" % ts)
    expect_error(lambda: c.templates.get("no-such-template"), 404, "not_found",
                 "no-such-template", "template get of an unknown one")


def main():
    key = new_project_key("pyclient")
    c = Client(URL, key)
    sb = check_sandboxes(c, key)
    try:
        check_exec(c, sb.id)
        check_processes(c, sb.id)
        check_files(c, sb.id)
        check_checkpoints(c, sb.id)
        check_fork(c, sb.id)
        check_ports(c, sb.id)
        check_watch(c, sb.id)
        check_lifecycle(c, sb.id)
        check_templates(c)
    except AirlockError as e:
        check(False, "unexpected AirlockError: %s" % e)
        raise
    finally:
        c.sandboxes.delete(sb.id)
    check(poll(lambda: sb.id not in [s.id for s in c.sandboxes.list()]), "delete: gone from list")
    if failures:
        print("%d check(s) failed:" % len(failures))
        for f in failures:
            print("  " + f)
        sys.exit(1)
    print("all checks passed")


if __name__ == "__main__":
    main()
