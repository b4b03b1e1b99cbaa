"""`"git"` in a fixture: the worktree as a repository whose commit hashes are the same on every machine."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from replio_replay.errors import FixtureError
from replio_replay.run.worktree import worktree
from tests.helpers import make_fixture


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def _history(**git: object) -> tuple[str, str, str]:
    fixture = make_fixture(files={"app.py": "print('hi')\n"}, git=git or True)
    with worktree(fixture, {"tools": "default"}) as root:
        return (_git(root, "log", "--all", "--format=%H %an %ad %s", "--date=raw"),
                _git(root, "status", "--short"), _git(root, "branch", "--show-current"))


def test_the_files_are_the_first_commit_on_main_and_the_hash_is_fixed() -> None:
    log, status, branch = _history()
    assert log == "337ed306144910e7bfe2748243ddc68eb07d38cd replio 946684800 +0000 Initial commit\n"
    assert (status, branch) == ("", "main\n")  # .replio/ is the harness's: not even untracked


def test_history_branches_and_uncommitted_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_AUTHOR_NAME", "someone else")  # the machine's git settings change nothing
    spec = {"commits": [{"message": "Add util", "files": {"util.py": "x = 1\n"}},
                        {"message": "Try a feature", "branch": "feature", "files": {"app.py": None}}],
            "staged": {"staged.txt": "s\n"}, "changes": {"util.py": "x = 2\n", "new.txt": "n\n"}}
    log, status, branch = _history(**spec)
    assert [line.split(" ", 1)[1] for line in log.splitlines()] == [
        "replio 946684920 +0000 Try a feature", "replio 946684860 +0000 Add util",
        "replio 946684800 +0000 Initial commit"]
    assert branch == "main\n" and status == "A  staged.txt\n M util.py\n?? new.txt\n"
    assert log == _history(**spec)[0]  # the same hashes every time


def test_the_checkout_is_left_on_the_branch_asked_for() -> None:
    spec = {"commits": [{"message": "On feature", "branch": "feature", "files": {"f.txt": "f\n"}}], "checkout": "feature"}
    assert _history(**spec)[2] == "feature\n"


def test_without_git_the_fixture_errs_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(FixtureError, match="fixture 'fx': git: .*the git program is not installed"):
        _history()


def test_no_template_is_copied_into_the_repository() -> None:
    fixture = make_fixture(files={"app.py": "print('hi')\n"}, git=True)
    with worktree(fixture, {"tools": "default"}) as root:
        assert not (root / ".git" / "hooks").exists() or not any((root / ".git" / "hooks").iterdir())
        assert (root / ".git" / "info" / "exclude").read_text() == ".replio/\n"
