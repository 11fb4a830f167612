#!/usr/bin/python3
"""The scheduler's controllers end to end, through the public API of a real
stack (cp_harness: PostgreSQL, nats-server, vmhost with real VMs,
scheduler, gateway) whose scheduler runs --controller-interval-ms=300
--idle-timeout-s=7200 --reconcile-interval-s=3 --reconcile-grace-s=1.
argv[1]: vmhostctl, to see the node's side and make a VM the database does
not know.

Idle auto-suspend and what postpones it, the hard TTL, reconciliation (a
killed VM, a vmhost restart that lost sandboxes, a VM no row knows), a
delete while the sandbox's node is gone,
warm-pool targets and a pool following demand up to its ceiling,
leader election between two schedulers (the leader killed by pid), and a
PostgreSQL restart. Waits are bounded polls; nothing asserts how fast."""
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys

from rest_client import (ADMIN, EventStream, call, check, control, expect_error, new_project_key,
                         poll, psql, report_and_exit, vmhost_log_count, vmhost_log_says)

STACK = os.environ["AIRLOCK_TEST_STACK_DIR"]
VMHOST_SOCK = "unix:%s/vmhost.sock" % os.environ["AIRLOCK_TEST_VMHOST_DIR"]


def try_call(*args, **kwargs):
    """call() that answers (0, None, None) while the gateway is unreachable."""
    try:
        return call(*args, **kwargs)
    except OSError:
        return 0, None, None


def state_of(sid, key):
    st, _, body = try_call("GET", "/v1/sandboxes/" + sid, key=key)
    if st == 404:
        return "gone"
    return body.get("state") if st == 200 else None


def wait_state(sid, key, want, limit_s=180):
    """Polls until the sandbox is in state want ("gone" = 404); the last state."""
    got = poll(lambda: state_of(sid, key) == want and want, limit_s)
    return want if got else state_of(sid, key)


def create(key, **body):
    st, _, sb = call("POST", "/v1/sandboxes", key=key, body=body)
    check(st == 201 and sb.get("state") == "running", "create %s: %s %s" % (body, st, sb))
    return sb if st == 201 else None


def log_text(name):
    with open(os.path.join(STACK, name), errors="replace") as f:
        return f.read()


def check_bad_input(key):
    for payload, fragment in [({"ttl_s": "soon"}, "ttl_s"), ({"ttl_s": -1}, "ttl_s"),
                              ({"ttl_s": 10 ** 9}, "ttl_s"),
                              ({"idle_timeout_s": 10 ** 9}, "idle_timeout_s")]:
        st, _, body = call("POST", "/v1/sandboxes", key=key, body=payload)
        expect_error(st, body, 400, "invalid_argument", fragment, "create with %s" % payload)


def check_idle(key, events):
    """idle_timeout_s=3: suspended by the controller, with its events; a
    global default from --idle-timeout-s; an exec longer than the timeout
    keeps a sandbox running."""
    sb = create(key, idle_timeout_s=3)
    if not sb:
        return
    check(sb["idle_timeout_s"] == 3 and sb["ttl_s"] == 0, "create shows idle_timeout_s and ttl_s")
    check(wait_state(sb["id"], key, "suspended") == "suspended",
          "an idle sandbox is suspended by the controller")
    got = events.wait_for(lambda e: e[1].get("id") == sb["id"] and e[1].get("state") == "suspended")
    mine = [(e[1]["previous"], e[1]["state"]) for e in got if e[1].get("id") == sb["id"]]
    check(("running", "suspending") in mine and ("suspending", "suspended") in mine,
          "the idle suspend published its transitions: %s" % mine)
    st, _, got = call("POST", "/v1/sandboxes/%s/resume" % sb["id"], key=key)
    check(st == 200 and got.get("state") == "running", "an idle-suspended sandbox resumes")
    st, _, r = call("POST", "/v1/sandboxes/%s/exec" % sb["id"], key=key, body={"cmd": ["true"]})
    check(st == 200 and r.get("exit_code") == 0, "exec after resuming from idle suspend")
    call("DELETE", "/v1/sandboxes/" + sb["id"], key=key)

    default = create(key)
    if default:
        check(default["idle_timeout_s"] == 7200,
              "without idle_timeout_s the scheduler's --idle-timeout-s applies: %s" % default)
        call("DELETE", "/v1/sandboxes/" + default["id"], key=key)

    busy = create(key, idle_timeout_s=3)
    if not busy:
        return
    # 8 s of silence inside one exec: an exec in flight is activity.
    st, _, r = call("POST", "/v1/sandboxes/%s/exec" % busy["id"], key=key,
                    body={"cmd": ["sleep", "8"]})
    check(st == 200 and r.get("exit_code") == 0, "a silent 8 s exec ran to its end: %s %s" % (st, r))
    check(state_of(busy["id"], key) == "running",
          "an exec longer than idle_timeout_s kept the sandbox running")
    check(wait_state(busy["id"], key, "suspended") == "suspended",
          "once activity stops the sandbox is suspended")
    call("DELETE", "/v1/sandboxes/" + busy["id"], key=key)


def check_ttl(key, events):
    sb = create(key, ttl_s=3, idle_timeout_s=3600)
    if not sb:
        return
    check(sb["ttl_s"] == 3, "create shows ttl_s")
    check(wait_state(sb["id"], key, "gone") == "gone", "a sandbox past its ttl_s is deleted")
    got = events.wait_for(lambda e: e[1].get("id") == sb["id"] and e[1].get("state") == "deleted")
    check(any(e[1].get("id") == sb["id"] and e[1].get("state") == "deleted" for e in got),
          "the TTL delete published its event")


def sandbox_dir(sid):
    """The sandbox's directory in the vmhost's store, or None."""
    for root, dirs, _ in os.walk(os.environ["AIRLOCK_TEST_VMHOST_DIR"]):
        if os.path.basename(root) == "sandboxes" and sid in dirs:
            return os.path.join(root, sid)
    return None


def qemu_pid(sid):
    out = vmhostctl("get", sid)
    return json.loads(out.stdout).get("qemu_pid", 0) if out.returncode == 0 else 0


def check_error_says(sid, key, fragment, what):
    check(wait_state(sid, key, "error") == "error", "reconciliation marks %s error" % what)
    st, _, got = call("GET", "/v1/sandboxes/" + sid, key=key)
    error = got.get("error", "") if st == 200 else ""
    check(fragment in error and "cp-node" in error, "%s: the error says why: %s" % (what, error))
    st, _, _ = call("DELETE", "/v1/sandboxes/" + sid, key=key)
    check(st == 204, "%s can be deleted" % what)


def check_reconcile(key):
    """What PostgreSQL says against what the node reports: a VM killed
    under a running vmhost; across a vmhost restart a VM that died and a
    suspended sandbox whose files vanished (the node no longer has it),
    while a healthy sandbox is re-adopted and left alone; a VM no row
    knows is deleted."""
    killed = create(key)
    if killed:
        pid = qemu_pid(killed["id"])
        check(pid > 0, "the node reports the VM's QEMU pid")
        if pid > 0:
            os.kill(pid, 9)  # a QEMU of this test's own vmhost
        check_error_says(killed["id"], key, "failed", "a sandbox whose VM was killed")

    died, lost, healthy = create(key), create(key), create(key)
    if not died or not lost or not healthy:
        return
    st, _, got = call("POST", "/v1/sandboxes/%s/suspend" % lost["id"], key=key)
    check(st == 200 and got.get("state") == "suspended", "suspend before the vmhost restart")
    pid = qemu_pid(died["id"])
    lost_dir = sandbox_dir(lost["id"])
    check(pid > 0 and lost_dir, "found the VM and the suspended sandbox's files")
    check(control("kill vmhost"), "vmhost killed (kill -9: its VMs keep running)")
    try:
        if pid > 0:
            os.kill(pid, 9)
        if lost_dir:
            shutil.rmtree(lost_dir)
        check(control("start vmhost"), "vmhost started again on the same data directory")
        check_error_says(died["id"], key, "gone", "a sandbox whose VM died while vmhost was down")
        check_error_says(lost["id"], key, "lost", "a sandbox the restarted node does not have")
    finally:
        # The forgotten sandbox's network namespace is still there: no
        # vmhost knows it any more, so the test that made it removes it.
        subprocess.run(["ip", "netns", "delete", "airlock-" + lost["id"]], check=False,
                       capture_output=True)
    check(state_of(healthy["id"], key) == "running", "the re-adopted sandbox is still running")
    st, _, r = call("POST", "/v1/sandboxes/%s/exec" % healthy["id"], key=key,
                    body={"cmd": ["echo", "ok"]})
    check(st == 200 and r.get("stdout") == "ok\n", "the re-adopted sandbox runs commands")
    call("DELETE", "/v1/sandboxes/" + healthy["id"], key=key)

    # A failed sandbox whose VM still runs on the node (a create that timed
    # out at the scheduler and finished there later): reconciliation
    # deletes the VM and the row stays error for its owner to delete.
    failed = create(key)
    if failed:
        tag = psql("UPDATE sandboxes SET state = 'error', error = 'a create that timed out'"
                   " WHERE id = :'id'", id=failed["id"])
        check(tag == "UPDATE 1", "the row says error while the node runs the VM (%s)" % tag)
        check(poll(lambda: not node_has(failed["id"]), 120),
              "reconciliation deleted the VM of the sandbox in error")
        check(state_of(failed["id"], key) == "error", "and the row stays error")
        # Logged once the node answered the delete: a moment after the VM
        # is gone from the node's list.
        check(poll(lambda: "a failed sandbox's VM still ran on the node"
                   in log_text("scheduler.log"), 30),
              "the scheduler says why it deleted that VM")
        st, _, _ = call("DELETE", "/v1/sandboxes/" + failed["id"], key=key)
        check(st == 204, "the sandbox in error is then deleted by its owner")

    out = vmhostctl("create", "--id", "sb_stray")
    check(out.returncode == 0 and node_has("sb_stray"),
          "a VM made behind the scheduler's back: %s" % out.stderr)
    check(poll(lambda: not node_has("sb_stray"), 120),
          "reconciliation deleted the VM no row knows")


def check_node_gone(key):
    """A sandbox whose node went silent (vmhost killed, no heartbeats) can
    still be deleted once the node counts as gone; when the node comes
    back with the VM, reconciliation deletes it."""
    sb = create(key)
    if not sb:
        return
    sid = sb["id"]
    check(control("kill vmhost"), "vmhost killed: its node stops heartbeating")
    try:
        # Refused (503) while the node may only be late; accepted once it
        # has been silent past --node-dead-after (10 s).
        deleted = poll(lambda: try_call("DELETE", "/v1/sandboxes/" + sid, key=key)[0] == 204, 120)
        check(deleted, "a sandbox on a gone node can be deleted")
        check(state_of(sid, key) == "gone", "and is gone from the API")
        check("sandbox deleted without its node" in log_text("scheduler.log")
              and sid in log_text("scheduler.log"), "the scheduler says why it deleted it alone")
    finally:
        check(control("start vmhost"), "vmhost back on the same data directory")
    check(poll(lambda: not node_has(sid), 120),
          "the returned node's VM of the deleted sandbox is deleted by reconciliation")


def vmhostctl(*args):
    return subprocess.run([sys.argv[1], "--addr", VMHOST_SOCK, "--json"] + list(args),
                          capture_output=True, text=True, check=False)


def node_has(sandbox_id):
    out = vmhostctl("ls")
    return out.returncode == 0 and sandbox_id in out.stdout


def check_warm_pool(key):
    path = "/v1/templates/default/warm-pool"
    st, _, body = call("PUT", path, key=key, body={"target": 1})
    expect_error(st, body, 403, "permission_denied", "admin", "a project key setting a pool")
    for payload, fragment in [({}, "target"), ({"target": "1"}, "target"),
                              ({"target": 65}, "target"), ({"size": 1}, "size")]:
        st, _, body = call("PUT", path, key=ADMIN, body=payload)
        expect_error(st, body, 400, "invalid_argument", fragment, "PUT warm-pool %s" % payload)
    st, _, body = call("PUT", "/v1/templates/nope/warm-pool", key=ADMIN, body={"target": 1})
    expect_error(st, body, 404, "not_found", "nope", "warm pool of an unknown template")
    st, _, body = call("GET", "/v1/templates/nope/warm-pool", key=ADMIN)
    expect_error(st, body, 404, "not_found", "nope", "GET warm pool of an unknown template")
    st, _, body = call("GET", path, key=ADMIN)
    check(st == 200 and body.get("target") is None, "no target before one is set: %s" % body)

    st, _, body = call("PUT", path, key=ADMIN, body={"target": 1})
    check(st == 200 and body.get("template") == "default" and body.get("target") == 1,
          "PUT warm-pool target 1: %s %s" % (st, body))

    def pool_on_node(target, ready):
        st, _, body = call("GET", path, key=ADMIN)
        nodes = body.get("nodes", []) if st == 200 else []
        return body if [(n["node"], n["target"], n["ready"]) for n in nodes] == \
            [("cp-node", target, ready)] else None
    check(poll(lambda: pool_on_node(1, 1)), "the node keeps one VM ready: %s"
          % (call("GET", path, key=ADMIN)[2],))
    # This stack's vmhost keeps a spare QEMU per pool in use
    # (--warm-pool-spares 1): the first spare became the ready VM, the
    # second waits. Of two creates at once one takes the ready VM, the
    # other restores into the spare.
    check(poll(lambda: vmhost_log_count("warm pool spare QEMU ready") >= 2),
          "the node starts a spare QEMU beside its ready VM")
    with concurrent.futures.ThreadPoolExecutor(2) as clients:
        pair = [sb for sb in clients.map(lambda _: create(key), range(2)) if sb]
    check(len(pair) == 2, "two creates at once with one VM ready: %s" % pair)
    paths = sorted("pool" if vmhost_log_says(sb["id"], "from=pool") else
                   "spare" if vmhost_log_says(sb["id"], "qemu=prestarted") else "other"
                   for sb in pair)
    check(paths == ["pool", "spare"], "one from the pool, one into the spare QEMU: %s" % paths)
    for sb in pair:  # the pool refills in the background
        call("DELETE", "/v1/sandboxes/" + sb["id"], key=key)
    st, _, body = call("PUT", path, key=ADMIN, body={"target": 0})
    check(st == 200 and body.get("target") == 0, "PUT warm-pool target 0")
    check(poll(lambda: pool_on_node(0, 0)), "the node empties its pool")


def check_pool_follows_demand(key):
    """A ceiling set through the API; a burst of creates raises the node's
    target above its floor of 0, visible in GET warm-pool with the demand
    and the ready VMs' memory; a floor above the ceiling is refused naming
    both; without a ceiling the node's own (none here) empties it again."""
    path = "/v1/templates/default/warm-pool"
    st, _, body = call("PUT", path, key=ADMIN, body={"target": 3, "max": 2})
    expect_error(st, body, 400, "invalid_argument", "target: 3 is above max 2",
                 "a floor above the ceiling")
    st, _, body = call("PUT", path, key=ADMIN, body={"target": 0, "max": 65})
    expect_error(st, body, 400, "invalid_argument", "max", "a ceiling past 64")
    st, _, body = call("PUT", path, key=ADMIN, body={"target": 0, "max": 3})
    check(st == 200 and body.get("target") == 0 and body.get("max") == 3,
          "PUT warm-pool target 0 max 3: %s %s" % (st, body))

    def node_pool():
        st, _, body = call("GET", path, key=ADMIN)
        nodes = body.get("nodes", []) if st == 200 else []
        return nodes[0] if len(nodes) == 1 else {}
    check(poll(lambda: node_pool().get("max") == 3 and node_pool().get("min") == 0),
          "the node takes the floor and the ceiling: %s" % node_pool())
    with concurrent.futures.ThreadPoolExecutor(4) as clients:
        results = list(clients.map(lambda _: create(key), range(4)))
    # 4 creates within a second or two: a peak of at least 2/s, whose 3 s
    # ahead (6 VMs) the ceiling cuts to 3.
    risen = poll(lambda: (lambda n: n.get("demand_per_s", 0) >= 2 and n)(node_pool()))
    check(risen and risen["target"] == 3,
          "after a burst of 4 creates the target rose to the ceiling: %s" % risen)
    full = poll(lambda: (lambda n: n.get("ready", 0) >= 1 and n)(node_pool()))
    check(full and full["memory_bytes"] == full["ready"] * 512 * 1024 * 1024,
          "its ready VMs and their memory (512 MiB each): %s" % full)
    for sb in results:
        if sb:
            call("DELETE", "/v1/sandboxes/" + sb["id"], key=key)
    st, _, body = call("PUT", path, key=ADMIN, body={"target": 0})
    check(st == 200 and body.get("max") is None, "PUT without max: %s" % body)
    check(poll(lambda: node_pool().get("max") == 0 and node_pool().get("ready") == 0),
          "back to the node's own ceiling (its floor, 0) the pool empties: %s" % node_pool())


def check_leader_election(key):
    """Two schedulers on one database: one leads; killing it by pid hands
    the controllers to the other."""
    check("controller leadership acquired" in log_text("scheduler.log"),
          "the first scheduler leads")
    check(control("start standby"), "a second scheduler starts")
    check(poll(lambda: "controller standing by" in log_text("scheduler2.log"), 60),
          "the second scheduler stands by")
    check("controller leadership acquired" not in log_text("scheduler2.log"),
          "only one scheduler runs the controllers")

    check(control("kill scheduler"), "the leader is killed (SIGKILL, by pid)")
    check(poll(lambda: "controller leadership acquired" in log_text("scheduler2.log"), 60),
          "the standby takes over the controllers")
    check(control("start scheduler"), "the first scheduler starts again")
    check(poll(lambda: try_call("GET", "/v1/sandboxes", key=key)[0] == 200, 60),
          "the API answers through the restarted scheduler")
    def newest_instance_log():
        return log_text("scheduler.log").rsplit("controllers started", 1)[-1]
    check(poll(lambda: "controller standing by" in newest_instance_log(), 60)
          and "leadership acquired" not in newest_instance_log(),
          "the restarted scheduler stands by")
    sb = create(key, idle_timeout_s=3)
    if sb:
        check(wait_state(sb["id"], key, "suspended") == "suspended",
              "the new leader suspends an idle sandbox")
        call("DELETE", "/v1/sandboxes/" + sb["id"], key=key)


def check_postgres_restart(key):
    sb = create(key, idle_timeout_s=3600)
    check(control("restart postgres"), "PostgreSQL restarted")
    check(poll(lambda: try_call("GET", "/v1/sandboxes", key=key)[0] == 200, 120),
          "the API answers again after the PostgreSQL restart")
    if sb:
        check(state_of(sb["id"], key) == "running", "the sandbox is still running")
        call("DELETE", "/v1/sandboxes/" + sb["id"], key=key)
    idle = create(key, idle_timeout_s=3)
    if idle:
        check(wait_state(idle["id"], key, "suspended") == "suspended",
              "controllers run again after the PostgreSQL restart (leadership re-taken)")
        call("DELETE", "/v1/sandboxes/" + idle["id"], key=key)
    # A scheduler that crashed meanwhile fails the harness's clean stop.


def main():
    _, key = new_project_key("controllers")
    events = EventStream(key)
    check(events.status == 200 and events.subscribed, "event stream open")
    check_bad_input(key)
    check_idle(key, events)
    check_ttl(key, events)
    check_warm_pool(key)
    check_pool_follows_demand(key)
    check_reconcile(key)
    check_node_gone(key)
    check_leader_election(key)
    check_postgres_restart(key)
    events.close()
    st, _, lst = call("GET", "/v1/sandboxes", key=key)
    check(st == 200 and [s for s in lst["sandboxes"] if s["state"] != "error"] == [],
          "nothing left running: %s" % json.dumps(lst))


if __name__ == "__main__":
    main()
    report_and_exit()
