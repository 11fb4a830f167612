#!/usr/bin/python3
"""E2B's in-sandbox API (envd) served by the gateway, against a real stack
with one sandbox (created through airlock's REST API) shared by every case:

- raw Connect calls: unary (application/json) and server-streaming
  (application/connect+json: 5-byte envelopes, the end-stream flagged 0x02
  carrying {} or the error), keepalive events on a quiet stream, process
  tags (Start with a tag, List, Connect and SendSignal by tag), errors in
  Connect's shapes: auth failures (no token, a malformed or unknown one:
  unauthenticated 401; another project's key and an unknown sandbox:
  not_found 404), unimplemented calls naming the feature, malformed
  envelopes, path errors; envd's HTTP routes /health and /files (its
  {"code","message"} errors); the Host form 49983-<id>.<domain>;
  `airlock-gateway --routes` not listing envd's routes.
- E2B's own JS SDK (envd_sdk.js under node): commands, pty and files
  through the SDK unchanged.

usage: test_envd.py GATEWAY  (cp_harness passes AIRLOCK_URL and
AIRLOCK_ADMIN_KEY). Nothing asserts speed."""
import base64
import http.client
import json
import os
import struct
import subprocess
import sys

from rest_client import URL, call, check, new_project_key, node_checks, report_and_exit

GATEWAY = sys.argv[1]
SDK = "/usr/local/lib/airlock-test-tools/node_modules/e2b"
HERE = os.path.dirname(os.path.abspath(__file__))


def e2b_key(key):
    return "e2b_" + key[len("ak_"):]


def envd(path, body=b"", token=None, sid=None, stream=False, headers=None, method="POST"):
    """(status, headers, raw body) of an envd request for sandbox sid."""
    h = {"E2b-Sandbox-Id": sid or SID, "E2b-Sandbox-Port": "49983"}
    if token is not None:
        h["X-Access-Token"] = token
    if method == "POST" and path.startswith(("/process.", "/filesystem.")):
        h["Content-Type"] = "application/connect+json" if stream else "application/json"
    h.update(headers or {})
    conn = http.client.HTTPConnection(URL.hostname, URL.port, timeout=600)
    conn.request(method, path, body=body, headers=h)
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, resp.headers, data


def unary(path, msg, token=None, **kw):
    st, h, data = envd(path, json.dumps(msg).encode(), token=TOKEN if token is None else token, **kw)
    try:
        return st, h, json.loads(data) if data else None
    except ValueError:
        return st, h, data


def envelope(msg):
    payload = json.dumps(msg).encode()
    return struct.pack(">BI", 0, len(payload)) + payload


def frames(data):
    """[(flags, parsed JSON)] of a Connect stream body; None when the body
    does not split into envelopes exactly."""
    out, i = [], 0
    while i < len(data):
        if len(data) - i < 5:
            return None
        flags, n = struct.unpack(">BI", data[i:i + 5])
        if len(data) - i - 5 < n:
            return None
        out.append((flags, json.loads(data[i + 5:i + 5 + n])))
        i += 5 + n
    return out


def streaming(path, msg, token=None, headers=None, raw=None):
    """(status, content type, frames) of a server-streaming call."""
    st, h, data = envd(path, raw if raw is not None else envelope(msg),
                       token=TOKEN if token is None else token, stream=True, headers=headers)
    return st, h.get("Content-Type"), frames(data)


def stream_ok(fs):
    """Whether fs ends with exactly one end-stream envelope carrying {}."""
    return bool(fs) and fs[-1] == (2, {}) and all(f == 0 for f, _ in fs[:-1])


def stream_error(fs):
    """The error of a stream that is only an end-stream with an error."""
    if fs and len(fs) == 1 and fs[0][0] == 2 and "error" in fs[0][1]:
        return fs[0][1]["error"]
    return None


def events(fs, kind):
    return [m["event"][kind] for f, m in fs if f == 0 and kind in m.get("event", {})]


def b64(s):
    return base64.b64encode(s.encode()).decode()


def output(fs, fd):
    return "".join(base64.b64decode(d[fd]).decode() for d in events(fs, "data") if fd in d)


def check_connect_unary():
    st, h, body = unary("/process.Process/List", {})
    check(st == 200 and h.get("Content-Type", "").startswith("application/json")
          and isinstance(body, dict) and isinstance(body.get("processes"), list),
          "unary List: 200 application/json with processes (%s %s)" % (st, body))
    st, _, body = unary("/filesystem.Filesystem/Stat", {"path": "/etc/hostname"})
    entry = (body or {}).get("entry", {}) if st == 200 else {}
    check(entry.get("name") == "hostname" and entry.get("type") == "FILE_TYPE_FILE"
          and entry.get("path") == "/etc/hostname" and "modifiedTime" in entry,
          "unary Stat answers an EntryInfo in proto JSON (%s %s)" % (st, body))
    st, _, body = unary("/filesystem.Filesystem/Stat", {"path": "/no/such/file"})
    check(st == 404 and body.get("code") == "not_found" and "/no/such/file" in body.get("message", ""),
          "Stat of a missing path: 404 not_found naming it (%s %s)" % (st, body))
    st, _, body = unary("/filesystem.Filesystem/ListDir", {"path": "etc"})
    check(st == 400 and body.get("code") == "invalid_argument" and "absolute" in body.get("message", ""),
          "ListDir of a relative path: 400 invalid_argument (%s %s)" % (st, body))
    st, _, body = unary("/filesystem.Filesystem/Stat", {"path": "/", "bogus": 1})
    check(st == 400 and "bogus" in body.get("message", ""),
          "an unknown field is refused by name (%s %s)" % (st, body))
    st, _, body = unary("/filesystem.Filesystem/MakeDir", {"path": "/tmp"})
    check(st == 409 and body.get("code") == "already_exists",
          "MakeDir of an existing directory: 409 already_exists (%s %s)" % (st, body))
    st, _, body = unary("/process.Process/SendSignal",
                        {"process": {"pid": 999999}, "signal": "SIGNAL_SIGKILL"})
    check(st == 404 and body.get("code") == "not_found" and "999999" in body.get("message", ""),
          "SendSignal to an unknown pid: not_found (%s %s)" % (st, body))
    st, _, body = unary("/process.Process/SendSignal", {"process": {"pid": 1}, "signal": "SIGNAL_SIGHUP"})
    check(st == 400 and "SIGNAL_SIGKILL" in body.get("message", ""),
          "SendSignal with an unsupported signal names the ones taken (%s %s)" % (st, body))
    for path, word in (("/filesystem.Filesystem/CreateWatcher", "WatchDir"),
                       ("/process.Process/StreamInput", "SendInput")):
        st, _, body = unary(path, {})
        check(st == 501 and body.get("code") == "unimplemented" and word in body.get("message", ""),
              "%s: 501 unimplemented naming %r (%s %s)" % (path, word, st, body))
    st, _, fs = streaming("/filesystem.Filesystem/WatchDir", {"path": "/no/such/dir"})
    err = stream_error(fs)
    check(st == 200 and err and err.get("code") == "not_found" and "/no/such/dir" in err.get("message", ""),
          "WatchDir of a missing directory: an end-stream not_found naming it (%s %s)" % (st, fs))
    st, _, fs = streaming("/filesystem.Filesystem/WatchDir", {"path": "/tmp", "includeEntry": True})
    err = stream_error(fs)
    check(err and err.get("code") == "unimplemented" and "includeEntry" in err.get("message", ""),
          "WatchDir with includeEntry: unimplemented naming it (%s)" % fs)
    st, _, body = unary("/process.Process/Nope", {})
    check(st == 501 and body.get("code") == "unimplemented", "an unknown method is unimplemented")


def check_streams():
    st, ctype, fs = streaming("/process.Process/Start", {
        "process": {"cmd": "/bin/sh", "args": ["-c", "echo out; echo err >&2; echo $V; exit 3"],
                    "envs": {"V": "from-env"}, "cwd": "/tmp"}})
    check(st == 200 and ctype == "application/connect+json" and stream_ok(fs),
          "Start: 200 connect+json, envelopes ending with {} (%s %s %s)" % (st, ctype, fs))
    if not fs:
        return
    starts = events(fs, "start")
    check(fs[0][1].get("event", {}).get("start", {}).get("pid", 0) > 1 and len(starts) == 1,
          "Start: the first event is start{pid} (%s)" % fs[0][1])
    check(output(fs, "stdout") == "out\nfrom-env\n" and output(fs, "stderr") == "err\n",
          "Start: stdout and stderr apart, base64 (%r %r)" % (output(fs, "stdout"), output(fs, "stderr")))
    ends = events(fs, "end")
    check(ends == [{"exitCode": 3, "exited": True, "status": "exit status 3"}],
          "Start: end{exitCode, exited, status} (%s)" % ends)

    st, _, fs = streaming("/process.Process/Start",
                          {"process": {"cmd": "/bin/sh", "args": ["-c", "sleep 3; echo done"]}},
                          headers={"Keepalive-Ping-Interval": "1"})
    check(stream_ok(fs) and events(fs, "keepalive") and output(fs, "stdout") == "done\n",
          "a quiet stream gets keepalive events as asked (%s)" % fs)

    # A tagged process: started, left running (the client reads up to its
    # first output, so it is not signalled before it printed), then found
    # by tag.
    conn = http.client.HTTPConnection(URL.hostname, URL.port, timeout=600)
    conn.request("POST", "/process.Process/Start", body=envelope(
        {"process": {"cmd": "/bin/sh", "args": ["-c", "echo tagged; sleep 600"]}, "tag": "srv-1",
         "stdin": False}),
        headers={"E2b-Sandbox-Id": SID, "E2b-Sandbox-Port": "49983", "X-Access-Token": TOKEN,
                 "Content-Type": "application/connect+json"})
    resp = conn.getresponse()
    first, printed = None, None
    for _ in range(2):
        head = resp.read(5)
        msg = json.loads(resp.read(struct.unpack(">BI", head)[1]))
        first, printed = (msg, None) if first is None else (first, msg)
    conn.close()
    check(printed == {"event": {"data": {"stdout": b64("tagged\n")}}},
          "the tagged process's first output (%s)" % printed)
    pid = first["event"]["start"]["pid"]
    st, _, body = unary("/process.Process/List", {})
    tagged = [p for p in body.get("processes", []) if p.get("tag") == "srv-1"]
    check(len(tagged) == 1 and tagged[0]["pid"] == pid
          and tagged[0]["config"] == {"cmd": "/bin/sh", "args": ["-c", "echo tagged; sleep 600"],
                                      "envs": {}},
          "List shows the process with its tag and config (%s)" % tagged)
    st, _, body = unary("/process.Process/SendSignal",
                        {"process": {"tag": "srv-1"}, "signal": "SIGNAL_SIGTERM"})
    check(st == 200 and body == {}, "SendSignal by tag: 200 {} (%s %s)" % (st, body))
    st, _, fs = streaming("/process.Process/Connect", {"process": {"pid": pid}})
    check(stream_ok(fs) and events(fs, "start") == [{"pid": pid}]
          and output(fs, "stdout") == "tagged\n"
          and events(fs, "end") == [{"exitCode": -1, "exited": False, "status": "signal: terminated"}],
          "Connect by pid replays the output and the signal's end (%s)" % fs)
    st, _, fs = streaming("/process.Process/Connect", {"process": {"tag": "srv-1"}})
    err = stream_error(fs)
    check(st == 200 and err and err["code"] == "not_found" and "srv-1" in err["message"],
          "Connect by the tag of an ended process: end-stream not_found (%s)" % fs)

    st, _, fs = streaming("/process.Process/Start", None, raw=b"\x00\x00\x00\x00\x09{}")
    err = stream_error(fs)
    check(st == 200 and err and err["code"] == "invalid_argument" and "envelope" in err["message"],
          "a malformed envelope: end-stream invalid_argument (%s)" % fs)
    st, _, fs = streaming("/process.Process/Start", {"process": {"cmd": "/no/such/program"}})
    err = stream_error(fs)
    check(st == 200 and err is not None and "/no/such/program" in err.get("message", ""),
          "Start of a missing program: end-stream error naming it (%s)" % fs)
    st, _, fs = streaming("/process.Process/Start", {"process": {"args": ["x"]}})
    err = stream_error(fs)
    check(err and err["code"] == "invalid_argument" and "process.cmd" in err["message"],
          "Start without cmd names process.cmd (%s)" % fs)


def check_auth():
    st, _, body = unary("/process.Process/List", {}, token="")
    check(st == 401 and body.get("code") == "unauthenticated",
          "a malformed token: 401 unauthenticated (%s %s)" % (st, body))
    st, _, data = envd("/process.Process/List", b"{}", token=None)
    body = json.loads(data)
    check(st == 401 and body.get("code") == "unauthenticated" and "X-Access-Token" in body["message"],
          "no token: 401 unauthenticated naming X-Access-Token (%s %s)" % (st, body))
    st, _, body = unary("/process.Process/List", {}, token="e2b_" + "0" * 64)
    check(st == 401 and body.get("code") == "unauthenticated",
          "an unknown key: 401 unauthenticated (%s %s)" % (st, body))
    st, _, body = unary("/process.Process/List", {}, token=OTHER_KEY)
    check(st == 404 and body.get("code") == "not_found",
          "another project's key: 404 not_found (%s %s)" % (st, body))
    st, _, body = unary("/process.Process/List", {}, sid="sb-unknown-envd")
    check(st == 404 and body.get("code") == "not_found" and "sb-unknown-envd" in body.get("message", ""),
          "an unknown sandbox: 404 not_found naming it (%s %s)" % (st, body))
    st, _, fs = streaming("/process.Process/Start", {"process": {"cmd": "true"}}, token="nope")
    err = stream_error(fs)
    check(st == 200 and err and err["code"] == "unauthenticated",
          "a streaming call refused: end-stream unauthenticated (%s %s)" % (st, fs))
    # An airlock-form key works as well as its E2B form.
    st, _, body = unary("/process.Process/List", {}, token=KEY)
    check(st == 200, "the ak_ form of the key is taken too (%s)" % st)


def check_http_routes():
    st, _, _ = envd("/health", token=TOKEN, method="GET")
    check(st == 204, "GET /health: 204 (%s)" % st)
    st, _, data = envd("/files?path=/etc/hostname", token=TOKEN, method="GET")
    check(st == 200 and data.strip() != b"", "GET /files reads a file (%s %r)" % (st, data))
    st, _, data = envd("/files?path=/no/such", token=TOKEN, method="GET")
    body = json.loads(data)
    check(st == 404 and body.get("code") == 404 and "/no/such" in body.get("message", ""),
          "GET /files of a missing file: 404 {code, message} (%s %s)" % (st, body))
    st, _, data = envd("/files?path=/tmp/x", token=TOKEN, method="POST", body=b"abc",
                       headers={"Content-Type": "text/plain"})
    check(st == 400 and b"multipart/form-data" in data,
          "POST /files of another content type is refused naming the ones taken (%s %r)" % (st, data))
    boundary = "XyZ"
    form = ("--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"up.txt\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\nform bytes\r\n--%s--\r\n"
            % (boundary, boundary)).encode()
    st, _, data = envd("/files?path=/tmp/raw-form/up.txt", token=TOKEN, method="POST", body=form,
                       headers={"Content-Type": "multipart/form-data; boundary=" + boundary})
    check(st == 200 and json.loads(data) == [{"path": "/tmp/raw-form/up.txt", "name": "up.txt",
                                              "type": "file"}],
          "POST /files multipart: the entries written (%s %r)" % (st, data))
    st, _, data = envd("/files?path=/tmp/raw-form/up.txt", token=TOKEN, method="GET")
    check(data == b"form bytes", "the uploaded part is the file (%r)" % data)
    st, _, data = envd("/nope", token=TOKEN, method="GET")
    check(st == 404 and json.loads(data).get("code") == 404, "an unknown envd path: 404 (%s)" % st)
    # The Host form of the address, as E2B's SDK builds it without a
    # sandbox URL.
    conn = http.client.HTTPConnection(URL.hostname, URL.port, timeout=60)
    conn.request("POST", "/process.Process/List", body=b"{}",
                 headers={"Host": "49983-%s.localhost:%d" % (SID, URL.port),
                          "X-Access-Token": TOKEN, "Content-Type": "application/json"})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    check(resp.status == 200 and "processes" in json.loads(data),
          "Host 49983-<id>.<domain> reaches envd (%s %r)" % (resp.status, data[:200]))
    routes = subprocess.run([GATEWAY, "--routes"], capture_output=True, text=True).stdout
    check("process.Process" not in routes and "GET /files\n" not in routes,
          "airlock-gateway --routes does not list envd's routes")


def check_sdk():
    env = dict(os.environ, E2B_SDK=SDK, SANDBOX_ID=SID, E2B_API_URL=URL.geturl(),
               E2B_SANDBOX_URL=URL.geturl(), E2B_API_KEY=TOKEN)
    node_checks(os.path.join(HERE, "envd_sdk.js"), env, "SDK", 40, 900)


KEY = new_project_key("envd")[1]
OTHER_KEY = e2b_key(new_project_key("envd-other")[1])
TOKEN = e2b_key(KEY)
st, _, sb = call("POST", "/v1/sandboxes", key=KEY, body={})
if st != 201:
    sys.exit("cannot create the sandbox: %s %s" % (st, sb))
SID = sb["id"]
check_connect_unary()
check_streams()
check_auth()
check_http_routes()
check_sdk()
call("DELETE", "/v1/sandboxes/" + SID, key=KEY)
report_and_exit()
