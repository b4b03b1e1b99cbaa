"""BFCL's possible answers as expected calls, pure: the matchers that say what BFCL's checker accepts.

A possible answer names, per function call, each parameter's acceptable values; ``""`` among
them means the parameter may be left out. Each becomes an expected call object with
``"extra_arguments": false`` (BFCL refuses a parameter its answer does not list) whose
matchers follow BFCL's AST checker (`ast_checker.py`):

- a string is compared after BFCL's normalisation (`$normalized`), also inside lists and
  objects; a value BFCL gives for a string that is not one (a "variable") is compared as it is;
- an integer parameter takes integers only (`$type`), a float parameter integers too (BFCL
  converts them), a boolean booleans;
- a list is compared item by item, in order (`$items`); ``""`` among a list's values also
  accepts an empty list, as BFCL's list comparison does;
- an object (`dict`) takes only the keys its answer lists, each with its own values (`$object`),
  and a list of objects is compared object by object;
- a parameter whose only value is ``""`` must be left out (a string one may also be empty).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .names import encode_name

__all__ = ["BadAnswer", "expected_calls", "parameter_matcher"]

#: BFCL's types (before the OpenAPI mapping) that the checker treats as Python's str, list, dict.
_STRING = frozenset({"string", "any", "char", "String", "Any"})
_LIST = frozenset({"array", "tuple", "list", "ArrayList", "Array", "Queue", "Stack"})
_DICT = frozenset({"dict", "object", "HashMap", "Hashtable"})
_INTEGER = frozenset({"integer", "byte", "short", "long", "Bigint"})


class BadAnswer(ValueError):
    """A possible answer this conversion cannot read (its message says why)."""


def expected_calls(ground_truth: Sequence[Any], functions: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The expected call objects (as fixture JSON) of a BFCL possible answer, in its order."""
    declared = {f["name"]: f for f in functions}
    calls = []
    for item in ground_truth:
        if not isinstance(item, dict) or len(item) != 1:
            raise BadAnswer(f"a possible answer item must be one {{function: parameters}} object, not {item!r}")
        (name, params), = item.items()
        if name not in declared:
            raise BadAnswer(f"the possible answer calls {name!r}, which the case does not define")
        if not isinstance(params, dict):
            raise BadAnswer(f"the possible answer's parameters of {name!r} are not an object")
        properties = declared[name].get("parameters", {}).get("properties", {})
        arguments = {}
        for param, values in params.items():
            matcher = parameter_matcher(values, properties.get(param, {}), where=f"{name}.{param}")
            if matcher is not None:
                arguments[param] = matcher
        calls.append({"name": encode_name(name), "arguments": arguments, "extra_arguments": False})
    return calls


def parameter_matcher(values: Any, declared: Mapping[str, Any], *, where: str) -> Any:
    """The matcher of one parameter's acceptable `values`, given its BFCL declaration; None when
    the parameter must be left out."""
    if not isinstance(values, list):
        raise BadAnswer(f"{where}: the acceptable values must be a list, not {values!r}")
    kind = declared.get("type")
    optional = "" in values
    # BFCL's string comparison keeps "" among the candidates; elsewhere "" only means "may be left out".
    alternatives = [v for v in values if v != "" or kind in _STRING]
    if kind in _LIST and optional:
        alternatives.append([])
    if not alternatives:
        return None
    choices = [_value(v, kind, declared) for v in alternatives]
    matcher: Any = choices[0] if len(choices) == 1 else {"$any": choices}
    if kind in _INTEGER and all(isinstance(v, int) and not isinstance(v, bool) for v in alternatives):
        matcher = {"$all": [{"$type": "integer"}, matcher]}
    return {"$optional": matcher} if optional else matcher


def _value(value: Any, kind: Any, declared: Mapping[str, Any]) -> Any:
    """The matcher of one acceptable value of a parameter declared `kind`."""
    if isinstance(value, str) and kind in _STRING:
        return {"$normalized": value}
    if isinstance(value, list) and kind in _LIST:
        items = declared.get("items") or {}
        if items.get("type") in _DICT:
            return {"$items": [_object(v, items) for v in value]}
        return {"$items": [_loose(v) for v in value]}
    if isinstance(value, dict) and kind in _DICT:
        return _object(value, declared)
    return value


def _object(value: Any, declared: Mapping[str, Any]) -> Any:
    """An object answer `{key: [values]}`: only these keys, each one of its values (BFCL's `dict_checker`)."""
    if not isinstance(value, dict):
        return _loose(value)
    table: dict[str, Any] = {}
    for key, values in value.items():
        if not isinstance(values, list):
            raise BadAnswer(f"the acceptable values of key {key!r} must be a list, not {values!r}")
        choices = [_loose(v) for v in values]
        matcher = choices[0] if len(choices) == 1 else {"$any": choices}
        table[key] = {"$optional": matcher} if "" in values else matcher
    return {"$object": table}


def _loose(value: Any) -> Any:
    """A value compared as BFCL compares list items and object values: strings normalised, the rest equal."""
    return {"$normalized": value} if isinstance(value, str) else value
