"""Server-sent events: a parser of the text/event-stream format (the
WHATWG HTML standard's, for \\n and \\r\\n line ends) over an iterator of
byte lines, as the gateway sends them (exec, process output, events)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator, List, Optional


@dataclass(frozen=True)
class SseEvent:
    """One dispatched event: its type (`message` when the stream named
    none) and its data (the data lines joined by \\n)."""
    event: str
    data: str
    id: Optional[str] = None


def parse_sse(lines: Iterable[bytes]) -> Iterator[SseEvent]:
    """The events of a stream given line by line (each line with or
    without its line end). Comments (`: keepalive`) are skipped; an event
    is dispatched at the blank line that ends it; one left unfinished when
    the lines run out is dropped, as the standard says."""
    event = ""
    data: List[str] = []
    has_data = False
    last_id: Optional[str] = None
    for raw in lines:
        line = raw.decode("utf-8", errors="replace")
        if line.endswith("\n"):
            line = line[:-1]
        if line.endswith("\r"):
            line = line[:-1]
        if line == "":
            if has_data:
                yield SseEvent(event or "message", "\n".join(data), last_id)
            event, data, has_data = "", [], False
            continue
        if line.startswith(":"):
            continue
        field, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if field == "event":
            event = value
        elif field == "data":
            data.append(value)
            has_data = True
        elif field == "id" and "\0" not in value:
            last_id = value
        # retry and unknown fields: nothing a client of this API needs.
