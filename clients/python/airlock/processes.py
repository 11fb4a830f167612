"""Background processes: start, list, attach to the output, stdin,
signals, window size."""
from __future__ import annotations

import base64
from typing import List, Mapping, Optional, Sequence, Union

from ._resource import Resource, body_of, sandbox_path
from .exec import exec_body
from .streams import ExecStream
from .types import Process


class Processes(Resource):
    def start(self, sandbox_id: str, cmd: Sequence[str], *,
              env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None,
              stdin: Optional[str] = None, stdin_open: Optional[bool] = None,
              timeout_s: Optional[int] = None, tty: Optional[bool] = None,
              rows: Optional[int] = None, cols: Optional[int] = None) -> Process:
        """Starts cmd in the background (it outlives the call; its output is
        kept in a 1 MiB ring). stdin_open: keep stdin open for
        write_stdin. timeout_s: default 0 = none."""
        doc = self._t.call("POST", sandbox_path(sandbox_id, "processes"),
                           json_body=exec_body(cmd, env, cwd, stdin, timeout_s, tty, rows, cols,
                                               stdin_open=stdin_open))
        return Process.from_json(doc)

    def list(self, sandbox_id: str) -> List[Process]:
        """The sandbox's background processes, running and exited."""
        doc = self._t.call("GET", sandbox_path(sandbox_id, "processes"))
        return [Process.from_json(p) for p in doc.get("processes", [])]

    def get(self, sandbox_id: str, pid: int) -> Optional[Process]:
        """One process of list(), None when the sandbox has no such one."""
        return next((p for p in self.list(sandbox_id) if p.pid == pid), None)

    def output(self, sandbox_id: str, pid: int) -> ExecStream:
        """The process's output: what the ring kept so far, then as it comes,
        and its Exit last. Closing it only detaches."""
        return ExecStream(self._t.events("GET", sandbox_path(sandbox_id, "processes", pid,
                                                             "output")))

    def write_stdin(self, sandbox_id: str, pid: int, data: Union[str, bytes] = b"", *,
                    eof: bool = False) -> None:
        """Writes data to the process's stdin (started with stdin_open);
        eof closes it after."""
        body = body_of(eof=True if eof else None)
        if isinstance(data, str):
            body["data"] = data
        elif data or not eof:
            body["data_b64"] = base64.b64encode(data).decode("ascii")
        self._t.call("POST", sandbox_path(sandbox_id, "processes", pid, "stdin"), json_body=body)

    def close_stdin(self, sandbox_id: str, pid: int) -> None:
        self.write_stdin(sandbox_id, pid, eof=True)

    def signal(self, sandbox_id: str, pid: int, signal: str = "TERM") -> None:
        """Sends signal (HUP, INT, QUIT, KILL, USR1, USR2, TERM, CONT, STOP;
        SIG prefix optional) to the process's group."""
        self._t.call("POST", sandbox_path(sandbox_id, "processes", pid, "signal"),
                     json_body={"signal": signal})

    def resize(self, sandbox_id: str, pid: int, rows: int, cols: int) -> None:
        """The window size of a process started with tty (it gets SIGWINCH)."""
        self._t.call("POST", sandbox_path(sandbox_id, "processes", pid, "resize"),
                     json_body={"rows": rows, "cols": cols})
