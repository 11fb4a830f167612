#!/usr/bin/python3
"""Every reason egress can log or answer with is in docs/egress.md's
"Reasons" table, and the table names none the code does not use. A reason
is a string literal of egress's sources made of lower-case words joined by
underscores (the convention all of them follow).

usage: test_reasons_documented.py egress.md SOURCE_DIR... (egress/ and
common/egress_policy/, where its policy decisions are made)
Standard library only."""
import glob
import re
import sys

# Literals of that shape that are not reasons.
NOT_REASONS = {
    "allow_ports",  # the policy field's name in an error message
    "need_name",    # the verdict's own reason, never logged: the name decides next
}


def code_reasons(src_dirs):
    found = set()
    for src_dir in src_dirs:
        for path in glob.glob(src_dir + "/*.c"):
            found |= set(re.findall(r'"([a-z]+(?:_[a-z0-9]+)+)"', open(path).read()))
    # Prometheus metric names (egress_metrics.c) have that shape too; no
    # reason carries the project's name.
    return {r for r in found - NOT_REASONS if not r.startswith("airlock_")}


def documented(md):
    text = open(md).read()
    section = re.search(r"^### Reasons\n(.*?)^##", text, re.S | re.M)
    if not section:
        sys.exit("%s: no \"### Reasons\" section" % md)
    names = set()
    for line in section.group(1).splitlines():
        if line.startswith("| `"):
            names |= set(re.findall(r"`([a-z_0-9]+)`", line.split("|")[1]))
    return names


def main():
    code, docs = code_reasons(sys.argv[2:]), documented(sys.argv[1])
    missing, stale = sorted(code - docs), sorted(docs - code)
    for r in missing:
        print("FAIL reason %s is used by egress but not in the Reasons table" % r)
    for r in stale:
        print("FAIL reason %s is in the Reasons table but egress never uses it" % r)
    print("%d reasons, %d problems" % (len(code), len(missing) + len(stale)))
    sys.exit(1 if missing or stale else 0)


if __name__ == "__main__":
    main()
