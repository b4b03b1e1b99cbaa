"""run_command: runs in the worktree, exit code and output, timeout (whole process group), cap."""

from __future__ import annotations

import time

from tests.tools._tree import Run, Tree, make_runner


def test_exit_code_and_output(run: Run) -> None:
    assert run("run_command", command="echo hello") == "exit code 0\nhello"
    assert run("run_command", command="echo out; echo err >&2; exit 3") == "exit code 3\nout\nerr"


def test_runs_in_the_worktree_and_shows_it_as_dot(run: Run, tree: Tree) -> None:
    assert run("run_command", command="pwd") == "exit code 0\n."
    assert run("run_command", command="cat README.md") == "exit code 0\n# Demo\nA small project."
    assert run("run_command", command="echo $HOME") == "exit code 0\n."
    run("run_command", command="echo made > made.txt")
    assert (tree.root / "made.txt").read_text() == "made\n"


def test_absolute_paths_of_the_worktree_are_shown_relative(run: Run) -> None:
    assert run("run_command", command="realpath src/app.py") == "exit code 0\n./src/app.py"


def test_the_environment_is_minimal(run: Run, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("REPLIO_TEST_SECRET", "do-not-pass")
    assert "do-not-pass" not in run("run_command", command="env")


def test_timeout_is_an_error_result(run: Run) -> None:
    started = time.monotonic()
    out = run("run_command", command="sleep 5", timeout=0.2)
    assert out == "Error: run_command took longer than 0.2 s"
    assert time.monotonic() - started < 3


def test_the_runs_call_limit_cuts_a_longer_timeout(tree: Tree) -> None:
    run = make_runner(tree, timeout=0.4)
    started = time.monotonic()
    out = run("run_command", command="sleep 5", timeout=60)
    assert out == "Error: run_command took longer than 0.4 s"
    assert time.monotonic() - started < 3
    assert run("run_command", command="echo quick", timeout=60) == "exit code 0\nquick"


def test_a_shorter_timeout_than_the_runs_call_limit_is_kept(tree: Tree) -> None:
    run = make_runner(tree, timeout=10)
    out = run("run_command", command="sleep 5", timeout=0.3)
    assert out == "Error: run_command took longer than 0.3 s"


def test_timeout_stops_the_whole_command_not_only_the_shell(run: Run, tree: Tree) -> None:
    # a child shell outlives a kill of the outer shell alone
    out = run("run_command", command="sh -c 'sleep 0.6; echo late > late.txt'; true", timeout=0.2)
    assert out.startswith("Error: run_command took longer than")
    time.sleep(0.9)
    assert not (tree.root / "late.txt").exists()


def test_output_is_capped(run: Run) -> None:
    out = run("run_command", command="head -c 20000 /dev/zero | tr '\\0' a")
    assert out.startswith("exit code 0\naaaa")
    assert out.endswith("\n(output cut at 16000 characters)")
    body = out.removeprefix("exit code 0\n").removesuffix("\n(output cut at 16000 characters)")
    assert body == "a" * 16000


def test_bad_arguments_are_error_results(run: Run) -> None:
    assert run("run_command", command="echo a\x00b").startswith("Error: ")
    assert run("run_command", command="true", timeout=0).startswith("Error: invalid arguments for run_command")
    assert run("run_command", command="true", timeout=301).startswith("Error: invalid arguments")
    assert run("run_command", {}).startswith("Error: invalid arguments for run_command: command")
