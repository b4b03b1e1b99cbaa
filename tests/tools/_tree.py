"""Builders for tool tests: a worktree, a secret folder beside it, links leading out, a toolbox."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replio_replay.tools.base import ToolContext
from replio_replay.tools.permissions import Category, Permission, Permissions
from replio_replay.tools.sandbox import Sandbox
from replio_replay.tools.toolbox import Toolbox
from tests.helpers import builtin_toolset

#: A name that must never show up in what a tool returns to the model.
ROOT_NAME = "replio-wt-distinctname"
SECRET = "TOP-SECRET-OUTSIDE"

ALL_ALLOWED = Permissions.for_fixture({c: Permission.ALLOW for c in Category})


@dataclass
class Tree:
    """The worktree `root` and the folder `outside` it that no tool may reach."""

    root: Path
    outside: Path
    tmp: Path

    def leaks(self, text: str) -> list[str]:
        """Any of the temp folders' names that appear in `text`."""
        names = {self.root.name, self.tmp.name, str(self.root), str(self.outside), str(self.tmp)}
        return sorted(n for n in names if n in text)


def build_tree(tmp_path: Path) -> Tree:
    """Files, a hidden `.replio/`, links leading out (`leak.txt`, `leakdir/`) and one inside."""
    root = tmp_path / ROOT_NAME
    outside = tmp_path / "outside"
    files = {
        "README.md": "# Demo\nA small project.\n",
        "src/app.py": "import os\n\n\ndef main():\n    return os.getcwd()\n",
        "src/util/helpers.py": "def helper():\n    return 'main'\n",
        "docs/guide.md": "Run main() to start.\n",
        ".replio/config.json": '{"secret": "harness"}\n',
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    outside.mkdir()
    (outside / "secret.txt").write_text(f"{SECRET}\ndef main(): pass\n", encoding="utf-8")
    (outside / "notes.md").write_text(f"{SECRET}\n", encoding="utf-8")
    (root / "leak.txt").symlink_to(outside / "secret.txt")
    (root / "leakdir").symlink_to(outside, target_is_directory=True)
    (root / "src" / "alias.py").symlink_to(root / "src" / "app.py")
    return Tree(root, outside, tmp_path)


Run = Callable[..., str]


def make_runner(tree: Tree, permissions: Permissions = ALL_ALLOWED, **ctx: Any) -> Run:
    """`run(tool, **arguments)`: the model-visible result, checked to hold no temp folder name."""
    toolbox = Toolbox(ToolContext(Sandbox(tree.root), **ctx), permissions, builtin_toolset())

    def run(name: str, arguments: Any = None, **kwargs: Any) -> str:
        result = toolbox.call(name, kwargs if arguments is None else arguments)
        assert isinstance(result, str)
        assert tree.leaks(result) == [], f"{name} leaked a temp path: {result!r}"
        assert SECRET not in result, f"{name} read outside the worktree: {result!r}"
        return result

    return run
