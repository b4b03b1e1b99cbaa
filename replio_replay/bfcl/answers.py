"""BFCL's possible answers as expected calls, pure: the matchers that say what BFCL's checker accepts.

A possible answer names, per function call, each parameter's acceptable values; ``""`` among
them means the parameter may be left out. Each becomes an expected call object with
``"extra_arguments": false`` (BFCL refuses a parameter its answer does not list) whose
matchers follow BFCL's AST checker (`ast_checker.py`):

- a string is compared after BFCL's normalisation (`$normalized`), also inside lists and
  objects; a value BFCL gives for a string that is not one (a "variable") is compared as it is;
- an integer answer takes integers only (`$type`), unless the parameter is a float one, which
  takes integers too (BFCL converts them); a boolean answer takes booleans;
- a list is compared item by item, in order (`$items`), an integer or float item by its exact
  type too (BFCL converts no int to a float inside a list), unless ``""`` is among the values;
  ``""`` also accepts an empty list, as BFCL's list comparison does;
- an object (`dict`) takes only the keys its answer lists, each with its own values (`$object`),
  and a list of objects is compared object by object;
- a parameter whose only value is ``""`` must be left out (a string one may also be empty);
- the function's required parameters must be given even where the answer lists ``""`` (BFCL
  checks them first), and a parameter the function does not declare must not be; a case whose
  answer BFCL's checker can never accept (it requires an undeclared parameter, or leaves out a
  required one) cannot be converted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .names import encode_name

__all__ = ["LEAVE_OUT", "BadAnswer", "expected_calls", "parameter_matcher"]

#: BFCL's types (before the OpenAPI mapping) that the checker treats as Python's str, list, dict.
_STRING = frozenset({"string", "any", "char", "String", "Any"})
_LIST = frozenset({"array", "tuple", "list", "ArrayList", "Array", "Queue", "Stack"})
_DICT = frozenset({"dict", "object", "HashMap", "Hashtable"})
_FLOAT = frozenset({"float", "number", "double"})
#: The list item types whose Python type BFCL checks, as `$type` names, and those types.
_ITEM_TYPES = {"integer": "integer", "float": "float"}
_PYTHON: dict[str, type] = {"integer": int, "float": float}


#: What `parameter_matcher` returns for a parameter that must not be given.
LEAVE_OUT = object()


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
        calls.append({"name": encode_name(name), "arguments": _arguments(name, params, declared[name]),
                      "extra_arguments": False})
    return calls


def _arguments(name: str, params: Mapping[str, Any], function: Mapping[str, Any]) -> dict[str, Any]:
    """The argument matchers of one expected call: BFCL requires the function's required parameters
    whatever the answer says, and refuses a parameter the function does not declare."""
    properties = function.get("parameters", {}).get("properties", {})
    required = function.get("parameters", {}).get("required", [])
    never = "BFCL's checker can never accept this case"
    for param in required:
        if param not in params:
            raise BadAnswer(f"{never}: {name} requires {param!r}, which the possible answer does not list")
    arguments = {}
    for param, values in params.items():
        if param not in properties:
            if isinstance(values, list) and "" in values:
                continue  # left out, as it must be: BFCL refuses an undeclared parameter
            raise BadAnswer(f"{never}: the possible answer lists {param!r}, which {name} does not declare")
        matcher = parameter_matcher(values, properties[param], where=f"{name}.{param}", required=param in required)
        if matcher is not LEAVE_OUT:
            arguments[param] = matcher
        elif param in required:
            raise BadAnswer(f"{never}: {name} requires {param!r}, and the possible answer accepts no value for it")
    return arguments


def parameter_matcher(values: Any, declared: Mapping[str, Any], *, where: str, required: bool = False) -> Any:
    """The matcher of one parameter's acceptable `values`, given its BFCL declaration; `LEAVE_OUT`
    when the parameter must be left out. ``""`` makes it optional unless the function requires it."""
    if not isinstance(values, list):
        raise BadAnswer(f"{where}: the acceptable values must be a list, not {values!r}")
    kind = declared.get("type")
    optional = "" in values and not required
    # BFCL's string comparison keeps "" among the candidates; elsewhere "" only means "may be left out".
    alternatives = [v for v in values if v != "" or kind in _STRING]
    if kind in _LIST and "" in values:
        alternatives.append([])
    if not alternatives:
        return LEAVE_OUT
    choices = [_value(v, kind, declared, typed_items="" not in values) for v in alternatives]
    matcher: Any = choices[0] if len(choices) == 1 else {"$any": choices}
    # BFCL takes an int where a float is declared; anywhere else an integer answer wants an int (even
    # where a string is declared: BFCL then reads the answer as a "variable" of the answer's type).
    if kind not in _FLOAT and all(isinstance(v, int) and not isinstance(v, bool) for v in alternatives):
        matcher = {"$all": [{"$type": "integer"}, matcher]}
    return {"$optional": matcher} if optional else matcher


def _value(value: Any, kind: Any, declared: Mapping[str, Any], *, typed_items: bool) -> Any:
    """The matcher of one acceptable value of a parameter declared `kind`. BFCL checks the type of
    a list's items (an int is no float there) unless ``""`` is among the values (`typed_items`)."""
    if isinstance(value, str) and kind in _STRING:
        return {"$normalized": value}
    if isinstance(value, list) and kind in _LIST:
        items = declared.get("items") or {}
        if items.get("type") in _DICT:
            return {"$items": [_object(v, items) for v in value]}
        item_type = _ITEM_TYPES.get(str(items.get("type"))) if typed_items else None
        return {"$items": [_typed(_loose(v), v, item_type) for v in value]}
    if isinstance(value, dict) and kind in _DICT:
        return _object(value, declared)
    return value


def _typed(matcher: Any, value: Any, item_type: str | None) -> Any:
    """`matcher` also asking for `item_type` when the answer's item is of that type."""
    if item_type is None or type(value) is not _PYTHON[item_type]:
        return matcher
    return {"$all": [{"$type": item_type}, matcher]}


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
