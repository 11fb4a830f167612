"""Sandboxes: create, get, list, delete, pause, resume, suspend, the
egress policy, fork."""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence

from ._http import path
from ._resource import Resource, body_of, sandbox_path, str_map
from .types import Sandbox, VolumeMount


class Sandboxes(Resource):
    def create(self, *, template: Optional[str] = None, cpus: Optional[int] = None,
               memory_mb: Optional[int] = None, env: Optional[Mapping[str, str]] = None,
               metadata: Optional[Mapping[str, str]] = None,
               idle_timeout_s: Optional[int] = None, ttl_s: Optional[int] = None,
               checkpoint_every_s: Optional[int] = None,
               network: Optional[Mapping[str, Any]] = None,
               public_ports: Optional[bool] = None,
               volumes: Optional[Sequence[VolumeMount]] = None,
               idempotency_key: Optional[str] = None) -> Sandbox:
        """A new running sandbox (returns once its guest answers). Every
        option left None takes the API's default (docs/api.md): template
        "default", 1 vCPU, 512 MiB, the scheduler's idle timeout and TTL,
        no periodic checkpoints, no network (deny everything), ports that
        need its traffic token (public_ports=True: anyone). env applies
        to every exec in it and is never shown again. volumes: at most 4
        volumes mounted at their paths (docs/api.md "Volumes").
        idempotency_key: a retry with the same key answers the same
        sandbox."""
        body = body_of(template=template, cpus=cpus, memory_mb=memory_mb, env=str_map(env),
                       metadata=str_map(metadata), idle_timeout_s=idle_timeout_s, ttl_s=ttl_s,
                       checkpoint_every_s=checkpoint_every_s,
                       network=dict(network) if network is not None else None,
                       public_ports=public_ports,
                       volumes=[{"name": v.name, "path": v.path, "read_only": v.read_only}
                                for v in volumes] if volumes is not None else None)
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key is not None else None
        return Sandbox.from_json(self._t.call("POST", path("v1", "sandboxes"), json_body=body,
                                              headers=headers))

    def get(self, sandbox_id: str) -> Sandbox:
        return Sandbox.from_json(self._t.call("GET", sandbox_path(sandbox_id)))

    def list(self) -> List[Sandbox]:
        """The project's sandboxes."""
        doc = self._t.call("GET", path("v1", "sandboxes"))
        return [Sandbox.from_json(s) for s in doc.get("sandboxes", [])]

    def delete(self, sandbox_id: str) -> None:
        """Stops the VM and removes everything of it (any state)."""
        self._t.call("DELETE", sandbox_path(sandbox_id))

    def pause(self, sandbox_id: str) -> Sandbox:
        """running → paused: vCPUs stopped, memory kept."""
        return Sandbox.from_json(self._t.call("POST", sandbox_path(sandbox_id, "pause")))

    def resume(self, sandbox_id: str) -> Sandbox:
        """paused or suspended → running."""
        return Sandbox.from_json(self._t.call("POST", sandbox_path(sandbox_id, "resume")))

    def suspend(self, sandbox_id: str) -> Sandbox:
        """running or paused → suspended: the whole VM written to disk."""
        return Sandbox.from_json(self._t.call("POST", sandbox_path(sandbox_id, "suspend")))

    def set_network(self, sandbox_id: str, network: Mapping[str, Any]) -> Dict[str, Any]:
        """Replaces the egress policy of a running or paused sandbox, live;
        the policy in force as the API answers it."""
        doc = self._t.call("PUT", sandbox_path(sandbox_id, "network"), json_body=dict(network))
        net = doc.get("network") if isinstance(doc, dict) else None
        return dict(net) if isinstance(net, dict) else {}

    def fork(self, sandbox_id: str, *, count: Optional[int] = None,
             checkpoint: Optional[str] = None) -> List[Sandbox]:
        """count (1..16, default 1) new running sandboxes from a full
        checkpoint of it, or without one from the live sandbox (which
        continues); all or none."""
        doc = self._t.call("POST", sandbox_path(sandbox_id, "fork"),
                           json_body=body_of(count=count, checkpoint=checkpoint))
        return [Sandbox.from_json(s) for s in doc.get("sandboxes", [])]
