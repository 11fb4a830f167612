#!/usr/bin/python3
"""docs/openapi.yaml is a valid OpenAPI 3.1 document: checked by a real
validator, @seriousme/openapi-schema-validator (its `validate-api`, from
the npm registry, pinned and installed by scripts/install-deps.sh), against
the official OpenAPI 3.1 schema with every $ref resolved; then what that
schema cannot say: each path's {parameters} declared `in: path` on every
operation, and none declared twice. The validator must also refuse a copy
of the document with a mistake in it, so a validator that accepts anything
fails here. argv: validate-api, openapi.yaml."""
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml


def validate(validator, path):
    r = subprocess.run([validator, path], capture_output=True, text=True, timeout=120)
    try:
        answer = json.loads(r.stdout)
    except ValueError:
        answer = {"valid": False, "errors": r.stdout + r.stderr}
    return r.returncode == 0 and answer.get("valid") is True, answer


def structure_problems(doc):
    problems = []
    params = doc.get("components", {}).get("parameters", {})

    def resolve(p):
        ref = p.get("$ref")
        return params.get(ref.rsplit("/", 1)[-1], {}) if ref else p

    for route, item in doc.get("paths", {}).items():
        in_template = set(re.findall(r"\{([^}]+)\}", route))
        shared = [resolve(p) for p in item.get("parameters", [])]
        for method, op in item.items():
            if method == "parameters" or not isinstance(op, dict):
                continue
            own = [resolve(p) for p in op.get("parameters", [])]
            declared = {p.get("name") for p in shared + own if p.get("in") == "path"}
            if declared != in_template:
                problems.append("%s %s: path parameters %s declared, the path has %s"
                                % (method.upper(), route, sorted(declared), sorted(in_template)))
            keys = [(p.get("name"), p.get("in")) for p in own]
            if len(keys) != len(set(keys)):
                problems.append("%s %s: a parameter declared twice: %s"
                                % (method.upper(), route, keys))
    return problems


def main():
    validator, spec = sys.argv[1:3]
    if not os.access(validator, os.X_OK):
        print("%s is missing: run scripts/install-deps.sh (as root)" % validator)
        sys.exit(1)
    failed = False
    ok, answer = validate(validator, spec)
    print(("ok   " if ok else "FAIL ") + "%s is valid OpenAPI: %s" % (spec, json.dumps(answer)))
    failed |= not ok

    text = open(spec).read()
    bad = text.replace("    get:\n      summary: get a sandbox\n",
                       "    get:\n      sumary: get a sandbox\n", 1)
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
        f.write(bad)
        f.flush()
        refused, answer = validate(validator, f.name)
    ok = bad != text and not refused and "sumary" in json.dumps(answer)
    print(("ok   " if ok else "FAIL ") + "the validator refuses a misspelt field: %s"
          % json.dumps(answer)[:300])
    failed |= not ok

    problems = structure_problems(yaml.safe_load(text))
    for p in problems:
        print("FAIL " + p)
    print(("ok   " if not problems else "FAIL ") + "path parameters match every path")
    failed |= bool(problems)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
