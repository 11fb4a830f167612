#!/usr/bin/python3
"""The client type-checks: mypy (Debian's python3-mypy, installed by
scripts/install-deps.sh) --strict on the airlock package, and the tests'
use of it with --check-untyped-defs. A program calling the client wrongly
must be refused too, so a mypy that checks nothing fails here. argv[1]:
clients/python."""
import os
import subprocess
import sys
import tempfile

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
failures = []


def mypy(*args):
    env = dict(os.environ, MYPYPATH=ROOT)
    with tempfile.TemporaryDirectory() as cache:
        r = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", cache, *args],
                           cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
    return r.returncode, (r.stdout + r.stderr).strip()


def check(cond, what, out):
    print(("ok   " if cond else "FAIL ") + what + "\n  " + out.replace("\n", "\n  "), flush=True)
    if not cond:
        failures.append(what)


def main():
    rc, out = mypy("--version")
    if rc != 0:
        print("mypy is missing (%s): run scripts/install-deps.sh (as root)" % out)
        sys.exit(1)
    rc, out = mypy("--strict", "-p", "airlock")
    check(rc == 0, "mypy --strict -p airlock", out)
    rc, out = mypy("--check-untyped-defs", "tests/test_client_unit.py",
                   "tests/test_client_stack.py")
    check(rc == 0, "mypy --check-untyped-defs on the tests", out)
    with tempfile.NamedTemporaryFile("w", suffix=".py", dir=ROOT) as f:
        f.write("from airlock import Client\n"
                "c = Client('http://x', 'k')\n"
                "n: int = c.sandboxes.get('sb_1').state\n"
                "c.exec.run('sb_1', ['true'], timeout_s='5')\n")
        f.flush()
        rc, out = mypy("--strict", os.path.basename(f.name))
    check(rc != 0 and ":3: error: Incompatible types" in out and "timeout_s" in out,
          "mypy refuses a str assigned to an int and a str timeout_s", out)
    if failures:
        print("%d check(s) failed" % len(failures))
        sys.exit(1)
    print("all checks passed")


if __name__ == "__main__":
    main()
