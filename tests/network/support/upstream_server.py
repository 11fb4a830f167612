#!/usr/bin/python3
"""The test "internet" server behind credential-injection tests (upstream.h).

usage: upstream_server.py ADDR HTTP_PORT HTTPS_PORT LOG CERT KEY READY

Records each request as a JSON line in LOG (port, client port, method, path,
headers, body) and answers "upstream-ok METHOD PATH" -- never echoing a
header, so whatever reaches the guest came from egress, not a reflection --
except on /echo, which reflects every request header three times behind
16 000 bytes of padding each (so the copies fall at different read offsets)
and the Authorization in a response header; /echo-chunked sends that body
chunked, a line per chunk; /hang answers nothing and waits until the
client closes the connection, then records a line of its own with
"event": "hang-closed". READY is written once both ports listen."""
import http.server
import json
import signal
import ssl
import sys
import threading

addr, http_port, https_port, log_path, cert, key, ready = sys.argv[1:8]
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        rec = {"port": self.server.server_port, "peer": self.client_address[1],
               "method": self.command, "path": self.path,
               "headers": [[k, v] for k, v in self.headers.items()],
               "body": body.decode("latin-1")}
        with lock, open(log_path, "a") as f:
            f.write(json.dumps(rec) + "\n")
        if self.path.startswith("/echo"):
            return self.echo(self.path == "/echo-chunked")
        if self.path.startswith("/hang"):
            return self.hang()
        out = ("upstream-ok %s %s\n" % (self.command, self.path)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def echo(self, chunked):
        heads = "".join("%s: %s\n" % kv for kv in self.headers.items())
        lines = [("x" * 16000) + "\n", heads] * 3
        self.send_response(200)
        self.send_header("X-Echo-Authorization", self.headers.get("Authorization", ""))
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for line in lines:
                b = line.encode()
                self.wfile.write(b"%x\r\n" % len(b) + b + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
        else:
            body = "".join(lines).encode()
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    def hang(self):
        # The client (egress) ends it: read returns at its close or reset.
        try:
            self.rfile.read(1)
        except OSError:
            pass
        with lock, open(log_path, "a") as f:
            f.write(json.dumps({"path": self.path, "event": "hang-closed"}) + "\n")
        self.close_connection = True

    do_GET = do_POST = do_PUT = answer

    def log_message(self, *a):
        pass


plain = http.server.ThreadingHTTPServer((addr, int(http_port)), Handler)
tls = http.server.ThreadingHTTPServer((addr, int(https_port)), Handler)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
tls.socket = ctx.wrap_socket(tls.socket, server_side=True)
threading.Thread(target=plain.serve_forever, daemon=True).start()
open(ready, "w").write("ready")
tls.serve_forever()
