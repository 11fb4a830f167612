"""Exec: a command run to completion, as one JSON answer or streamed."""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Sequence

from ._resource import Resource, body_of, sandbox_path, str_map
from .streams import ExecStream
from .types import ExecResult


def exec_body(cmd: Sequence[str], env: Optional[Mapping[str, str]], cwd: Optional[str],
              stdin: Optional[str], timeout_s: Optional[int], tty: Optional[bool],
              rows: Optional[int], cols: Optional[int], **extra: Any) -> Dict[str, Any]:
    if isinstance(cmd, (str, bytes)):
        raise TypeError("cmd: a sequence of arguments, e.g. [\"sh\", \"-c\", \"...\"]")
    return body_of(cmd=list(cmd), env=str_map(env), cwd=cwd, stdin=stdin, timeout_s=timeout_s,
                   tty=tty, rows=rows, cols=cols, **extra)


class Exec(Resource):
    def run(self, sandbox_id: str, cmd: Sequence[str], *,
            env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None,
            stdin: Optional[str] = None, timeout_s: Optional[int] = None,
            tty: Optional[bool] = None, rows: Optional[int] = None,
            cols: Optional[int] = None) -> ExecResult:
        """Runs cmd (argv, looked up in PATH) and waits for it: exit code,
        signal, timed_out, stdout, stderr. timeout_s: default 60, 0 = none;
        tty: on a PTY of rows x cols (output all on stdout). A non-zero exit
        is a result, not an error."""
        doc = self._t.call("POST", sandbox_path(sandbox_id, "exec"),
                           json_body=exec_body(cmd, env, cwd, stdin, timeout_s, tty, rows, cols))
        return ExecResult.from_json(doc)

    def stream(self, sandbox_id: str, cmd: Sequence[str], *,
               env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None,
               stdin: Optional[str] = None, timeout_s: Optional[int] = None,
               tty: Optional[bool] = None, rows: Optional[int] = None,
               cols: Optional[int] = None) -> ExecStream:
        """Runs cmd with its output streamed: iterate the answer for
        Output events as produced and an Exit last. Closing it early kills
        the command."""
        return ExecStream(self._t.events(
            "POST", sandbox_path(sandbox_id, "exec"),
            json_body=exec_body(cmd, env, cwd, stdin, timeout_s, tty, rows, cols)))
