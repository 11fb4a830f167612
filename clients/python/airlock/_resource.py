"""The base of every resource module: a group of routes sharing the
client's Transport. A new group (ports, file watching, …) is a module
with one Resource subclass, attached in client.py."""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Union

from ._http import Transport, path


class Resource:
    def __init__(self, transport: Transport) -> None:
        self._t = transport


def sandbox_path(sandbox_id: str, *rest: Union[str, int]) -> str:
    """/v1/sandboxes/{id}/rest…"""
    return path("v1", "sandboxes", sandbox_id, *rest)


def body_of(**fields: Any) -> Dict[str, Any]:
    """A JSON body of the fields that are not None (the API's defaults
    apply to the others)."""
    return {k: v for k, v in fields.items() if v is not None}


def str_map(m: Optional[Mapping[str, str]]) -> Optional[Dict[str, str]]:
    return dict(m) if m is not None else None
