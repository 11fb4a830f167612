#!/usr/bin/python3
"""Directory watches end to end: REST GET /v1/sandboxes/{id}/files/watch
(SSE) and gRPC Sandboxes.WatchDir, through a real gateway, scheduler and
vmhost down to guestd's inotify in a real VM, sharing one sandbox. Files
change by exec; the events must arrive (writes coalesced), recursive vs
not, an overflow (a burst past the guest's queue), bad input, the
per-sandbox cap, and closing a stream must remove the guest's watch
(guestd is PID 1: its inotify fds are counted in /proc/1/fd).

usage: test_watch.py PROTO_DIR STUB_DIR

No timing assertions: every bound only stops a hang."""
import datetime
import http.client
import json
import os
import queue
import socket
import sys
import threading

import grpc

import grpc_stubs
from rest_client import URL, call, check, new_project_key, poll, report_and_exit

PROTO_DIR, STUB_DIR = sys.argv[1], sys.argv[2]
grpc_stubs.generate(PROTO_DIR, STUB_DIR, ["airlock/v1/sandboxes.proto"])
from airlock.v1 import sandboxes_pb2 as pb, sandboxes_pb2_grpc  # noqa: E402

LIMIT_S = 300
CAP = 32  # guest/watch.c WATCH_MAX_PER_GUEST


class Watch:
    """One REST watch read by a thread; status and, on an error, body.
    Returns once the "start" event is in, so changes from then on count."""

    def __init__(self, key, sid, path, recursive=None):
        self.conn = http.client.HTTPConnection(URL.hostname, URL.port, timeout=LIMIT_S)
        self.conn.connect()
        # The response's file keeps the socket open past conn.close():
        # close() shuts it down through this reference.
        self.sock = self.conn.sock
        q = "path=" + path + ("&recursive=" + recursive if recursive else "")
        self.conn.request("GET", "/v1/sandboxes/%s/files/watch?%s" % (sid, q),
                          headers={"Authorization": "Bearer " + key,
                                   "Accept": "text/event-stream"})
        self.resp = self.conn.getresponse()
        self.status = self.resp.status
        self.queue = queue.Queue()
        self.events = []
        self.start = None
        if self.status != 200:
            self.body = json.loads(self.resp.read() or b"{}")
            return
        self.start = self._next()
        threading.Thread(target=self._read, daemon=True).start()

    def _next(self):
        """The next (event, data), or None at the end; comments skipped."""
        event = None
        for line in self.resp:
            line = line.decode().rstrip("\n")
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event:
                return event, json.loads(line[6:])
        return None

    def _read(self):
        try:
            while True:
                e = self._next()
                self.queue.put(e)
                if e is None:
                    return
        except Exception:  # noqa: BLE001 - close() pulled the socket away
            self.queue.put(None)

    def wait_for(self, match):
        """Collects events until match((event, data)); whether it came."""
        if any(match(e) for e in self.events):
            return True
        while True:
            try:
                e = self.queue.get(timeout=LIMIT_S)
            except queue.Empty:
                return False
            if e is None:
                return False
            self.events.append(e)
            if match(e):
                return True

    def count(self, type_, path):
        return sum(1 for ev, d in self.events if ev == type_ and d.get("path") == path)

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # the gateway ended it already
        self.conn.close()


def main():
    _, key = new_project_key("watch")
    st, _, sb = call("POST", "/v1/sandboxes", key=key, body={})
    check(st == 201, "create a sandbox: %s %s" % (st, sb))
    sid = sb["id"]
    base = "/v1/sandboxes/" + sid

    def sh(cmd, quiet=False):
        st, _, r = call("POST", base + "/exec", key=key, body={"cmd": ["sh", "-c", cmd]})
        ok = st == 200 and r.get("exit_code") == 0
        if not (ok and quiet):
            check(ok, "exec %r: %s" % (cmd[:60], r if not ok else "ok"))
        return r.get("stdout", "") if isinstance(r, dict) else ""

    def inotify_fds():
        out = sh("ls -l /proc/1/fd | grep -c anon_inode:inotify || true", quiet=True)
        return int(out.strip() or "0")

    sh("mkdir -p /root/w /root/r /root/g /root/o && touch /root/plain")
    baseline = inotify_fds()

    check_bad_input(key, sid, base)
    check_events(key, sid, sh)
    check_recursive(key, sid, sh)
    check_cap_and_release(key, sid, inotify_fds, baseline)
    check_overflow(key, sid, base, sh)
    check_grpc(key, sid, sh)
    check(poll(lambda: inotify_fds() == baseline, limit_s=LIMIT_S),
          "every closed watch's inotify instance is gone from guestd (%d)" % baseline)
    check(call("DELETE", base, key=key)[0] in (200, 204), "delete the sandbox")
    report_and_exit()


def expect(w, status, code, fragment, what):
    ok = (w.status == status and w.body.get("error", {}).get("code") == code
          and fragment in w.body["error"].get("message", ""))
    check(ok, "%s -> %d %s naming %r (got %s %s)" % (what, status, code, fragment, w.status,
                                                    getattr(w, "body", None)))


def check_bad_input(key, sid, base):
    expect(Watch(key, "sb_" + "0" * 24, "/root"), 404, "not_found", "", "an unknown sandbox")
    expect(Watch(key, sid, "root/w"), 400, "invalid_argument", "path", "a relative path")
    expect(Watch(key, sid, "/root/nope"), 404, "not_found", "/root/nope", "a missing directory")
    expect(Watch(key, sid, "/root/plain"), 400, "invalid_argument", "/root/plain", "a file")
    expect(Watch(key, sid, "/root/w", recursive="maybe"), 400, "invalid_argument", "recursive",
           "recursive neither true nor false")
    st, _, _ = call("POST", base + "/pause", key=key)
    check(st == 200, "pause")
    expect(Watch(key, sid, "/root/w"), 409, "conflict", "paused", "a paused sandbox")
    st, _, _ = call("POST", base + "/resume", key=key)
    check(st == 200, "resume")


def is_rfc3339(s):
    try:
        datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))
        return True
    except (TypeError, ValueError):
        return False


def check_events(key, sid, sh):
    w = Watch(key, sid, "/root/w")
    check(w.status == 200 and w.start and w.start[0] == "start"
          and w.start[1].get("path") == "/root/w", "watch /root/w starts: %s" % (w.start,))
    sh("cd /root/w && exec 3>a && for i in $(seq 200); do echo x >&3; done; exec 3>&-; "
       "mv a b; chmod 600 b; rm b; mkdir sub; touch sub/inner; touch marker")
    check(w.wait_for(lambda e: e[0] == "create" and e[1]["path"] == "/root/w/marker"),
          "the marker's create arrives")
    writes = w.count("write", "/root/w/a")
    check(1 <= writes < 200, "200 writes to one file coalesce (%d write events)" % writes)
    for type_, path in [("create", "/root/w/a"), ("rename", "/root/w/a"), ("create", "/root/w/b"),
                        ("remove", "/root/w/b"), ("create", "/root/w/sub")]:
        check(w.count(type_, path) == 1, "one %s of %s" % (type_, path))
    check(w.count("chmod", "/root/w/b") >= 1, "chmod of /root/w/b")
    check(not any(d.get("path") == "/root/w/sub/inner" for _, d in w.events),
          "non-recursive: nothing from below the directory")
    check(all(ev == d["type"] and isinstance(d["is_dir"], bool) and is_rfc3339(d["time"])
              for ev, d in w.events), "every event: type, path, is_dir, RFC 3339 time")
    check([d["is_dir"] for _, d in w.events if d["path"] == "/root/w/sub"] == [True],
          "a directory's create says is_dir")
    w.close()


def check_recursive(key, sid, sh):
    w = Watch(key, sid, "/root/r", recursive="true")
    check(w.status == 200, "recursive watch starts")
    # Created before or after guestd adds their directory's watch, every
    # one is reported (a new directory's entries are walked).
    sh("mkdir -p /root/r/x/y && touch /root/r/x/y/f /root/r/x/later /root/r/marker")
    check(w.wait_for(lambda e: e[0] == "create" and e[1]["path"] == "/root/r/marker"),
          "recursive: the marker's create arrives")
    for path in ["/root/r/x", "/root/r/x/y", "/root/r/x/y/f", "/root/r/x/later"]:
        check(w.count("create", path) >= 1, "recursive: create of %s" % path)
    w.close()


def check_cap_and_release(key, sid, inotify_fds, baseline):
    # The watches closed before are gone once the gateway noticed (its next
    # write: the node's keepalive).
    check(poll(lambda: inotify_fds() == baseline, limit_s=LIMIT_S),
          "the earlier watches are gone from guestd")
    for round_ in range(2):
        held = [Watch(key, sid, "/root/w") for _ in range(CAP)]
        check(all(w.status == 200 for w in held), "round %d: %d watches at once (%s)"
              % (round_, CAP, [w.status for w in held]))
        over = Watch(key, sid, "/root/w")
        expect(over, 409, "conflict", "too many watches", "round %d: watch %d" % (round_, CAP + 1))
        check(inotify_fds() == baseline + CAP, "round %d: guestd holds %d more inotify fds"
              % (round_, CAP))
        for w in held:
            w.close()
        check(poll(lambda: inotify_fds() == baseline, limit_s=LIMIT_S),
              "round %d: closing the streams removes every guest watch" % round_)


def check_overflow(key, sid, base, sh):
    sh("mkdir /root/o/many && cd /root/o/many && seq 3000 | xargs touch")
    w = Watch(key, sid, "/root/o", recursive="true")
    check(w.status == 200, "recursive watch of /root/o")
    # guestd removes the tree in one go, so its 3000 removes are all in the
    # kernel's queue when it next reads them: past its 1024-event queue.
    st, _, body = call("DELETE", base + "/files?path=/root/o/many&recursive=true", key=key)
    check(st == 204, "remove /root/o/many with 3000 files: %s %s" % (st, body))
    check(w.wait_for(lambda e: e[0] == "overflow"), "an overflow event after the burst")
    ov = [d for ev, d in w.events if ev == "overflow"]
    check(ov and ov[0]["path"] == "/root/o", "overflow names the watched directory: %s" % ov[:1])
    removes = sum(1 for ev, d in w.events if ev == "remove" and d["path"].startswith("/root/o/many/"))
    check(removes < 3000, "events were lost (%d of 3000 removes arrived)" % removes)
    sh("touch /root/o/after")
    check(w.wait_for(lambda e: e[0] == "create" and e[1]["path"] == "/root/o/after"),
          "the stream goes on after an overflow")
    w.close()


def check_grpc(key, sid, sh):
    channel = grpc.insecure_channel(os.environ["AIRLOCK_GRPC_ADDR"])
    stub = sandboxes_pb2_grpc.SandboxesStub(channel)
    md = [("authorization", "Bearer " + key)]
    stream = stub.WatchDir(pb.PathRequest(id=sid, path="/root/g", recursive=True), metadata=md,
                           timeout=LIMIT_S)
    first = next(stream)
    check(first.type == "start" and first.path == b"/root/g", "gRPC WatchDir starts: %s" % first)
    sh("touch /root/g/one && mkdir /root/g/d && touch /root/g/d/two")
    got = []
    for ev in stream:
        got.append((ev.type, ev.path.decode(), ev.is_dir))
        if ev.path == b"/root/g/d/two":
            break
    check(("create", "/root/g/one", False) in got and ("create", "/root/g/d", True) in got
          and ("create", "/root/g/d/two", False) in got, "gRPC events: %s" % got[:8])
    check(is_rfc3339(first.time), "gRPC time is RFC 3339")
    stream.cancel()
    for path, code, what in [("/root/nope", grpc.StatusCode.NOT_FOUND, "a missing directory"),
                             ("/root/plain", grpc.StatusCode.INVALID_ARGUMENT, "a file"),
                             ("root", grpc.StatusCode.INVALID_ARGUMENT, "a relative path")]:
        try:
            next(stub.WatchDir(pb.PathRequest(id=sid, path=path), metadata=md, timeout=LIMIT_S))
            check(False, "gRPC WatchDir of %s fails" % what)
        except grpc.RpcError as e:
            check(e.code() == code and (path in e.details() or "path" in e.details()),
                  "gRPC WatchDir of %s -> %s (%s %s)" % (what, code, e.code(), e.details()))
    channel.close()


if __name__ == "__main__":
    main()
