"""Sandbox ports through the gateway (docs/ports.md): what listens in a
sandbox, and a port's URL (signed when its ports are not public)."""
from __future__ import annotations

from typing import List, Optional

from ._resource import Resource, body_of, sandbox_path
from .types import Port, PortUrl


class Ports(Resource):
    def list(self, sandbox_id: str) -> List[Port]:
        """The TCP ports something in the running sandbox listens on."""
        doc = self._t.call("GET", sandbox_path(sandbox_id, "ports"))
        return [Port.from_json(p) for p in doc.get("ports", [])]

    def url(self, sandbox_id: str, port: int, *,
            expires_in_s: Optional[int] = None) -> PortUrl:
        """The port's URL through the gateway: signed for expires_in_s
        (60..604800), or for an hour when the sandbox's ports are not
        public; a public sandbox's plain URL without expires_in_s.
        Opening a signed URL leaves a cookie for that port, so a browser
        can follow it."""
        doc = self._t.call("POST", sandbox_path(sandbox_id, "ports", port, "url"),
                           json_body=body_of(expires_in_s=expires_in_s))
        at = doc.get("expires_at")
        return PortUrl(url=str(doc.get("url", "")), expires_at=at if isinstance(at, str) else None)
