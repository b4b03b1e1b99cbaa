"""The package's folders import one way: no import, at module level, in a function or for type
checking only, leads from a folder (or root module) back to itself through another."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import replio_replay

PACKAGE = Path(replio_replay.__file__).parent


def _part(module: str) -> str:
    """The folder or root module a module's dotted name within the package starts with."""
    return module.split(".")[0]


def _imported(path: Path) -> set[str]:
    """Every package module `path` imports, wherever the import statement stands."""
    here = ["replio_replay", *path.relative_to(PACKAGE).with_suffix("").parts]
    if here[-1] == "__init__":
        here.append("")  # a package's relative imports start from the package itself
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(here[: len(here) - node.level] + [node.module or ""]).strip(".") if node.level \
                else node.module or ""
            found |= {f"{base}.{a.name}" for a in node.names}
    return {m.removeprefix("replio_replay.") for m in found if m.startswith("replio_replay.")}


def test_the_folders_import_each_other_without_a_cycle() -> None:
    edges: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        if path.parent == PACKAGE and path.name == "__init__.py":
            continue  # the public face re-exports from everywhere, and nothing imports it
        part = _part(".".join(path.relative_to(PACKAGE).with_suffix("").parts))
        edges.setdefault(part, set()).update(_part(m) for m in _imported(path) if _part(m) != part)
    try:
        order = list(graphlib.TopologicalSorter(edges).static_order())
    except graphlib.CycleError as exc:
        raise AssertionError(f"folders import each other in a circle: {' -> '.join(reversed(exc.args[1]))}") from None
    assert order.index("_runtime") < order.index("fixtures") < order.index("judge") < order.index("report")
