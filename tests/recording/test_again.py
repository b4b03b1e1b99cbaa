"""One hint, the right one, for recording again what no longer matches its recording: after a change
to a judge's rubric alone, every sink (the table, `diff`, the HTML report, the Markdown review,
JUnit, the exit line on stderr, `status`) says to re-judge with --rejudge, which sends the judge
alone; after a change that reaches the agent's requests, every sink says to record again."""

from __future__ import annotations

import os
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from replio_replay.recording.again import (
    JUDGE_CHANGED,
    fixture_hint,
    judge_alone,
    run_hint,
    stale_judge_alone,
)
from tests.helpers import replio_command, replio_in_process
from tests.recording.test_judge import RUBRIC, agent_or_judge, run, write
from tests.support.llm_server import LLMServer

JUDGE_CHANGE = {"path": "messages[1].content", "kind": "changed", "role": "judge"}
AGENT_CHANGE = {"path": "messages[1].content", "kind": "changed"}


def test_the_judge_alone_is_re_judged_anything_else_recorded_again() -> None:
    assert fixture_hint([JUDGE_CHANGE], "notes") == "re-judge with --rejudge --fixture notes"
    assert fixture_hint([JUDGE_CHANGE], "notes", "terse") == "re-judge with --rejudge --fixture notes --tools terse"
    assert fixture_hint([AGENT_CHANGE, JUDGE_CHANGE], "notes") == "re-record with --record-mode all --fixture notes"
    assert fixture_hint([{**AGENT_CHANGE, "role": "user"}], "n") == "re-record with --record-mode all --fixture n"
    assert not judge_alone([]) and judge_alone([JUDGE_CHANGE, JUDGE_CHANGE])
    assert (run_hint(judge=True), run_hint(judge=False)) == ("re-judge with --rejudge",
                                                             "re-record with --record-mode stale")
    assert stale_judge_alone([JUDGE_CHANGED]) and not stale_judge_alone(["fixture changed", JUDGE_CHANGED])


@pytest.fixture
def recorded(tmp_path: Path, llm_server: LLMServer) -> Path:
    """The `notes` fixture recorded with its judge's answer, its golden approved."""
    llm_server.handler = agent_or_judge("yes")
    project = write(tmp_path / "proj")
    code, _, err = run(project, "--base-url", f"{llm_server.url}/v1", "--record-mode", "once", "--update-golden")
    assert code == 0, err
    return project


Replio = Callable[..., subprocess.CompletedProcess[str]]


def started(project: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """`replio eval --path PROJECT ARGS...` as the installed process."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "OPENAI_BASE_URL")}
    return subprocess.run([replio_command(), "eval", "--path", str(project), *map(str, args)], capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL, env=env)


def in_process(project: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """The same in this process: what each sink prints does not depend on the process."""
    return replio_in_process("eval", "--path", project, *args)


def sinks(project: Path, replio: Replio) -> dict[str, str]:
    """What each sink says of a strict replay of `notes`, and `diff` and `status`; the replay exits 1."""
    out = project / "out"
    done = replio(project, "run", "--fixture", "notes", "--record-mode", "none", "--strict", "--html",
                  out / "r.html", "--junit-xml", out / "r.xml", "--markdown", out / "r.md")
    assert done.returncode == 1, done.stderr
    failure = next(ET.parse(out / "r.xml").iter("failure"))
    return {"table": done.stdout, "stderr": done.stderr, "junit": failure.text or "",
            "html": (out / "r.html").read_text(), "markdown": (out / "r.md").read_text(),
            "diff": replio(project, "diff", "--fixture", "notes").stdout,
            "status": replio(project, "status").stdout}


def test_a_rubric_change_alone_says_re_judge_in_every_sink(recorded: Path) -> None:
    write(recorded, rubric="The answer says hello, politely.")
    said = sinks(recorded, started)  # the family's test through real processes
    for sink in ("table", "junit", "html", "markdown", "diff"):
        assert "re-judge with --rejudge --fixture notes" in said[sink], sink
    assert said["stderr"] == ("replio: exit 1: 1 fixture whose judge's requests changed (--strict; re-judge with "
                              "--rejudge): notes\n")
    assert "1 stale cassette whose judge alone changed: re-judge with --rejudge" in said["status"]
    assert [sink for sink, text in said.items() if "re-record" in text] == []


def test_a_change_the_agent_sees_says_record_again_in_every_sink(recorded: Path) -> None:
    write(recorded, rubric=RUBRIC)
    fixture = recorded / ".replio" / "eval" / "notes.json"
    fixture.write_text(fixture.read_text().replace("What does notes.txt say?", "What is in notes.txt?"))
    said = sinks(recorded, in_process)
    for sink in ("table", "junit", "html", "markdown", "diff"):
        assert "re-record with --record-mode all --fixture notes" in said[sink], sink
    assert said["stderr"] == ("replio: exit 1: 1 fixture with request drift (--strict; re-record with --record-mode "
                              "stale): notes\n")
    assert "1 stale cassette: re-record with --record-mode stale" in said["status"]
    assert [sink for sink, text in said.items() if "rejudge" in text] == []
