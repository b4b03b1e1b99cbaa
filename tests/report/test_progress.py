"""Live progress on a terminal (a real pseudo-terminal), none on a pipe or under CI, `-v` lines there."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
from pathlib import Path

import pytest

from replio_replay.judge.results import FixtureResult, Status
from replio_replay.report.progress import LineProgress, LiveProgress, Progress, choose, tally_line
from tests.helpers import replio_command
from tests.report.test_output import LONG_ID, write_project


def _args(project: Path, *extra: str) -> list[str]:
    return [replio_command(), "eval", "--path", str(project), "run", "--no-cassettes", "--fixture", LONG_ID,
            "--fixture", "short", *extra]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    return {**env, "COLUMNS": "120", "TERM": "xterm-256color", **extra}


def on_a_terminal(args: list[str], env: dict[str, str]) -> str:
    """Run with stdout and stderr on a pseudo-terminal; everything it drew, as text."""
    main, side = pty.openpty()
    process = subprocess.Popen(args, stdin=side, stdout=side, stderr=side, env=env, close_fds=True)
    os.close(side)
    out = b""
    try:
        while True:
            ready, _, _ = select.select([main], [], [], 30)
            if not ready:
                break
            try:
                data = os.read(main, 65536)
            except OSError:  # the other side closed
                break
            if not data:
                break
            out += data
    finally:
        process.wait(timeout=30)
        os.close(main)
    return out.decode("utf-8", "replace")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "proj")


def test_a_terminal_shows_live_progress(project: Path) -> None:
    drawn = on_a_terminal(_args(project), _env())
    assert "mock:scripted  2/2 done  0 running" in drawn
    assert "1 failed" in drawn and "tokens" in drawn
    assert "\x1b[" in drawn  # drawn in place, with terminal codes


@pytest.mark.parametrize("extra", [("--output", "json"), ("--output", "junit")])
def test_no_progress_when_the_output_is_not_the_table(project: Path, extra: tuple[str, str]) -> None:
    assert " done " not in on_a_terminal(_args(project, *extra), _env())


def test_no_progress_under_ci_and_lines_with_verbose(project: Path) -> None:
    assert " done " not in on_a_terminal(_args(project), _env(CI="true"))
    drawn = on_a_terminal(_args(project, "-v"), _env(CI="true"))
    assert " done " not in drawn
    assert f"{LONG_ID}: pass truncated, 9 calls, 135 tokens, " in drawn
    assert "short: FAIL ok, 0 calls, 15 tokens, " in drawn
    assert "[1/2] " in drawn and "[2/2] " in drawn


def test_a_pipe_gets_no_progress_and_verbose_lines_on_stderr(project: Path) -> None:
    quiet = subprocess.run(_args(project), capture_output=True, text=True, env=_env(), timeout=60)
    assert quiet.stderr == "" and "\x1b[" not in quiet.stdout
    loud = subprocess.run(_args(project, "-v", "--jobs", "1"), capture_output=True, text=True, env=_env(),
                          timeout=60)
    assert loud.stderr.splitlines()[0].startswith(f"[1/2] {LONG_ID}: pass truncated")
    assert "[1/2]" not in loud.stdout


def _result(fid: str, *, passed: bool, tokens: int = 10, error: str | None = None) -> FixtureResult:
    return FixtureResult(id=fid, passed=passed, tokens=tokens, calls=1,
                         status=Status.ERROR if error else Status.OK, error=error, seconds=0.5)


def test_counts_per_run() -> None:
    progress = Progress([("a", 3), ("b", 1)])
    progress.started("a")
    progress.started("a")
    progress.finished("a", _result("x", passed=False, tokens=1234))
    progress.started("b")
    assert progress.tallies["a"].done == 1 and progress.tallies["a"].running == 1
    assert progress.tallies["a"].failed == 1 and progress.tallies["b"].running == 1
    assert tally_line("a", progress.tallies["a"], 2.25) == "a  1/3 done  1 running  2.2s  1,234 tokens  1 failed"


def test_lines_name_the_run_when_there_are_several() -> None:
    out = io.StringIO()
    progress = LineProgress([("a", 1), ("b", 1)], out)
    progress.started("b")
    progress.finished("b", _result("x", passed=False, error="boom\nmore"))
    assert out.getvalue() == "[1/1] b x: FAIL error, 1 call, 10 tokens, 0.50s: boom\n"


@pytest.mark.parametrize(("output", "terminal", "ci", "verbose", "kind"), [
    ("table", True, "", False, LiveProgress),
    ("table", True, "1", False, type(None)),
    ("table", True, "1", True, LineProgress),
    ("json", True, "", False, type(None)),
    ("table", False, "", False, type(None)),
    ("table", False, "", True, LineProgress),
])
def test_choose(output: str, terminal: bool, ci: str, verbose: bool, kind: type) -> None:
    class Stream(io.StringIO):
        def isatty(self) -> bool:
            return terminal

    chosen = choose([("a", 1)], output=output, verbose=verbose, env={"CI": ci} if ci else {},
                    stdout=Stream(), stderr=Stream())
    assert type(chosen) is kind
