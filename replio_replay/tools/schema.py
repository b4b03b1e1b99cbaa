"""JSON Schema for tool parameters, through the `jsonschema` library: checked on load, applied on call.

`schema_problem` says why a declared `parameters` object is not a usable schema (it must be a
valid JSON Schema of ``"type": "object"``); `argument_problem` says why a model's arguments do
not fit one; `merge_patch` applies an override's parameter changes (RFC 7396: objects merge,
``null`` removes a key, anything else replaces).

Most tool schemas use a handful of keywords (`type`, `properties`, `required`, `enum`...).
Such a *plain* schema is valid under every draft, and whether arguments fit it is decided
here, exactly as jsonschema decides it (a property test compares the two): jsonschema, a
tenth of a replay's start-up to import, is loaded only for other schemas and to say what is
wrong with arguments that do not fit.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["TOOL_NAME", "argument_problem", "fits", "merge_patch", "name_problem", "plain", "schema_problem"]

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
    if plain(schema):
        return None
    from jsonschema.exceptions import SchemaError

    try:
        _validator_class(schema).check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path)
        return f"parameters is not a valid JSON Schema{f' at {where}' if where else ''}: {exc.message}"
    return None


def argument_problem(schema: Mapping[str, Any], arguments: Any) -> str | None:
    """Why `arguments` do not satisfy `schema` (every violation, in path order), or None."""
    if plain(schema) and fits(schema, arguments):
        return None
    validator = _validator(json.dumps(schema, sort_keys=True))
    errors = sorted(validator.iter_errors(arguments), key=lambda e: [_part(p) for p in e.absolute_path])
    if not errors:
        return None
    parts = [f"{'.'.join(str(p) for p in e.absolute_path) or 'arguments'}: {e.message}" for e in errors]
    return "; ".join(parts) + f" (got {json.dumps(arguments, default=str)[:120]})"


def _part(part: object) -> tuple[int, int, str]:
    """Path parts in order: list positions as numbers, keys as text."""
    return (0, part, "") if isinstance(part, int) else (1, 0, str(part))


def _validator_class(schema: Mapping[str, Any]) -> Any:
    from jsonschema.validators import validator_for

    return validator_for(schema)


@functools.lru_cache(maxsize=256)
def _validator(schema_text: str) -> Any:
    schema = json.loads(schema_text)
    return _validator_class(schema)(schema)


#: The types a plain schema may name, each with jsonschema's test of a JSON value.
_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer()),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _texts(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


#: The keywords of a plain schema, each with the test of a well-formed value.
_KEYWORDS: dict[str, Callable[[Any, int], bool]] = {
    "type": lambda v, depth: isinstance(v, str) and v in _TYPES,
    "description": lambda v, depth: isinstance(v, str),
    "title": lambda v, depth: isinstance(v, str),
    "default": lambda v, depth: True,
    "properties": lambda v, depth: isinstance(v, dict) and all(_plain(s, depth + 1) for s in v.values()),
    "required": lambda v, depth: _texts(v) and len(set(v)) == len(v),
    "additionalProperties": lambda v, depth: isinstance(v, bool),
    "enum": lambda v, depth: _texts(v),
    "items": lambda v, depth: _plain(v, depth + 1),
    "minimum": lambda v, depth: _number(v),
    "maximum": lambda v, depth: _number(v),
    "minLength": lambda v, depth: _count(v),
    "maxLength": lambda v, depth: _count(v),
}


def plain(schema: Any) -> bool:
    """Whether `schema` uses only `_KEYWORDS`, each well formed: then it is a valid JSON Schema
    whichever draft applies, and `fits` decides what fits it."""
    return _plain(schema, 0)


def _plain(schema: Any, depth: int) -> bool:
    if not isinstance(schema, dict) or depth > 32:
        return False
    return all(key in _KEYWORDS and _KEYWORDS[key](value, depth) for key, value in schema.items())


def fits(schema: Mapping[str, Any], value: Any) -> bool:
    """Whether `value` satisfies `schema`, a `plain` one, as jsonschema would decide."""
    kind = schema.get("type")
    if kind is not None and not _TYPES[kind](value):
        return False
    if "enum" in schema and value not in schema["enum"]:  # strings only: plain `==`, as jsonschema compares them
        return False
    if _number(value):
        return not (value < schema.get("minimum", value) or value > schema.get("maximum", value))
    if isinstance(value, str):
        return schema.get("minLength", 0) <= len(value) <= schema.get("maxLength", len(value))
    if isinstance(value, list):  # descends only where the schema does, so no deeper than the schema
        return "items" not in schema or all(fits(schema["items"], item) for item in value)
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        return (all(name in value for name in schema.get("required", ()))
                and (schema.get("additionalProperties", True) or all(name in properties for name in value))
                and all(fits(properties[name], item) for name, item in value.items() if name in properties))
    return True


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
