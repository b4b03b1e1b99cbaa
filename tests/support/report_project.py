"""A scripted project for the HTML report's tests: one fixture passes, one drifts from its golden,
one reads and answers with hostile markup; `replio` runs it with the mock provider in the test's
process (click's CliRunner: nothing about the process matters to a report), `replio_process` in a
subprocess."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from tests.helpers import call, replio_in_process, turn, write_json
from tests.test_e2e import replio_command

#: Markup a model or a file might produce: a report that ran it would set the title and a global.
HOSTILE = '<script>window.__pwned = 1; document.title = "pwned"</script></textarea><b>bold?</b>'
TODO_LINE = "src/app.py:2:# TODO: fix the parser"
FIXTURES = ("steady", "drifty", "hostile")


def script(grep_pattern: str) -> dict[str, Any]:
    """The mock's turns; only the `drifty` fixture's grep pattern changes between versions."""
    return {
        "steady": [turn(call("file_read", path="notes.txt")), turn(text="It says hello.")],
        "drifty": [turn(call("grep", pattern=grep_pattern)), turn(text="src/app.py:2")],
        "hostile": [turn(call("file_read", path="page.html")), turn(text=f"The page holds {HOSTILE}")],
    }


def write_report_project(root: Path) -> Path:
    """The project (mock provider, script version "TODO"), with no golden yet."""
    write_json(root / ".replio" / "config.json",
               {"provider": "mock", "providers": {"mock": {"script": "script.json"}}, "max_turns": 4})
    write_json(root / "script.json", script("TODO"))
    fixtures = root / ".replio" / "eval"
    write_json(fixtures / "steady.json", {"task": "What does notes.txt say?", "files": {"notes.txt": "hello\n"},
                                          "expected": ["file_read"]})
    write_json(fixtures / "drifty.json", {"task": "Where is the TODO?", "expected": ["grep"],
                                          "files": {"src/app.py": "x = 1\n# TODO: fix the parser\n"}})
    write_json(fixtures / "hostile.json", {"task": "What does page.html hold?", "files": {"page.html": HOSTILE},
                                           "verifier": {"answer": {"$contains": "nothing"}}})
    return root


def replio_process(*args: str | Path, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
    """`replio ARGS` in a subprocess; its exit status must be one of `ok`."""
    done = subprocess.run([replio_command(), *map(str, args)], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert done.returncode in ok, (done.returncode, done.stdout, done.stderr)
    return done


def replio(*args: str | Path, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
    """`replio ARGS` in this process; its exit status must be one of `ok`."""
    done = replio_in_process(*args)
    assert done.returncode in ok, (done.returncode, done.stdout, done.stderr)
    return done


def run_fixtures(project: Path, *extra: str | Path, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
    """`replio eval run` of the project's three fixtures (not the bundled catalog)."""
    return replio("eval", "--path", project, "run", *(a for i in FIXTURES for a in ("--fixture", i)), *extra, ok=ok)


def drifted_report(root: Path, html: Path, *extra: str) -> Path:
    """Approve a run's goldens, change what the model does in `drifty`, and write the report of
    the same run again (exit 1: a fixture drifted); `extra` are flags of both runs."""
    project = write_report_project(root)
    run_fixtures(project, "--update-golden", *extra)
    write_json(project / "script.json", script("TODO:"))
    run_fixtures(project, "--html", html, *extra, ok=(1,))
    return html
