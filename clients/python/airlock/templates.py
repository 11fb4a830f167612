"""Templates: list and get (building one: POST /v1/templates, docs/templates.md)."""
from __future__ import annotations

from typing import List

from ._http import path
from ._resource import Resource
from .types import Template


class Templates(Resource):
    def list(self) -> List[Template]:
        """Every ready version of the project's templates."""
        doc = self._t.call("GET", path("v1", "templates"))
        return [Template.from_json(t) for t in doc.get("templates", [])]

    def get(self, name: str) -> Template:
        """name (its newest version) or name:version."""
        return Template.from_json(self._t.call("GET", path("v1", "templates", name)))
