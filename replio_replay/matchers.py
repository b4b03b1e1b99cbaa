"""Matchers, pure: the small language that says what a value (an argument, an answer, a file's
content) must look like.

A matcher is a literal (equal as JSON values are: ``1`` equals ``1.0``, ``true`` is not ``1``) or
an operator object: ``{"$regex": r}`` (`r`, in RE2 syntax, occurs somewhere: see `regex`), ``{"$contains": s}``,
``{"$icontains": s}`` (ignoring case), ``{"$min": n}`` and/or ``{"$max": n}``, ``{"$any": [m, ...]}``
(one of them holds), ``{"$not": m}``, ``{"$all": [m, ...]}`` (every one holds),
``{"$normalized": s}`` (a string equal to `s` once both are normalised as BFCL does: spaces and
``,./-_*^`` removed, lower case, ``'`` read as ``"``), ``{"$type": t}`` (a JSON type: ``string``,
``integer`` (a number written without a fraction or exponent), ``float`` (one written with
either), ``number`` (either), ``boolean``, ``array``, ``object``,
``null``), ``{"$items": [m, ...]}`` (an array of exactly these items, in order), ``{"$object": {key:
m}}`` (an object with only these keys, each matching; a key whose matcher is ``$optional`` may be
missing) and ``{"$optional": m}`` (in an argument or `$object` table: the key may be missing; when
present it must match `m`). The verifier's checks and a stub tool's ``when`` clauses speak it. `parse_matcher` validates one when a fixture or tool set loads, so a typo such as
``$regx`` is an error, never a literal that silently fails.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer

from ._runtime.redact import NO_SECRETS, Redactor
from ._runtime.regex import compile_regex, regex_search

__all__ = [
    "JSON_TYPES",
    "OPERATORS",
    "ArgExpectation",
    "Matcher",
    "json_equal",
    "matches",
    "matches_all",
    "normalized",
    "optional",
    "parse_matcher",
    "quoted",
    "shown",
    "written",
]

OPERATORS = ("$regex", "$contains", "$icontains", "$min", "$max", "$any", "$not", "$all", "$normalized",
             "$type", "$items", "$object", "$optional")
_TEXT = ("$regex", "$contains", "$icontains", "$normalized")
#: How a `$regex` says without lookaround that several things must (or must not) occur.
_REWRITE = ('write each condition as its own matcher: {"$all": [{"$regex": "a"}, {"$regex": "b"}]}, '
            'and one that must not hold as {"$not": {"$regex": "c"}}')
#: Operators whose operand is a non-empty list of matchers.
_LISTS = ("$any", "$all")

#: `$type`'s names, and the Python values (as `json.loads` makes them) each one takes.
JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "float": lambda v: isinstance(v, float),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}

#: What BFCL's checker ignores when it compares strings (`standardize_string`).
_BFCL_IGNORED = re.compile(r"[ ,./\-_*^]")


@dataclass(frozen=True)
class Matcher:
    """A check looser than equality: `op` is one of OPERATORS (`$min`/`$max` share `$range`)."""

    op: str
    operand: Any

    def test(self, actual: Any) -> bool:
        """Whether `actual` satisfies this check."""
        if self.op == "$range":
            low, high = self.operand
            if isinstance(actual, bool) or not isinstance(actual, (int, float)):
                return False
            return (low is None or actual >= low) and (high is None or actual <= high)
        if self.op == "$any":
            return any(matches(m, actual) for m in self.operand)
        if self.op == "$all":
            return all(matches(m, actual) for m in self.operand)
        if self.op in ("$not", "$optional"):
            return matches(self.operand, actual) is (self.op == "$optional")
        if self.op == "$type":
            return JSON_TYPES[self.operand](actual)
        if self.op == "$items":
            return isinstance(actual, list) and len(actual) == len(self.operand) \
                and all(matches(m, a) for m, a in zip(self.operand, actual))
        if self.op == "$object":
            return matches_all(dict(self.operand), actual, extra=False)
        if not isinstance(actual, str):
            return False
        if self.op == "$regex":
            return regex_search(self.operand, actual)
        if self.op == "$icontains":
            return self.operand.casefold() in actual.casefold()
        if self.op == "$normalized":
            return normalized(actual) == normalized(self.operand)
        return bool(self.operand in actual)

    def to_json(self) -> dict[str, Any]:
        """The operator object as it was written."""
        if self.op == "$range":
            low, high = self.operand
            return {k: v for k, v in (("$min", low), ("$max", high)) if v is not None}
        if self.op in _LISTS or self.op == "$items":
            return {self.op: [written(m) for m in self.operand]}
        if self.op == "$object":
            return {"$object": {k: written(m) for k, m in self.operand}}
        if self.op in ("$not", "$optional"):
            return {self.op: written(self.operand)}
        return {self.op: self.operand}


def parse_matcher(value: Any) -> Any:
    """A dict with a `$` key becomes a `Matcher` (ValueError if it is not a valid one); else a literal."""
    if isinstance(value, Matcher):
        return value
    if not (isinstance(value, dict) and any(str(k).startswith("$") for k in value)):
        return value
    unknown = sorted(str(k) for k in value if k not in OPERATORS)
    if unknown:
        raise ValueError(
            f"unknown check {', '.join(map(repr, unknown))}; use one of {', '.join(map(repr, OPERATORS))}"
        )
    keys = set(value)
    if keys <= {"$min", "$max"}:
        for key in keys:
            if isinstance(value[key], bool) or not isinstance(value[key], (int, float)):
                raise ValueError(f"{key} needs a number, not {type(value[key]).__name__}")
        return Matcher("$range", (value.get("$min"), value.get("$max")))
    if len(keys) != 1:
        raise ValueError(f"give one check per object, not {', '.join(sorted(map(repr, keys)))} together "
                         "(use $any to give alternatives)")
    (op, operand), = value.items()
    if op in _TEXT:
        if not isinstance(operand, str):
            raise ValueError(f"{op} needs a string, not {type(operand).__name__}")
        if op == "$regex":
            compile_regex(operand, "$regex", _REWRITE)
        return Matcher(op, operand)
    if op in _LISTS:
        if not isinstance(operand, list) or not operand:
            raise ValueError(f"{op} needs a non-empty list of matchers")
        return Matcher(op, tuple(parse_matcher(m) for m in operand))
    if op == "$items":
        if not isinstance(operand, list):
            raise ValueError(f"$items needs a list of matchers (one per item), not {type(operand).__name__}")
        return Matcher(op, tuple(parse_matcher(m) for m in operand))
    if op == "$object":
        if not isinstance(operand, dict):
            raise ValueError(f"$object needs an object of key -> matcher, not {type(operand).__name__}")
        return Matcher(op, tuple((str(k), parse_matcher(m)) for k, m in operand.items()))
    if op == "$type":
        if operand not in JSON_TYPES:
            raise ValueError(f"$type needs one of {', '.join(map(repr, JSON_TYPES))}, not {operand!r}")
        return Matcher(op, operand)
    return Matcher(op, parse_matcher(operand))  # $not, $optional


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values: booleans are not numbers, containers compare item by item."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    return bool(a == b)


def matches(expected: Any, actual: Any) -> bool:
    """Whether `actual` satisfies `expected`: a `Matcher`, or a literal equal to it as JSON values are."""
    if isinstance(expected, Matcher):
        return expected.test(actual)
    return json_equal(expected, actual)


def matches_all(wanted: Mapping[str, Any], arguments: Any, *, extra: bool = True) -> bool:
    """Whether every named argument is in `arguments` and matches (one whose matcher is `$optional`
    may be missing); unnamed arguments are free unless `extra` is false."""
    if not isinstance(arguments, dict):
        return False
    if not extra and any(k not in wanted for k in arguments):
        return False
    return all(matches(e, arguments[k]) if k in arguments else optional(e) for k, e in wanted.items())


def optional(expected: Any) -> bool:
    """Whether `expected` lets its key be missing (`$optional`)."""
    return isinstance(expected, Matcher) and expected.op == "$optional"


def normalized(text: str) -> str:
    """`text` as BFCL's checker compares strings: without spaces and ``,./-_*^``, lower case, ``'`` as ``"``."""
    return _BFCL_IGNORED.sub("", text).lower().replace("'", '"')


def written(value: Any) -> Any:
    """A matcher or literal as the user wrote it."""
    return value.to_json() if isinstance(value, Matcher) else value


def shown(wanted: Mapping[str, Any]) -> dict[str, Any]:
    """Argument expectations as the user wrote them, for messages."""
    return {k: written(e) for k, e in wanted.items()}


def quoted(text: str, limit: int = 80, redactor: Redactor = NO_SECRETS) -> str:
    """The start of `text` as a JSON string, for a message, redacted before it is cut."""
    return json.dumps(redactor.cut(text, limit), ensure_ascii=False)


#: A pydantic field type: a literal, or an operator object validated into a `Matcher`.
ArgExpectation = Annotated[Any, BeforeValidator(parse_matcher), PlainSerializer(written)]
