#!/usr/bin/env python3
"""No compile sees two of the project's headers by one name.

A quoted include looks in the including file's folder, then in the
include folders in order: with two headers of one name in sight, which one
a file gets depends on that order. For every compile in the build's
compile_commands.json, this lists the headers in the source's folder and
in each include folder inside the source or build tree, and fails naming
any name found in two of them.

usage: test_header_names.py COMPILE_COMMANDS_JSON SOURCE_DIR BINARY_DIR
"""
import json
import os
import shlex
import sys

INCLUDE_FLAGS = ("-I", "-iquote", "-isystem", "-idirafter")


def include_dirs(entry):
    """The folders a compile searches for a quoted include, in order."""
    args = entry.get("arguments") or shlex.split(entry["command"])
    dirs = [os.path.dirname(os.path.join(entry["directory"], entry["file"]))]
    for i, arg in enumerate(args):
        for flag in INCLUDE_FLAGS:
            if arg == flag and i + 1 < len(args):
                dirs.append(args[i + 1])
            elif arg.startswith(flag) and arg != flag:
                dirs.append(arg[len(flag):])
    return [os.path.normpath(os.path.join(entry["directory"], d)) for d in dirs]


def main():
    commands, source_dir, binary_dir = sys.argv[1:4]
    ours = tuple(os.path.abspath(d) + os.sep for d in (source_dir, binary_dir))
    with open(commands) as f:
        entries = json.load(f)
    clashes = {}  # (name, folders) -> a source that sees them
    for entry in entries:
        seen = {}
        for d in include_dirs(entry):
            if not (d + os.sep).startswith(ours) or not os.path.isdir(d):
                continue
            for name in os.listdir(d):
                if name.endswith(".h"):
                    seen.setdefault(name, [])
                    if d not in seen[name]:
                        seen[name].append(d)
        for name, folders in seen.items():
            if len(folders) > 1:
                clashes.setdefault((name, tuple(folders)), entry["file"])
    for (name, folders), source in sorted(clashes.items()):
        print(f"{name} in {', '.join(folders)}: both seen by {source}")
    if not entries:
        print(f"no compile in {commands}")
        return 1
    print(f"{len(entries)} compiles, {len(clashes)} clashes")
    return 1 if clashes else 0


if __name__ == "__main__":
    sys.exit(main())
