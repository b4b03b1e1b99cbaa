"""The path sandbox: every path resolves inside the worktree root, or is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from replio_replay.tools.sandbox import Sandbox, SandboxError
from tests.tools._tree import Tree


@pytest.fixture
def sandbox(tree: Tree) -> Sandbox:
    return Sandbox(tree.root)


def refused(sandbox: Sandbox, path: object) -> str:
    with pytest.raises(SandboxError) as info:
        sandbox.resolve(path)  # type: ignore[arg-type]
    return str(info.value)


def test_relative_paths_resolve_under_the_root(sandbox: Sandbox, tree: Tree) -> None:
    assert sandbox.resolve("src/app.py") == tree.root / "src" / "app.py"
    assert sandbox.resolve("./src/../README.md") == tree.root / "README.md"
    assert sandbox.resolve("src/util/../app.py") == tree.root / "src" / "app.py"
    assert sandbox.resolve("not/yet/there.txt") == tree.root / "not" / "yet" / "there.txt"


@pytest.mark.parametrize("path", ["", ".", "  ", "./", "src/.."])
def test_the_root_itself(sandbox: Sandbox, tree: Tree, path: str) -> None:
    real = sandbox.resolve(path)
    assert real == tree.root
    assert sandbox.display(real) == "."


def test_a_symlink_inside_pointing_inside_is_fine(sandbox: Sandbox, tree: Tree) -> None:
    assert sandbox.resolve("src/alias.py") == tree.root / "src" / "app.py"


@pytest.mark.parametrize("path", ["/etc/passwd", "/", "C:\\Windows\\win.ini", "C:/x", "\\\\host\\share\\x"])
def test_absolute_paths_are_refused(sandbox: Sandbox, path: str) -> None:
    assert "absolute path" in refused(sandbox, path)


def test_the_roots_own_absolute_path_is_refused_too(sandbox: Sandbox, tree: Tree) -> None:
    assert "absolute path" in refused(sandbox, str(tree.root / "README.md"))


@pytest.mark.parametrize("path", ["..", "../outside/secret.txt", "a/../../x", "src/../../outside", "src/util/../../.."])
def test_climbing_out_is_refused(sandbox: Sandbox, path: str) -> None:
    assert "outside the project" in refused(sandbox, path)


@pytest.mark.parametrize("path", ["~", "~/x", "~root/.bashrc"])
def test_home_paths_are_refused(sandbox: Sandbox, path: str) -> None:
    assert "outside the project" in refused(sandbox, path)


@pytest.mark.parametrize("path", ["leak.txt", "leakdir", "leakdir/secret.txt", "leakdir/new.txt", "./leakdir/../leak.txt"])
def test_symlinks_leading_out_are_refused(sandbox: Sandbox, path: str) -> None:
    assert "outside the project" in refused(sandbox, path)


def test_a_dangling_symlink_leading_out_is_refused(sandbox: Sandbox, tree: Tree) -> None:
    (tree.root / "dangling").symlink_to(tree.outside / "not-yet.txt")
    assert "outside the project" in refused(sandbox, "dangling")


def test_a_symlinked_root_is_resolved_once(tree: Tree, tmp_path: Path) -> None:
    link = tmp_path / "root-link"
    link.symlink_to(tree.root, target_is_directory=True)
    sandbox = Sandbox(link)
    assert sandbox.root == tree.root
    assert sandbox.display(sandbox.resolve("src/app.py")) == "src/app.py"


def test_bad_values_are_refused(sandbox: Sandbox) -> None:
    assert "string" in refused(sandbox, 3)
    assert "NUL" in refused(sandbox, "src/app.py\x00.txt")


def test_messages_show_the_models_path_not_the_root(sandbox: Sandbox, tree: Tree) -> None:
    for path in ["../x", "leak.txt", "/etc/passwd", "~"]:
        message = refused(sandbox, path)
        assert tree.leaks(message) == []
        assert repr(path) in message


def test_display_is_worktree_relative_with_forward_slashes(sandbox: Sandbox, tree: Tree) -> None:
    assert sandbox.display(tree.root / "src" / "util" / "helpers.py") == "src/util/helpers.py"


def test_walk_files_skips_the_harness_folder_and_links_leading_out(sandbox: Sandbox, tree: Tree) -> None:
    files = [sandbox.display(f) for f in sandbox.walk_files(sandbox.root)]
    assert files == [
        "README.md", "docs/guide.md", "src/alias.py", "src/app.py", "src/util/helpers.py",
    ]


def test_nothing_changes_the_current_directory(sandbox: Sandbox, tree: Tree) -> None:
    before = os.getcwd()
    sandbox.resolve("src/app.py")
    list(sandbox.walk_files(sandbox.root))
    assert os.getcwd() == before != str(tree.root)
