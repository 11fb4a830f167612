"""Volumes: a project's persistent disks and their snapshots (docs/api.md
"Volumes"). Attach them with sandboxes.create(volumes=[...])."""
from __future__ import annotations

from typing import List, Optional

from ._http import path
from ._resource import Resource, body_of
from .types import Volume


class Volumes(Resource):
    def create(self, name: str, size_mb: Optional[int] = None, *,
               from_snapshot: Optional[str] = None) -> Volume:
        """A new empty volume of size_mb MiB, or a clone of from_snapshot
        ("volume@snapshot", of its size)."""
        body = body_of(name=name, size_mb=size_mb, from_snapshot=from_snapshot)
        return Volume.from_json(self._t.call("POST", path("v1", "volumes"), json_body=body))

    def list(self) -> List[Volume]:
        doc = self._t.call("GET", path("v1", "volumes"))
        return [Volume.from_json(v) for v in doc.get("volumes", [])]

    def get(self, name: str) -> Volume:
        """With used_bytes while its node is live, its holder and snapshots."""
        return Volume.from_json(self._t.call("GET", path("v1", "volumes", name)))

    def grow(self, name: str, size_mb: int) -> Volume:
        """Larger only; online while a sandbox has it."""
        return Volume.from_json(self._t.call("POST", path("v1", "volumes", name, "grow"),
                                             json_body={"size_mb": size_mb}))

    def delete(self, name: str) -> None:
        """The volume and its snapshots (409 while a sandbox has it)."""
        self._t.call("DELETE", path("v1", "volumes", name))

    def snapshot(self, name: str, snapshot: str) -> str:
        """A copy-on-write snapshot of the volume; its name."""
        doc = self._t.call("POST", path("v1", "volumes", name, "snapshots"),
                           json_body={"name": snapshot})
        return str(doc.get("name", ""))

    def delete_snapshot(self, name: str, snapshot: str) -> None:
        self._t.call("DELETE", path("v1", "volumes", name, "snapshots", snapshot))
