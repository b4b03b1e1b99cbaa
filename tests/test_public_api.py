"""The public surface: `__all__`, the lazy table and the type-checking imports agree, every error is
exported, and bench/ imports nothing but that surface."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

import replio_replay
from replio_replay import errors

REPO = Path(__file__).resolve().parent.parent
INIT = Path(replio_replay.__file__)


def _type_checking_imports() -> dict[str, str]:
    """Name -> module of each `from .module import name` under `if TYPE_CHECKING:` in __init__.py."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    (block,) = [node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"]
    found: dict[str, str] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.level == 1, ast.unparse(node)
        for alias in node.names:
            assert alias.asname is None, ast.unparse(node)
            found[alias.name] = f".{node.module}"
    return found


def test_all_is_sorted_and_unique() -> None:
    assert replio_replay.__all__ == sorted(set(replio_replay.__all__))


def test_all_the_lazy_table_and_the_type_checking_imports_agree() -> None:
    assert set(replio_replay._SOURCES) == set(replio_replay.__all__)
    assert _type_checking_imports() == replio_replay._SOURCES
    assert dir(replio_replay) == replio_replay.__all__


@pytest.mark.parametrize("name", replio_replay.__all__)
def test_each_public_name_resolves_to_its_owner(name: str) -> None:
    owner = importlib.import_module(replio_replay._SOURCES[name], "replio_replay")
    assert getattr(replio_replay, name) is getattr(owner, name)


def test_a_name_that_is_not_public_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'run_suite'"):
        replio_replay.run_suite  # noqa: B018


def test_every_error_class_is_exported() -> None:
    classes = {name for name, value in vars(errors).items()
               if inspect.isclass(value) and issubclass(value, errors.ReplioError)}
    assert classes == set(errors.__all__)
    assert classes <= set(replio_replay.__all__)


def _replio_imports(path: Path) -> list[tuple[str, str | None]]:
    """(module, name) of each import of replio_replay in `path`; name None for `import module`."""
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(a.name, None) for a in node.names if a.name.split(".")[0] == "replio_replay"]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "replio_replay":
            found += [(str(node.module), a.name) for a in node.names]
    return found


def test_bench_imports_only_the_public_surface() -> None:
    scripts = sorted((REPO / "bench").glob("*.py"))
    imports = {path.name: _replio_imports(path) for path in scripts}
    assert any(imports.values())  # the check sees bench's imports at all
    for script, found in imports.items():
        for module, name in found:
            assert module == "replio_replay", f"bench/{script} imports {module}: import from replio_replay only"
            assert name is None or name in replio_replay.__all__, f"bench/{script}: {name} is not public"
