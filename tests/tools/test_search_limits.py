"""grep and glob against patterns and files built to make them hang: each call returns, bounded.

Every slow case is run in a forked child that is killed after `_BOUND` seconds, so a regression
fails the test instead of hanging the suite. Not a thread: Python's `re` holds the GIL while it
backtracks, so neither a waiting thread nor the toolbox's own deadline ever gets to run again.
"""

from __future__ import annotations

import multiprocessing
import os
import warnings
from collections.abc import Callable

import pytest

from tests.tools._tree import Run, Tree

#: Seconds a call may take before it counts as hung; each case takes milliseconds when all is well.
_BOUND = 10.0

_LINE_CAP = 2000  # file_read's line cap, which grep shares


def _returns_within(seconds: float, call: Callable[[], str]) -> str:
    """`call()`'s result, computed in a forked child that is killed if it has not returned in time."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return call()  # no way to stop a hung call here; run it unguarded
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)

    def child() -> None:
        try:
            sender.send((True, call()))
        except BaseException as exc:  # reported in the parent, which owns the test
            sender.send((False, f"{type(exc).__name__}: {exc}"))

    with warnings.catch_warnings():
        # Python 3.12+ warns about forking with threads; the child only runs the one call.
        warnings.filterwarnings("ignore", r".*fork\(\) may lead to deadlocks", DeprecationWarning)
        process = context.Process(target=child, daemon=True)
        process.start()
    sender.close()
    try:
        if not receiver.poll(seconds):
            pytest.fail(f"the call had not returned after {seconds:g} s")
        try:
            ok, value = receiver.recv()
        except EOFError:
            pytest.fail(f"the call's process died (exit code {process.exitcode})")
    finally:
        process.kill()
        process.join()
        receiver.close()
    if not ok:
        pytest.fail(f"the call raised {value}")
    return value


def _bounded(run: Run, tool: str, **arguments: object) -> str:
    return _returns_within(_BOUND, lambda: run(tool, **arguments))


# grep: catastrophic regexes -------------------------------------------------------------------


def test_grep_nested_quantifier_on_a_line_that_almost_matches(run: Run, tree: Tree) -> None:
    (tree.root / "a.txt").write_text("a" * 40 + "!\n" + "a" * 40 + "\n")
    assert _bounded(run, "grep", pattern="(a+)+$", path="a.txt") == "a.txt:2:" + "a" * 40


def test_grep_repeated_word_group_on_english_sentences(run: Run, tree: Tree) -> None:
    (tree.root / "prose.txt").write_text(
        "The quick brown fox jumps over the lazy dog and keeps on running through the long grass\n"
        "It was the best of times and it was the worst of times and it was the age of wisdom too\n"
        "Note: this sentence has a colon in it\n"
    )
    assert _bounded(run, "grep", pattern=r"(\w+\s?)+:", path="prose.txt") == (
        "prose.txt:3:Note: this sentence has a colon in it"
    )


# glob: many stars --------------------------------------------------------------------------------


def test_glob_many_stars_over_a_long_name(run: Run, tree: Tree) -> None:
    (tree.root / ("a" * 40 + ".txt")).write_text("")
    (tree.root / ("b" + "a" * 12 + ".js")).write_text("")
    pattern = "*a" * 12 + ".js"
    assert _bounded(run, "glob", pattern=pattern) == "b" + "a" * 12 + ".js"
    (tree.root / ("b" + "a" * 12 + ".js")).unlink()
    assert _bounded(run, "glob", pattern=pattern) == f"No files match {pattern}."


def test_glob_a_long_run_of_any_depth(run: Run, tree: Tree) -> None:
    (tree.root / ("a" * 40 + ".txt")).write_text("")
    deep = tree.root.joinpath(*[f"d{i}" for i in range(12)])
    deep.mkdir(parents=True)
    for folder in (tree.root, deep):
        (folder / "x").write_text("")
        (folder / "xx").write_text("")
    assert _bounded(run, "glob", pattern="**/" * 30 + "x").split("\n") == [
        "x",  # a folder's own files come before its subfolders'
        "/".join(f"d{i}" for i in range(12)) + "/x",
    ]


def test_glob_a_pattern_too_long_to_compile_is_refused(run: Run) -> None:
    assert _bounded(run, "glob", pattern="*a" * 60_000) == (
        "Error: pattern of 120000 characters is too long to match; use a shorter pattern"
    )


# grep: what it reads and shows ------------------------------------------------------------------


def test_grep_cuts_a_five_megabyte_line(run: Run, tree: Tree) -> None:
    line = "needle " + "x" * (5 * 1024 * 1024)
    (tree.root / "one-line.min.js").write_text(line + "\n")
    out = _bounded(run, "grep", pattern="needle", path="one-line.min.js")
    prefix = "one-line.min.js:1:"
    assert out == f"{prefix}{line[:_LINE_CAP]} [... line cut at {_LINE_CAP} of {len(line)} characters]"


def test_grep_lines_at_the_cap_are_shown_whole(run: Run, tree: Tree) -> None:
    (tree.root / "wide.txt").write_text("y" * _LINE_CAP + "\n")
    assert run("grep", pattern="y", path="wide.txt") == "wide.txt:1:" + "y" * _LINE_CAP


def test_grep_names_text_files_over_the_size_bound_instead_of_reading_them(
    run: Run, tree: Tree
) -> None:
    (tree.root / "big.log").write_text("main\n" * (11 * 1024 * 1024 // 5))
    (tree.root / "big.bin").write_bytes(b"\xff\xfe" + b"main\n" * (11 * 1024 * 1024 // 5))
    out = _bounded(run, "grep", pattern="main")
    assert out.split("\n") == [
        "docs/guide.md:1:Run main() to start.",
        "src/alias.py:4:def main():",
        "src/app.py:4:def main():",
        "src/util/helpers.py:2:    return 'main'",
        "(1 file larger than 10 MB not searched: big.log)",
    ]
    assert _bounded(run, "grep", pattern="main", path="big.log") == (
        "No matches for main.\n(1 file larger than 10 MB not searched: big.log)"
    )


def test_grep_counts_the_skipped_files_past_ten_names(run: Run, tree: Tree) -> None:
    for i in range(12):
        with open(tree.root / f"big{i:02}.txt", "wb") as fh:
            fh.truncate(10 * 1024 * 1024 + 1)  # sparse: NUL bytes, which are UTF-8 text
    out = _bounded(run, "grep", pattern="zebra")
    names = ", ".join(f"big{i:02}.txt" for i in range(10))
    assert out == f"No matches for zebra.\n(12 files larger than 10 MB not searched: {names} and 2 more)"


def test_grep_a_file_of_exactly_the_bound_is_searched(run: Run, tree: Tree) -> None:
    text = "x" * (10 * 1024 * 1024 - len("\nneedle\n")) + "\nneedle\n"
    (tree.root / "edge.txt").write_text(text)
    assert (tree.root / "edge.txt").stat().st_size == 10 * 1024 * 1024
    assert _bounded(run, "grep", pattern="^needle$", path="edge.txt") == "edge.txt:2:needle"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_grep_skips_a_named_pipe_instead_of_waiting_on_it(run: Run, tree: Tree) -> None:
    os.mkfifo(tree.root / "src" / "pipe")
    assert _bounded(run, "grep", pattern="getcwd", path="src") == (
        "src/alias.py:5:    return os.getcwd()\nsrc/app.py:5:    return os.getcwd()"
    )
