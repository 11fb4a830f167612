"""Helpers shared by the control-plane tests (standard library only): REST
calls against the gateway named by AIRLOCK_URL, checks that record
failures, SSE parsing, and a background reader for /v1/events."""
import http.client
import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
import urllib.parse

URL = urllib.parse.urlparse(os.environ["AIRLOCK_URL"])
ADMIN = os.environ["AIRLOCK_ADMIN_KEY"]
failures = []


def call(method, path, key=None, body=None, headers=None, raw=False):
    """(status, headers, body): body parsed as JSON unless raw."""
    conn = http.client.HTTPConnection(URL.hostname, URL.port, timeout=600)
    h = dict(headers or {})
    if key:
        h["Authorization"] = "Bearer " + key
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
    elif isinstance(body, str):
        body = body.encode()
    conn.request(method, path, body=body, headers=h)
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    if raw or not data:
        return resp.status, resp.headers, data
    try:
        return resp.status, resp.headers, json.loads(data)
    except ValueError:
        return resp.status, resp.headers, data


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def node_checks(script, env, name, at_least, timeout):
    """Runs a Node.js program that prints check()'s "ok   "/"FAIL " lines,
    relays each as a check of this test under name, and checks that it ran
    to its end with at least at_least of them."""
    proc = subprocess.run(["node", script], env=env, capture_output=True, text=True,
                          timeout=timeout)
    lines = [l for l in proc.stdout.splitlines() if l.startswith(("ok   ", "FAIL "))]
    for line in lines:
        check(line.startswith("ok   "), "%s: %s" % (name, line[5:]))
    check(proc.returncode == 0 and len(lines) >= at_least,
          "the %s program ran to its end (rc %s, %d checks; stderr %s)"
          % (name, proc.returncode, len(lines), proc.stderr[-2000:]))


def report_and_exit():
    """Lists the failed checks; exit status 1 if any."""
    if failures:
        print("%d check(s) failed:" % len(failures))
        for f in failures:
            print("  " + f)
        sys.exit(1)
    print("all checks passed")


def expect_error(status, body, want_status, want_code, fragment, what):
    ok = (status == want_status and isinstance(body, dict) and "error" in body
          and body["error"].get("code") == want_code
          and fragment in body["error"].get("message", ""))
    check(ok, "%s -> %d %s mentioning %r (got %s %s)" % (what, want_status, want_code, fragment,
                                                      status, body))


def sse_events(text):
    events = []
    for block in text.decode().split("\n\n"):
        lines = dict(l.split(": ", 1) for l in block.split("\n") if ": " in l)
        if "event" in lines:
            events.append((lines["event"], json.loads(lines["data"])))
    return events


def psql(sql, **params):
    """Runs sql in the stack's PostgreSQL (AIRLOCK_TEST_DATABASE_URL), as
    someone with write access to the tables but not to the services would;
    params are psql variables (:'name' in sql). Its command tag ("UPDATE
    1"), or the error."""
    args = ["psql", "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d",
            os.environ["AIRLOCK_TEST_DATABASE_URL"]]
    for k, v in params.items():
        args += ["-v", "%s=%s" % (k, v)]
    r = subprocess.run(args, input=sql, capture_output=True, text=True, timeout=60)
    return (r.stdout + r.stderr).strip()


def control(command):
    """Asks cp_harness to restart a part of the stack (cp_control.h);
    True when it answered "ok"."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(os.environ["AIRLOCK_TEST_CONTROL"])
        s.sendall(command.encode() + b"\n")
        answer = s.makefile().readline()
    print("control: %s -> %s" % (command, answer.strip()), flush=True)
    return answer.startswith("ok")


def poll(fn, limit_s=180, every_s=0.25):
    """Calls fn until it returns something true, and returns that (or the
    last value after limit_s). limit_s only bounds a hang; it asserts
    nothing about speed."""
    deadline = time.monotonic() + limit_s
    while True:
        value = fn()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(every_s)


def vmhost_log_says(sid, needle):
    """Whether cp_harness's vmhost logged a line about sandbox sid holding
    needle ("from=pool": the create took a warm-pool VM)."""
    log = os.path.join(os.environ["AIRLOCK_TEST_VMHOST_DIR"], "vmhost.log")
    with open(log, errors="replace") as f:
        return any("sandbox=%s " % sid in line and needle in line for line in f)


def vmhost_log_count(needle):
    """How many lines of cp_harness's vmhost log hold needle."""
    log = os.path.join(os.environ["AIRLOCK_TEST_VMHOST_DIR"], "vmhost.log")
    with open(log, errors="replace") as f:
        return sum(needle in line for line in f)


def pool_ready(template, want):
    """Whether GET /v1/templates/{template}/warm-pool (admin) shows want
    as the ready count of every node (want=0) or of some node (want>0)."""
    st, _, b = call("GET", "/v1/templates/%s/warm-pool" % template, key=ADMIN)
    ready = [n.get("ready", 0) for n in b.get("nodes", [])] if st == 200 else []
    return bool(ready) and (all(r == 0 for r in ready) if want == 0 else
                            any(r >= want for r in ready))


def new_project_key(name):
    """A fresh project and an API key for it (admin calls)."""
    st, _, p = call("POST", "/v1/projects", key=ADMIN, body={"name": name})
    st2, _, k = call("POST", "/v1/projects/%s/keys" % p["id"], key=ADMIN, body={})
    if st != 201 or st2 != 201:
        raise RuntimeError("cannot create project %s: %s %s" % (name, p, k))
    return p["id"], k["key"]


def collect_until(q, received, match, limit_s=120):
    """Moves items from queue q (None ends it) to the list received until
    match(item) is true for one of them; received. limit_s only bounds a
    hang (a missing item fails the caller's check), it asserts nothing
    about speed."""
    while not any(match(e) for e in received):
        try:
            item = q.get(timeout=limit_s)
        except queue.Empty:
            break
        if item is None:
            break
        received.append(item)
    return received


class EventStream:
    """GET /v1/events read by a thread; events() waits for what arrived.
    status is the HTTP status; the constructor returns once the stream's
    first line (the ": subscribed" comment) is in, so events committed from
    then on are delivered."""

    def __init__(self, key):
        self.conn = http.client.HTTPConnection(URL.hostname, URL.port, timeout=600)
        self.conn.request("GET", "/v1/events", headers={"Authorization": "Bearer " + key,
                                                         "Accept": "text/event-stream"})
        self.resp = self.conn.getresponse()
        self.status = self.resp.status
        self.queue = queue.Queue()
        self.received = []
        self.subscribed = False
        if self.status == 200:
            self.subscribed = self.resp.readline().startswith(b": subscribed")
            threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        event = None
        try:
            for line in self.resp:
                line = line.decode().rstrip("\n")
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: ") and event:
                    self.queue.put((event, json.loads(line[6:])))
                    event = None
        except Exception:  # noqa: BLE001 - close() pulled the socket from under the reader
            pass
        self.queue.put(None)

    def wait_for(self, match, limit_s=120):
        """Collects events until match(event) is true; the events so far."""
        return collect_until(self.queue, self.received, match, limit_s)

    def close(self):
        self.conn.close()
