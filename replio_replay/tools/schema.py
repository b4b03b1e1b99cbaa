"""JSON Schema for tool parameters, through `jsonschema-rs`: checked on load, applied on call.

`schema_problem` says why a declared `parameters` object is not a usable schema (it must be a
valid JSON Schema of ``"type": "object"``, in the draft its ``$schema`` names, 2020-12 by
default); `argument_problem` says why a model's arguments do not fit one; `merge_patch`
applies an override's parameter changes (RFC 7396: objects merge, ``null`` removes a key,
anything else replaces).

Validators never fetch anything: a ``$ref`` or ``$schema`` that names a remote document is a
problem with the schema, not a network request. ``format`` is not asserted (JSON Schema
2020-12's default; providers do not assert it either).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from .._runtime.jsoncanon import canonical

__all__ = ["TOOL_NAME", "argument_problem", "merge_patch", "name_problem", "schema_problem"]

#: What every provider accepts as a tool name.
TOOL_NAME = r"^[a-zA-Z0-9_-]{1,64}$"


def name_problem(name: str) -> str | None:
    """Why `name` cannot be a tool name, or None."""
    import re

    if re.fullmatch(TOOL_NAME, name):
        return None
    return f"tool name {name!r} is not valid: use 1 to 64 letters, digits, '_' or '-' (what providers accept)"


def schema_problem(schema: Any) -> str | None:
    """Why `schema` is not a valid JSON Schema for tool parameters, or None."""
    if not isinstance(schema, dict):
        return f"parameters must be a JSON Schema object, not {type(schema).__name__}"
    if schema.get("type") != "object":
        return 'parameters must be a JSON Schema with "type": "object"'
    import jsonschema_rs

    try:
        _validator(canonical(schema))
    except jsonschema_rs.ValidationError as exc:
        where = "/".join(str(p) for p in exc.instance_path)
        return f"parameters is not a valid JSON Schema{f' at {where}' if where else ''}: {_first_line(exc.message)}"
    except (jsonschema_rs.ReferencingError, ValueError) as exc:
        return f"parameters is not a valid JSON Schema: {_first_line(str(exc))}"
    return None


def argument_problem(schema: Mapping[str, Any], arguments: Any) -> str | None:
    """Why `arguments` do not satisfy `schema` (every violation, in path order), or None."""
    validator = _validator(canonical(schema))
    errors = sorted(validator.iter_errors(arguments), key=lambda e: [_part(p) for p in e.instance_path])
    if not errors:
        return None
    parts = [f"{'.'.join(str(p) for p in e.instance_path) or 'arguments'}: {_first_line(e.message)}" for e in errors]
    return "; ".join(parts) + f" (got {json.dumps(arguments, default=str)[:120]})"


def _part(part: object) -> tuple[int, int, str]:
    """Path parts in order: list positions as numbers, keys as text."""
    return (0, part, "") if isinstance(part, int) else (1, 0, str(part))


def _first_line(message: str) -> str:
    return message.strip().splitlines()[0] if message.strip() else message


@functools.lru_cache(maxsize=256)
def _validator(schema_text: str) -> Any:
    """A validator for the schema (checked against its draft's meta-schema as it is built), offline."""
    import jsonschema_rs

    return jsonschema_rs.validator_for(json.loads(schema_text), validate_formats=False, offline=True)


def merge_patch(target: Any, patch: Any) -> Any:
    """`target` with `patch` applied as a JSON Merge Patch (RFC 7396); neither is modified."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out
