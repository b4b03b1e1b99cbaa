"""The one canonical JSON form, and that the package writes it (and files) in one place only."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest

import replio_replay
from replio_replay._runtime.jsoncanon import canonical

PACKAGE = Path(replio_replay.__file__).parent


def test_keys_are_sorted_whitespace_dropped_and_text_kept_as_is() -> None:
    assert canonical({"b": 1, "a": [1, {"d": 2, "c": 3}]}) == '{"a":[1,{"c":3,"d":2}],"b":1}'
    assert canonical("raw string") == '"raw string"'
    assert canonical({"path": "café", "emoji": "🙂"}) == '{"emoji":"🙂","path":"café"}'


def test_nan_is_written_unless_refused() -> None:
    assert canonical([math.nan, math.inf]) == "[NaN,Infinity]"
    with pytest.raises(ValueError):
        canonical({"x": math.nan}, allow_nan=False)


def test_a_value_json_has_not_needs_a_default() -> None:
    with pytest.raises(TypeError):
        canonical({"p": Path("a")})
    assert canonical({"p": Path("a")}, default=str) == '{"p":"a"}'


def _calls(name: str) -> list[str]:
    """`file:line` of each call of `name` (as `module.function`) in the package."""
    module, function = name.split(".")
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == function
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == module):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    return found


def _compact_sorted(path: Path) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "dumps":
            keywords = {k.arg: k.value for k in node.keywords}
            separators = keywords.get("separators")
            if "sort_keys" in keywords and isinstance(separators, ast.Tuple):
                lines.append(node.lineno)
    return lines


def test_only_jsoncanon_writes_the_canonical_form() -> None:
    writers = [str(p.relative_to(PACKAGE)) for p in sorted(PACKAGE.rglob("*.py")) if _compact_sorted(p)]
    assert writers == ["_runtime/jsoncanon.py"]


def test_only_the_atomic_writer_renames_temp_files_into_place() -> None:
    assert [c.split(":")[0] for c in _calls("os.replace") + _calls("tempfile.mkstemp")] == ["_runtime/atomic.py", "_runtime/atomic.py"]
