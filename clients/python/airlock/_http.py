"""The HTTP layer every resource module uses: URL and query building,
one http.client connection per request, JSON in and out, the API's errors
turned into AirlockError, and streamed answers (SSE, raw bytes)."""
from __future__ import annotations

import http.client
import io
import json
import os
import stat
import ssl
import urllib.parse
from typing import (IO, Any, Callable, Dict, Iterable, Iterator, Mapping, Optional,
                    Tuple, Union)

from .errors import AirlockError
from .sse import SseEvent, parse_sse

QueryValue = Union[str, int, bool, None]
Body = Union[bytes, IO[bytes], Iterable[bytes], None]

USER_AGENT = "airlock-python/0.1.0"


def path(*segments: Union[str, int]) -> str:
    """/seg/seg/…: each segment percent-encoded whole, so an id or name
    can never reach another route (`a/b` → `a%2Fb`)."""
    return "".join("/" + urllib.parse.quote(str(s), safe=":") for s in segments)


def with_query(p: str, query: Optional[Mapping[str, QueryValue]] = None) -> str:
    """p with the query string of the parameters that are not None
    (booleans as true/false, as the API spells them)."""
    if not query:
        return p
    items = []
    for k, v in query.items():
        if v is None:
            continue
        if isinstance(v, bool):
            v = "true" if v else "false"
        items.append((k, str(v)))
    if not items:
        return p
    return p + "?" + urllib.parse.urlencode(items, quote_via=urllib.parse.quote)


def _int_header(value: Optional[str]) -> Optional[int]:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _error_of(resp: http.client.HTTPResponse) -> AirlockError:
    try:
        body = resp.read()
    except (OSError, http.client.HTTPException):
        body = b""
    return AirlockError.from_body(resp.status, body, resp.getheader("X-Request-Id"),
                                  _int_header(resp.getheader("Retry-After")))


def _body_length(body: Body) -> Optional[int]:
    """The bytes left in a regular file's object (sent with
    Content-Length); None for anything else (sent chunked)."""
    if isinstance(body, (bytes, bytearray)):
        return len(body)
    fileno = getattr(body, "fileno", None)
    tell = getattr(body, "tell", None)
    if fileno is None or tell is None:
        return None
    try:
        st = os.fstat(fileno())
        if stat.S_ISREG(st.st_mode):
            return int(st.st_size - tell())
    except (OSError, ValueError, io.UnsupportedOperation):
        pass
    return None


class Transport:
    """Where the API is and how to authenticate to it. Thread-safe: every
    request has its own connection."""

    def __init__(self, url: str, api_key: str, timeout: Optional[float] = 600.0,
                 ssl_context: Optional[ssl.SSLContext] = None) -> None:
        u = urllib.parse.urlsplit(url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError("url: %r is not an http:// or https:// URL" % url)
        self.scheme = u.scheme
        self.host = u.hostname
        self.port = u.port or (443 if u.scheme == "https" else 80)
        self.base_path = u.path.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.ssl_context = ssl_context

    def _connect(self, timeout: Optional[float]) -> http.client.HTTPConnection:
        if self.scheme == "https":
            return http.client.HTTPSConnection(self.host, self.port, timeout=timeout,
                                               context=self.ssl_context)
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def _unreachable(self, what: str, e: BaseException) -> AirlockError:
        return AirlockError(0, "unavailable", "%s %s://%s:%d: %s" % (
            what, self.scheme, self.host, self.port, e or type(e).__name__))

    def open(self, method: str, target: str, *, json_body: Any = None, body: Body = None,
             headers: Optional[Mapping[str, str]] = None,
             timeout: Union[float, None, str] = "default"
             ) -> Tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        """Sends the request and returns the connection and its answer
        once its status is in; raises AirlockError for a status of 400 or
        more (its body read), or when the API cannot be reached. The
        caller reads the body and closes the connection."""
        h: Dict[str, str] = {"Authorization": "Bearer " + self.api_key,
                             "User-Agent": USER_AGENT}
        if json_body is not None:
            body = json.dumps(json_body).encode("utf-8")
            h["Content-Type"] = "application/json"
        elif body is not None:
            h["Content-Type"] = "application/octet-stream"
            length = _body_length(body)
            if length is not None:
                h["Content-Length"] = str(length)
        h.update(headers or {})
        conn = self._connect(self.timeout if isinstance(timeout, str) else timeout)
        try:
            try:
                conn.request(method, self.base_path + target, body=body, headers=h)
            except (BrokenPipeError, ConnectionResetError):
                # The gateway may refuse an upload (404, 400) before it has
                # read the body: its answer is still there to read.
                if conn.sock is None:
                    raise
            resp = conn.getresponse()
        except (OSError, http.client.HTTPException) as e:
            conn.close()
            raise self._unreachable("cannot reach", e) from e
        if resp.status >= 400:
            err = _error_of(resp)
            conn.close()
            raise err
        return conn, resp

    def call(self, method: str, target: str, *, json_body: Any = None, body: Body = None,
             headers: Optional[Mapping[str, str]] = None) -> Any:
        """A request answered by JSON (parsed) or nothing (None)."""
        conn, resp = self.open(method, target, json_body=json_body, body=body, headers=headers)
        try:
            data = resp.read()
        except (OSError, http.client.HTTPException) as e:
            raise self._unreachable("answer cut short from", e) from e
        finally:
            conn.close()
        if not data:
            return None
        try:
            return json.loads(data.decode("utf-8"))
        except ValueError as e:
            raise AirlockError(resp.status, "internal",
                               "the answer to %s %s is not JSON: %s" % (method, target, e)) from e

    def copy_to(self, target: str, dest: IO[bytes], block: int = 64 * 1024) -> int:
        """GET target streamed into dest, block by block; the number of
        bytes. A transfer cut short (the file failed mid-way) raises
        AirlockError rather than leave it looking complete."""
        conn, resp = self.open("GET", target)
        total = 0
        try:
            while True:
                chunk = resp.read1(block) if hasattr(resp, "read1") else resp.read(block)
                if not chunk:
                    break
                dest.write(chunk)
                total += len(chunk)
        except (OSError, http.client.HTTPException) as e:
            raise self._unreachable("transfer cut short from", e) from e
        finally:
            conn.close()
        return total

    def events(self, method: str, target: str, *, json_body: Any = None
               ) -> "EventSource":
        """An SSE request; its events as they arrive."""
        conn, resp = self.open(method, target, json_body=json_body,
                               headers={"Accept": "text/event-stream"}, timeout=None)
        ctype = resp.getheader("Content-Type", "")
        if not ctype.startswith("text/event-stream"):
            data = resp.read()
            conn.close()
            raise AirlockError(resp.status, "internal",
                               "expected text/event-stream, got %r: %r" % (ctype, data[:200]))
        return EventSource(conn, resp, self._unreachable)


class EventSource:
    """An open SSE answer: iterate for its events; close() (or leaving a
    `with` block) drops the connection, which for an exec stops the
    command."""

    def __init__(self, conn: http.client.HTTPConnection, resp: http.client.HTTPResponse,
                 unreachable: Callable[[str, BaseException], AirlockError]) -> None:
        self._conn = conn
        self._resp = resp
        self._unreachable = unreachable
        self._events = parse_sse(self._lines())

    def _lines(self) -> Iterator[bytes]:
        while True:
            try:
                line = self._resp.readline()
            except (OSError, http.client.HTTPException, ValueError) as e:
                if self._conn.sock is None and self._resp.isclosed():
                    return  # closed by close()
                raise self._unreachable("stream cut short from", e) from e
            if not line:
                return
            yield line

    def __iter__(self) -> Iterator[SseEvent]:
        return self

    def __next__(self) -> SseEvent:
        try:
            return next(self._events)
        except StopIteration:
            self.close()
            raise

    def close(self) -> None:
        self._resp.close()
        self._conn.close()
