"""A tool's JSON Schema as the OpenAPI-3 subset Gemini's function declarations accept, pure.

Gemini's ``Schema`` takes ``type`` (one name, upper-case), ``format``, ``title``,
``description``, ``nullable``, ``enum`` (strings), ``properties``, ``required``, ``items``,
``anyOf``, ``propertyOrdering``, ``minimum``/``maximum``, ``minItems``/``maxItems``,
``minLength``/``maxLength``, ``minProperties``/``maxProperties``, ``pattern``, ``default`` and
``example``, and answers 400 for any other keyword. So:

- kept: those keywords (schemas inside translated in turn; a ``format`` it ignores is dropped,
  as JSON Schema makes formats annotations);
- translated: a ``type`` list and an ``anyOf``/``oneOf`` with ``null`` become ``nullable``; a
  ``type`` list of several types and a ``oneOf`` become ``anyOf``; a string ``const`` becomes a
  one-value ``enum``; ``exclusiveMinimum``/``exclusiveMaximum`` become ``minimum``/``maximum``
  (one more or less for an integer; for a number the bound itself is let in, which the tool's
  own check still refuses); a local ``$ref`` to ``$defs``/``definitions`` is inlined; empty
  ``properties`` are left out (Gemini refuses them for an object);
- dropped: annotations with no effect on what is valid (``$schema``, ``$id``, ``$comment``,
  ``examples``, ``deprecated``, ``readOnly``, ``writeOnly``) and ``additionalProperties``
  given as true or false, which Gemini has no word for;
- refused, naming the tool, the place and the keyword: everything else (``allOf``, ``not``,
  ``patternProperties``, a schema for ``additionalProperties``, a recursive ``$ref``, ...).
"""

from __future__ import annotations

import math
from typing import Any

from ...errors import ProviderError

__all__ = ["gemini_schema"]

#: Keywords copied as they are (their values are not schemas).
_PLAIN = frozenset({
    "title", "description", "nullable", "required", "minItems", "maxItems", "minLength", "maxLength",
    "minProperties", "maxProperties", "pattern", "minimum", "maximum", "default", "example",
    "propertyOrdering",
})
_DROPPED = frozenset({"$schema", "$id", "$comment", "examples", "deprecated", "readOnly", "writeOnly",
                      "$defs", "definitions"})
_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object"})
#: The formats Gemini's API takes (others fail the request).
_FORMATS = frozenset({"enum", "date-time", "float", "double", "int32", "int64"})


class _Refused(Exception):
    def __init__(self, where: str, problem: str) -> None:
        super().__init__(where, problem)
        self.where, self.problem = where, problem


def gemini_schema(tool: str, schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` (a tool's parameters) in Gemini's subset; ProviderError naming `tool`, the place in
    its schema and the keyword when something in it has no Gemini equivalent."""
    try:
        return _Translator(schema).node(schema, "parameters", ())
    except _Refused as refused:
        raise ProviderError(
            f"gemini: tool {tool!r}: {refused.where}: {refused.problem}; Gemini accepts only a "
            "subset of JSON Schema: simplify the tool's parameters or run it with another provider"
        ) from None


class _Translator:
    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root

    def node(self, schema: Any, where: str, refs: tuple[str, ...]) -> dict[str, Any]:
        if not isinstance(schema, dict):
            raise _Refused(where, f"a schema must be an object, not a {type(schema).__name__}")
        if "$ref" in schema:
            return self.ref(schema, where, refs)
        out: dict[str, Any] = {}
        for key, value in schema.items():
            self.keyword(out, key, value, schema, where, refs)
        return out

    def ref(self, schema: dict[str, Any], where: str, refs: tuple[str, ...]) -> dict[str, Any]:
        ref = schema["$ref"]
        prefix, _, name = ref.rpartition("/") if isinstance(ref, str) else ("", "", "")
        table = {"#/$defs": "$defs", "#/definitions": "definitions"}.get(prefix)
        target = self.root.get(table, {}).get(name) if table and isinstance(self.root.get(table), dict) else None
        if target is None:
            raise _Refused(where, f"'$ref' {ref!r} does not point into this schema's $defs or definitions")
        if ref in refs:
            raise _Refused(where, f"'$ref' {ref!r} refers to itself, which Gemini cannot express")
        merged = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        return self.node(merged, where, (*refs, ref))

    def keyword(self, out: dict[str, Any], key: str, value: Any, schema: dict[str, Any], where: str,
                refs: tuple[str, ...]) -> None:
        if key in _DROPPED:
            return
        if key in _PLAIN:
            out[key] = value
        elif key == "type":
            self.type(out, value, where)
        elif key == "format":
            if value in _FORMATS:
                out[key] = value
        elif key == "enum":
            self.enum(out, value, where)
        elif key == "const":
            if not isinstance(value, str):
                raise _Refused(where, f"'const' {value!r} is not a string, and Gemini's enums hold only strings")
            out["enum"] = [value]
        elif key == "properties":
            if not isinstance(value, dict):
                raise _Refused(where, "'properties' is not an object")
            props = {name: self.node(sub, f"{where}.properties.{name}", refs) for name, sub in value.items()}
            if props:
                out[key] = props
        elif key == "items":
            out[key] = self.node(value, f"{where}.items", refs)
        elif key in ("anyOf", "oneOf"):
            self.any_of(out, key, value, where, refs)
        elif key in ("exclusiveMinimum", "exclusiveMaximum"):
            self.exclusive(out, key, value, schema, where)
        elif key == "additionalProperties" and isinstance(value, bool):
            return
        else:
            raise _Refused(where, f"{key!r} has no Gemini equivalent")

    def type(self, out: dict[str, Any], value: Any, where: str) -> None:
        # an OpenAPI-style upper-case name ("STRING") is read as the JSON Schema one
        names = [n.lower() if isinstance(n, str) else n for n in (value if isinstance(value, list) else [value])]
        unknown = [n for n in names if n not in _TYPES and n != "null"]
        if unknown:
            raise _Refused(where, f"'type' {unknown[0]!r} is not a JSON Schema type Gemini knows")
        kinds = [n for n in names if n != "null"]
        if "null" in names:
            out["nullable"] = True
        if not kinds:
            raise _Refused(where, "'type' null alone has no Gemini equivalent")
        if len(kinds) == 1:
            out["type"] = kinds[0].upper()
        else:
            out["anyOf"] = [{"type": k.upper()} for k in kinds]

    def enum(self, out: dict[str, Any], value: Any, where: str) -> None:
        if not isinstance(value, list):
            raise _Refused(where, "'enum' is not a list")
        if None in value:
            out["nullable"] = True
        values = [v for v in value if v is not None]
        if not all(isinstance(v, str) for v in values):
            raise _Refused(where, "'enum' holds values other than strings, and Gemini's enums hold only strings")
        out["enum"] = values

    def any_of(self, out: dict[str, Any], key: str, value: Any, where: str, refs: tuple[str, ...]) -> None:
        if not isinstance(value, list):
            raise _Refused(where, f"{key!r} is not a list")
        is_null = [isinstance(v, dict) and v.get("type") == "null" and len(v) == 1 for v in value]
        subs = [self.node(v, f"{where}.{key}[{i}]", refs) for i, v in enumerate(value) if not is_null[i]]
        if any(is_null):
            out["nullable"] = True
        if len(subs) == 1:
            out.update({k: v for k, v in subs[0].items() if k not in out})
        elif subs:
            out["anyOf"] = subs

    def exclusive(self, out: dict[str, Any], key: str, value: Any, schema: dict[str, Any], where: str) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise _Refused(where, f"{key!r} {value!r} is not a number")
        lower = key == "exclusiveMinimum"
        if schema.get("type") == "integer":
            value = math.floor(value) + 1 if lower else math.ceil(value) - 1
        out["minimum" if lower else "maximum"] = value
