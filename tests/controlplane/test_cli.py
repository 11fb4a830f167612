#!/usr/bin/python3
"""The airlock CLI against a real stack (cp_harness: gateway, scheduler,
PostgreSQL, nats-server, vmhost with a real VM): exit codes, output and
the advice in its errors. argv[1]: the airlock binary. Standard library
only; no timing assertions; two VMs (one with a volume) and one fork."""
import fcntl
import json
import os
import select
import struct
import subprocess
import sys
import tempfile
import termios
import time

from rest_client import check, new_project_key, report_and_exit

CLI = sys.argv[1]


def airlock(*args, key=None, env_key=True, stdin=None):
    """(exit code, stdout, stderr) of one CLI run; stdin: bytes to feed it."""
    env = dict(os.environ)
    env.pop("AIRLOCK_API_KEY", None)
    if key and env_key:
        env["AIRLOCK_API_KEY"] = key
    p = subprocess.run([CLI] + list(args), input=stdin, capture_output=True, env=env, timeout=600)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def main():
    rc, _, err = airlock("ls")
    check(rc == 2 and "AIRLOCK_API_KEY" in err, "no key: exit 2 naming AIRLOCK_API_KEY (%d %r)" % (rc, err))
    rc, _, err = airlock("--url", "http://127.0.0.1:1", "ls", key="ak_x")
    check(rc == 1 and "cannot reach the gateway" in err, "unreachable gateway: %d %r" % (rc, err))
    rc, _, err = airlock("ls", key="ak_" + "0" * 64)
    check(rc == 1 and "unknown API key" in err and "--key" in err, "unknown key: %d %r" % (rc, err))
    _, key = new_project_key("cli")
    _, other_key = new_project_key("cli-other")
    rc, _, err = airlock("create", "--cpus", "many", key=key)
    check(rc == 2 and "--cpus" in err, "create --cpus many: usage error (%d %r)" % (rc, err))
    rc, _, err = airlock("frobnicate", key=key)
    check(rc == 2 and "unknown command" in err, "unknown command")

    rc, out, err = airlock("create", key=key)
    sid = out.strip()
    check(rc == 0 and sid.startswith("sb_"), "create prints the id: %d %r %r" % (rc, out, err))
    if rc != 0:
        return
    rc, out, err = airlock("--json", "create", "--idle-timeout", "600", "--ttl", "3600",
                           "--checkpoint-every", "600", key=key)
    timed = json.loads(out) if rc == 0 else {}
    check(timed.get("idle_timeout_s") == 600 and timed.get("ttl_s") == 3600
          and timed.get("checkpoint_every_s") == 600,
          "create --idle-timeout --ttl --checkpoint-every: the answer shows them: %d %r %r"
          % (rc, out, err))
    if timed:
        rc, _, err = airlock("rm", timed["id"], key=key)
        check(rc == 0, "rm of the timed sandbox: %d %r" % (rc, err))
    rc, _, err = airlock("create", "--ttl", "-5", key=key)
    check(rc == 2 and "--ttl" in err, "create --ttl -5: usage error (%d %r)" % (rc, err))
    rc, out, _ = airlock("ls", key=key)
    row = [l for l in out.splitlines() if l.startswith(sid)]
    check(rc == 0 and out.startswith("ID") and row and " running " in row[0], "ls: %r" % out)
    rc, out, _ = airlock("--json", "ls", key=key)
    check(rc == 0 and [s["id"] for s in json.loads(out)["sandboxes"]] == [sid], "--json ls")

    rc, out, err = airlock("exec", sid, "--", "sh", "-c", "echo out; echo err >&2; exit 7", key=key)
    check(rc == 7 and out == "out\n" and err == "err\n",
          "exec streams output and exits with the command's code: %d %r %r" % (rc, out, err))
    rc, out, _ = airlock("exec", sid, "--", "sh", "-c", "kill -TERM $$", key=key)
    check(rc == 128 + 15, "exec of a command killed by SIGTERM exits 143 (%d)" % rc)
    rc, out, _ = airlock("--json", "exec", sid, "--", "printf", "hi", key=key)
    result = json.loads(out) if rc == 0 else {}
    check(result.get("stdout") == "hi" and result.get("exit_code") == 0, "--json exec: %r" % out)
    rc, _, err = airlock("exec", sid, "--", "no-such-program", key=key)
    check(rc == 1 and "no-such-program" in err, "exec of a missing program: %d %r" % (rc, err))

    with tempfile.TemporaryDirectory() as tmp:
        local = os.path.join(tmp, "in.bin")
        blob = bytes(range(256)) * 1024 + b"end"
        with open(local, "wb") as f:
            f.write(blob)
        rc, _, err = airlock("cp", local, sid + ":/root/in.bin", key=key)
        check(rc == 0, "cp into the sandbox: %d %r" % (rc, err))
        back = os.path.join(tmp, "back.bin")
        rc, out, err = airlock("--json", "cp", sid + ":/root/in.bin", back, key=key)
        got = open(back, "rb").read() if os.path.exists(back) else b""
        check(rc == 0 and got == blob and json.loads(out)["bytes"] == len(blob),
              "cp out of the sandbox returns the same bytes: %d %r" % (rc, err))
        missing = os.path.join(tmp, "missing.bin")
        rc, _, err = airlock("cp", sid + ":/root/nope", missing, key=key)
        check(rc == 1 and "/root/nope" in err and "airlock ls" not in err
              and sorted(os.listdir(tmp)) == ["back.bin", "in.bin"],
              "cp of a missing file fails and leaves nothing behind: %d %r %s" % (rc, err, os.listdir(tmp)))
        rc, _, err = airlock("cp", local, os.path.join(tmp, "x"), key=key)
        check(rc == 2 and "usage" in err, "cp between two local paths is a usage error")

    rc, out, _ = airlock("pause", sid, key=key)
    check(rc == 0 and out == "%s paused\n" % sid, "pause: %r" % out)
    rc, _, err = airlock("exec", sid, "--", "true", key=key)
    check(rc == 1 and "is paused" in err and "airlock resume %s" % sid in err,
          "exec on a paused sandbox says to resume it: %r" % err)
    rc, _, err = airlock("pause", sid, key=key)
    check(rc == 1 and "pause needs running" in err and "airlock resume %s" % sid in err,
          "pause twice: %r" % err)
    rc, out, _ = airlock("--json", "resume", sid, key=key)
    check(rc == 0 and json.loads(out)["state"] == "running", "--json resume: %r" % out)

    rc, out, err = airlock("checkpoint", sid, "c1", key=key)
    check(rc == 0 and out == "%s checkpoint c1 (disk)\n" % sid, "checkpoint: %d %r %r" % (rc, out, err))
    rc, out, err = airlock("restore", sid, "c1", key=key)
    check(rc == 0 and out == "%s running\n" % sid, "restore: %d %r %r" % (rc, out, err))
    rc, _, err = airlock("restore", sid, "c2", key=key)
    check(rc == 1 and "c2" in err and "airlock ls" not in err,
          "restore of an unknown checkpoint names it: %r" % err)
    rc, _, err = airlock("fork", sid, "--count", "0", key=key)
    check(rc == 2 and "--count" in err, "fork --count 0: usage error (%d %r)" % (rc, err))
    rc, out, err = airlock("fork", sid, key=key)
    fork = out.strip()
    check(rc == 0 and fork.startswith("sb_") and fork != sid, "fork prints the new id: %r %r" % (out, err))
    if fork.startswith("sb_"):
        airlock("rm", fork, key=key)

    rc, _, err = airlock("exec", sid, "--", "true", key=other_key)
    check(rc == 1 and "not found" in err and "airlock ls" in err,
          "another project's key gets not found: %r" % err)
    rc, _, err = airlock("--json", "rm", sid, key=other_key)
    error = json.loads(err.splitlines()[0]).get("error", {}) if err.startswith("{") else {}
    check(rc == 1 and error.get("code") == "not_found", "--json errors are the API's JSON: %r" % err)

    check_logs(sid, key, other_key)
    check_volumes(key)
    check_secrets(key, other_key)
    check_admin(key)
    check_shell(sid, key, other_key)

    rc, out, _ = airlock("rm", sid, key=key)
    check(rc == 0 and out == "%s deleted\n" % sid, "rm: %r" % out)
    rc, _, err = airlock("rm", sid, key=key)
    check(rc == 1 and sid in err, "rm twice: %r" % err)


def check_volumes(key):
    """airlock volume create|ls|get|snapshot|clone|grow|rm and create
    --volume: a sandbox writes a volume, which outlives it."""
    rc, out, err = airlock("volume", "create", "data", "--size", "64", key=key)
    check(rc == 0 and out == "data\n", "volume create prints the name: %d %r %r" % (rc, out, err))
    rc, _, err = airlock("volume", "create", "Bad", "--size", "64", key=key)
    check(rc == 1 and "name" in err, "volume create of a bad name names it: %d %r" % (rc, err))
    rc, _, err = airlock("volume", "create", "x", "--size", "many", key=key)
    check(rc == 2 and "--size" in err, "volume create --size many: usage error (%d %r)" % (rc, err))
    rc, _, err = airlock("create", "--volume", "data", key=key)
    check(rc == 2 and "name:/path" in err, "create --volume without a path: usage (%d %r)" % (rc, err))
    rc, out, err = airlock("create", "--volume", "data:/data", key=key)
    vsid = out.strip()
    check(rc == 0 and vsid.startswith("sb_"), "create --volume data:/data: %d %r %r" % (rc, out, err))
    rc, out, _ = airlock("exec", vsid, "--", "sh", "-c", "echo kept > /data/f && sync && cat /data/f",
                         key=key)
    check(rc == 0 and out == "kept\n", "the sandbox writes the volume: %d %r" % (rc, out))
    rc, out, _ = airlock("volume", "get", "data", key=key)
    check(rc == 0 and out.startswith("data ") and vsid in out, "volume get shows the holder: %r" % out)
    rc, _, err = airlock("volume", "rm", "data", key=key)
    check(rc == 1 and vsid in err, "volume rm while attached names the sandbox: %d %r" % (rc, err))
    rc, out, _ = airlock("volume", "snapshot", "data", "s1", key=key)
    check(rc == 0 and out == "s1\n", "volume snapshot: %d %r" % (rc, out))
    rc, out, _ = airlock("volume", "clone", "data2", "data@s1", key=key)
    check(rc == 0 and out == "data2\n", "volume clone: %d %r" % (rc, out))
    rc, out, _ = airlock("volume", "grow", "data", "--size", "128", key=key)
    check(rc == 0 and " 128 MiB" in out, "volume grow: %d %r" % (rc, out))
    rc, out, _ = airlock("--json", "volume", "ls", key=key)
    names = [v["name"] for v in json.loads(out).get("volumes", [])] if rc == 0 else []
    check(names == ["data", "data2"], "volume ls --json: %r" % out)
    airlock("rm", vsid, key=key)
    rc, out, _ = airlock("volume", "ls", key=key)
    check(rc == 0 and "data " in out and vsid not in out, "the volume outlives its sandbox: %r" % out)
    rc1, _, _ = airlock("volume", "snapshot", "rm", "data", "s1", key=key)
    rc2, _, _ = airlock("volume", "rm", "data2", key=key)
    rc3, _, _ = airlock("volume", "rm", "data", key=key)
    check((rc1, rc2, rc3) == (0, 0, 0), "volume snapshot rm, volume rm: %s" % ((rc1, rc2, rc3),))


def check_secrets(key, other_key):
    """secret set/ls/rm: the value from stdin, never echoed; BYOK unlock of
    a project without its own key is refused with the API's reason."""
    rc, out, err = airlock("secret", "set", "gh", "--host", "api.github.test", "--host",
                           "*.github.test", "--per-minute", "5", key=key, stdin=b"ghp_cli_value\n")
    check(rc == 0 and out.strip().startswith("sec_"), "secret set prints the id: %d %r %r"
          % (rc, out, err))
    rc, out, _ = airlock("secret", "ls", key=key)
    row = [l for l in out.splitlines() if l.startswith("gh ")]
    hosts = set(row[0].split()[-1].split(",")) if row else set()
    check(rc == 0 and hosts == {"api.github.test", "*.github.test"}
          and "ghp_cli_value" not in out, "secret ls: %r" % out)
    rc, out, _ = airlock("--json", "secret", "ls", key=key)
    listed = json.loads(out)["secrets"] if rc == 0 else []
    check([s["name"] for s in listed] == ["gh"] and listed[0]["rate_limit"]["per_minute"] == 5
          and not listed[0]["bindings"][0]["plaintext"], "--json secret ls: %r" % out)
    rc, out, err = airlock("--json", "secret", "set", "plain", "--host", "plain.test",
                           "--plaintext", key=key, stdin=b"v-plain\n")
    made = json.loads(out) if rc == 0 else {}
    check(rc == 0 and all(b["plaintext"] for b in made.get("bindings", [{}])),
          "secret set --plaintext: its bindings say plaintext: %d %r %r" % (rc, out, err))
    rc, _, _ = airlock("secret", "rm", "plain", key=key)
    check(rc == 0, "secret rm plain")
    rc, out, _ = airlock("secret", "ls", key=other_key)
    check(rc == 0 and "gh " not in out, "another project's key does not see it: %r" % out)
    rc, _, err = airlock("secret", "set", "empty", "--host", "x.test", key=key, stdin=b"")
    check(rc == 2 and "stdin" in err, "secret set without a value: usage error (%d %r)" % (rc, err))
    rc, _, err = airlock("secret", "set", "nohost", key=key, stdin=b"v")
    check(rc == 2 and "--host" in err, "secret set without --host: usage error (%d %r)" % (rc, err))
    rc, _, err = airlock("secret", "set", "bad host", "--host", "x.test", key=key, stdin=b"v")
    check(rc == 1 and "name" in err, "secret set with a bad name: the API's reason: %r" % err)
    with tempfile.TemporaryDirectory() as tmp:
        key_file = os.path.join(tmp, "key")
        with open(key_file, "w") as f:
            f.write("ab" * 32 + "\n")
        rc, _, err = airlock("secret", "unlock", "--key-file", key_file, key=key)
        check(rc == 1 and "unlock" in err, "unlock of a project on vault's key: %d %r" % (rc, err))
        with open(key_file, "w") as f:
            f.write("not hex")
        rc, _, err = airlock("secret", "unlock", "--key-file", key_file, key=key)
        check(rc == 2 and "64 hex" in err, "unlock with a malformed key file: %r" % err)
    rc, out, err = airlock("secret", "rm", "gh", key=key)
    check(rc == 0 and "gh deleted" in out, "secret rm: %d %r %r" % (rc, out, err))
    rc, _, err = airlock("secret", "rm", "gh", key=key)
    check(rc == 1 and "gh" in err, "secret rm twice: %r" % err)


def check_admin(key):
    """project and key commands with the admin key: a project, a key whose
    secret is printed once and works, listed without its secret, revoked;
    a project key is refused with the API's reason."""
    admin = os.environ["AIRLOCK_ADMIN_KEY"]
    rc, out, err = airlock("project", "create", "cli-admin", key=admin)
    pid = out.strip()
    check(rc == 0 and pid.startswith("prj_"), "project create prints the id: %d %r %r" % (rc, out, err))
    rc, out, _ = airlock("project", "ls", key=admin)
    check(rc == 0 and any(l.startswith(pid) and "cli-admin" in l for l in out.splitlines()),
          "project ls: %r" % out)
    rc, out, err = airlock("key", "create", pid, "--name", "bot", key=admin)
    secret = out.strip()
    check(rc == 0 and secret.startswith("ak_") and "key_" in err, "key create: %d %r %r"
          % (rc, out, err))
    key_id = err.split()[1] if rc == 0 else ""
    rc, _, _ = airlock("ls", key=secret)
    check(rc == 0, "the new key works")
    rc, out, _ = airlock("--json", "key", "ls", pid, key=admin)
    keys = json.loads(out)["keys"] if rc == 0 else []
    check([k["id"] for k in keys] == [key_id] and secret not in out, "key ls: %r" % out)
    rc, out, err = airlock("key", "rm", pid, key_id, key=admin)
    check(rc == 0 and "revoked" in out, "key rm: %d %r %r" % (rc, out, err))
    rc, _, err = airlock("ls", key=secret)
    check(rc == 1 and "unknown API key" in err, "the revoked key is refused: %r" % err)
    rc, _, err = airlock("key", "rm", pid, key_id, key=admin)
    check(rc == 1 and "revoked already" in err, "key rm twice: %r" % err)
    rc, _, err = airlock("project", "ls", key=key)
    check(rc == 1 and "admin" in err, "project ls with a project key: %r" % err)
    rc, _, err = airlock("key", "create", key=admin)
    check(rc == 2 and "usage" in err, "key create without a project: usage error (%d %r)"
          % (rc, err))


def check_logs(sid, key, other_key):
    marker = "cli-console-%d" % os.getpid()
    # tcdrain: echo would return before the guest's UART sent the bytes.
    airlock("exec", sid, "--", "python3", "-c",
            "import os, termios; fd = os.open('/dev/console', os.O_WRONLY); "
            "os.write(fd, b'%s\\n'); termios.tcdrain(fd)" % marker, key=key)
    rc, out, err = airlock("logs", "--tail", "4096", sid, key=key)
    check(rc == 0 and marker in out, "logs prints the console: %d %r %r" % (rc, out[-200:], err))
    rc, out, _ = airlock("--json", "logs", sid, key=key)
    check(rc == 0 and marker in json.loads(out).get("log", ""), "--json logs: %r" % out[-200:])
    rc, _, err = airlock("logs", "--tail", "0", sid, key=key)
    check(rc == 2 and "--tail" in err, "logs --tail 0: usage error (%d %r)" % (rc, err))
    rc, _, err = airlock("logs", sid, key=other_key)
    check(rc == 1 and sid in err and "airlock ls" in err, "logs with another key: %r" % err)


class Terminal:
    """airlock shell on a pseudo-terminal of 33x101, read by select."""

    def __init__(self, args, key):
        self.master, self.slave = os.openpty()
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack("HHHH", 33, 101, 0, 0))
        self.mode_before = termios.tcgetattr(self.slave)
        env = dict(os.environ, AIRLOCK_API_KEY=key, TERM="xterm")
        self.proc = subprocess.Popen([CLI] + args, stdin=self.slave, stdout=self.slave,
                                     stderr=self.slave, env=env, start_new_session=True)
        self.output = b""

    def read_until(self, want, limit_s=120):
        """Reads until want is in the output or the bound passes (which
        only stops a hang; the caller's check fails)."""
        deadline = time.monotonic() + limit_s
        while want.encode() not in self.output and time.monotonic() < deadline:
            ready, _, _ = select.select([self.master], [], [], 1)
            if ready:
                try:
                    self.output += os.read(self.master, 65536)
                except OSError:
                    break
        return want.encode() in self.output

    def send(self, data):
        os.write(self.master, data)

    def finish(self):
        """(exit code, terminal mode restored)."""
        try:
            rc = self.proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        restored = termios.tcgetattr(self.slave) == self.mode_before
        os.close(self.master)
        os.close(self.slave)
        return rc, restored


def check_shell(sid, key, other_key):
    t = Terminal(["shell", sid], key)
    t.send(b"stty size; echo hi-$((40+2)); exit 3\n")
    seen = t.read_until("hi-42")
    rc, restored = t.finish()
    check(seen and b"33 101" in t.output and rc == 3 and restored,
          "shell runs what is typed on a PTY of our size and exits with its code, terminal "
          "restored: %d %s %r" % (rc, restored, t.output[-300:]))

    t = Terminal(["shell", sid], key)
    t.send(b"sleep 100\n")
    running = False
    for _ in range(120):
        if airlock("exec", sid, "--", "pgrep", "-x", "sleep", key=key)[0] == 0:
            running = True
            break
        time.sleep(0.5)
    t.send(b"\x03")
    # An interrupted job also ends the rest of its command line (and the
    # PTY drops typeahead): ask once sleep is gone.
    for _ in range(120):
        if airlock("exec", sid, "--", "pgrep", "-x", "sleep", key=key)[0] == 1:
            break
        time.sleep(0.5)
    t.send(b"echo rc=$?\n")
    interrupted = t.read_until("rc=130")
    t.send(b"exit 0\n")
    rc, restored = t.finish()
    check(running and interrupted and rc == 0 and restored,
          "Ctrl-C in the shell interrupts sleep (rc=130), the shell goes on: %s %s %d %r"
          % (running, interrupted, rc, t.output[-300:]))
    rc, _, _ = airlock("exec", sid, "--", "pgrep", "-x", "sleep", key=key)
    check(rc == 1, "no sleep left behind")

    rc, _, err = airlock("shell", sid, key=other_key)
    check(rc == 1 and sid in err and "airlock ls" in err, "shell with another key: %r" % err)
    rc, _, err = airlock("shell", key=key)
    check(rc == 2 and "usage" in err, "shell without an id: usage error")
    airlock("pause", sid, key=key)
    rc, _, err = airlock("shell", sid, key=key)
    check(rc == 1 and "is paused" in err and "airlock resume %s" % sid in err,
          "shell on a paused sandbox says to resume it: %r" % err)
    airlock("resume", sid, key=key)


if __name__ == "__main__":
    main()
    report_and_exit()
