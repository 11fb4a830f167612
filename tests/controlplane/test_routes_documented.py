#!/usr/bin/python3
"""Every route the gateway registers (airlock-gateway --routes) is in
docs/openapi.yaml (path + method) and in the REST section of docs/api.md
(as `METHOD PATH`, optionally with a ?query). argv: gateway binary, openapi.yaml, api.md."""
import re
import subprocess
import sys


def openapi_routes(path):
    routes, current = set(), None
    for line in open(path):
        m = re.match(r"^  (/\S*):\s*$", line)
        if m:
            current = m.group(1)
            continue
        m = re.match(r"^    (get|put|post|delete|patch):\s*$", line)
        if m and current:
            routes.add("%s %s" % (m.group(1).upper(), current))
        elif re.match(r"^\S", line):
            current = None
    return routes


def main():
    gateway, openapi, api_md = sys.argv[1:4]
    registered = [r for r in subprocess.run([gateway, "--routes"], capture_output=True, text=True,
                                            check=True).stdout.split("\n") if r]
    documented = openapi_routes(openapi)
    md = open(api_md).read()
    missing = []
    for route in registered:
        if route not in documented:
            missing.append("%s: not in %s" % (route, openapi))
        if not re.search(r"`%s(\?[^`]*)?`" % re.escape(route), md):
            missing.append("%s: not in %s" % (route, api_md))
    stale = sorted(documented - set(registered))
    for route in stale:
        missing.append("%s: documented in %s but not served" % (route, openapi))
    for m in missing:
        print(m)
    print("%d routes registered, %d problems" % (len(registered), len(missing)))
    sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main()
