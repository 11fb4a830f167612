"""The one exception the client raises: AirlockError."""
from __future__ import annotations

from typing import Any, Mapping, Optional

# The HTTP status each of the API's error codes is answered with
# (docs/api.md "Errors"); used for errors that arrive without one: an
# `error` event in the middle of an SSE stream, a connection that failed.
CODE_STATUS: Mapping[str, int] = {
    "invalid_argument": 400,
    "unauthenticated": 401,
    "permission_denied": 403,
    "not_found": 404,
    "conflict": 409,
    "quota_exceeded": 429,
    "rate_limited": 429,
    "internal": 500,
    "not_implemented": 501,
    "unavailable": 503,
}

# The code of an answer whose body carries none (a proxy's 502 page, an
# empty 404): the code the API uses for that status.
_STATUS_CODE: Mapping[int, str] = {
    400: "invalid_argument",
    401: "unauthenticated",
    403: "permission_denied",
    404: "not_found",
    405: "invalid_argument",
    409: "conflict",
    413: "invalid_argument",
    429: "rate_limited",
    501: "not_implemented",
    502: "unavailable",
    503: "unavailable",
    504: "unavailable",
}


class AirlockError(Exception):
    """An error answered by the API, or a failure to reach it.

    status: the HTTP status (for an `error` event inside an SSE stream, the
    status its code is answered with elsewhere; 0 when no answer came at
    all: connection refused, reset, a stream cut short). code: the API's
    error code (`not_found`, `conflict`, `invalid_argument`, …;
    `unavailable` when the API could not be reached). message: the API's
    message, naming the field, id or state at fault. request_id: the
    answer's X-Request-Id, when there was one. retry_after: seconds, from
    Retry-After (`rate_limited`)."""

    def __init__(self, status: int, code: str, message: str,
                 request_id: Optional[str] = None,
                 retry_after: Optional[int] = None) -> None:
        super().__init__("%s (HTTP %d): %s" % (code, status, message))
        self.status = status
        self.code = code
        self.message = message
        self.request_id = request_id
        self.retry_after = retry_after

    @classmethod
    def from_body(cls, status: int, body: bytes,
                  request_id: Optional[str] = None,
                  retry_after: Optional[int] = None) -> "AirlockError":
        """The error of an answer with this status and body: the API's
        {"error":{"code","message"}}, or for any other body its text under
        the code the API uses for the status."""
        code, message = None, None
        try:
            import json
            doc: Any = json.loads(body.decode("utf-8"))
            err = doc.get("error") if isinstance(doc, dict) else None
            if isinstance(err, dict):
                if isinstance(err.get("code"), str):
                    code = err["code"]
                if isinstance(err.get("message"), str):
                    message = err["message"]
        except ValueError:
            pass
        if code is None:
            code = _STATUS_CODE.get(status, "internal")
        if message is None:
            text = body.decode("utf-8", errors="replace").strip()
            message = text[:500] if text else "HTTP %d" % status
        return cls(status, code, message, request_id, retry_after)

    @classmethod
    def from_event(cls, data: Any) -> "AirlockError":
        """The error of an SSE `error` event ({"error":{"code","message"}})."""
        err = data.get("error") if isinstance(data, dict) else None
        code = "internal"
        message = "the stream ended with an error event: %r" % (data,)
        if isinstance(err, dict):
            code = str(err.get("code", code))
            message = str(err.get("message", message))
        return cls(CODE_STATUS.get(code, 500), code, message)
