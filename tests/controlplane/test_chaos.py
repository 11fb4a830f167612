#!/usr/bin/python3
"""In-flight work when a service dies (scheduler/README.md "Faults").

For each service in turn (gateway, scheduler, vmhost, egress, vault,
nats-server, PostgreSQL): two creates, an exec and a suspend start at once,
and the service is killed (SIGKILL; PostgreSQL: an immediate stop, its
crash) once the database shows them under way (creating, suspending).
The node has no warm pool and the suspended sandbox has memory written,
so that creates and the suspend take long enough to be caught. Then:

- every request returned, a success or an error a person can read (JSON
  with a code and a message; 503 or 504 for a dependency, never 500), and
  not a silence: the client gives up after CLIENT_LIMIT_S, far above the
  10 s the code keeps to, and a request that had to be given up fails the
  test. The time each one took is printed, not asserted;
- the service is started again, and each create is retried with its
  Idempotency-Key: the retry answers one sandbox, never a second;
- within reconciliation, the database and the node agree: no row left in
  a transitional state, every running/paused/suspended row's VM in that
  state on the node, no error row whose VM still runs, no VM without a
  live row.

argv[1]: vmhostctl, to read the node's own list."""
import http.client
import json
import os
import subprocess
import sys
import threading
import time

from rest_client import URL, call, check, control, new_project_key, poll, psql, report_and_exit

SERVICES = ["gateway", "scheduler", "vmhost", "egress", "vault", "nats", "postgres"]
CLIENT_LIMIT_S = 30
TRANSIENT = ("creating", "suspending", "resuming", "deleting")
VMHOST_ADDR = os.environ["AIRLOCK_TEST_VMHOST_ADDR"]


class Op(threading.Thread):
    """One REST request in a thread of its own: how it ended, and when."""

    def __init__(self, name, method, path, key, body=None, headers=None):
        super().__init__(daemon=True)
        self.name_, self.method, self.path, self.body = name, method, path, body
        self.headers = dict(headers or {}, Authorization="Bearer " + key)
        self.status, self.answer, self.dropped, self.elapsed = None, None, None, None

    def run(self):
        started = time.monotonic()
        try:
            conn = http.client.HTTPConnection(URL.hostname, URL.port, timeout=CLIENT_LIMIT_S)
            conn.request(self.method, self.path, body=json.dumps(self.body or {}),
                         headers=self.headers)
            resp = conn.getresponse()
            data = resp.read()
            self.status = resp.status
            self.answer = json.loads(data) if data else {}
        except Exception as e:  # noqa: BLE001 - how it broke is the result
            self.dropped = repr(e)
        self.elapsed = time.monotonic() - started

    def outcome(self):
        if self.dropped:
            return "dropped (%s)" % self.dropped
        message = self.answer.get("error", {}).get("message", "") if self.status >= 400 else ""
        return "%s %s" % (self.status, message)


def answered_clearly(op, service):
    """A success, or an error with a code and a message and the status of
    a dependency; a dropped connection only when the gateway itself died.
    A request still open at CLIENT_LIMIT_S shows as a timeout: a fail."""
    if op.dropped:
        return service == "gateway" and "timed out" not in op.dropped
    if op.status < 400:
        return True
    err = op.answer.get("error", {}) if isinstance(op.answer, dict) else {}
    return bool(err.get("code")) and bool(err.get("message")) and op.status in (409, 503, 504)


def create_op(key, idem):
    return Op("create", "POST", "/v1/sandboxes", key, body={"metadata": {"chaos": idem}},
              headers={"Idempotency-Key": idem})


def create_running(key, what):
    st, _, sb = call("POST", "/v1/sandboxes", key=key, body={})
    check(st == 201 and sb.get("state") == "running", "%s: %s %s" % (what, st, sb))
    return sb.get("id") if st == 201 else None


def under_way(suspend_id, keys):
    """Whether the database shows both creates and the suspend in flight."""
    out = psql("SELECT count(*) FROM sandboxes WHERE (state = 'creating'"
               " AND metadata->>'chaos' IN (:'k1', :'k2'))"
               " OR (id = :'sid' AND state = 'suspending')", k1=keys[0], k2=keys[1],
               sid=suspend_id)
    return out.strip() == "3"


def node_list():
    """{id: state} from the node's own list, or None."""
    out = subprocess.run([sys.argv[1], "--addr", VMHOST_ADDR, "--json", "ls"],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        return None
    return {sb["id"]: sb["state"].lower() for sb in json.loads(out.stdout or "[]")}


def db_rows():
    """{id: state} of the rows not deleted, or None."""
    out = psql("SELECT id || ' ' || state FROM sandboxes WHERE state <> 'deleted'")
    if "ERROR" in out or out.startswith("psql:"):
        return None
    return dict(line.split(" ", 1) for line in out.splitlines() if " " in line)


def disagreements():
    """What keeps the database and the node apart (empty: they agree)."""
    rows, node = db_rows(), node_list()
    if rows is None or node is None:
        return ["cannot read %s" % ("the database" if rows is None else "the node's list")]
    found = []
    for sid, state in rows.items():
        on_node = node.get(sid)
        if state in TRANSIENT:
            found.append("%s left %s" % (sid, state))
        elif state in ("running", "paused", "suspended") and on_node != state:
            found.append("%s is %s in the database, %s on the node" % (sid, state, on_node))
        elif state == "error" and on_node in ("running", "paused"):
            found.append("%s is error but its VM is %s" % (sid, on_node))
    found += ["VM %s (%s) has no live row" % (sid, s) for sid, s in node.items() if sid not in rows]
    return found


def one_sandbox_per_key(key, idem):
    """The retry of a create answers the sandbox the key made, and only
    one sandbox carries the key."""
    got = poll(lambda: (lambda r: r if r[0] not in (503, 504) else None)(
        call("POST", "/v1/sandboxes", key=key, body={"metadata": {"chaos": idem}},
             headers={"Idempotency-Key": idem})), 60, 1)
    st, _, sb = got if got else (None, None, {})
    check(st in (200, 201) and sb.get("id"),
          "the retried create with key %s answers a sandbox: %s %s" % (idem, st, sb))
    _, _, listing = call("GET", "/v1/sandboxes", key=key)
    same = [s["id"] for s in listing.get("sandboxes", [])
            if s.get("metadata", {}).get("chaos") == idem]
    check(same == [sb.get("id")], "one sandbox for key %s, the retry's: %s" % (idem, same))


def delete_all(key):
    """Deletes every sandbox of the project, as a client would: again
    while the answer is 503 (a service just back)."""
    _, _, listing = call("GET", "/v1/sandboxes", key=key)
    for sb in listing.get("sandboxes", []):
        path = "/v1/sandboxes/" + sb["id"]
        check(poll(lambda: call("DELETE", path, key=key)[0] in (204, 404), 60, 1),
              "deleted %s" % sb["id"])


def round_for(service, key, timings):
    exec_id = create_running(key, "a sandbox to exec in before killing %s" % service)
    suspend_id = create_running(key, "a sandbox to suspend before killing %s" % service)
    if not exec_id or not suspend_id:
        return
    # Written memory is what a suspend writes out: it takes a while.
    st, _, r = call("POST", "/v1/sandboxes/%s/exec" % suspend_id, key=key,
                    body={"cmd": ["sh", "-c", "head -c 200000000 /dev/zero > /dev/shm/fill"]})
    check(st == 200 and r.get("exit_code") == 0, "memory written before the suspend: %s" % r)
    keys = ["%s-%d-%d" % (service, i, os.getpid()) for i in (1, 2)]
    ops = [create_op(key, keys[0]), create_op(key, keys[1]),
           Op("exec", "POST", "/v1/sandboxes/%s/exec" % exec_id, key,
              body={"cmd": ["sh", "-c", "sleep 3; echo done"]}),
           Op("suspend", "POST", "/v1/sandboxes/%s/suspend" % suspend_id, key)]
    for op in ops:
        op.start()
    caught = poll(lambda: under_way(suspend_id, keys), 10, 0.02)
    print("  %s: %s" % (service, "all under way" if caught else "not all seen under way"),
          flush=True)
    check(control("kill " + service), "killed %s with creates, an exec and a suspend in flight"
          % service)
    for op in ops:
        op.join(CLIENT_LIMIT_S + 5)
        timings.append((service, op.name_, op.elapsed, op.outcome()))
        print("  %s killed: %s took %.1f s: %s" % (service, op.name_, op.elapsed or -1,
                                                   op.outcome()), flush=True)
        check(answered_clearly(op, service),
              "%s killed: the %s returned a clear answer: %s" % (service, op.name_, op.outcome()))
    check(control("start " + service), "%s started again" % service)
    for idem in keys:
        one_sandbox_per_key(key, idem)
    left = poll(lambda: not disagreements(), 180, 1)
    check(left, "%s killed: the database and the node agree again: %s"
          % (service, disagreements()))
    delete_all(key)
    check(poll(lambda: not disagreements(), 120, 1),
          "after %s: the round's sandboxes deleted on both sides: %s" % (service, disagreements()))


def main():
    _, key = new_project_key("chaos")
    timings = []
    for service in SERVICES:
        round_for(service, key, timings)
    print("time to an answer per killed service and operation (s):")
    for service, op, elapsed, outcome in timings:
        print("  %-9s %-7s %5.1f  %s" % (service, op, elapsed or -1, outcome[:160]))


if __name__ == "__main__":
    main()
    report_and_exit()
