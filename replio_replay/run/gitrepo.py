"""A fixture's worktree as a git repository, byte-identical on every machine (`"git": true` or an object).

The provisioned files are the first commit on `main`; then the fixture's further commits are
made in order, each on its branch; then its `checkout` is checked out, its `staged` files are
written and staged, and its `changes` are written, unstaged. Author, committer, dates, the default branch and the configuration are
fixed, no user or system git config or template is read, so commit hashes are the same everywhere and
a recording made on one machine replays on another. The harness's own `.replio/` is ignored.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from ..errors import FixtureError
from ..fixtures.model import GitRepo

__all__ = ["make_repository"]

#: The first commit's date; each later commit is a minute after the one before.
_EPOCH = 946_684_800  # 2000-01-01T00:00:00Z
_WHO = ("replio", "replio@example.invalid")
_TIMEOUT = 30.0


def make_repository(root: Path, spec: GitRepo, *, fixture_id: str) -> None:
    """Make `root` (already holding the fixture's files) a repository as `spec` says.

    FixtureError (naming the fixture) when git is missing or refuses a step.
    """
    git = _Git(root, fixture_id)
    # No template: no machine's hooks (a post-commit hook would still run) and no sample files to
    # copy now and remove with the worktree.
    git("init", "--quiet", "--template=", "--initial-branch=main")
    (root / ".git" / "info").mkdir(parents=True, exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text(".replio/\n", encoding="utf-8")
    git("add", "--all")
    git.commit("Initial commit")
    branches = {"main"}
    for commit in spec.commits:
        if commit.branch is not None and commit.branch != git.branch:
            git("checkout", "--quiet", *([] if commit.branch in branches else ["-b"]), commit.branch)
            branches.add(commit.branch)
            git.branch = commit.branch
        _write(root, commit.files)
        git("add", "--all")
        git.commit(commit.message)
    target = spec.checkout or "main"
    if target != git.branch:
        git("checkout", "--quiet", *([] if target in branches else ["-b"]), target)
    if spec.staged:
        _write(root, spec.staged)
        git("add", "--all", "--", *spec.staged)
    _write(root, spec.changes)


def _write(root: Path, files: Mapping[str, str | None]) -> None:
    for rel, content in files.items():
        path = root / rel
        if content is None:
            path.unlink(missing_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")


class _Git:
    """Runs git in one worktree with a fixed identity, clock and configuration."""

    def __init__(self, root: Path, fixture_id: str) -> None:
        self.root = root
        self.fixture_id = fixture_id
        self.branch = "main"
        self.commits = 0
        # A child's environment, built from nothing but the process's PATH (not the `Env` snapshot,
        # which holds every key and is not handed to worktree setup): git is found, nothing else leaks.
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
            "HOME": str(root),
            "LC_ALL": "C",
            "TZ": "UTC",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_AUTHOR_NAME": _WHO[0], "GIT_AUTHOR_EMAIL": _WHO[1],
            "GIT_COMMITTER_NAME": _WHO[0], "GIT_COMMITTER_EMAIL": _WHO[1],
        }

    def commit(self, message: str) -> None:
        date = f"@{_EPOCH + 60 * self.commits} +0000"
        self.commits += 1
        env = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
        self("-c", "commit.gpgsign=false", "commit", "--quiet", "--allow-empty", "--no-verify",
             "--message", message, env=env)

    def __call__(self, *args: str, env: Mapping[str, str] | None = None) -> None:
        try:
            done = subprocess.run(["git", *args], cwd=self.root, env={**self.env, **(env or {})},
                                  capture_output=True, text=True, timeout=_TIMEOUT, check=False)
        except FileNotFoundError:
            raise FixtureError(f"fixture {self.fixture_id!r}", "git: the worktree should be a git repository, "
                               "but the git program is not installed; install git") from None
        except subprocess.TimeoutExpired:
            raise FixtureError(f"fixture {self.fixture_id!r}", f"git {args[0]} took over {_TIMEOUT:g} s") from None
        if done.returncode != 0:
            why = " ".join((done.stderr or done.stdout).split())[:300]
            raise FixtureError(f"fixture {self.fixture_id!r}", f"git: `git {' '.join(args)}` failed: {why}")
