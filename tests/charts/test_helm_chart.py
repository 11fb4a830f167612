#!/usr/bin/env python3
"""Checks charts/airlock without a Kubernetes cluster or the helm binary
(neither is a Debian package): the chart's files parse, every value a
template reads exists in values.yaml, every include names a define, every
template block is closed, and every flag a container passes to an airlock
binary is one that binary's --help lists — so the chart cannot drift from
the services it deploys.

usage: test_helm_chart.py CHART_DIR BIN_DIR_MAP...   (NAME=PATH pairs)
"""
import os
import re
import subprocess
import sys
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

    def test_every_component_gets_the_internal_token(self):
        """Each container that runs an airlock service mounts the token
        Secret and passes --internal-token-file with the mounted path."""
        served = set()
        for tname, text in templates():
            for block in containers(text):
                binary = next((b for b in AIRLOCK_SERVICES if re.search(rf"\b{b}\b", block)),
                              None)
                if not binary:
                    continue
                served.add(binary)
                self.assertIn('--internal-token-file={{ include "airlock.internalTokenFile" . }}',
                              block, f"{tname}: {binary} gets no --internal-token-file")
                self.assertIn('include "airlock.internalTokenMount"', block,
                              f"{tname}: {binary} does not mount the token")
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

    def test_internal_token_secret_generated_unless_given(self):
        text = dict(templates())["internal-token.yaml"]
        self.assertIn("if not .Values.internalToken.existingSecret", text)
        self.assertIn("token: {{ randAlphaNum 48 | b64enc }}", text)
        self.assertIn('lookup "v1" "Secret"', text, "kept across upgrades")
        self.assertIn("existingSecret", self.values["internalToken"])

    def test_nats_requires_the_token(self):
        text = dict(templates())["nats.yaml"]
        conf = re.search(r"nats\.conf: \|\n((?:\s{4}.*\n)+)", text)
        self.assertIsNotNone(conf, "nats.yaml has no nats.conf")
        self.assertRegex(conf.group(1), r"authorization \{\s*token: \$NATS_TOKEN\s*\}")
        self.assertIn('args: ["-c", "/etc/nats/nats.conf"]', text)
        self.assertIn("mountPath: /etc/nats", text)
        env = yaml.safe_load(re.search(r"\n(\s*env:\n(?:\s{12}.*\n)+)", text).group(1)
                             .replace("{{ include \"airlock.internalTokenSecret\" . }}", "SECRET"))
        by_name = {e["name"]: e for e in env["env"]}
        self.assertEqual(by_name["AIRLOCK_INTERNAL_TOKEN"]["valueFrom"]["secretKeyRef"],
                         {"name": "SECRET", "key": "token"})
        # Quoted, so nats-server reads a string; expanded by Kubernetes.
        self.assertEqual(by_name["NATS_TOKEN"]["value"], '"$(AIRLOCK_INTERNAL_TOKEN)"')
        self.assertNotIn("--auth", text, "the token never goes on a command line")

    def test_node_pod_is_privileged_with_shared_netns(self):
        _, text = next((n, t) for n, t in templates() if n == "node.yaml")
        self.assertIn("kind: DaemonSet", text)
        self.assertGreaterEqual(text.count("privileged: true"), 3)
        self.assertIn("mountPropagation: Bidirectional", text)
        self.assertIn("mountPropagation: HostToContainer", text)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
