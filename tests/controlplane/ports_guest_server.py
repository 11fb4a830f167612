"""Runs inside a sandbox for test_ports.py (standard library only): on the
port given, GET /file/<name> serves /srv/<name>; POST /sum reads the body
(Content-Length or chunked) as it arrives and answers its length and
SHA-256; GET /ws is a WebSocket that echoes text frames; GET /peer
answers the address the request came from."""
import base64
import hashlib
import http.server
import os
import socket
import socketserver
import sys

WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        # Head and body go out in two writes: without this, a kept
        # connection waits out the client's delayed ACK on each answer.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def answer(self, status, body, ctype="text/plain"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path.startswith("/file/"):
            with open("/srv/" + os.path.basename(self.path), "rb") as f:
                self.answer(200, f.read(), "application/octet-stream")
        elif self.path == "/peer":
            self.answer(200, self.client_address[0].encode())
        elif self.path == "/ws":
            self.websocket()
        else:
            self.answer(404, b"no such path\n")

    def do_POST(self):
        digest, total = hashlib.sha256(), 0
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    break
                chunk = self.rfile.read(size)
                self.rfile.readline()
                digest.update(chunk)
                total += len(chunk)
        else:
            left = int(self.headers.get("Content-Length", "0"))
            while left:
                chunk = self.rfile.read(min(left, 65536))
                digest.update(chunk)
                total += len(chunk)
                left -= len(chunk)
        self.answer(200, ("%d %s" % (total, digest.hexdigest())).encode())

    def websocket(self):
        key = self.headers["Sec-WebSocket-Key"]
        accept = base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept)
        self.end_headers()
        self.wfile.flush()
        while True:
            head = self.rfile.read(2)
            if len(head) < 2:
                return
            opcode, length = head[0] & 0x0F, head[1] & 0x7F
            if length == 126:
                length = int.from_bytes(self.rfile.read(2), "big")
            elif length == 127:
                length = int.from_bytes(self.rfile.read(8), "big")
            mask = self.rfile.read(4) if head[1] & 0x80 else b"\0\0\0\0"
            data = bytes(b ^ mask[i % 4] for i, b in enumerate(self.rfile.read(length)))
            if opcode == 8:  # close: answer it and end
                self.wfile.write(b"\x88\x00")
                return
            out = bytes([0x80 | opcode])
            out += bytes([len(data)]) if len(data) < 126 else b"\x7e" + len(data).to_bytes(2, "big")
            self.wfile.write(out + data)
            self.wfile.flush()

    def log_message(self, *args):
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


if __name__ == "__main__":
    address = sys.argv[2] if len(sys.argv) > 2 else "0.0.0.0"
    Server((address, int(sys.argv[1])), Handler).serve_forever()
