"""Baselines and score gates through the `replio` command line: regressions first, each gate's exit
status, bad specs, --compare, shards merged, the HTML report's baseline section. The failed gates'
exit 1 (the first run of its test) and the how-to's worked example run the installed program in
subprocesses; the other command lines run in the test's process through click's CliRunner, as
nothing about the process matters to what a gate decides."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import call, replio_command, replio_in_process, turn, write_json

FIXTURES = ("a", "b", "c")
#: The baseline's script: a and b pass, c fails; the run's: a fails, b passes with more tokens, c errs on a tool.
BEFORE = {"a": [turn(text="yes")], "b": [turn(text="yes", usage={"prompt": 1000, "completion": 200})],
          "c": [turn(text="no")]}
NOW = {"a": [turn(text="no")], "b": [turn(text="yes", usage={"prompt": 3000, "completion": 200})],
       "c": [turn(call("no_such_tool")), turn(text="no")]}


@pytest.fixture
def gated(tmp_path: Path) -> Path:
    """A mock project of three fixtures with its baseline saved as base.json, then the script changed."""
    write_json(tmp_path / ".replio" / "config.json", {
        "provider": "mock", "providers": {"mock": {"script": "script.json"}}, "bundled": False,
        "prices": {"mock:scripted": {"input": 2.5, "output": 10.0}, "mock:other": {"input": 1.0, "output": 1.0}},
    })
    for fid in FIXTURES:
        write_json(tmp_path / ".replio" / "eval" / f"{fid}.json",
                   {"task": f"task {fid}", "verifier": {"answer": {"$contains": "yes"}}})
    write_json(tmp_path / "script.json", BEFORE)
    replio(tmp_path, "run", "--output-file", tmp_path / "base.json")
    write_json(tmp_path / "script.json", NOW)
    return tmp_path


def replio_process(project: Path, *args: str | Path, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}  # a pipe: tables at their full width
    done = subprocess.run([replio_command(), "eval", "--path", str(project), *map(str, args)], capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL, env=env)
    assert done.returncode in ok, (done.returncode, done.stdout, done.stderr)
    return done


def replio(project: Path, *args: str | Path, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
    """The command line in this process (CliRunner; COLUMNS is unset for every test)."""
    done = replio_in_process("eval", "--path", project, *args)
    assert done.returncode in ok, (done.returncode, done.stdout, done.stderr)
    return done


def test_the_fixtures_that_passed_in_the_baseline_and_fail_now_come_first(gated: Path) -> None:
    done = replio(gated, "run", "--baseline", gated / "base.json")  # no gate: it only reports
    rows = done.stdout.splitlines()
    header = rows[1].split()
    assert header[:4] == ["fixture", "status", "pass", "baseline"]
    assert [r.split()[:4] for r in rows[3:6]] == [["!", "a", "ok", "FAIL"], ["b", "ok", "pass", "pass"],
                                                   ["c", "ok", "FAIL", "FAIL"]]
    assert f"baseline {gated / 'base.json'} (mock:scripted): pass_rate 0.67 -> 0.33" in done.stdout
    assert "1 fixture passed there and fail now (marked !): a" in done.stdout
    assert done.stderr.splitlines()[0] == f"replio: passed in the baseline {gated / 'base.json'}, fail now: " \
                                          "a (pass -> FAIL)"

    data = json.loads(replio(gated, "run", "--baseline", gated / "base.json", "--output", "json").stdout)
    assert data["baseline"]["regressed"] == ["a"] and data["baseline"]["metrics"]["pass_rate"] == \
        {"baseline": 0.6667, "now": 0.3333}
    assert "gates" not in data


def test_each_failed_gate_exits_1_with_its_line(gated: Path) -> None:
    done = replio_process(gated, "run", "--baseline", gated / "base.json", "--max-drop", "pass_rate=0.05",
                  "--max-drop", "tokens=100", "--max-drop", "cost=0.001", "--fail-under", "pass_rate=0.5",
                  "--fail-over", "errors=0", "--fail-under", "accuracy=0.5", "--output", "json", ok=(1,))
    failed = [line.removeprefix("replio: gate failed: ") for line in done.stderr.splitlines()
              if line.startswith("replio: gate failed: ")]
    assert failed == [
        "pass_rate 0.33 < 0.50 (--fail-under)",
        "accuracy not measured by this run: --fail-under accuracy cannot be checked (no fixture declares expected "
        "calls)",
        "errors 1 > 0 (--fail-over)",
        "pass_rate 0.67 -> 0.33 (-0.33 > 0.05)",
        "tokens 1230 -> 3245 (+2015 > 100)",
        "cost 0.00465 -> 0.009725 (+0.005075 > 0.001)",
    ]
    assert json.loads(done.stdout)["gates"] == {"failed": failed}
    assert done.stderr.splitlines()[-1] == "replio: exit 1: 6 score gates failed (named above)"
    junit = replio(gated, "run", "--baseline", gated / "base.json", "--max-drop", "pass_rate=0.05",  # what it prints
                   "--output", "junit", ok=(1,)).stdout
    assert '<testsuite name="replio.gates" tests="1" failures="1" errors="0" skipped="0">' in junit
    assert '<failure message="pass_rate 0.67 -&gt; 0.33 (-0.33 &gt; 0.05)">' in junit


def test_gates_that_hold_change_nothing(gated: Path) -> None:
    done = replio(gated, "run", "--baseline", gated / "base.json", "--max-drop", "pass_rate=0.5",
                  "--max-drop", "tokens=5000", "--fail-under", "pass_rate=0.3", "--fail-over", "cost=1",
                  "--fail-over", "errors=1")
    assert "gate failed" not in done.stderr and "exit 1" not in done.stderr
    assert "--fail-under" not in done.stdout  # the table says nothing of gates that hold


def test_fail_if_worse_against_a_baseline_of_other_fixture_ids_fails_naming_why(gated: Path) -> None:
    base = json.loads((gated / "base.json").read_text())
    for fixture in base["fixtures"]:
        fixture["id"] = f"old-{fixture['id']}"  # the fixtures renamed since
    write_json(gated / "renamed.json", base)
    done = replio(gated, "run", "--baseline", gated / "renamed.json", "--fail-if-worse", ok=(1,))
    assert ("replio: gate failed: mock:scripted vs baseline mock:scripted: none of the run's 3 fixture ids is among the "
            "3 of baseline mock:scripted (fixtures renamed?), so --fail-if-worse cannot be checked; compare runs of the "
            "same fixtures") in done.stderr


def test_the_config_names_the_baseline_and_fail_under_needs_none(gated: Path) -> None:
    config = json.loads((gated / ".replio" / "config.json").read_text())
    write_json(gated / ".replio" / "config.json", {**config, "baseline": "base.json"})
    done = replio(gated, "run", "--max-drop", "pass_rate=0.05", ok=(1,))
    assert "replio: gate failed: pass_rate 0.67 -> 0.33 (-0.33 > 0.05)" in done.stderr
    write_json(gated / ".replio" / "config.json", config)
    done = replio(gated, "run", "--fail-under", "pass_rate=0.9", ok=(1,))
    assert "replio: gate failed: pass_rate 0.33 < 0.90 (--fail-under)" in done.stderr
    assert "baseline" not in done.stdout


@pytest.mark.parametrize(("args", "said"), [
    (("--max-drop", "pass_rat=0.05"), "--max-drop 'pass_rat=0.05': unknown metric 'pass_rat'; did you mean "
                                      "'pass_rate'?"),
    (("--fail-under", "tokens=10"), "--fail-under does not take tokens (it gets better as it goes down); use "
                                    "--fail-over tokens=10"),
    (("--fail-under", "pass_rate=high"), "'high' is not a number from 0 to 1"),
    (("--max-drop", "pass_rate=0.05"), "--max-drop measures from a baseline: give --baseline RESULT.json"),
    (("--baseline", "missing.json"), "missing.json: cannot be read (No such file or directory)"),
    (("--baseline", "script.json"), "script.json: not a replio result:"),
])
def test_a_bad_gate_or_baseline_exits_2_before_anything_runs(gated: Path, args: tuple[str, ...], said: str) -> None:
    args = tuple(str(gated / a) if a.endswith(".json") and "=" not in a else a for a in args)
    done = replio(gated, "run", *args, ok=(2,))
    assert said in done.stderr and done.stdout == ""


def test_compare_holds_each_provider_to_its_own_run_in_the_baseline(gated: Path) -> None:
    write_json(gated / "script.json", BEFORE)
    replio(gated, "run", "--compare", "mock:scripted,mock:other", "--output-file", gated / "both.json")
    write_json(gated / "script.json", NOW)
    done = replio(gated, "run", "--compare", "mock:other,mock:scripted", "--baseline", gated / "both.json",
                  "--max-drop", "cost=0", "--output", "json", ok=(1,))
    runs = json.loads(done.stdout)["runs"]
    assert [(r["model"], r["baseline"]["run"]) for r in runs] == [("other", "mock:other"),
                                                                    ("scripted", "mock:scripted")]
    assert [r["baseline"]["regressed"] for r in runs] == [["a"], ["a"]]
    assert "replio: gate failed: mock:other: cost 0.00123 -> 0.003245 (+0.002015 > 0.00)" in done.stderr
    assert "replio: gate failed: mock:scripted: cost 0.00465 -> 0.009725 (+0.005075 > 0.00)" in done.stderr
    assert "replio: passed in the baseline " in done.stderr and "fail now (mock:other): a (pass -> FAIL)" in done.stderr

    table = replio(gated, "run", "--compare", "mock:other,mock:scripted", "--baseline", gated / "both.json").stdout
    fixtures = table[table.index("fixtures (! passed in the baseline"):]
    assert [line.split()[0:2] for line in fixtures.splitlines()[3:6]] == [["!", "a"], ["b", "pass"], ["c", "FAIL"]]
    assert "mock:scripted: baseline " in table


def test_shards_merged_then_compared_with_the_baseline(gated: Path) -> None:
    for i in (1, 2):
        replio(gated, "run", "--shard", f"{i}/2", "--output-file", gated / f"shard{i}.json")
    merged = replio(gated, "merge", gated / "shard1.json", gated / "shard2.json", "--baseline", gated / "base.json",
                    "--max-drop", "pass_rate=0.05", "--html", gated / "merged.html", ok=(1,))
    assert "replio: gate failed: pass_rate 0.67 -> 0.33 (-0.33 > 0.05)" in merged.stderr
    assert merged.stdout.splitlines()[3].split()[:2] == ["!", "a"]
    assert "regressed" in (gated / "merged.html").read_text()
    held = replio(gated, "merge", gated / "shard1.json", gated / "shard2.json", "--baseline", gated / "base.json",
                  "--max-drop", "pass_rate=0.5")
    assert "gate failed" not in held.stderr


class _Cells(HTMLParser):
    """The text of each table cell under the report's `#baseline` section, and the matrix rows' order."""

    def __init__(self) -> None:
        super().__init__()
        self.section: str | None = None
        self.rows: list[list[str]] = []
        self.order: list[str] = []
        self.regressed: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "section":
            self.section = found.get("id")
        elif tag == "tr" and self.section == "baseline":
            self.rows.append([])
        elif tag in ("td", "th") and self.section == "baseline":
            self._cell = []
        elif tag == "tr" and found.get("data-fixture") and self.section == "fixtures":
            self.order.append(str(found["data-fixture"]))
        elif tag == "span" and "regressed" in (found.get("class") or "") and self.section == "fixtures":
            self.regressed.append(self.order[-1])

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell).strip())
            self._cell = None


def test_the_html_report_has_a_baseline_section_with_deltas_and_the_regressions_first(gated: Path) -> None:
    html = gated / "report.html"
    replio(gated, "run", "--baseline", gated / "base.json", "--html", html)
    parsed = _Cells()
    parsed.feed(html.read_text())
    rows: dict[str, Any] = {row[0]: row[1:] for row in parsed.rows if row}
    assert rows["metric"] == ["baseline", "now", "delta"]
    assert rows["pass_rate"] == ["0.67", "0.33", "-0.33"]
    assert rows["tokens"] == ["1230", "3245", "+2015"]
    assert rows["cost"] == ["$0.00465", "$0.009725", "+0.005075"]
    assert parsed.order[0] == "a" and parsed.regressed == ["a"]
    assert re.search(r"Passed in the baseline, fail now:</p>\s*<ul class=\"regressed\">\s*<li><a href=\"#fx-a\" data-open=\"fx-a\">a</a>: "
                     r"pass &rarr; FAIL</li>", html.read_text())


def test_each_tool_set_is_compared_with_its_own_run_and_its_file_s_prices_win(gated: Path) -> None:
    write_json(gated / ".replio" / "tools" / "cheap.json", {"prices": {"mock:scripted": {"input": 1.0, "output": 1.0}}})
    write_json(gated / "script.json", BEFORE)
    replio(gated, "run", "--tools", "default,cheap", "--output-file", gated / "sets.json")
    write_json(gated / "script.json", NOW)
    runs = json.loads(replio(gated, "run", "--tools", "cheap,default", "--baseline", gated / "sets.json",
                             "--output", "json").stdout)["runs"]
    assert [(r["tools"], r["baseline"]["run"]) for r in runs] == [("cheap", "mock:scripted tools=cheap"),
                                                                    ("default", "mock:scripted")]
    assert [r["summary"]["cost"] for r in runs] == [0.003245, 0.009725]  # 3245 tokens at $1 and at the config's price


def test_the_how_to_s_worked_example_prints_what_it_shows(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[1]
    page = (repo / "docs" / "how-to" / "baselines-and-cost.md").read_text(encoding="utf-8")
    example = page.split("### A worked example", 1)[1]
    shown = re.findall(r"```text\n(.*?)```", example, re.S)[:2]
    demo = tmp_path / "trials-demo"
    shutil.copytree(repo / "examples" / "trials", demo)
    common = ("run", "--tag", "builtin", "--tag", "stub", "--provider")
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    for args in ([*common, "llamacpp:qwen2.5-coder-1.5b-instruct", "--output-file", "base.json"],
                 [*common, "llamacpp:qwen2.5-coder-0.5b-instruct", "--baseline", "base.json",
                  "--max-drop", "pass_rate=0.05", "--max-drop", "pass^3=0", "--fail-over", "errors=200"]):
        assert f"--provider {args[6]}" in example.replace(" \\\n  ", " ")
        done = subprocess.run([replio_command(), "eval", "--path", ".", *args], cwd=demo, capture_output=True,
                              text=True, timeout=300, env={**env, "CI": "1"})
    assert done.returncode == 1
    assert shown[0] in done.stdout
    assert done.stderr.endswith(shown[1])
    assert next(line for line in done.stdout.splitlines() if line.startswith("! ")).split()[:5] == \
        ["!", "answer-without-tools", "ok/truncated", "0/3", "3/3"]
