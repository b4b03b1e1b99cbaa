"""Fixtures for the tool tests: a worktree with a secret folder beside it, and a toolbox over it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tools._tree import Run, Tree, build_tree, make_runner


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    """Files, a hidden `.replio/`, symlinks leading out (`leak.txt`, `leakdir/`) and one inside."""
    return build_tree(tmp_path)


@pytest.fixture
def run(tree: Tree) -> Run:
    """Every tool allowed (edit and bash too), over `tree`; web_fetch may reach the loopback test
    servers."""
    return make_runner(tree, web_allow=("127.0.0.1",))
