"""A second airlock-gateway beside a cp_harness stack's (same scheduler,
NATS and vault), for tests of the gateway's own flags. The stack tests
that use it pass the gateway binary as argv[1]."""
import contextlib
import http.client
import os
import signal
import socket
import subprocess
import sys

from rest_client import check, poll

GATEWAY = sys.argv[1]
STACK_DIR = os.environ["AIRLOCK_TEST_STACK_DIR"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def internal_tls_flags(name):
    """--internal-ca/-cert/-key with identity name's files of the stack's PKI."""
    pki = os.environ["AIRLOCK_TEST_PKI_DIR"]
    return ["--internal-ca", os.path.join(pki, "ca.crt"),
            "--internal-cert", os.path.join(pki, name + ".crt"),
            "--internal-key", os.path.join(pki, name + ".key")]


class SecondGateway:
    """airlock-gateway on its own port (extra: more of its flags), stopped
    (TERM, then KILL) by pid. tls: the ssl.SSLContext its calls use when
    extra makes it serve HTTPS."""

    def __init__(self, ttl_ms, nats_url, log_name, extra=(), tls=None):
        self.port = free_port()
        self.tls = tls
        self.log = open(os.path.join(STACK_DIR, log_name), "ab")
        self.proc = subprocess.Popen(
            [GATEWAY, "--listen", "127.0.0.1:%d" % self.port,
             "--scheduler", os.environ["AIRLOCK_TEST_SCHEDULER_ADDR"],
             "--nats", nats_url,
             "--nats-credentials-file",
             os.path.join(os.environ["AIRLOCK_TEST_NATS_CREDENTIALS_DIR"], "gateway"),
             "--vault", os.environ["AIRLOCK_TEST_VAULT_ADDR"],
             "--key-cache-ttl-ms", str(ttl_ms)] + internal_tls_flags("gateway") + list(extra),
            stdout=self.log, stderr=self.log)

    def call(self, method, path, key=None):
        if self.tls:
            conn = http.client.HTTPSConnection("127.0.0.1", self.port, timeout=60, context=self.tls)
        else:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        conn.request(method, path, headers={"Authorization": "Bearer " + key} if key else {})
        resp = conn.getresponse()
        data = resp.read()
        conn.close()
        return resp.status, data

    def ready(self):
        try:
            return self.call("GET", "/healthz")[0] == 200
        except OSError:
            return self.proc.poll() is not None  # exited: stop waiting

    def stop(self):
        """Exit status after TERM (-9 when it had to be killed)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode


@contextlib.contextmanager
def flagged_gateway(log_name, flags, what, tls=None):
    """A SecondGateway beside the stack's, on its NATS, with flags: checked
    ready on entry, checked to stop cleanly on exit (what names it)."""
    gw = SecondGateway(10000, os.environ["AIRLOCK_TEST_NATS_URL"], log_name, flags, tls)
    try:
        check(poll(gw.ready, limit_s=60) and gw.proc.poll() is None, what)
        yield gw
    finally:
        check(gw.stop() == 0, "%s stops cleanly" % what)
