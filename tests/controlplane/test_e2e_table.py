#!/usr/bin/python3
"""Every route the gateway serves has a row in docs/e2e-tests.md: the route
(`METHOD PATH`, optionally with a ?query or a note after it) in a table's
"REST route" column, and in that row's "REST test" column either a ctest
name (`controlplane.…`) or **none**. A route in the table that the gateway
does not serve is a failure too.

usage: test_e2e_table.py GATEWAY e2e-tests.md
  GATEWAY: the airlock-gateway binary, whose --routes lists every route (as
  test_routes_documented.py reads them); or gateway/routes.c, whose
  gw_routes[] table is parsed instead (no build needed).
Standard library only."""
import re
import subprocess
import sys

METHODS = "GET|POST|PUT|DELETE|PATCH"


def served_routes(source):
    """Every "METHOD PATH" the gateway registers, in its order."""
    if source.endswith(".c"):
        text = open(source).read()
        table = re.search(r"gw_routes\[\]\s*=\s*\{(.*?)\n\};", text, re.S)
        if not table:
            sys.exit("%s: no gw_routes[] table" % source)
        return ["%s %s" % m for m in re.findall(r'(?:\{|ROUTE\()\s*"(%s)",\s*"([^"]+)"' % METHODS,
                                                 table.group(1))]
    out = subprocess.run([source, "--routes"], capture_output=True, text=True, check=True).stdout
    return [r for r in out.split("\n") if r]


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def table_rows(path):
    """(line number, REST route cell, REST test cell) of every row of every
    table that has both columns."""
    rows, header = [], None
    for number, line in enumerate(open(path), 1):
        if not line.startswith("|"):
            header = None
            continue
        row = cells(line)
        if header is None:
            header = row
            continue
        if all(re.fullmatch(r":?-+:?", c) for c in row):
            continue
        if "REST route" in header and "REST test (ctest name: function)" in header:
            route = row[header.index("REST route")] if len(row) == len(header) else ""
            test = row[header.index("REST test (ctest name: function)")] if len(row) == len(header) else ""
            rows.append((number, route, test))
    return rows


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: test_e2e_table.py GATEWAY|routes.c e2e-tests.md")
    source, table = sys.argv[1:3]
    served = served_routes(source)
    if not served:
        sys.exit("%s: no routes" % source)
    rows = table_rows(table)
    in_table = {}  # route -> [(line, REST test cell)]
    for number, route_cell, test_cell in rows:
        for method, path in re.findall(r"`(%s) ([^`?\s]+)(?:\?[^`]*)?`" % METHODS, route_cell):
            in_table.setdefault("%s %s" % (method, path), []).append((number, test_cell))

    passed, failed = 0, []
    for route in served:
        found = in_table.get(route, [])
        if not found:
            failed.append("%s: no row in %s" % (route, table))
        elif not any(re.search(r"`controlplane\.[\w.-]+`|\*\*none\*\*", test) for _, test in found):
            failed.append("%s: its rows (%s line %s) name no ctest test and do not say **none**"
                          % (route, table, ", ".join(str(n) for n, _ in found)))
        else:
            passed += 1
    for route in sorted(set(in_table) - set(served)):
        failed.append("%s: in %s (line %s) but not served by the gateway"
                      % (route, table, ", ".join(str(n) for n, _ in in_table[route])))
    for f in failed:
        print("FAIL " + f)
    print("%d passed, %d failed" % (passed, len(failed)))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
