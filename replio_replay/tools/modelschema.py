"""A parameter model's JSON Schema, as offered to a model; the built-in tools' kept between runs.

Generating the schemas of the eight built-in tools is about 11 ms of every run's start (pydantic
builds each model's core schema, then walks it), and all eight are sent with the first request
although a fixture calls two or three. So their schema text is kept under
``$XDG_CACHE_HOME/replio/schemas/`` (`derived`), named by a hash of what it is made from: the
source of every module of `replio_replay.tools` (where the built-in parameter models live,
with all they use; a test holds them to that), pydantic's and pydantic-core's versions, and the
model's fields, docstring and config. A built-in model is then built only when one of its tools
is called, to check the arguments.

A plugin's model is generated once per process and not kept: its schema can depend on code
anywhere (a type alias, a schema hook, a callable in `json_schema_extra`), which no key short
of the schema itself covers.
"""

from __future__ import annotations

import functools
import hashlib
import json
from typing import Any

from pydantic import BaseModel

from ..derived import code_stamp, remembered
from ..env import cache_dir

__all__ = ["schema_of"]


def schema_of(params: type[BaseModel], *, keep: bool = False) -> dict[str, Any]:
    """The JSON Schema of a parameter model, without pydantic's titles (they are noise to a model).
    `keep` (the built-in tools): kept between runs, named by a hash of replio's tool code."""
    return json.loads(_schema_text(params, keep))


@functools.cache
def _schema_text(params: type[BaseModel], keep: bool) -> str:
    def generate() -> str:
        return json.dumps(_strip_titles(params.model_json_schema()))

    if not keep:
        return generate()
    return str(remembered(cache_dir() / "schemas", _key(params), generate))


def _key(params: type[BaseModel]) -> str:
    what = [f"{params.__module__}.{params.__qualname__}", repr(params.model_fields),
            repr(dict(params.model_config)), repr(params.__doc__), _tool_code()]
    return hashlib.blake2b("\n".join(what).encode(), digest_size=20).hexdigest()


@functools.cache
def _tool_code() -> str:
    """What every built-in schema is made from besides its model: replio's tool code and pydantic."""
    import pydantic
    import pydantic_core

    return f"{code_stamp('replio_replay.tools.*')}|pydantic {pydantic.VERSION}|pydantic-core {pydantic_core.__version__}"


def _strip_titles(node: Any) -> Any:
    if isinstance(node, dict):
        # pydantic's `title` keyword is a string; a property *named* title holds a schema (a dict).
        return {k: _strip_titles(v) for k, v in node.items() if not (k == "title" and isinstance(v, str))}
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node
