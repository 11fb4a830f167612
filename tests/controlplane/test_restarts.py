#!/usr/bin/python3
"""Restarts in the middle of streams, through a real stack (cp_harness).

- The scheduler restarts while an exec streams (SSE) and /v1/events is
  open: neither stream depends on it (exec bytes go gateway <-> vmhost,
  events come from NATS), so both carry on; afterwards requests work.
- The gateway restarts (TERM: it must exit 0) while an exec streams and
  /v1/events is open: each stream ends with an "error" event saying the
  gateway is shutting down (never a silent cut, never an exit event that
  did not happen); afterwards the sandbox still runs and a new gateway
  serves new streams.
Bounded waits only; nothing asserts speed."""
import http.client
import json
import threading

from rest_client import (URL, EventStream, call, check, control, new_project_key, poll,
                         report_and_exit)


class ExecStream:
    """POST .../exec as SSE, read by a thread: events and how it ended."""

    def __init__(self, key, sid, cmd):
        self.events = []
        self.ended = None  # "eof" (the stream's proper end) or the exception
        self.status = None
        self.thread = threading.Thread(target=self._run, args=(key, sid, cmd), daemon=True)
        self.thread.start()

    def _run(self, key, sid, cmd):
        try:
            conn = http.client.HTTPConnection(URL.hostname, URL.port, timeout=300)
            conn.request("POST", "/v1/sandboxes/%s/exec" % sid, body=json.dumps({"cmd": cmd}),
                         headers={"Authorization": "Bearer " + key,
                                  "Accept": "text/event-stream"})
            resp = conn.getresponse()
            self.status = resp.status
            event = None
            for line in resp:
                line = line.decode().rstrip("\n")
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: ") and event:
                    self.events.append((event, json.loads(line[6:])))
                    event = None
            self.ended = "eof"
        except Exception as e:  # noqa: BLE001 - how it broke is the result
            self.ended = repr(e)

    def started(self):
        return any(e[0] == "stdout" for e in self.events)

    def join(self, limit_s=300):
        self.thread.join(limit_s)
        return not self.thread.is_alive()


def exec_ok(key, sid):
    try:
        st, _, r = call("POST", "/v1/sandboxes/%s/exec" % sid, key=key, body={"cmd": ["echo", "hi"]})
    except OSError:
        return False
    return st == 200 and r.get("stdout") == "hi\n"


def open_streams(key, sid, cmd, what):
    """/v1/events and an exec stream, both live, before what restarts."""
    events = EventStream(key)
    check(events.subscribed, "event stream open before the %s restart" % what)
    run = ExecStream(key, sid, cmd)
    check(poll(run.started, 120), "the exec is streaming before the %s restart" % what)
    return events, run


def check_scheduler_restart(key, sid):
    events, run = open_streams(key, sid, ["sh", "-c", "echo begin; sleep 4; echo end"], "scheduler")
    check(control("restart scheduler"), "the scheduler restarted (clean stop, new process)")
    check(run.join() and run.ended == "eof", "the exec stream ran to its end: %s" % run.ended)
    out = "".join(e[1].get("data", "") for e in run.events if e[0] == "stdout")
    check(out == "begin\nend\n" and run.events[-1][0] == "exit"
          and run.events[-1][1]["exit_code"] == 0,
          "the exec finished normally across the scheduler restart: %s" % run.events)
    check(poll(lambda: exec_ok(key, sid), 60), "exec works after the scheduler restart")
    st, _, got = call("POST", "/v1/sandboxes/%s/pause" % sid, key=key)
    check(st == 200 and got.get("state") == "paused", "pause through the new scheduler")
    seen = events.wait_for(lambda e: e[1].get("id") == sid and e[1].get("state") == "paused")
    check(any(e[1].get("state") == "paused" for e in seen),
          "the event stream opened before the restart still delivers")
    st, _, got = call("POST", "/v1/sandboxes/%s/resume" % sid, key=key)
    check(st == 200 and got.get("state") == "running", "resume")
    events.close()


def check_gateway_restart(key, sid):
    events, run = open_streams(key, sid, ["sh", "-c", "echo begin; sleep 600"], "gateway")
    check(control("restart gateway"), "the gateway stopped cleanly (exit 0) and started again")
    check(run.join(60), "the exec stream ended when the gateway stopped")
    kinds = [e[0] for e in run.events]
    last = run.events[-1] if run.events else ("", {})
    check(run.ended == "eof" and "exit" not in kinds and last[0] == "error"
          and last[1]["error"]["code"] == "unavailable"
          and "shutting down" in last[1]["error"]["message"],
          "the exec stream ended with an error event saying why: %s %s" % (run.ended, run.events))
    got = events.wait_for(lambda e: e[0] == "error", limit_s=60)
    check(got and got[-1][0] == "error" and got[-1][1]["error"]["code"] == "unavailable",
          "the event stream ended with an error event: %s" % got)
    st, _, sb = call("GET", "/v1/sandboxes/" + sid, key=key)
    check(st == 200 and sb.get("state") == "running", "the sandbox still runs")
    st, _, r = call("POST", "/v1/sandboxes/%s/exec" % sid, key=key,
                    body={"cmd": ["sh", "-c", "cat /proc/[0-9]*/comm | grep -x sleep || echo none"]})
    check(st == 200 and r.get("stdout") == "none\n",
          "the interrupted command was stopped, not left behind: %s" % r)
    events2 = EventStream(key)
    check(events2.subscribed, "the new gateway serves event streams")
    run2 = ExecStream(key, sid, ["sh", "-c", "echo again"])
    check(run2.join() and run2.events and run2.events[-1][0] == "exit",
          "the new gateway streams exec output: %s" % run2.events)
    call("POST", "/v1/sandboxes/%s/pause" % sid, key=key)
    seen = events2.wait_for(lambda e: e[1].get("id") == sid and e[1].get("state") == "paused")
    check(any(e[1].get("state") == "paused" for e in seen), "events flow through the new gateway")
    events.close()
    events2.close()


def main():
    _, key = new_project_key("restarts")
    st, _, sb = call("POST", "/v1/sandboxes", key=key, body={})
    check(st == 201 and sb.get("state") == "running", "create a sandbox: %s %s" % (st, sb))
    if st != 201:
        return
    check_scheduler_restart(key, sb["id"])
    check_gateway_restart(key, sb["id"])
    st, _, _ = call("DELETE", "/v1/sandboxes/" + sb["id"], key=key)
    check(st == 204, "delete the sandbox")


if __name__ == "__main__":
    main()
    report_and_exit()
