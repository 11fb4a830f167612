"""The output stream of an exec or a background process: SSE events
stdout / stderr / exit (and error) as typed events."""
from __future__ import annotations

import json
from types import TracebackType
from typing import Any, Iterator, List, Optional, Type

from ._http import EventSource
from .errors import AirlockError
from .types import ExecEvent, ExecResult, Exit, Output, _bytes


def exec_event_of(event: str, data: str) -> Optional[ExecEvent]:
    """The typed form of one SSE event of an exec or process stream; None
    for an event type this client does not know (skipped); AirlockError
    for an `error` event."""
    try:
        d: Any = json.loads(data)
    except ValueError as e:
        raise AirlockError(502, "internal", "%s event data is not JSON: %r" % (event, data)) from e
    if event == "error":
        raise AirlockError.from_event(d)
    if not isinstance(d, dict):
        return None
    if event in ("stdout", "stderr"):
        return Output(event, _bytes(d, "data"))
    if event == "exit":
        return Exit(int(d.get("exit_code", 0)), int(d.get("signal", 0)),
                    d.get("timed_out") is True)
    return None


class ExecStream:
    """Iterate for Output events as the command produces them and its Exit
    last. Leaving the `with` block (or close()) before the end drops the
    connection: an exec's command is killed; a process's attach only
    detaches. A stream that breaks raises AirlockError."""

    def __init__(self, source: EventSource) -> None:
        self._source = source
        self.exit: Optional[Exit] = None

    def __iter__(self) -> Iterator[ExecEvent]:
        for ev in self._source:
            typed = exec_event_of(ev.event, ev.data)
            if typed is None:
                continue
            if isinstance(typed, Exit):
                self.exit = typed
            yield typed
        if self.exit is None:
            raise AirlockError(0, "unavailable", "the stream ended without an exit event")

    def collect(self) -> ExecResult:
        """Reads the stream to its end: the output gathered and the exit."""
        out: List[bytes] = []
        err: List[bytes] = []
        with self:
            for ev in self:
                if isinstance(ev, Output):
                    (err if ev.stream == "stderr" else out).append(ev.data)
        assert self.exit is not None
        return ExecResult(self.exit.exit_code, self.exit.signal, self.exit.timed_out,
                          b"".join(out), b"".join(err))

    def close(self) -> None:
        self._source.close()

    def __enter__(self) -> "ExecStream":
        return self

    def __exit__(self, t: Optional[Type[BaseException]], v: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.close()
