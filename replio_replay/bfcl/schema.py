"""BFCL's parameter types as JSON Schema, pure: the conversion BFCL applies for OpenAPI-style tools.

BFCL writes its functions with Python's type names (`dict`, `float`, `tuple`, `any`...);
`tool_parameters` maps them as BFCL's `convert_to_tool` does with `GORILLA_TO_OPENAPI`
(``dict`` -> ``object``, ``float`` -> ``number`` with ``"format": "float"`` and a sentence added to
the description, ``tuple`` -> ``array``, ``any`` -> ``string``, an unknown or missing type ->
``string``), to the same depth, so a model is offered what BFCL offers it.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["GORILLA_TO_OPENAPI", "UnknownType", "tool_parameters"]

#: BFCL's `constants.type_mappings.GORILLA_TO_OPENAPI`.
GORILLA_TO_OPENAPI: dict[str, str] = {
    "integer": "integer", "number": "number", "float": "number", "string": "string",
    "boolean": "boolean", "bool": "boolean", "array": "array", "list": "array", "dict": "object",
    "object": "object", "tuple": "array", "any": "string", "byte": "integer", "short": "integer",
    "long": "integer", "double": "number", "char": "string", "ArrayList": "array", "Array": "array",
    "HashMap": "object", "Hashtable": "object", "Queue": "array", "Stack": "array", "Any": "string",
    "String": "string", "Bigint": "integer",
}

#: What BFCL appends to a float parameter's description.
FLOAT_NOTE = " This is a float type value."


class UnknownType(ValueError):
    """An item type BFCL's mapping does not have (BFCL itself would fail on it)."""


def tool_parameters(parameters: dict[str, Any]) -> dict[str, Any]:
    """A BFCL function's `parameters` as the JSON Schema BFCL offers a model; the input is not modified."""
    out = copy.deepcopy(parameters)
    out["type"] = "object"
    out["properties"] = _properties(out.get("properties") or {})
    return out


def _properties(properties: dict[str, Any]) -> dict[str, Any]:
    for name, prop in properties.items():
        kind = prop.get("type")
        if kind == "float":
            prop["format"] = "float"
            prop["description"] = prop.get("description", "") + FLOAT_NOTE
        prop["type"] = GORILLA_TO_OPENAPI.get(kind, "string") if isinstance(kind, str) else "string"
        if prop["type"] not in ("array", "object"):
            continue
        if "properties" in prop:
            prop["properties"] = _properties(prop["properties"])
        elif "items" in prop:
            items = prop["items"]
            items["type"] = _mapped(items.get("type"), name)
            if items["type"] == "array" and "items" in items:
                items["items"]["type"] = _mapped(items["items"].get("type"), name)
            elif items["type"] == "object" and "properties" in items:
                items["properties"] = _properties(items["properties"])
    return properties


def _mapped(kind: Any, name: str) -> str:
    if not isinstance(kind, str) or kind not in GORILLA_TO_OPENAPI:
        raise UnknownType(f"parameter {name!r} has items of type {kind!r}, which BFCL's type mapping lacks")
    return GORILLA_TO_OPENAPI[kind]
