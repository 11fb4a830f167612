"""Watching a directory in a sandbox (GET …/files/watch, SSE): its
changes as typed events, for as long as the stream is open."""
from __future__ import annotations

import base64
import json
from types import TracebackType
from typing import Any, Iterator, Optional, Type

from ._http import EventSource, with_query
from ._resource import Resource, sandbox_path
from .errors import AirlockError
from .types import WatchEvent


class WatchStream:
    """Iterate for WatchEvents as the guest sees the changes (writes
    coalesced). It ends only when the watched directory goes or the
    stream breaks (AirlockError); close() (or leaving the `with` block)
    ends the watch."""

    def __init__(self, source: EventSource) -> None:
        self._source = source

    def __iter__(self) -> Iterator[WatchEvent]:
        for ev in self._source:
            try:
                d: Any = json.loads(ev.data)
            except ValueError as e:
                raise AirlockError(502, "internal", "watch event data is not JSON: %r"
                                   % ev.data) from e
            if ev.event == "error":
                raise AirlockError.from_event(d)
            if ev.event == "start" or not isinstance(d, dict):
                continue  # the watch is in place
            path = d["path"] if isinstance(d.get("path"), str) else \
                base64.b64decode(str(d.get("path_b64", "")))
            yield WatchEvent(type=str(d.get("type", ev.event)), path=path,
                             is_dir=d.get("is_dir") is True, time=str(d.get("time", "")))

    def close(self) -> None:
        self._source.close()

    def __enter__(self) -> "WatchStream":
        return self

    def __exit__(self, t: Optional[Type[BaseException]], v: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.close()


class Watch(Resource):
    def directory(self, sandbox_id: str, path: str, *, recursive: bool = False) -> WatchStream:
        """Watches the directory at path (recursive: its subdirectories
        too, those made later included). Returns once the watch is in
        place in the guest."""
        target = with_query(sandbox_path(sandbox_id, "files", "watch"),
                            {"path": path, "recursive": "true" if recursive else "false"})
        return WatchStream(self._t.events("GET", target))
