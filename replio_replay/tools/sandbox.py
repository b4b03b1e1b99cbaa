"""The path sandbox: every path a model names resolves inside the fixture's worktree, or is refused."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path, PurePosixPath, PureWindowsPath

__all__ = ["TEMP_PREFIX", "Sandbox", "SandboxError"]

#: How the temp folder of every worktree begins (`replio-wt-<pid>-...`), and of the fork server's
#: children's temp folders: what a killed run left under it is reaped by the next (`run.worktree`).
TEMP_PREFIX = "replio-wt-"

#: The harness's own folder in each worktree; hidden from listings so the model sees only the task.
HIDDEN = frozenset({".replio", ".git"})


class SandboxError(Exception):
    """A path would leave the worktree; the message is shown to the model after ``Error:``."""


class Sandbox:
    """Resolves model-supplied paths against one worktree root, passed in explicitly.

    Absolute paths are refused outright; relative ones are resolved with symlinks followed
    and must stay under the root. Nothing here changes the process's current directory.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(os.path.realpath(root))

    def resolve(self, path: str) -> Path:
        """The real path for `path`, or SandboxError if it is absolute or leads outside."""
        if not isinstance(path, str):
            raise SandboxError("path must be a string")
        path = path.strip() or "."
        if "\x00" in path:
            raise SandboxError("path must not contain a NUL character")
        if PurePosixPath(path).is_absolute() or PureWindowsPath(path).is_absolute():
            raise SandboxError(f"absolute path {path!r} is not allowed; use a path relative to the project root")
        if path.startswith("~"):
            raise SandboxError(f"path {path!r} is outside the project; use a path relative to the project root")
        real = Path(os.path.realpath(self.root / path))
        if not self.contains(real):
            raise SandboxError(f"path {path!r} is outside the project; use a path relative to the project root")
        return real

    def contains(self, real: Path) -> bool:
        """Whether an already-resolved path lies under the root."""
        return real == self.root or real.is_relative_to(self.root)

    def display(self, real: Path) -> str:
        """The worktree-relative, forward-slash name shown to the model (never the temp dir)."""
        rel = real.relative_to(self.root).as_posix()
        return rel if rel != "." else "."

    def walk_files(self, start: Path) -> Iterator[Path]:
        """Files under `start` in sorted order, skipping hidden harness folders and links leading out."""
        for dirpath, dirnames, filenames in os.walk(start):
            dirnames[:] = sorted(d for d in dirnames if d not in HIDDEN and self._inside(dirpath, d))
            for name in sorted(filenames):
                if self._inside(dirpath, name):
                    yield Path(dirpath) / name

    def _inside(self, dirpath: str, name: str) -> bool:
        return self.contains(Path(os.path.realpath(os.path.join(dirpath, name))))
