#!/usr/bin/python3
"""The public APIs over TLS against a real stack (cp_harness, one VM):
a second gateway (argv[1]) beside the stack's, with --tls-cert/--tls-key
from a CA made here with the openssl CLI, and the CLI (argv[2]); the public
gRPC API's client is generated from argv[3] (protos/) into argv[4].

- The public gRPC API serves the same certificate: a client trusting the
  CA lists sandboxes; a plaintext client gets nothing.

- The CLI with --ca-file (and with AIRLOCK_CA_FILE) lists, creates, execs
  in (SSE over TLS) and removes a sandbox over https.
- Without the CA (the system's trust store), or with another CA, the CLI
  exits 1 naming the URL and the verification problem.
- Plain http to the TLS port fails.
- SIGHUP: new connections get the reloaded certificate while a connection
  opened before keeps working; a reload with a broken key keeps the last
  good certificate and says so in the log.
- The gateway refuses to start with a missing key file (naming it), with a
  key of another certificate, or with only one of the two flags.

usage: test_gateway_tls.py GATEWAY CLI
Bounded waits only, nothing asserts speed."""
import http.client
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile

from rest_client import check, new_project_key, poll, report_and_exit
import grpc  # noqa: E402

import grpc_stubs  # noqa: E402
from second_gateway import flagged_gateway, free_port, internal_tls_flags  # noqa: E402 (reads argv[1]: the gateway)

GATEWAY, CLI = sys.argv[1], sys.argv[2]
STACK_DIR = os.environ["AIRLOCK_TEST_STACK_DIR"]


def openssl(*args):
    subprocess.run(["openssl"] + list(args), check=True, capture_output=True, timeout=60)


def make_ca(d, name):
    """A self-signed CA: (cert path, key path)."""
    crt, key = os.path.join(d, name + ".crt"), os.path.join(d, name + ".key")
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", key, "-out", crt, "-days", "2", "-subj", "/CN=" + name)
    return crt, key


def make_server_cert(d, ca, name):
    """A certificate for 127.0.0.1 (CN=name) signed by ca: (cert, key)."""
    crt, key, csr = (os.path.join(d, name + ext) for ext in (".crt", ".key", ".csr"))
    ext = os.path.join(d, name + ".ext")
    with open(ext, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\n")
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", key, "-out", csr, "-subj", "/CN=" + name)
    openssl("x509", "-req", "-in", csr, "-CA", ca[0], "-CAkey", ca[1], "-CAcreateserial",
            "-out", crt, "-days", "2", "-extfile", ext)
    return crt, key


def airlock(*args, key, ca_env=None):
    """(exit code, stdout, stderr) of one CLI run."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRLOCK_")}
    env["AIRLOCK_API_KEY"] = key
    if ca_env:
        env["AIRLOCK_CA_FILE"] = ca_env
    p = subprocess.run([CLI] + list(args), capture_output=True, env=env, timeout=600)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def peer_cn(port, ca):
    """The CN of the certificate a new TLS connection to port gets."""
    ctx = ssl.create_default_context(cafile=ca)
    conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=60, context=ctx)
    conn.connect()
    subject = dict(x[0] for x in conn.sock.getpeercert()["subject"])
    conn.close()
    return subject.get("commonName")


def copy(src, dst):
    """src over dst, atomically, keeping src's mode (a key stays private)."""
    with open(src, "rb") as f, open(dst + ".tmp", "wb") as g:
        g.write(f.read())
    shutil.copymode(src, dst + ".tmp")
    os.replace(dst + ".tmp", dst)


def check_refusals(d, served, other):
    """Start-up refusals; each run is bounded and its exit status read."""
    stack = ["--listen", "127.0.0.1:1", "--nats", os.environ["AIRLOCK_TEST_NATS_URL"],
             "--nats-credentials-file",
             os.path.join(os.environ["AIRLOCK_TEST_NATS_CREDENTIALS_DIR"], "gateway")] + \
        internal_tls_flags("gateway")
    missing = os.path.join(d, "no-such-key.pem")
    cases = [
        (["--tls-cert", served[0], "--tls-key", missing], missing, "a missing key file"),
        (["--tls-cert", served[0], "--tls-key", other[1]], other[1], "a key of another certificate"),
        (["--tls-cert", served[0]], "--tls-key", "--tls-cert without --tls-key"),
    ]
    for flags, named, what in cases:
        r = subprocess.run([GATEWAY] + stack + flags, capture_output=True, timeout=60)
        check(r.returncode != 0 and named.encode() in r.stderr,
              "the gateway refuses to start with %s, naming %s: %d %r"
              % (what, named, r.returncode, r.stderr[-300:]))


def check_cli(port, ca, other_ca):
    url = "https://127.0.0.1:%d" % port
    _, key = new_project_key("tls")
    rc, out, err = airlock("--url", url, "--ca-file", ca, "ls", key=key)
    check(rc == 0 and out.startswith("ID"), "ls over https with --ca-file: %d %r %r" % (rc, out, err))
    rc, out, err = airlock("--url", url, "create", key=key, ca_env=ca)
    sid = out.strip()
    check(rc == 0 and sid.startswith("sb_"),
          "create over https with AIRLOCK_CA_FILE: %d %r %r" % (rc, out, err))
    if rc == 0:
        rc, out, err = airlock("--url", url, "--ca-file", ca, "exec", sid, "--", "echo", "tls",
                               key=key)
        check(rc == 0 and out == "tls\n", "exec streams over https: %d %r %r" % (rc, out, err))
        rc, _, err = airlock("--url", url, "--ca-file", ca, "rm", sid, key=key)
        check(rc == 0, "rm over https: %d %r" % (rc, err))

    rc, _, err = airlock("--url", url, "ls", key=key)
    check(rc == 1 and url in err and "certificate" in err and "--ca-file" in err,
          "without the CA: exit 1 naming the URL and the certificate problem: %d %r" % (rc, err))
    rc, _, err = airlock("--url", url, "--ca-file", other_ca, "ls", key=key)
    check(rc == 1 and url in err and "certificate" in err,
          "with another CA: exit 1 naming the certificate problem: %d %r" % (rc, err))
    plain = "http://127.0.0.1:%d" % port
    rc, _, err = airlock("--url", plain, "ls", key=key)
    check(rc == 1 and plain in err, "plain http to the TLS port fails: %d %r" % (rc, err))


def check_grpc(port, ca):
    """The public gRPC API over TLS with the CA, and refused in clear."""
    grpc_stubs.generate(sys.argv[3], sys.argv[4], ["airlock/v1/sandboxes.proto"])
    from airlock.v1 import sandboxes_pb2 as pb, sandboxes_pb2_grpc
    _, key = new_project_key("tls-grpc")
    with open(ca, "rb") as f:
        creds = grpc.ssl_channel_credentials(f.read())
    auth = [("authorization", "Bearer " + key)]
    stub = sandboxes_pb2_grpc.SandboxesStub(grpc.secure_channel("127.0.0.1:%d" % port, creds))
    try:
        stub.ListSandboxes(pb.ListSandboxesRequest(), metadata=auth, timeout=60)
        check(True, "the public gRPC API answers over TLS")
    except grpc.RpcError as e:
        check(False, "the public gRPC API answers over TLS (%s %s)" % (e.code(), e.details()))
    plain = sandboxes_pb2_grpc.SandboxesStub(grpc.insecure_channel("127.0.0.1:%d" % port))
    try:
        plain.ListSandboxes(pb.ListSandboxesRequest(), metadata=auth, timeout=20)
        check(False, "the public gRPC API refuses plaintext")
    except grpc.RpcError as e:
        check(e.code() == grpc.StatusCode.UNAVAILABLE,
              "the public gRPC API refuses plaintext (%s)" % e.code())


def check_reload(gw, ca, served, reloaded):
    """served: the files the gateway was started with; overwritten here."""
    ctx = ssl.create_default_context(cafile=ca)
    kept = http.client.HTTPSConnection("127.0.0.1", gw.port, timeout=60, context=ctx)
    kept.request("GET", "/healthz")
    resp = kept.getresponse()
    resp.read()
    check(resp.status == 200, "a connection opened before the reload answers")
    check(peer_cn(gw.port, ca) == "served", "the first certificate is served")
    copy(reloaded[0], served[0])
    copy(reloaded[1], served[1])
    gw.proc.send_signal(signal.SIGHUP)
    check(poll(lambda: peer_cn(gw.port, ca) == "reloaded", limit_s=60),
          "after SIGHUP new connections get the reloaded certificate")
    kept.request("GET", "/healthz")
    resp = kept.getresponse()
    resp.read()
    check(resp.status == 200, "the connection opened before the reload still answers")
    kept.close()

    with open(served[1], "w") as f:
        f.write("not a key\n")
    gw.proc.send_signal(signal.SIGHUP)
    log = os.path.join(STACK_DIR, "gateway-tls.log")
    check(poll(lambda: b"TLS certificate not reloaded" in open(log, "rb").read(), limit_s=60),
          "a reload with a broken key is logged")
    check(gw.proc.poll() is None and peer_cn(gw.port, ca) == "reloaded",
          "after a failed reload the gateway keeps serving the last good certificate")


def main():
    with tempfile.TemporaryDirectory() as d:
        ca = make_ca(d, "test-ca")
        other_ca = make_ca(d, "other-ca")
        served = make_server_cert(d, ca, "served")
        reloaded = make_server_cert(d, ca, "reloaded")
        check_refusals(d, served, reloaded)
        tls = ssl.create_default_context(cafile=ca[0])
        grpc_port = free_port()
        with flagged_gateway("gateway-tls.log", ["--tls-cert", served[0], "--tls-key", served[1],
                                                 "--grpc-listen", "127.0.0.1:%d" % grpc_port],
                             "a gateway with --tls-cert/--tls-key answers over https",
                             tls=tls) as gw:
            check_cli(gw.port, ca[0], other_ca[0])
            check_grpc(grpc_port, ca[0])
            check_reload(gw, ca[0], served, reloaded)


if __name__ == "__main__":
    main()
    report_and_exit()
