"""The one JSON reader for what a user gives replio: strict JSON, nesting bounded; pure.

Fixtures, tool sets, the config, saved results, goldens and the last-failed list are read
through `read_json`. Python's reader takes `NaN` and `Infinity`, which JSON has not, and
reads a number too large for a float (`1e999`) as infinity (either of which replio could then
write back as invalid JSON, or compute with into nonsense); and it builds data nested as deep as
the stack allows, which every later recursive walk (validation, matchers, digests, drift)
would then exhaust with a traceback. Both are refused here as a `JsonProblem`, whose message
the caller prefixes with the file's name. `deep_path` applies the same bound to data that
comes from Python (a plugin's fixtures).
"""

from __future__ import annotations

import json
import math
from typing import Any, NoReturn

__all__ = ["MAX_DEPTH", "JsonProblem", "deep_path", "read_json", "too_deep"]

#: The deepest nesting accepted in any input. Fixtures, tool sets and results nest a dozen
#: levels at most; this bound keeps every later recursive walk far from Python's limit.
MAX_DEPTH = 100

#: Keys of a too-deep path a message shows.
_SHOWN = 4


class JsonProblem(ValueError):
    """Why a text is not JSON replio takes, as a phrase after its name and a colon: `not valid JSON at line 3, ...`."""


def _refuse_constant(name: str) -> NoReturn:
    raise JsonProblem(f"not valid JSON: {name} is not a JSON number; write a number or null")


def read_json(text: str) -> Any:
    """`text` parsed as strict JSON; JsonProblem when it is not, holds NaN or Infinity or a
    number too large for a float, or nests deeper than `MAX_DEPTH` levels (the message names where)."""
    infinite: list[float] = []

    def number(literal: str) -> float:  # only a float literal can be read as infinity: no walk for the rest
        value = float(literal)
        if math.isinf(value):
            infinite.append(value)
        return value

    try:
        data = json.loads(text, parse_constant=_refuse_constant, parse_float=number)
    except json.JSONDecodeError as exc:
        raise JsonProblem(f"not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise JsonProblem(f"nested deeper than {MAX_DEPTH} levels; no input of replio needs that") from None
    except JsonProblem:
        raise
    except ValueError as exc:  # an integer too long to convert, say
        raise JsonProblem(f"not valid JSON: {exc}") from None
    where = deep_path(data)
    if where is not None:
        raise JsonProblem(f"nested deeper than {MAX_DEPTH} levels (at {where}); no input of replio needs that")
    where = _infinite_path(data) if infinite else None
    if where is not None:
        raise JsonProblem(f"the number at {where} is too large to be read (beyond 1.8e308, it would be "
                          "infinity); write a smaller number")
    return data


def _infinite_path(data: Any) -> str | None:
    """Where data holds a number Python read as infinity (`1e999`), as `summary.cost`, or None.

    Called on data `deep_path` passed, so the walk (an explicit stack) stays shallow."""
    stack: list[tuple[tuple[str, ...], Any]] = [((), data)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, float) and math.isinf(item):
            return ".".join(path) or "(top level)"
        if isinstance(item, (dict, list)):
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            stack.extend(reversed([((*path, str(key)), value) for key, value in pairs]))
    return None


def deep_path(data: Any, limit: int = MAX_DEPTH) -> str | None:
    """Where data nests deeper than `limit` levels (the first few keys of the path, as
    `expected.0.arguments...`), or None when it does not.

    Walked level by level, never recursively, so any depth is measured safely.
    """
    level: list[tuple[tuple[str, ...], Any]] = [((), data)] if isinstance(data, (dict, list)) else []
    for _ in range(limit):
        level = [(path if len(path) > _SHOWN else (*path, str(key)), value)
                 for path, item in level
                 for key, value in (item.items() if isinstance(item, dict) else enumerate(item))
                 if isinstance(value, (dict, list))]
        if not level:
            return None
    path = level[0][0]
    return ".".join(path[:_SHOWN]) + "..." if path else "(top level)"


def too_deep(data: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether JSON data nests deeper than `limit` levels."""
    return deep_path(data, limit) is not None
