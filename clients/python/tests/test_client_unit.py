#!/usr/bin/python3
"""The client's own pieces, without a stack: SSE parsing, errors, URL and
query building, bodies, streamed uploads and downloads, against a tiny
local HTTP server that answers what each case needs and records what the
client sent. argv[1] (optional): the directory holding the airlock
package."""
import base64
import http.server
import io
import json
import os
import socket
import sys
import tempfile
import threading
import unittest
import urllib.parse

sys.path.insert(0, sys.argv.pop(1) if len(sys.argv) > 1 else
                os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from airlock import AirlockError, Client, Exit, Output, VolumeMount, parse_sse  # noqa: E402
from airlock._http import path, with_query  # noqa: E402


class Recorded:
    def __init__(self, method, target, headers, body):
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
        u = urllib.parse.urlsplit(target)
        self.path = u.path
        self.query = urllib.parse.parse_qs(u.query, keep_blank_values=True)


class Server:
    """A local HTTP/1.1 server: routes maps "METHOD /path" to a function
    (handler, Recorded) that writes the answer."""

    def __init__(self):
        self.routes: dict = {}
        self.requests: list = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _body(self):
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    out = b""
                    while True:
                        size = int(self.rfile.readline().split(b";")[0], 16)
                        if size == 0:
                            self.rfile.readline()
                            return out
                        out += self.rfile.read(size)
                        self.rfile.readline()
                n = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(n) if n else b""

            def _any(self):
                rec = Recorded(self.command, self.path, dict(self.headers), self._body())
                outer.requests.append(rec)
                fn = outer.routes.get("%s %s" % (self.command, rec.path))
                if fn is None:
                    send_json(self, 404, {"error": {"code": "not_found",
                                                    "message": "no route " + rec.path}})
                else:
                    fn(self, rec)

            do_GET = do_POST = do_PUT = do_DELETE = _any

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def last(self):
        return self.requests[-1]

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def send_json(h, status, doc, headers=None):
    data = json.dumps(doc).encode()
    h.send_response(status)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", str(len(data)))
    h.send_header("X-Request-Id", "req_test")
    for k, v in (headers or {}).items():
        h.send_header(k, v)
    h.end_headers()
    h.wfile.write(data)


def start_chunked(h, ctype):
    h.send_response(200)
    h.send_header("Content-Type", ctype)
    h.send_header("Transfer-Encoding", "chunked")
    h.end_headers()


def chunk(h, data):
    h.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
    h.wfile.flush()


def end_chunks(h):
    h.wfile.write(b"0\r\n\r\n")
    h.wfile.flush()


class SseParsing(unittest.TestCase):
    def events(self, text):
        return [(e.event, e.data) for e in parse_sse(io.BytesIO(text).readlines())]

    def test_basic_and_comments(self):
        self.assertEqual(self.events(b": subscribed\n\nevent: stdout\ndata: {\"a\":1}\n\n"
                                     b": keepalive\n\nevent: exit\ndata: {}\n\n"),
                         [("stdout", '{"a":1}'), ("exit", "{}")])

    def test_multiline_data_crlf_and_spaces(self):
        self.assertEqual(self.events(b"event: x\r\ndata: one\r\ndata:two\r\ndata:  three\r\n\r\n"),
                         [("x", "one\ntwo\n three")])

    def test_no_event_name_is_message_and_no_data_no_event(self):
        self.assertEqual(self.events(b"data: d\n\nevent: empty\n\n"), [("message", "d")])

    def test_unfinished_event_dropped(self):
        self.assertEqual(self.events(b"event: a\ndata: 1\n\nevent: b\ndata: 2\n"), [("a", "1")])


class WithServer(unittest.TestCase):
    def setUp(self):
        self.server = Server()
        self.client = Client(self.server.url, "ak_test", timeout=30)

    def tearDown(self):
        self.server.stop()

    def route(self, key):
        def deco(fn):
            self.server.routes[key] = fn
            return fn
        return deco


class Errors(WithServer):
    def test_api_error_fields(self):
        @self.route("GET /v1/sandboxes/sb_x")
        def _(h, rec):
            send_json(h, 409, {"error": {"code": "conflict", "message": "sandbox sb_x is paused"}})
        with self.assertRaises(AirlockError) as cm:
            self.client.sandboxes.get("sb_x")
        e = cm.exception
        self.assertEqual((e.status, e.code, e.message, e.request_id),
                         (409, "conflict", "sandbox sb_x is paused", "req_test"))
        self.assertIn("conflict", str(e))

    def test_unknown_route_is_not_found(self):
        with self.assertRaises(AirlockError) as cm:
            self.client.templates.get("nope")
        self.assertEqual((cm.exception.status, cm.exception.code), (404, "not_found"))

    def test_rate_limited_retry_after(self):
        @self.route("GET /v1/sandboxes")
        def _(h, rec):
            send_json(h, 429, {"error": {"code": "rate_limited", "message": "slow down"}},
                      {"Retry-After": "3"})
        with self.assertRaises(AirlockError) as cm:
            self.client.sandboxes.list()
        self.assertEqual((cm.exception.code, cm.exception.retry_after), ("rate_limited", 3))

    def test_non_json_error_body(self):
        @self.route("GET /v1/sandboxes")
        def _(h, rec):
            data = b"<html>bad gateway</html>"
            h.send_response(502)
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            h.wfile.write(data)
        with self.assertRaises(AirlockError) as cm:
            self.client.sandboxes.list()
        e = cm.exception
        self.assertEqual((e.status, e.code), (502, "unavailable"))
        self.assertIn("bad gateway", e.message)

    def test_connection_refused(self):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        with self.assertRaises(AirlockError) as cm:
            Client("http://127.0.0.1:%d" % port, "k").sandboxes.list()
        self.assertEqual((cm.exception.status, cm.exception.code), (0, "unavailable"))

    def test_bad_url(self):
        with self.assertRaises(ValueError):
            Client("ftp://x", "k")


class Requests(WithServer):
    def test_path_and_query_building(self):
        self.assertEqual(path("v1", "sandboxes", "a/b", 7), "/v1/sandboxes/a%2Fb/7")
        self.assertEqual(path("v1", "templates", "web:2"), "/v1/templates/web:2")
        self.assertEqual(with_query("/x", {"path": "/a b&c", "recursive": True, "n": None}),
                         "/x?path=%2Fa%20b%26c&recursive=true")
        self.assertEqual(with_query("/x", {"n": None}), "/x")

    def test_file_routes_carry_the_path(self):
        weird = "/tmp/a b/c&d?#%é"

        @self.route("GET /v1/sandboxes/sb_1/files/stat")
        def _(h, rec):
            send_json(h, 200, {"name": "c", "type": "file", "size": 3, "mode": 420,
                               "mtime": "2026-01-01T00:00:00Z"})

        @self.route("DELETE /v1/sandboxes/sb_1/files")
        def _(h, rec):
            h.send_response(204)
            h.end_headers()
        info = self.client.files.stat("sb_1", weird)
        rec = self.server.last()
        self.assertEqual(rec.query["path"], [weird])
        self.assertEqual(rec.headers["Authorization"], "Bearer ak_test")
        self.assertEqual((info.name, info.type, info.size, info.mode), ("c", "file", 3, 0o644))
        self.client.files.remove("sb_1", weird, recursive=True)
        self.assertEqual(self.server.last().query, {"path": [weird], "recursive": ["true"]})
        self.client.files.remove("sb_1", "/x")
        self.assertEqual(self.server.last().query, {"path": ["/x"]})

    def test_id_cannot_escape_its_segment(self):
        with self.assertRaises(AirlockError):
            self.client.sandboxes.get("../templates")
        self.assertEqual(self.server.last().path, "/v1/sandboxes/..%2Ftemplates")

    def test_create_body_and_idempotency_key(self):
        @self.route("POST /v1/sandboxes")
        def _(h, rec):
            send_json(h, 201, {"id": "sb_1", "state": "running", "cpus": 2, "memory_mb": 256,
                               "metadata": {"k": "v"}, "ttl_s": 60, "extra": 1})
        sb = self.client.sandboxes.create(cpus=2, metadata={"k": "v"}, ttl_s=60,
                                          network={"default": "deny"}, idempotency_key="ik-1")
        rec = self.server.last()
        self.assertEqual(json.loads(rec.body), {"cpus": 2, "metadata": {"k": "v"}, "ttl_s": 60,
                                                "network": {"default": "deny"}})
        self.assertEqual(rec.headers["Idempotency-Key"], "ik-1")
        self.assertEqual(rec.headers["Content-Type"], "application/json")
        self.assertEqual((sb.id, sb.state, sb.cpus, sb.memory_mb, sb.metadata, sb.ttl_s),
                         ("sb_1", "running", 2, 256, {"k": "v"}, 60))
        self.assertEqual(sb.raw["extra"], 1)
        self.client.sandboxes.create()
        self.assertEqual(json.loads(self.server.last().body), {})
        self.assertNotIn("Idempotency-Key", self.server.last().headers)

    def test_volumes(self):
        @self.route("POST /v1/sandboxes")
        def _(h, rec):
            send_json(h, 201, {"id": "sb_1", "state": "running",
                               "volumes": [{"name": "repo", "path": "/w", "read_only": False,
                                            "slot": 0}]})
        sb = self.client.sandboxes.create(volumes=[VolumeMount("repo", "/w"),
                                                   VolumeMount("repo@s1", "/s", read_only=True)])
        self.assertEqual(json.loads(self.server.last().body),
                         {"volumes": [{"name": "repo", "path": "/w", "read_only": False},
                                      {"name": "repo@s1", "path": "/s", "read_only": True}]})
        self.assertEqual(sb.volumes, [VolumeMount("repo", "/w", False, 0)])

        @self.route("GET /v1/volumes/repo")
        def _(h, rec):
            send_json(h, 200, {"name": "repo", "size_mb": 64, "node": "n1",
                               "attached_sandbox": None, "snapshots": [{"name": "s1"}],
                               "used_bytes": 4096})
        v = self.client.volumes.get("repo")
        self.assertEqual((v.name, v.size_mb, v.node, v.attached_sandbox, v.snapshots,
                          v.used_bytes), ("repo", 64, "n1", None, ["s1"], 4096))

        @self.route("POST /v1/volumes")
        def _(h, rec):
            send_json(h, 201, {"name": "copy", "from_snapshot": "repo@s1"})
        self.client.volumes.create("copy", from_snapshot="repo@s1")
        self.assertEqual(json.loads(self.server.last().body),
                         {"name": "copy", "from_snapshot": "repo@s1"})

    def test_exec_json_and_b64(self):
        @self.route("POST /v1/sandboxes/sb_1/exec")
        def _(h, rec):
            send_json(h, 200, {"exit_code": 3, "signal": 0, "timed_out": False, "stdout": "hé\n",
                               "stderr_b64": base64.b64encode(b"\xff\x00").decode()})
        r = self.client.exec.run("sb_1", ["sh", "-c", "x"], env={"A": "1"}, timeout_s=5)
        self.assertEqual(json.loads(self.server.last().body),
                         {"cmd": ["sh", "-c", "x"], "env": {"A": "1"}, "timeout_s": 5})
        self.assertEqual((r.exit_code, r.stdout, r.stderr, r.ok),
                         (3, "hé\n".encode(), b"\xff\x00", False))
        with self.assertRaises(TypeError):
            self.client.exec.run("sb_1", "echo hi")  # type: ignore[arg-type]

    def test_stdin_bodies(self):
        @self.route("POST /v1/sandboxes/sb_1/processes/9/stdin")
        def _(h, rec):
            h.send_response(204)
            h.end_headers()
        self.client.processes.write_stdin("sb_1", 9, "text")
        self.assertEqual(json.loads(self.server.last().body), {"data": "text"})
        self.client.processes.write_stdin("sb_1", 9, b"\xff\x01")
        self.assertEqual(json.loads(self.server.last().body), {"data_b64": "/wE="})
        self.client.processes.close_stdin("sb_1", 9)
        self.assertEqual(json.loads(self.server.last().body), {"eof": True})


class Streams(WithServer):
    def test_events_arrive_as_produced(self):
        got_first = threading.Event()
        seen_in_time = []

        @self.route("POST /v1/sandboxes/sb_1/exec")
        def _(h, rec):
            start_chunked(h, "text/event-stream")
            chunk(h, b'event: stdout\ndata: {"data":"one"}\n\n')
            # The rest only once the client has seen the first event: a
            # client that waited for the whole answer would hang here.
            seen_in_time.append(got_first.wait(10))
            chunk(h, b': keepalive\n\nevent: stderr\ndata: {"data_b64":"/w=="}\n\nevent: ex')
            chunk(h, b'it\ndata: {"exit_code":0,"signal":9,"timed_out":true}\n\n')
            end_chunks(h)
        events = []
        with self.client.exec.stream("sb_1", ["x"]) as s:
            for ev in s:
                events.append(ev)
                got_first.set()
        self.assertEqual(self.server.last().headers["Accept"], "text/event-stream")
        self.assertEqual(events, [Output("stdout", b"one"), Output("stderr", b"\xff"),
                                  Exit(0, 9, True)])
        self.assertEqual(s.exit, Exit(0, 9, True))
        self.assertEqual(seen_in_time, [True], "the first event was not handed out before the rest came")

    def test_error_event_raises(self):
        @self.route("GET /v1/sandboxes/sb_1/processes/5/output")
        def _(h, rec):
            start_chunked(h, "text/event-stream")
            chunk(h, b'event: stdout\ndata: {"data":"a"}\n\nevent: error\ndata: '
                     b'{"error":{"code":"unavailable","message":"vmhost went away"}}\n\n')
            end_chunks(h)
        seen = []
        with self.assertRaises(AirlockError) as cm:
            for ev in self.client.processes.output("sb_1", 5):
                seen.append(ev)
        self.assertEqual(seen, [Output("stdout", b"a")])
        self.assertEqual((cm.exception.status, cm.exception.code, cm.exception.message),
                         (503, "unavailable", "vmhost went away"))

    def test_stream_without_exit_raises(self):
        @self.route("POST /v1/sandboxes/sb_1/exec")
        def _(h, rec):
            start_chunked(h, "text/event-stream")
            chunk(h, b'event: stdout\ndata: {"data":"a"}\n\n')
            end_chunks(h)
        with self.assertRaises(AirlockError) as cm:
            self.client.exec.stream("sb_1", ["x"]).collect()
        self.assertEqual(cm.exception.code, "unavailable")

    def test_collect(self):
        @self.route("POST /v1/sandboxes/sb_1/exec")
        def _(h, rec):
            start_chunked(h, "text/event-stream")
            chunk(h, b'event: stdout\ndata: {"data":"a"}\n\nevent: stdout\ndata: {"data":"b"}\n\n'
                     b'event: stderr\ndata: {"data":"e"}\n\nevent: exit\ndata: '
                     b'{"exit_code":2,"signal":0,"timed_out":false}\n\n')
            end_chunks(h)
        r = self.client.exec.stream("sb_1", ["x"]).collect()
        self.assertEqual((r.stdout, r.stderr, r.exit_code), (b"ab", b"e", 2))

    def test_upload_streams_and_download_copies(self):
        blob = os.urandom(300 * 1024)
        stored = {}

        @self.route("PUT /v1/sandboxes/sb_1/files")
        def _(h, rec):
            stored[rec.query["path"][0]] = rec.body
            h.send_response(204)
            h.end_headers()

        @self.route("GET /v1/sandboxes/sb_1/files")
        def _(h, rec):
            data = stored[rec.query["path"][0]]
            start_chunked(h, "application/octet-stream")
            for i in range(0, len(data), 50000):
                chunk(h, data[i:i + 50000])
            end_chunks(h)
        self.client.files.upload("sb_1", "/f1", io.BytesIO(blob))
        rec = self.server.last()
        self.assertEqual(rec.headers.get("Transfer-Encoding"), "chunked")
        self.assertEqual(rec.headers["Content-Type"], "application/octet-stream")
        self.assertEqual(stored["/f1"], blob)
        with tempfile.TemporaryFile() as f:
            f.write(blob[:1000])
            f.seek(10)
            self.client.files.upload("sb_1", "/f2", f)
        rec = self.server.last()
        self.assertEqual(rec.headers.get("Content-Length"), "990")
        self.assertEqual(stored["/f2"], blob[10:1000])
        self.client.files.upload("sb_1", "/f3", iter([b"ab", b"cd"]))
        self.assertEqual(stored["/f3"], b"abcd")
        out = io.BytesIO()
        self.assertEqual(self.client.files.download("sb_1", "/f1", out), len(blob))
        self.assertEqual(out.getvalue(), blob)
        self.assertEqual(self.client.files.read("sb_1", "/f3"), b"abcd")

    def test_download_cut_short_raises(self):
        @self.route("GET /v1/sandboxes/sb_1/files")
        def _(h, rec):
            start_chunked(h, "application/octet-stream")
            chunk(h, b"x" * 1000)
            h.wfile.write(b"400\r\npartial")  # a chunk that never completes
            h.wfile.flush()
            h.close_connection = True
            h.connection.shutdown(socket.SHUT_RDWR)
        with self.assertRaises(AirlockError) as cm:
            self.client.files.download("sb_1", "/f", io.BytesIO())
        self.assertEqual((cm.exception.status, cm.exception.code), (0, "unavailable"))


if __name__ == "__main__":
    unittest.main(verbosity=2)
