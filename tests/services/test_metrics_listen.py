#!/usr/bin/env python3
"""Bad input to --metrics-listen (and AIRLOCK_METRICS_LISTEN) of every
service that has it: refused at start, before anything else starts,
naming the flag; a port another process holds is refused naming it too
(egress: the one service that gets that far without a database or a
node). No service is left running.

usage: test_metrics_listen.py NAME=PATH...   (airlock-vmhost=…, …)"""
import os
import socket
import subprocess
import sys
import tempfile
import unittest

BINARIES = dict(arg.split("=", 1) for arg in sys.argv[1:])
sys.argv[1:] = []
# Each service's least arguments to get as far as its flags are checked.
ARGS = {
    "airlock-vmhost": ["serve"],
    "airlock-scheduler": ["--database", "host=/nonexistent"],
    "airlock-egress": ["--upstream-dns", "127.0.0.1"],
    "airlock-vault": ["--database", "host=/nonexistent", "--master-key-file", "/nonexistent"],
}


def run(binary, args, env=None):
    """binary with its least arguments and args, the environment's
    AIRLOCK_METRICS_LISTEN replaced by env's (if any)."""
    full = {k: v for k, v in os.environ.items() if k != "AIRLOCK_METRICS_LISTEN"}
    full.update(env or {})
    return subprocess.run([BINARIES[binary], *ARGS[binary], *args], capture_output=True,
                          text=True, timeout=60, env=full)


class MetricsListen(unittest.TestCase):
    def test_bad_addresses_refused_naming_the_flag(self):
        for binary in ARGS:
            for bad in ("localhost:9100", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:70000",
                        ":9100", "[::1]:9100", "127.0.0.1:91x"):
                with self.subTest(binary=binary, addr=bad):
                    out = run(binary, ["--metrics-listen", bad])
                    self.assertEqual(out.returncode, 2, out.stderr)
                    self.assertIn("--metrics-listen", out.stderr)
                    self.assertIn(bad, out.stderr)

    def test_bad_env_refused_naming_it(self):
        for binary in ARGS:
            with self.subTest(binary=binary):
                out = run(binary, [], env={"AIRLOCK_METRICS_LISTEN": "nowhere"})
                self.assertEqual(out.returncode, 2, out.stderr)
                self.assertIn("AIRLOCK_METRICS_LISTEN", out.stderr)
                self.assertIn("nowhere", out.stderr)

    def test_port_in_use_refused(self):
        with socket.socket() as held, tempfile.TemporaryDirectory() as d:
            held.bind(("127.0.0.1", 0))
            held.listen()
            addr = "127.0.0.1:%d" % held.getsockname()[1]
            out = run("airlock-egress", ["--metrics-listen", addr,
                                         "--listen", "unix:%s/egress.sock" % d])
            self.assertEqual(out.returncode, 1, out.stderr)
            self.assertIn("--metrics-listen", out.stderr)
            self.assertIn("cannot listen", out.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
