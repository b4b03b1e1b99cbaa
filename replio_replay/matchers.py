"""Matchers, pure: the small language that says what an argument (or a stubbed call) must look like.

A matcher is a literal (compared with ``==``) or an operator object: ``{"$regex": r}`` (``re.search``
finds it), ``{"$contains": s}``, ``{"$min": n}`` and/or ``{"$max": n}``. The verifier's ``args``
check and a stub tool's ``when`` clauses speak it. `parse_matcher` validates one when a fixture or
tool set loads, so a typo such as ``$regx`` is an error, never a literal that silently fails.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer

__all__ = ["OPERATORS", "ArgExpectation", "Matcher", "json_equal", "matches", "matches_all", "parse_matcher", "shown"]

OPERATORS = ("$regex", "$contains", "$min", "$max")


@dataclass(frozen=True)
class Matcher:
    """A check looser than equality: a pattern, a substring, or numeric bounds."""

    regex: str | None = None
    contains: str | None = None
    min: float | None = None
    max: float | None = None

    def test(self, actual: Any) -> bool:
        """Whether `actual` satisfies this check."""
        if self.min is not None or self.max is not None:
            if isinstance(actual, bool) or not isinstance(actual, (int, float)):
                return False
            return (self.min is None or actual >= self.min) and (self.max is None or actual <= self.max)
        if not isinstance(actual, str):
            return False
        if self.regex is not None:
            return re.search(self.regex, actual) is not None
        return self.contains is not None and self.contains in actual

    def to_json(self) -> dict[str, Any]:
        """The operator object as it was written."""
        pairs = (("$regex", self.regex), ("$contains", self.contains), ("$min", self.min), ("$max", self.max))
        return {k: v for k, v in pairs if v is not None}


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
    for key, operand in value.items():
        wants_text = key in ("$regex", "$contains")
        if wants_text and not isinstance(operand, str):
            raise ValueError(f"{key} needs a string, not {type(operand).__name__}")
        if not wants_text and (isinstance(operand, bool) or not isinstance(operand, (int, float))):
            raise ValueError(f"{key} needs a number, not {type(operand).__name__}")
    text = ("$regex" in value) + ("$contains" in value)
    bounds = "$min" in value or "$max" in value
    if text + bounds != 1:
        raise ValueError("give one of '$regex', '$contains', or '$min' and/or '$max'")
    regex = value.get("$regex")
    if regex is not None:
        try:
            re.compile(regex)
        except re.error as exc:
            raise ValueError(f"invalid regular expression {regex!r}: {exc}") from None
    return Matcher(regex, value.get("$contains"), value.get("$min"), value.get("$max"))


def matches(expected: Any, actual: Any) -> bool:
    """Whether `actual` satisfies `expected`: a `Matcher`, or a literal equal to it as JSON values are.

    JSON equality, not Python's: ``true`` is not ``1`` and ``false`` is not ``0``; ``1`` and ``1.0``
    are the same number.
    """
    if isinstance(expected, Matcher):
        return expected.test(actual)
    return json_equal(expected, actual)


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values: booleans are not numbers, containers compare item by item."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    return bool(a == b)


def matches_all(wanted: Mapping[str, Any], arguments: Any) -> bool:
    """Whether every named argument is present in `arguments` and matches (unnamed ones are free)."""
    if not isinstance(arguments, dict):
        return False
    return all(k in arguments and matches(e, arguments[k]) for k, e in wanted.items())


def shown(wanted: Mapping[str, Any]) -> dict[str, Any]:
    """The expectations as the user wrote them, for messages."""
    return {k: e.to_json() if isinstance(e, Matcher) else e for k, e in wanted.items()}


def _written(value: Any) -> Any:
    return value.to_json() if isinstance(value, Matcher) else value


#: A pydantic field type: a literal, or an operator object validated into a `Matcher`.
ArgExpectation = Annotated[Any, BeforeValidator(parse_matcher), PlainSerializer(_written)]
