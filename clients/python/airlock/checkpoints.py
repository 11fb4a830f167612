"""Checkpoints of a sandbox: create, list, delete, restore."""
from __future__ import annotations

from typing import List, Optional

from ._resource import Resource, body_of, sandbox_path
from .types import Checkpoint, Sandbox


class Checkpoints(Resource):
    def create(self, sandbox_id: str, name: str, *, kind: Optional[str] = None) -> Checkpoint:
        """A checkpoint of a running sandbox, which keeps running. kind:
        "disk" (default; a restore cold-boots) or "full" (memory and
        devices too; a restore resumes the processes; forks need one)."""
        return Checkpoint.from_json(self._t.call(
            "POST", sandbox_path(sandbox_id, "checkpoints"),
            json_body=body_of(name=name, kind=kind)))

    def list(self, sandbox_id: str) -> List[Checkpoint]:
        doc = self._t.call("GET", sandbox_path(sandbox_id, "checkpoints"))
        return [Checkpoint.from_json(c) for c in doc.get("checkpoints", [])]

    def delete(self, sandbox_id: str, name: str) -> None:
        self._t.call("DELETE", sandbox_path(sandbox_id, "checkpoints", name))

    def restore(self, sandbox_id: str, checkpoint: Optional[str] = None) -> Sandbox:
        """The sandbox back to the checkpoint, in place (running again).
        checkpoint may be None only for a lost sandbox: its newest one in
        the shared snapshot store."""
        return Sandbox.from_json(self._t.call(
            "POST", sandbox_path(sandbox_id, "restore"), json_body=body_of(checkpoint=checkpoint)))
