#!/usr/bin/env python3
"""Checks charts/airlock without a Kubernetes cluster or the helm binary
(neither is a Debian package): the chart's files parse, every value a
template reads exists in values.yaml, every include names a define, every
template block is closed, and every flag a container passes to an airlock
binary is one that binary's --help lists — so the chart cannot drift from
the services it deploys. The in-chart PostgreSQL's init container script,
which closes a volume made before password authentication, runs against a
real PostgreSQL 15 when one is installed.

usage: test_helm_chart.py CHART_DIR BIN_DIR_MAP...   (NAME=PATH pairs)
"""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import unittest

import yaml

CHART = sys.argv[1] if len(sys.argv) > 1 else "charts/airlock"
BINARIES = dict(arg.split("=", 1) for arg in sys.argv[2:])
ACTION = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}", re.S)


def templates():
    tdir = os.path.join(CHART, "templates")
    for name in sorted(os.listdir(tdir)):
        with open(os.path.join(tdir, name)) as f:
            yield name, f.read()


def lookup(tree, dotted):
    node = tree
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


AIRLOCK_SERVICES = ("airlock-gateway", "airlock-scheduler", "airlock-vault", "airlock-vmhost",
                    "airlock-egress")


def containers(text):
    """The entries of every `containers:` list (not initContainers) as text."""
    out, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        m = re.match(r"^(\s*)containers:\s*$", lines[i])
        i += 1
        if not m:
            continue
        indent = len(m.group(1))
        block = []
        while i < len(lines) and (not lines[i].strip() or
                                  len(lines[i]) - len(lines[i].lstrip()) > indent):
            item = re.match(rf"^\s{{{indent + 2}}}- name: ", lines[i])
            if item and block:
                out.append("\n".join(block))
                block = []
            block.append(lines[i])
            i += 1
        if block:
            out.append("\n".join(block))
    return out


def render_value(text, path, value):
    """text as helm renders it for .Values.<path> = value, as far as that
    value goes: each `{{- if .Values.<path> }}…{{- end }}` block (holding no
    other block) kept or dropped, `{{ .Values.<path> }}` replaced."""
    block = re.compile(r"\s*\{\{- if \.Values\.%s \}\}(.*?)\s*\{\{- end \}\}" % re.escape(path),
                       re.S)
    text = block.sub(lambda m: m.group(1) if value else "", text)
    return text.replace("{{ .Values.%s }}" % path, value)


def yaml_list_after(text, key):
    """The YAML list under `key:` (to the end of its indentation), lines
    with a template action left out."""
    lines = text.split("\n")
    start = next(i for i, l in enumerate(lines) if l.strip() == key + ":")
    indent = len(lines[start]) - len(lines[start].lstrip())
    body = []
    for line in lines[start + 1:]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        if "{{" not in line:
            body.append(line)
    return yaml.safe_load("\n".join(body)) or []


# The condition of nats.yaml's TLS parts: a Secret to serve TLS with.
NATS_TLS_IF = '{{- if include "airlock.natsTLSSecret" . }}'


def nats_conf(tls_dir=None):
    """nats.yaml's nats.conf as rendered: with a TLS Secret (internal TLS or
    nats.tls.secretName) when tls_dir is given (the Secret's mount path
    replaced by tls_dir), without its tls block otherwise."""
    text = dict(templates())["nats.yaml"]
    body = re.search(r"nats\.conf: \|\n((?:\s{4}.*\n)+)", text).group(1)
    m = re.search(r"^\s*" + re.escape(NATS_TLS_IF) + r"\n(.*?)^\s*\{\{- end \}\}\n", body,
                  re.S | re.M)
    if m is None:
        raise AssertionError("nats.conf has no tls block under " + NATS_TLS_IF)
    tls = m.group(1).replace("/etc/nats-tls/", tls_dir + "/") if tls_dir else ""
    body = body[:m.start()] + tls + body[m.end():]
    return "".join(line[4:] + "\n" for line in body.splitlines())


def service_containers():
    """(template name, its text, binary, container block) for each container
    that runs one of AIRLOCK_SERVICES."""
    for tname, text in templates():
        for block in containers(text):
            binary = next((b for b in AIRLOCK_SERVICES if re.search(rf"\b{b}\b", block)), None)
            if binary:
                yield tname, text, binary, block


def define_body(text, name):
    m = re.search(r'\{\{-? define "%s" -?\}\}\n?(.*?)\{\{-? end -?\}\}' % re.escape(name),
                  text, re.S)
    if not m:
        raise AssertionError(f"no define {name}")
    return m.group(1)


class HelmChart(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(os.path.join(CHART, "values.yaml")) as f:
            cls.values = yaml.safe_load(f)
        with open(os.path.join(CHART, "Chart.yaml")) as f:
            cls.chart = yaml.safe_load(f)

    def test_chart_metadata(self):
        self.assertEqual(self.chart["apiVersion"], "v2")
        self.assertEqual(self.chart["name"], "airlock")
        for key in ("version", "appVersion", "description"):
            self.assertTrue(self.chart.get(key), key)

    def test_every_value_read_is_defined(self):
        missing = []
        for name, text in templates():
            for path in re.findall(r"\.Values\.([A-Za-z0-9_.]+)", text):
                if not lookup(self.values, path):
                    missing.append(f"{name}: .Values.{path}")
        self.assertEqual(missing, [], "templates read values that values.yaml lacks")

    def test_includes_name_defines(self):
        defined, used = set(), set()
        for _, text in templates():
            defined |= set(re.findall(r'define\s+"([^"]+)"', text))
            used |= set(re.findall(r'include\s+"([^"]+)"', text))
        self.assertTrue(used)
        self.assertEqual(used - defined, set(), "includes of undefined templates")

    def test_blocks_are_closed(self):
        for name, text in templates():
            depth = 0
            for action in ACTION.findall(text):
                word = action.split()[0] if action.split() else ""
                if word in ("if", "range", "define", "with"):
                    depth += 1
                elif word == "end":
                    depth -= 1
                    self.assertGreaterEqual(depth, 0, f"{name}: stray end")
            self.assertEqual(depth, 0, f"{name}: unclosed block")

    def test_every_airlock_binary_is_deployed(self):
        text = "".join(t for _, t in templates())
        for binary in ("airlock-gateway", "airlock-scheduler", "airlock-vault",
                       "airlock-vmhost", "airlock-egress"):
            self.assertIn(binary, text, f"no container runs {binary}")

    def test_flags_exist_in_binaries(self):
        """Each `--flag` in a template next to an airlock binary's name must
        appear in that binary's --help."""
        if not BINARIES:
            self.skipTest("no binaries given")
        helps = {}
        for name, path in BINARIES.items():
            out = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=30)
            helps[name] = out.stdout + out.stderr
        checked = 0
        for tname, text in templates():
            # A container spec runs from `- name:` (or `command:`) to the next
            # container; the flags in it belong to the binary it names.
            for block in re.split(r"\n\s*- name: ", text):
                names = [b for b in BINARIES if re.search(rf"\b{b}\b", block)]
                if not names:
                    continue
                binary = names[0]
                for flag in set(re.findall(r"(--[a-z][a-z0-9-]+)", block)):
                    checked += 1
                    self.assertIn(flag, helps[binary], f"{tname}: {binary} has no {flag}")
        self.assertGreater(checked, 10)

    def test_snapshot_store_is_the_same_claim_on_every_node(self):
        """With snapshotStore.claimName the vmhost container mounts that
        claim at snapshotStore.mountPath and passes it as --snapshot-store;
        both only under the same condition, and off by default."""
        self.assertEqual(self.values["snapshotStore"]["claimName"], "")
        node = dict(templates())["node.yaml"]
        vmhost = next(b for t, _, binary, b in service_containers()
                      if t == "node.yaml" and binary == "airlock-vmhost")
        cond = "{{- if .Values.snapshotStore.claimName }}"
        self.assertRegex(vmhost, re.escape(cond) + r"\s*(#.*\n\s*)*- --snapshot-store="
                         r"\{\{ \.Values\.snapshotStore\.mountPath \}\}")
        self.assertRegex(vmhost, re.escape(cond) + r"\s*- name: snapshot-store\s*mountPath: "
                         r"\{\{ \.Values\.snapshotStore\.mountPath \}\}")
        self.assertRegex(node, re.escape(cond) + r"\s*- name: snapshot-store\s*"
                         r"persistentVolumeClaim:\s*claimName: "
                         r"\{\{ \.Values\.snapshotStore\.claimName \}\}")

    def test_every_component_gets_the_internal_token(self):
        """Each container that runs an airlock service mounts the token
        Secret and passes --internal-token-file with the mounted path."""
        served = set()
        for tname, _, binary, block in service_containers():
            served.add(binary)
            self.assertIn('--internal-token-file={{ include "airlock.internalTokenFile" . }}',
                          block, f"{tname}: {binary} gets no --internal-token-file")
            self.assertIn('include "airlock.internalTokenMount"', block,
                          f"{tname}: {binary} does not mount the token")
        for tname, text in templates():
            if any(re.search(rf"\b{b}\b", text) for b in AIRLOCK_SERVICES):
                self.assertEqual(text.count('include "airlock.internalTokenVolume"'), 1,
                                 f"{tname}: the token volume once per pod")
        self.assertEqual(served, set(AIRLOCK_SERVICES))

        helpers = dict(templates())["_helpers.tpl"]
        mount = define_body(helpers, "airlock.internalTokenMount")
        volume = define_body(helpers, "airlock.internalTokenVolume")
        path = define_body(helpers, "airlock.internalTokenFile").strip()
        self.assertIn("readOnly: true", mount)
        self.assertIn(f"mountPath: {os.path.dirname(path)}\n", mount + "\n")
        self.assertIn('secretName: {{ include "airlock.internalTokenSecret" . }}', volume)
        self.assertIn("defaultMode: 0400", volume)
        self.assertTrue(path.endswith("/token"), "the Secret's key is `token`")

    def test_every_component_gets_internal_tls(self):
        """With the defaults (internalTLS.enabled) each airlock container
        passes --internal-ca, --internal-cert and --internal-key: gateway,
        scheduler and vault the files of their role's Secret, vmhost and
        egress their node's own from the host directory nodeCertDir."""
        tls = self.values["internalTLS"]
        self.assertIs(tls["enabled"], True)
        self.assertEqual(tls["certManager"]["issuerRef"], {}, "the chart's own CA by default")
        self.assertEqual(tls["nodeCertDir"], "/etc/airlock/pki")
        tpl = dict(templates())
        helpers = tpl["_helpers.tpl"]
        secret_dir = define_body(helpers, "airlock.internalTLSDir").strip()
        node_dir = "{{ .Values.internalTLS.nodeCertDir }}"
        files = {"airlock-gateway": (secret_dir, "tls"), "airlock-scheduler": (secret_dir, "tls"),
                 "airlock-vault": (secret_dir, "tls"), "airlock-vmhost": (node_dir, "vmhost"),
                 "airlock-egress": (node_dir, "egress")}
        served = set()
        for tname, text, binary, block in service_containers():
            served.add(binary)
            d, name = files[binary]
            d = d if d == node_dir else '{{ include "airlock.internalTLSDir" . }}'
            for flag, path in (("ca", f"{d}/ca.crt"), ("cert", f"{d}/{name}.crt"),
                               ("key", f"{d}/{name}.key")):
                self.assertIn(f"--internal-{flag}={path}", block,
                              f"{tname}: {binary} gets no --internal-{flag}={path}")
            self.assertRegex(block, r"\{\{- if \.Values\.internalTLS\.enabled \}\}\s*(#.*\n\s*)*"
                                    r"-? ?--internal-ca=", f"{tname}: {binary}: only when enabled")
            if d == node_dir:
                self.assertRegex(block, r"- name: node-pki\n\s+mountPath: " + re.escape(node_dir)
                                 + r"\n\s+readOnly: true", f"{tname}: {binary}")
            else:
                self.assertIn('include "airlock.internalTLSMount" .', block, binary)
                role = binary.split("-")[1]
                self.assertEqual(text.count('include "airlock.internalTLSVolume" (dict "root" . '
                                            f'"name" "{role}")'), 1, f"{tname}: {role}'s Secret")
                self.assertIn(f'include "airlock.internalTLSAnnotations" (dict "root" . '
                              f'"name" "{role}")', text, f"{tname}: restarts on a new cert")
        self.assertEqual(served, set(AIRLOCK_SERVICES))
        node = tpl["node.yaml"]
        self.assertRegex(node, r"- name: node-pki\n\s+hostPath:\n\s+path: "
                         + re.escape(node_dir) + r"\n")
        # vmhost's node id is the one its certificate must name.
        self.assertIn("- --node-id=$(NODE_NAME)", node)

    def test_internal_tls_key_mounts_are_private(self):
        """The Secrets mount with mode 0400 (the services refuse a key file
        group or others may read), read-only, at internalTLSDir."""
        helpers = dict(templates())["_helpers.tpl"]
        volume = define_body(helpers, "airlock.internalTLSVolume")
        mount = define_body(helpers, "airlock.internalTLSMount")
        self.assertIn("defaultMode: 0400", volume)
        self.assertNotRegex(volume, r"\bmode: ", "no item overrides the mode")
        self.assertIn('secretName: {{ include "airlock.internalTLSSecret" . }}', volume)
        for key in ("ca.crt", "tls.crt", "tls.key"):
            self.assertIn(f"- key: {key}\n        path: {key}\n", volume)
        self.assertIn("readOnly: true", mount)
        self.assertIn('mountPath: {{ include "airlock.internalTLSDir" . }}', mount)

    def _internal_tls_branches(self):
        """internal-tls.yaml's cert-manager branch and the chart's own CA
        branch (if issuerRef / else)."""
        text = dict(templates())["internal-tls.yaml"]
        m = re.search(r"\{\{- if \.Values\.internalTLS\.certManager\.issuerRef \}\}\n(.*?)"
                      r"\n\{\{- else \}\}\n(.*)", text, re.S)
        self.assertIsNotNone(m, "internal-tls.yaml: if certManager.issuerRef ... else")
        self.assertIn("{{- if .Values.internalTLS.enabled }}", text[:m.start()])
        return m.group(1), m.group(2)

    def test_cert_manager_certificates(self):
        """With certManager.issuerRef set the chart renders a Certificate per
        role naming its identity, and makes no CA or certificate itself."""
        cm, own = self._internal_tls_branches()
        self.assertNotIn("kind: Secret", cm)
        self.assertNotRegex(cm, r"gen[A-Z]\w*", "no genCA with cert-manager")
        helpers = dict(templates())["_helpers.tpl"]
        dns = define_body(helpers, "airlock.internalTLSDNSName").strip()
        secret = define_body(helpers, "airlock.internalTLSSecret").strip()
        self.assertEqual(secret, '{{ printf "%s-internal-tls-%s" (include "airlock.fullname" '
                                 '.root) .name }}')
        self.assertIn('{{- $roles := list "gateway" "scheduler" "vault" }}',
                      dict(templates())["internal-tls.yaml"])
        body = re.search(r"\{\{- range \$roles \}\}\n(.*)\n\{\{- end \}\}", cm, re.S).group(1)
        for role in ("gateway", "scheduler", "vault"):
            # The range body with this role, as helm would render it.
            out = ("\n" + body).replace('{{ include "airlock.internalTLSDNSName" $id }}',
                                         dns.replace("{{ .name }}", role))
            out = (out.replace('{{ include "airlock.internalTLSSecret" $id }}',
                               f"R-airlock-internal-tls-{role}")
                   .replace('{{ include "airlock.fullname" $root }}', "R-airlock")
                   .replace("{{ . }}", role))
            out = re.sub(r"\n *\{\{-? toYaml \$root\.Values\.internalTLS\.certManager\.issuerRef"
                         r" \| nindent 4 \}\}", "\n    name: ISSUER", out)
            out = re.sub(r"\n *\{\{-[^}]*\}\}", "", out)
            out = re.sub(r"\{\{[^}]*\}\}", "X", out)
            docs = [d for d in yaml.safe_load_all(out) if d]
            self.assertEqual(len(docs), 1, out)
            doc = docs[0]
            self.assertEqual((doc["apiVersion"], doc["kind"]), ("cert-manager.io/v1", "Certificate"))
            spec = doc["spec"]
            self.assertEqual(spec["dnsNames"], [f"{role}.airlock.internal"])
            self.assertEqual(spec["secretName"], f"R-airlock-internal-tls-{role}")
            self.assertEqual(spec["privateKey"]["algorithm"], "ECDSA")
            self.assertEqual(spec["privateKey"]["size"], 256)
            self.assertIn("server auth", spec["usages"])
            self.assertIn("client auth", spec["usages"])
            self.assertEqual(spec["issuerRef"], {"name": "ISSUER"})
        for key in ("duration", "renewBefore"):
            self.assertIn(key, self.values["internalTLS"]["certManager"])

    def test_chart_ca_kept_across_upgrades(self):
        """Without cert-manager: an ECDSA CA in its own Secret (kept across
        upgrades and past an uninstall), certificates signed by it with
        the role's DNS name, kept while valid for 30 more days."""
        _, own = self._internal_tls_branches()
        self.assertIn('lookup "v1" "Secret" $ns $caName', own)
        self.assertIn('buildCustomCert (index $existingCA.data "ca.crt") '
                      '(index $existingCA.data "ca.key")', own)
        self.assertIn('genCAWithKey "airlock internal CA" (int .Values.internalTLS.generated.caDays)'
                      ' (genPrivateKey "ecdsa")', own)
        self.assertIn("helm.sh/resource-policy: keep", own)
        self.assertIn('genSignedCertWithKey . nil (list (include "airlock.internalTLSDNSName" $id))'
                      ' (int $root.Values.internalTLS.generated.certDays) $ca (genPrivateKey "ecdsa")',
                      own)
        self.assertIn("type: kubernetes.io/tls", own)
        helpers = dict(templates())["_helpers.tpl"]
        renewal = define_body(helpers, "airlock.internalTLSRenewal")
        self.assertIn("2592000", renewal, "renewed 30 days before it expires")
        self.assertIn('(index $own.data "ca.crt" | default "") (index $ca.data "ca.crt"', renewal,
                      "renewed when the CA changed")

    def test_internal_token_secret_generated_unless_given(self):
        text = dict(templates())["internal-token.yaml"]
        self.assertIn("if not .Values.internalToken.existingSecret", text)
        self.assertIn("token: {{ randAlphaNum 48 | b64enc }}", text)
        self.assertIn('lookup "v1" "Secret"', text, "kept across upgrades")
        self.assertIn("existingSecret", self.values["internalToken"])

    def test_in_chart_postgresql_requires_a_password(self):
        tpl = dict(templates())
        text, helpers = tpl["database.yaml"], tpl["_helpers.tpl"]
        self.assertNotIn("value: trust", text)
        env = yaml.safe_load(define_body(helpers, "airlock.postgresqlAuthEnv")
                             .replace('{{ include "airlock.fullname" . }}', "R"))
        by_name = {e["name"]: e for e in env}
        self.assertEqual(by_name["POSTGRES_HOST_AUTH_METHOD"]["value"], "scram-sha-256")
        self.assertEqual(by_name["POSTGRES_PASSWORD"]["valueFrom"]["secretKeyRef"],
                         {"name": "R-database", "key": "password"})
        # The server and the init container that closes old volumes both.
        self.assertEqual(text.count('include "airlock.postgresqlAuthEnv"'), 2)
        # Generated once, then kept: across upgrades and past an uninstall
        # (the volume keeps the role's password).
        self.assertIn('lookup "v1" "Secret" .Release.Namespace $name', text)
        self.assertIn("$password = randAlphaNum 32", text)
        self.assertIn("helm.sh/resource-policy: keep", text)
        self.assertIn("password: {{ $password | b64enc }}", text)
        self.assertRegex(text, r'url: \{\{ printf "host=%s-postgresql port=5432 user=airlock '
                               r'dbname=airlock password=%s" .* \$password \| b64enc \}\}')
        # The services read that url, and restart when it gained the password.
        for name in ("scheduler.yaml", "vault.yaml"):
            self.assertIn('include "airlock.databaseEnv"', tpl[name])
            self.assertRegex(tpl[name], r'\{\{- with .*include "airlock\.databaseAnnotations"')

    def test_require_password_script_closes_an_old_volume(self):
        pg_bin = "/usr/lib/postgresql/15/bin"
        if not os.path.exists(os.path.join(pg_bin, "initdb")):
            self.skipTest("PostgreSQL 15 is not installed")
        text = dict(templates())["database.yaml"]
        m = re.search(r"- name: require-password\n.*?- -ec\n\s*- \|\n((?: {14}[^\n]*\n)+)", text,
                      re.S)
        self.assertIsNotNone(m, "no require-password script")
        script = "\n".join(line[14:] for line in m.group(1).splitlines())
        OldVolume(self, pg_bin).check(script)

    def test_nats_has_a_user_per_role(self):
        """nats-server knows the scheduler, the gateway and the nodes, each
        with its own password from nats-users.yaml's Secret (never on a
        command line) and only its subjects; each service reads its role's
        credentials file."""
        text = dict(templates())["nats.yaml"]
        conf = re.search(r"nats\.conf: \|\n((?:\s{4}.*\n)+)", text)
        self.assertIsNotNone(conf, "nats.yaml has no nats.conf")
        conf = conf.group(1)
        self.assertNotIn("token", conf, "no shared token any more")
        for role in ("scheduler", "gateway", "node"):
            self.assertRegex(conf, r'\{user: "%s", password: \$NATS_%s_PASSWORD, permissions'
                             % (role, role.upper()))
        self.assertRegex(conf, r'user: "gateway".*\n\s*publish: \{deny: \[">"\]\}')
        self.assertRegex(conf, r'user: "node".*\n\s*publish: \{allow: \["airlock\.node\.\*\.'
                               r'heartbeat", "airlock\.builds\.\*\.>"\]\}')
        self.assertIn('args: ["-c", "/etc/nats/nats.conf"]', text)
        self.assertIn("value: '\"$(AIRLOCK_NATS_{{ upper $role }})\"'", text)
        self.assertNotIn("--auth", text, "no password on a command line")
        users = dict(templates())["nats-users.yaml"]
        self.assertIn('list "scheduler" "gateway" "node"', users)
        self.assertIn("lookup \"v1\" \"Secret\"", users, "passwords kept across upgrades")
        for name, role in (("scheduler.yaml", "scheduler"), ("gateway.yaml", "gateway"),
                           ("node.yaml", "node")):
            t = dict(templates())[name]
            self.assertIn('--nats-credentials-file={{ include "airlock.natsCredentialsFile" . }}',
                          t, name)
            self.assertIn('include "airlock.natsCredentialsMount" .', t, name)
            self.assertIn('(dict "root" . "role" "%s")' % role, t, name)

    def check_nats_server_takes(self, conf):
        """conf, its passwords set as the pod sets them (quoted, through the
        environment), passes `nats-server -t` (which also loads its TLS
        files)."""
        env = dict(os.environ)
        for role in ("SCHEDULER", "GATEWAY", "NODE"):
            env["NATS_%s_PASSWORD" % role] = '"%s"' % ("p" * 40)
        with tempfile.NamedTemporaryFile("w", suffix=".conf") as f:
            f.write(conf)
            f.flush()
            out = subprocess.run(["/usr/sbin/nats-server", "-c", f.name, "-t"], env=env,
                                 capture_output=True, text=True, timeout=30)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)

    def test_gateway_tls_secret(self):
        """gateway.tls.secretName: empty, plain HTTP as before; set, the
        kubernetes.io/tls Secret is mounted read-only and passed as
        --tls-cert/--tls-key, and the probes speak HTTPS."""
        self.assertEqual(self.values["gateway"]["tls"]["secretName"], "")
        text = dict(templates())["gateway.yaml"]
        plain = render_value(text, "gateway.tls.secretName", "")
        for absent in ("--tls-cert", "--tls-key", "scheme: HTTPS", "/etc/airlock/tls"):
            self.assertNotIn(absent, plain)
        self.assertNotIn("tls", [v["name"] for v in yaml_list_after(plain, "volumes")])

        tls = render_value(text, "gateway.tls.secretName", "gw-tls")
        self.assertIn("- --tls-cert=/etc/airlock/tls/tls.crt\n", tls)
        self.assertIn("- --tls-key=/etc/airlock/tls/tls.key\n", tls)
        self.assertEqual(tls.count("scheme: HTTPS"), 2, "both probes")
        volumes = {v["name"]: v for v in yaml_list_after(tls, "volumes")}
        self.assertEqual(volumes["tls"]["secret"]["secretName"], "gw-tls")
        mounts = {m["name"]: m for m in yaml_list_after(tls, "volumeMounts")}
        self.assertEqual(mounts["tls"]["mountPath"], "/etc/airlock/tls")
        self.assertTrue(mounts["tls"]["readOnly"])


    def test_nats_conf_is_valid_for_nats_server(self):
        self.assertNotIn("tls", nats_conf())
        self.check_nats_server_takes(nats_conf())

    def test_nats_tls_from_a_secret(self):
        """With internal TLS (its Secret for nats, or nats.tls.secretName),
        nats-server serves TLS with the Secret's tls.crt/tls.key and
        verifies every client against its ca.crt (kubernetes.io/tls keys),
        the Secret mounted read-only beside the config; the config, with a
        certificate that scripts/internal-pki.sh made, passes
        `nats-server -t`."""
        text = dict(templates())["nats.yaml"]
        for line in ('cert_file: "/etc/nats-tls/tls.crt"', 'key_file: "/etc/nats-tls/tls.key"',
                     'ca_file: "/etc/nats-tls/ca.crt"', "verify: true"):
            self.assertIn(line, text)
        self.assertRegex(text, re.escape(NATS_TLS_IF) + r"\n\s*- name: tls\n"
                               r"\s*mountPath: /etc/nats-tls\n\s*readOnly: true")
        self.assertRegex(text, re.escape(NATS_TLS_IF) + r"\n\s*- name: tls\n"
                               r"\s*secret:\n\s*secretName: "
                               r"\{\{ include \"airlock.natsTLSSecret\" \. \}\}")
        helpers = dict(templates())["_helpers.tpl"]
        body = define_body(helpers, "airlock.natsTLSSecret")
        self.assertIn(".Values.nats.tls.secretName", body)
        self.assertIn('include "airlock.internalTLSSecret" (dict "root" . "name" "nats")', body)
        internal = dict(templates())["internal-tls.yaml"]
        self.assertIn('{{- $roles = append $roles "nats" }}', internal,
                      "the chart makes nats-server's certificate with the others")
        with tempfile.TemporaryDirectory(prefix="airlock-chart-nats-") as d:
            pki = os.path.join(d, "pki")
            subprocess.run(["/bin/sh", os.path.join(CHART, "../../scripts/internal-pki.sh"), pki,
                            "nats"], check=True, capture_output=True, timeout=60)
            secret = os.path.join(d, "secret")
            os.mkdir(secret)
            for key, made in (("tls.crt", "nats.crt"), ("tls.key", "nats.key"),
                              ("ca.crt", "ca.crt")):
                os.symlink(os.path.join(pki, made), os.path.join(secret, key))
            conf = nats_conf(secret)
            self.assertIn('cert_file: "%s/tls.crt"' % secret, conf)
            self.check_nats_server_takes(conf)

    def test_node_pod_is_privileged_with_shared_netns(self):
        _, text = next((n, t) for n, t in templates() if n == "node.yaml")
        self.assertIn("kind: DaemonSet", text)
        self.assertGreaterEqual(text.count("privileged: true"), 3)
        self.assertIn("mountPropagation: Bidirectional", text)
        self.assertIn("mountPropagation: HostToContainer", text)

    def test_every_service_serves_metrics(self):
        """With metrics.enabled every service but the gateway (its API
        serves /metrics) passes --metrics-listen on a named metrics port,
        every pod carries the scrape annotations, and the PodMonitor's
        ports are ports the containers name."""
        ports = {"airlock-egress": "metrics.egressPort"}
        listened = set()
        for tname, _, binary, block in service_containers():
            if binary == "airlock-gateway":
                continue
            port = ports.get(binary, "metrics.port")
            self.assertIn("--metrics-listen=0.0.0.0:{{ .Values.%s }}" % port, block,
                          f"{tname}: {binary} serves no /metrics")
            self.assertIn("containerPort: {{ .Values.%s }}" % port, block,
                          f"{tname}: {binary}'s metrics port is not declared")
            listened.add(binary)
        self.assertEqual(listened, set(AIRLOCK_SERVICES) - {"airlock-gateway"})
        texts = dict(templates())
        for tname in ("gateway.yaml", "scheduler.yaml", "vault.yaml", "node.yaml"):
            self.assertIn('include "airlock.metricsAnnotations"', texts[tname], tname)
        helpers = define_body(texts["_helpers.tpl"], "airlock.metricsAnnotations")
        for line in ('prometheus.io/scrape: "true"', "prometheus.io/port:",
                     "prometheus.io/path: /metrics"):
            self.assertIn(line, helpers)
        names = set(re.findall(r"- name: ([a-z-]+)\n\s+containerPort:", "".join(texts.values())))
        monitor = texts["podmonitor.yaml"]
        self.assertIn("if and .Values.metrics.enabled .Values.metrics.podMonitor.enabled",
                      monitor)
        for port in re.search(r"range list ((?:\"[a-z-]+\" ?)+)", monitor).group(1).split():
            self.assertIn(port.strip('"'), names, "the PodMonitor scrapes a port no pod has")
        self.assertIs(self.values["metrics"]["podMonitor"]["enabled"], False)
        self.assertNotEqual(self.values["metrics"]["port"], self.values["metrics"]["egressPort"],
                            "vmhost and egress share the node pod's network")

    def test_egress_node_metrics_need_the_podmonitor(self):
        """The node pod's annotation names vmhost's port alone (one a
        pod), so egress's are reached by the PodMonitor's port name only:
        that port is the one egress listens on, and while the PodMonitor is
        off the install notes say egress's metrics need it."""
        texts = dict(templates())
        node = texts["node.yaml"]
        self.assertIn('include "airlock.metricsAnnotations" (dict "root" . "port" '
                      '.Values.metrics.port)', node)
        self.assertRegex(node, r"- name: egress-metrics\n\s+containerPort: "
                               r"\{\{ \.Values\.metrics\.egressPort \}\}")
        self.assertIn('"egress-metrics"', texts["podmonitor.yaml"])
        notes = texts["NOTES.txt"]
        guard = notes.index("if and .Values.metrics.enabled (not "
                            ".Values.metrics.podMonitor.enabled)")
        said = notes[guard:notes.index("{{- end }}", guard)]
        for words in ("egress-metrics", "metrics.podMonitor.enabled=true"):
            self.assertIn(words, said)
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                               "operations.md")) as f:
            ops = f.read()
        self.assertIn("regex: node;egress-metrics", ops,
                      "operations.md's scrape job keeps the port the chart names")


class OldVolume:
    """A data dir as the chart made it before passwords (trust for every
    connection, role and database airlock), the init container's script
    run on it, and what a TCP client can do before and after."""

    PASSWORD = "s3cretPassw0rdFromTheSecret"

    def __init__(self, test, pg_bin):
        self.t, self.bin = test, pg_bin
        self.dir = tempfile.mkdtemp(prefix="airlock-chart-pg-")
        os.chmod(self.dir, 0o755)
        self.data = os.path.join(self.dir, "pgdata")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = str(s.getsockname()[1])
        test.addCleanup(self.cleanup)

    def as_postgres(self, argv, env=None):
        """Runs argv as the server's user (initdb refuses root)."""
        full = dict(os.environ, PATH=f"{self.bin}:{os.environ['PATH']}", PGPORT=self.port,
                    **(env or {}))
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres")
            argv = ["runuser", "-u", "postgres", "--", "env",
                    *[f"{k}={v}" for k, v in full.items() if k.startswith("PG") or
                      k in ("PATH", "POSTGRES_PASSWORD")], *argv]
        return subprocess.run(argv, env=full, capture_output=True, text=True, timeout=120)

    def ok(self, argv, env=None):
        r = self.as_postgres(argv, env)
        self.t.assertEqual(r.returncode, 0, f"{argv}: {r.stdout}{r.stderr}")

    def server(self, action):
        opts = f"-c listen_addresses=127.0.0.1 -c unix_socket_directories={self.dir}"
        self.ok([f"{self.bin}/pg_ctl", "-D", self.data, "-w", "-o", opts,
                 "-l", os.path.join(self.dir, "log"), action])

    def connect(self, password=None):
        """psql over TCP; (returncode, output)."""
        conninfo = f"host=127.0.0.1 port={self.port} user=airlock dbname=airlock"
        if password is not None:
            conninfo += f" password={password}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        r = subprocess.run([f"{self.bin}/psql", "-w", "-At", "-d", conninfo, "-c",
                            "SELECT coalesce(rolpassword LIKE 'SCRAM-SHA-256$%', false) FROM pg_authid"
                            " WHERE rolname = 'airlock'"],
                           env=env, capture_output=True, text=True, timeout=60)
        return r.returncode, r.stdout + r.stderr

    def check(self, script):
        self.ok([f"{self.bin}/initdb", "-D", self.data, "-A", "trust", "-U", "airlock"])
        self.server("start")
        self.ok([f"{self.bin}/createdb", "-h", self.dir, "-U", "airlock", "airlock"])
        rc, out = self.connect()
        self.t.assertEqual((rc, out.strip()), (0, "f"), "the old volume lets anyone in")
        self.server("stop")
        for _ in range(2):  # every start: the second finds scram-sha-256 already
            self.ok(["sh", "-ec", script], {"PGDATA": self.data,
                                            "POSTGRES_PASSWORD": self.PASSWORD})
            self.server("start")
            rc, out = self.connect()
            self.t.assertNotEqual(rc, 0, out)
            self.t.assertIn("password", out)
            rc, out = self.connect("wrong")
            self.t.assertNotEqual(rc, 0, out)
            self.t.assertIn("password authentication failed", out)
            rc, out = self.connect(self.PASSWORD)
            self.t.assertEqual((rc, out.strip()), (0, "t"), "the Secret's password, as SCRAM")
            self.server("stop")

    def cleanup(self):
        if os.path.exists(os.path.join(self.data, "postmaster.pid")):
            self.as_postgres([f"{self.bin}/pg_ctl", "-D", self.data, "-w", "-m", "immediate",
                              "stop"])
        shutil.rmtree(self.dir, ignore_errors=True)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
