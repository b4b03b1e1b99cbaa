"""A parameter model's JSON Schema, as offered to a model: pydantic's, without its titles.

Each model's schema is generated once per process (the built-in tools' with their first use);
nothing is kept between runs.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from pydantic import BaseModel

__all__ = ["schema_of"]


def schema_of(params: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema of a parameter model, without pydantic's titles (they are noise to a model);
    a fresh copy each call, so a caller may change it."""
    return json.loads(_schema_text(params))


@functools.cache
def _schema_text(params: type[BaseModel]) -> str:
    return json.dumps(_strip_titles(params.model_json_schema()))


def _strip_titles(node: Any) -> Any:
    if isinstance(node, dict):
        # pydantic's `title` keyword is a string; a property *named* title holds a schema (a dict).
        return {k: _strip_titles(v) for k, v in node.items() if not (k == "title" and isinstance(v, str))}
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node
