#!/usr/bin/python3
"""Mutual TLS between the services (docs/security.md "Trust between
services"), on the real stack cp_harness starts with its internal PKI
(scripts/internal-pki.sh; AIRLOCK_TEST_PKI_DIR): each server refuses a
caller whose certificate is missing, of another CA, expired or of a role
the method does not let in, and logs the peer and the reason; a client
checks the server's identity; vault gives egress:N only the secrets of
sandboxes placed on node N; a service refuses to start on a certificate it
cannot use, naming the file; a rotated certificate is taken on SIGHUP
without dropping a call in flight.

usage: test_internal_tls.py PROTO_DIR STUB_DIR VAULT_BIN

Certificates beyond the stack's (expired, another CA's) are made here with
python3-cryptography; the stack's CA key signs the ones that must chain."""
import datetime
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

import grpc
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

import grpc_stubs
from rest_client import call, check, new_project_key, poll, report_and_exit

PROTO_DIR, STUB_DIR, VAULT_BIN = sys.argv[1], sys.argv[2], sys.argv[3]
grpc_stubs.generate(PROTO_DIR, STUB_DIR, ["vault.proto", "egress.proto", "scheduler.proto",
                                          "airlock/v1/projects.proto", "airlock/v1/nodes.proto"])
import egress_pb2  # noqa: E402
import egress_pb2_grpc  # noqa: E402
import scheduler_pb2  # noqa: E402
import scheduler_pb2_grpc  # noqa: E402
import vault_pb2  # noqa: E402
import vault_pb2_grpc  # noqa: E402

PKI = os.environ["AIRLOCK_TEST_PKI_DIR"]
STACK_DIR = os.environ["AIRLOCK_TEST_STACK_DIR"]
VAULT = os.environ["AIRLOCK_TEST_VAULT_ADDR"]
EGRESS = os.environ["AIRLOCK_TEST_EGRESS_ADDR"]
SCHEDULER = os.environ["AIRLOCK_TEST_SCHEDULER_ADDR"]
VMHOST = os.environ["AIRLOCK_TEST_VMHOST_ADDR"]
NODE, OTHER = "cp-node", "cp-node-b"  # cp_nats.h: CP_NODE_ID, CP_OTHER_NODE_ID
with open(os.environ["AIRLOCK_INTERNAL_TOKEN_FILE"]) as f:
    TOKEN = f.read().strip()
AUTH = (("authorization", "Bearer " + TOKEN),)
WORK = tempfile.mkdtemp(prefix="airlock-itls-")


def read(path):
    with open(path, "rb") as f:
        return f.read()


def dns(identity):
    role, _, node = identity.partition(":")
    return "%s.%s.airlock.internal" % (node, role) if node else "%s.airlock.internal" % role


def stack_files(name):
    return read(os.path.join(PKI, "ca.crt")), os.path.join(PKI, name + ".crt"), \
        os.path.join(PKI, name + ".key")


def mint(identity, ca_cert=None, ca_key=None, days=(-1, 365)):
    """A certificate for identity (DNS SAN as internal-pki.sh makes it)
    signed by ca (a fresh self-signed CA when None), valid from now+days[0]
    to now+days[1] days: (cert PEM, key PEM, CA PEM)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    if ca_cert is None:
        ca_key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "another CA")])
        ca_cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
                   .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(days=1))
                   .not_valid_after(now + datetime.timedelta(days=30))
                   .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                   .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, identity)]))
            .issuer_name(ca_cert.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now + datetime.timedelta(days=days[0]))
            .not_valid_after(now + datetime.timedelta(days=days[1]))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH,
                                                  ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(dns(identity))]),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    return (cert.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()),
            ca_cert.public_bytes(serialization.Encoding.PEM))


def stack_ca():
    ca = x509.load_pem_x509_certificate(read(os.path.join(PKI, "ca.crt")))
    key = serialization.load_pem_private_key(read(os.path.join(PKI, "ca.key")), None)
    return ca, key


def channel(addr, server, client=None, pems=None):
    """A channel to addr ("unix:/…") whose server must be identity server;
    the client presents identity file client of the stack's PKI, or pems
    (cert, key) — none when both are None."""
    ca, cert_path, key_path = stack_files(client) if client else (
        read(os.path.join(PKI, "ca.crt")), None, None)
    cert = pems[0] if pems else (read(cert_path) if cert_path else None)
    key = pems[1] if pems else (read(key_path) if key_path else None)
    creds = grpc.ssl_channel_credentials(ca, key, cert)
    return grpc.secure_channel(addr, creds,
                               options=[("grpc.ssl_target_name_override", dns(server))])


def outcome(fn):
    """(status code, details) of one call."""
    try:
        fn()
        return grpc.StatusCode.OK, ""
    except grpc.RpcError as e:
        return e.code(), e.details() or ""


def log_says(name, *needles):
    """Whether a line of the log (a file of the stack's dir, or a path) has
    every needle."""
    path = os.path.join(STACK_DIR, name)

    def found():
        with open(path, errors="replace") as f:
            return any(all(n in line for n in needles) for line in f)
    return poll(found, limit_s=10)


def vault_list(ch):
    return vault_pb2_grpc.VaultStub(ch).ListSecrets(
        vault_pb2.ListSecretsRequest(project_id="prj_none"), metadata=AUTH, timeout=20)


def egress_status(ch):
    return egress_pb2_grpc.EgressStub(ch).GetStatus(egress_pb2.GetStatusRequest(),
                                                    metadata=AUTH, timeout=20)


def test_roles():
    """Each server lets in only the roles its method lists."""
    code, why = outcome(lambda: vault_list(channel(VAULT, "vault", "gateway")))
    check(code == grpc.StatusCode.OK, "vault: the gateway administers secrets (%s %s)" % (code, why))
    code, why = outcome(lambda: vault_list(channel(VAULT, "vault", "vmhost-" + NODE)))
    check(code == grpc.StatusCode.PERMISSION_DENIED and "vmhost:cp-node may not call" in why,
          "vault: a vmhost may not administer secrets (%s %s)" % (code, why))
    check(log_says("vault.log", "rpc call refused", "identity=vmhost:cp-node",
                   "ListSecrets", "peer="),
          "vault's log names the refused peer, its identity and the method")
    code, why = outcome(lambda: vault_pb2_grpc.VaultStub(channel(VAULT, "vault", "gateway"))
                        .ResolveInjection(vault_pb2.ResolveInjectionRequest(
                            project_id="prj_x", sandbox_id="sb_x", host="a.test"),
                            metadata=AUTH, timeout=20))
    check(code == grpc.StatusCode.PERMISSION_DENIED,
          "vault: the gateway may not resolve injections (%s %s)" % (code, why))
    code, why = outcome(lambda: scheduler_pb2_grpc.SchedulerStub(
        channel(SCHEDULER, "scheduler", "egress-" + NODE)).ListSandboxes(
            scheduler_pb2.ListSandboxesRequest(), metadata=AUTH, timeout=20))
    check(code == grpc.StatusCode.PERMISSION_DENIED,
          "scheduler: egress may not call it (%s %s)" % (code, why))
    code, why = outcome(lambda: egress_status(channel(EGRESS, "egress:" + NODE, "vmhost-" + NODE)))
    check(code == grpc.StatusCode.OK, "egress: its own node's vmhost drives it (%s %s)"
          % (code, why))
    for caller in ("vmhost-" + OTHER, "gateway"):
        code, why = outcome(lambda: egress_status(channel(EGRESS, "egress:" + NODE, caller)))
        check(code == grpc.StatusCode.PERMISSION_DENIED,
              "egress: %s may not drive it (%s %s)" % (caller, code, why))


def test_bad_certificates():
    """Missing, another CA's, expired: UNAUTHENTICATED naming why; no TLS
    at all, or a server that is not who the client expects: no call."""
    ca, ca_key = stack_ca()
    cases = [
        ("no client certificate", None, "no client certificate"),
        ("another CA's certificate", mint("gateway")[:2], "unable to get local issuer"),
        ("an expired certificate", mint("gateway", ca, ca_key, days=(-10, -1))[:2], "expired"),
    ]
    for what, pems, reason in cases:
        ch = channel(VAULT, "vault", pems=pems) if pems else channel(VAULT, "vault")
        code, why = outcome(lambda: vault_list(ch))
        check(code == grpc.StatusCode.UNAUTHENTICATED and reason in why,
              "vault refuses %s (%s %s)" % (what, code, why))
        check(log_says("vault.log", "rpc call refused", reason),
              "vault's log says why it refused %s" % what)
    code, why = outcome(lambda: vault_list(grpc.insecure_channel(VAULT)))
    check(code == grpc.StatusCode.UNAVAILABLE, "vault refuses plaintext (%s %s)" % (code, why))
    # The scheduler's socket, dialed as if it were vault: the client's host
    # name check fails before any request leaves.
    code, why = outcome(lambda: vault_list(channel(SCHEDULER, "vault", "gateway")))
    check(code == grpc.StatusCode.UNAVAILABLE,
          "a client refuses a server that is not who it expects (%s %s)" % (code, why))


def test_placement():
    """egress:N gets a secret only for a sandbox placed on N."""
    project, key = new_project_key("itls-placement")
    st, _, sb = call("POST", "/v1/sandboxes", key=key, body={})
    check(st == 201, "a sandbox on %s (%s %s)" % (NODE, st, sb))
    if st != 201:
        return
    sid = sb["id"]
    st, _, body = call("POST", "/v1/secrets", key=key, body={
        "name": "placed", "value": "s3cr3t-placement",
        "bindings": [{"host": "api.placement.test", "header": "Authorization",
                      "format": "Bearer {secret}"}]})
    check(st == 201, "POST /v1/secrets -> 201 (%s %s)" % (st, body))
    req = vault_pb2.ResolveInjectionRequest(project_id=project, sandbox_id=sid,
                                            host="api.placement.test", method="GET", path="/")

    def resolve(name):
        stub = vault_pb2_grpc.VaultStub(channel(VAULT, "vault", name))
        return stub.ResolveInjection(req, metadata=AUTH, timeout=20)
    code, why = outcome(lambda: resolve("egress-" + OTHER))
    check(code == grpc.StatusCode.PERMISSION_DENIED and "not placed on node " + OTHER in why,
          "node %s's egress cannot obtain the secret of a sandbox on %s (%s %s)"
          % (OTHER, NODE, code, why))
    inj = None
    try:
        inj = resolve("egress-" + NODE)
    except grpc.RpcError as e:
        check(False, "egress on %s gets its sandbox's secret (%s)" % (NODE, e))
    if inj is not None:
        check(inj.header_value == "Bearer s3cr3t-placement",
              "egress on %s gets its own sandbox's secret" % NODE)
    code, why = outcome(lambda: vault_pb2_grpc.VaultStub(channel(VAULT, "vault", "egress-" + NODE))
                        .ResolveInjection(vault_pb2.ResolveInjectionRequest(
                            project_id="prj_other", sandbox_id=sid, host="api.placement.test"),
                            metadata=AUTH, timeout=20))
    check(code == grpc.StatusCode.PERMISSION_DENIED and "not in project" in why,
          "egress cannot name another project for its sandbox (%s %s)" % (code, why))

    def refusal_audited():
        st, _, body = call("GET", "/v1/audit?sandbox_id=%s&limit=100" % sid, key=key)
        rows = body.get("entries", []) if st == 200 and isinstance(body, dict) else []
        return [e for e in rows if e.get("actor") == "egress/" + OTHER
                and e.get("status") == "PERMISSION_DENIED"]
    check(poll(refusal_audited, limit_s=30), "the refused injection is in the audit log")
    call("DELETE", "/v1/sandboxes/" + sid, key=key)


def test_refuses_to_start():
    """A service whose own certificate is missing or of another role does
    not start, and names the file."""
    ca, cert, key = (os.path.join(PKI, n) for n in ("ca.crt", "vault.crt", "vault.key"))
    missing = os.path.join(WORK, "nope.crt")
    wrong_cert = os.path.join(PKI, "gateway.crt")
    wrong_key = os.path.join(PKI, "gateway.key")
    for what, c, k, needle in (("a missing certificate", missing, key, missing),
                               ("another role's certificate", wrong_cert, wrong_key,
                                "is for a gateway, not a vault")):
        p = subprocess.run([VAULT_BIN, "--database", "host=/nonexistent", "--master-key-file",
                            os.path.join(WORK, "mk"), "--listen",
                            "unix:" + os.path.join(WORK, "v.sock"), "--internal-ca", ca,
                            "--internal-cert", c, "--internal-key", k],
                           capture_output=True, text=True, timeout=60)
        check(p.returncode != 0 and needle in p.stderr,
              "vault refuses to start with %s (%d %r)" % (what, p.returncode, p.stderr[-300:]))


def served_serial(sock, server):
    """The serial number of the certificate the server on unix socket sock
    presents now (openssl s_client, as the gateway's identity)."""
    _, cert, key = stack_files("gateway")
    p = subprocess.run(["openssl", "s_client", "-unix", sock, "-alpn", "h2", "-servername",
                        dns(server), "-CAfile", os.path.join(PKI, "ca.crt"), "-cert", cert,
                        "-key", key], input=b"", capture_output=True, timeout=30)
    # Bytes: after the handshake the server's HTTP/2 frames follow the text.
    q = subprocess.run(["openssl", "x509", "-noout", "-serial"], input=p.stdout,
                       capture_output=True, timeout=30)
    return q.stdout.decode(errors="replace").strip()


def replace(name, cert_pem, key_pem):
    """Rotates identity name's files in place (as cert-manager or an
    operator would): written aside, then renamed over the old ones."""
    for ext, data, mode in ((".key", key_pem, 0o400), (".crt", cert_pem, 0o444)):
        path = os.path.join(PKI, name + ext)
        with open(path + ".new", "wb") as f:
            f.write(data)
        os.chmod(path + ".new", mode)
        os.rename(path + ".new", path)


def test_rotation():
    """vmhost and the gateway get new certificates while an exec streams
    through them; SIGHUP: the exec finishes, vmhost serves the new one,
    new calls go on."""
    _, key = new_project_key("itls-rotation")
    st, _, sb = call("POST", "/v1/sandboxes", key=key, body={})
    check(st == 201, "a sandbox to exec in (%s %s)" % (st, sb))
    if st != 201:
        return
    sid = sb["id"]
    vmhost_sock = VMHOST[len("unix:"):]
    before = served_serial(vmhost_sock, "vmhost:" + NODE)
    check(before.startswith("serial="), "vmhost presents a certificate (%s)" % before)
    result = {}

    def long_exec():
        result["answer"] = call("POST", "/v1/sandboxes/%s/exec" % sid, key=key, body={
            "cmd": ["sh", "-c", "sleep 6; echo survived"], "timeout_s": 120})
    t = threading.Thread(target=long_exec)
    t.start()
    time.sleep(2)  # the exec is streaming between gateway and vmhost
    ca, ca_key = stack_ca()
    for name, identity in (("vmhost-" + NODE, "vmhost:" + NODE), ("gateway", "gateway")):
        cert_pem, key_pem, _ = mint(identity, ca, ca_key)
        replace(name, cert_pem, key_pem)
    os.kill(int(os.environ["AIRLOCK_TEST_VMHOST_PID"]), signal.SIGHUP)
    os.kill(int(os.environ["AIRLOCK_TEST_GATEWAY_PID"]), signal.SIGHUP)
    check(log_says("gateway.log", "TLS certificate reloaded"), "the gateway reloaded on SIGHUP")
    check(log_says(os.environ["AIRLOCK_TEST_VMHOST_LOG"], "TLS certificate reloaded"),
          "vmhost reloaded on SIGHUP")
    t.join(180)
    st, _, body = result.get("answer", (None, None, None))
    check(st == 200 and isinstance(body, dict) and body.get("stdout") == "survived\n",
          "the exec in flight during the rotation finished (%s %s)" % (st, body))
    after = served_serial(vmhost_sock, "vmhost:" + NODE)
    check(after.startswith("serial=") and after != before,
          "vmhost presents the new certificate (%s, was %s)" % (after, before))
    st, _, body = call("POST", "/v1/sandboxes/%s/exec" % sid, key=key,
                       body={"cmd": ["echo", "after"]})
    check(st == 200 and body.get("stdout") == "after\n",
          "a new exec after the rotation works (%s %s)" % (st, body))
    call("DELETE", "/v1/sandboxes/" + sid, key=key)


def main():
    test_roles()
    test_bad_certificates()
    test_refuses_to_start()
    test_placement()
    test_rotation()  # last: it replaces the node's and the gateway's certificates
    report_and_exit()


if __name__ == "__main__":
    try:
        main()
    finally:
        subprocess.run(["rm", "-rf", WORK], check=False)
