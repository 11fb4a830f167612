#!/usr/bin/python3
"""The web console (docs/console.md) against a real stack (cp_harness).

Over plain HTTP: /console redirects to /console/; index.html, its assets
and client-side routes are served with their types; a missing asset is a
404; any path that climbs out of the console's directory ("..", ".",
percent-encoded or not) is refused; only GET and HEAD are allowed.

In Debian's chromium, headless, through playwright-core: the programs of
BROWSER_PROGRAMS, each with a project and key of its own (each one's
header says what it checks; console_browser.js: sign-in, the sandboxes
table live from events, the terminal, a dropped stream, a revoked key).
Screenshots of each step land in argv[2]/{program}/.

A gateway with no console to serve (an empty --console-dir) answers
/console/ 404 saying how to serve one.

argv: the gateway binary, the screenshot directory, cp_node_heartbeat
(console_ops.js's second node)."""
import os
import re
import sys
import tempfile

from rest_client import ADMIN, URL, call, check, node_checks, report_and_exit
from second_gateway import flagged_gateway  # noqa: E402 (reads argv[1]: the gateway)

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = "/usr/local/lib/airlock-test-tools/node_modules"
CHROMIUM = "/usr/bin/chromium"


def check_files():
    st, h, _ = call("GET", "/console", raw=True)
    check(st == 301 and h["Location"] == "/console/", "/console redirects to /console/ (%s)" % st)
    st, h, page = call("GET", "/console/", raw=True)
    check(st == 200 and h["Content-Type"].startswith("text/html") and b'id="app"' in page,
          "/console/ is index.html (%s %s)" % (st, h["Content-Type"]))
    check("default-src 'self'" in h.get("Content-Security-Policy", ""),
          "the console's files carry a Content-Security-Policy")
    script = re.search(rb'src="(/console/assets/[^"]+\.js)"', page)
    check(script is not None, "index.html names its script under /console/assets/")
    if script:
        st, h, _ = call("GET", script.group(1).decode(), raw=True)
        check(st == 200 and h["Content-Type"].startswith("text/javascript")
              and "immutable" in h["Cache-Control"],
              "the script is served as JavaScript, cached for good (%s %s)"
              % (st, h["Content-Type"]))
    st, h, body = call("HEAD", "/console/", raw=True)
    check(st == 200 and body == b"" and h["Content-Type"].startswith("text/html"),
          "HEAD /console/ answers the headers only (%s)" % st)
    st, h, page = call("GET", "/console/sandboxes/sb_x", raw=True)
    check(st == 200 and b'id="app"' in page, "a client-side route is index.html (%s)" % st)
    st, _, body = call("GET", "/console/assets/missing.js")
    check(st == 404 and body["error"]["code"] == "not_found", "a missing asset is 404 (%s)" % st)
    for path in ("/console/../gateway/airlock-gateway", "/console/%2e%2e/%2e%2e/etc/passwd",
                 "/console/assets/..%2f..%2findex.html", "/console/./index.html",
                 "/console/assets/%2E%2E/index.html", "/console/..%5c..%5cetc%5cpasswd"):
        st, _, body = call("GET", path)
        check(st == 400 and body["error"]["code"] == "invalid_argument",
              "%s is refused (%s %s)" % (path, st, body))
    st, _, body = call("POST", "/console/", body={})
    check(st == 405, "POST /console/ is not allowed (%s)" % st)


# The browser programs (console_lib.js says what they share), each with a
# project and key of its own, in this order; at least this many checks each.
BROWSER_PROGRAMS = [
    ("console_browser.js", 18),
    ("console_admin.js", 41),
    ("console_ops.js", 27),
    ("console_templates.js", 30),
    ("console_sandbox.js", 48),
]


def check_browser(program, at_least, shots):
    name = program[:-len(".js")]
    _, _, project = call("POST", "/v1/projects", key=ADMIN, body={"name": name})
    _, _, key = call("POST", "/v1/projects/%s/keys" % project["id"], key=ADMIN, body={})
    st, _, refusal = call("GET", "/v1/sandboxes", key="ak_" + "0" * 64)
    check(st == 401, "a wrong key is refused by the API (%s)" % st)
    env = dict(os.environ, PLAYWRIGHT=os.path.join(TOOLS, "playwright-core"),
               CHROMIUM=CHROMIUM, CONSOLE_URL=URL.geturl() + "/console/", API_KEY=key["key"],
               PROJECT_ID=project["id"], KEY_ID=key["id"],
               WRONG_KEY_MESSAGE=refusal["error"]["message"],
               SCREENSHOTS=os.path.join(shots, name))
    os.makedirs(env["SCREENSHOTS"], exist_ok=True)
    node_checks(os.path.join(HERE, program), env, name, at_least, 600)


def check_without_bundle():
    with tempfile.TemporaryDirectory() as empty, \
            flagged_gateway("gateway-no-console.log", ["--console-dir", empty],
                            "a gateway with an empty --console-dir") as gw:
        for path in ("/console/", "/console/sandboxes"):
            st, body = gw.call("GET", path)
            check(st == 404 and b"the web console is not served here" in body
                  and b"--console-dir" in body,
                  "%s without a console says how to serve one (%s %s)" % (path, st, body))


def main():
    shots = sys.argv[2]
    os.environ["CP_NODE_HEARTBEAT"] = sys.argv[3]
    os.makedirs(shots, exist_ok=True)
    check_files()
    check_without_bundle()
    for program, at_least in BROWSER_PROGRAMS:
        check_browser(program, at_least, shots)
    report_and_exit()


if __name__ == "__main__":
    main()
