"""Merging saved results: the pure merge (summaries recomputed, runs matched, conflicts refused),
then `replio eval merge`: table, JUnit, exit status, and the HTML report built from a merged file.
The installed CLI runs in a subprocess where the exit status and what a process prints are checked
(a merge that exits 1 as the whole run does); elsewhere the same command lines run in this process
through click's CliRunner, as nothing about the process matters to a merge."""

from __future__ import annotations

import json
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from replio_replay.errors import UsageError
from replio_replay.judge.metrics import combine_trials, summarize
from replio_replay.judge.results import FixtureResult, RunResult, SavedProblem, SavedRuns
from replio_replay.plan.shards import shard_of
from replio_replay.report.merging import merge
from tests.helpers import replio_in_process, turn, write_json
from tests.plan.test_shards import replio as replio_process


def replio(project: Path, *args: str | Path, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
    """`replio eval --path PROJECT ARGS...` in this process (CliRunner), ended as a process ends."""
    done = replio_in_process("eval", "--path", project, *args)
    assert done.returncode in ok, (done.returncode, done.stdout, done.stderr)
    return done


def fx(fid: str, passed: bool = True, **data: Any) -> FixtureResult:
    return FixtureResult(id=fid, passed=passed, calls=1, tokens=10, **{"drift": [], **data})


def run(*fixtures: FixtureResult, model: str = "m", tools_hash: str | None = "h1") -> RunResult:
    return RunResult(provider="mock", model=model, tools_hash=tools_hash, fixtures=list(fixtures),
                     summary=summarize(fixtures))


def saved(*runs: RunResult, problems: tuple[tuple[str, str], ...] = ()) -> SavedRuns:
    return SavedRuns(runs=list(runs), problems=[SavedProblem(file=f, message=m) for f, m in problems])


def trials(fid: str, *passed: bool) -> list[FixtureResult]:
    return combine_trials([fx(fid, p, trial=k) for k, p in enumerate(passed, start=1)])


# the pure merge ------------------------------------------------------------------------------------


def test_the_summary_is_computed_afresh_with_pass_hat_k_over_every_part() -> None:
    a, b, c = trials("a", True, True, True), trials("b", True, False, True), trials("c", False, False, False)
    (merged,) = merge([("1.json", saved(run(*a, *c))), ("2.json", saved(run(*b)))]).runs
    assert [f.id for f in merged.fixtures] == ["a", "b", "c"]  # by id, as a run lists them
    assert merged.summary == summarize([*a, *b, *c])
    assert merged.summary.pass_hat_k == {"1": 0.5556, "2": 0.4444, "3": 0.3333}
    assert merged.summary.flaky == ["b"] and merged.summary.fixtures == 3 and merged.summary.tokens == 90


def test_shards_of_different_trial_counts_give_pass_hat_k_over_the_fixtures_run_k_times() -> None:
    """One shard run with --trials 3, one without: single-trial fixtures are not counted as failing
    every trial, pass^k is over the fixtures with k trials (and says over how many), and the pass
    rate is the mean of the fixtures' means."""
    three = [*trials("a", True, True, True), *trials("b", True, False, False)]
    once = [fx(f"s{i}", passed=i < 5) for i in range(6)]  # 5 of 6 pass once
    (merged,) = merge([("1.json", saved(run(*three))), ("2.json", saved(run(*once)))]).runs
    s = merged.summary
    assert s.pass_rate == round((1 + 1 / 3 + 5) / 8, 4)  # the mean of fixture means, not 8/12 of the trials
    assert s.pass_hat_k == {"1": round((1 + 1 / 3 + 5) / 8, 4), "2": round((1 + 0) / 2, 4), "3": 0.5}
    assert s.pass_hat_k["1"] == s.pass_rate and s.pass_hat_k["3"] <= s.pass_hat_k["2"] <= s.pass_hat_k["1"]
    assert s.pass_hat_k_fixtures == {"1": 8, "2": 2, "3": 2} and s.trials == 3 and s.flaky == ["b"]
    from replio_replay.report.text import trials_line
    assert "pass^2 0.50 [0.00, 1.00] (over 2 of 8)" in trials_line(s)
    assert "pass^1 0.79" in trials_line(s) and "pass^1 0.79 [" in trials_line(s)
    assert "pass_hat_k_fixtures" in merged.to_json()["summary"]
    alike = merge([("1.json", saved(run(*three)))]).runs[0]
    assert "pass_hat_k_fixtures" not in alike.to_json()["summary"]  # every fixture ran every trial


def test_runs_are_matched_by_provider_model_and_tools_in_the_order_they_first_appear() -> None:
    tuned = run(fx("x"), model="m").model_copy(update={"tools": "tuned", "tools_hash": "h2"})
    first = saved(run(fx("b"), model="m2"), run(fx("a"), model="m1"))
    second = saved(run(fx("a"), model="m2"), tuned, run(fx("b"), model="m1"))
    runs = merge([("1.json", first), ("2.json", second)]).runs
    assert [(r.model, r.tools, [f.id for f in r.fixtures]) for r in runs] == [
        ("m2", "default", ["a", "b"]), ("m1", "default", ["a", "b"]), ("m", "tuned", ["x"])]


def test_the_same_result_twice_is_kept_once_and_timing_does_not_count() -> None:
    one = saved(run(fx("a", timing={"seconds": 1.0}), fx("b")))
    again = saved(run(fx("a", timing={"seconds": 2.5})))
    (merged,) = merge([("1.json", one), ("1-again.json", again)]).runs
    assert [f.id for f in merged.fixtures] == ["a", "b"] and merged.fixtures[0].timing == {"seconds": 1.0}


def test_two_results_of_one_fixture_are_refused_naming_both_files_and_the_fixture() -> None:
    with pytest.raises(UsageError) as caught:
        merge([("shards/1.json", saved(run(fx("a")))), ("shards/2.json", saved(run(fx("a", passed=False))))])
    assert str(caught.value).startswith("shards/1.json and shards/2.json both hold fixture 'a' of mock:m, "
                                        "with different results; ")


def test_one_run_from_two_tool_sets_is_refused() -> None:
    with pytest.raises(UsageError, match=r"^1.json and 2.json hold runs of mock:m with different tool sets "
                                         r"\(tools_hash h1 and h2\)"):
        merge([("1.json", saved(run(fx("a")))), ("2.json", saved(run(fx("b"), tools_hash="h2")))])
    older = merge([("old.json", saved(run(fx("a"), tools_hash=None))), ("new.json", saved(run(fx("b"))))])
    assert older.runs[0].tools_hash == "h1"  # a result saved without a digest is taken as the same tool set


def test_problems_are_kept_once_each_in_order() -> None:
    broken, other = ("a.json", "not JSON"), ("b.json", "no task")
    merged = merge([("1.json", saved(run(), problems=(broken,))), ("2.json", saved(run(), problems=(broken, other)))])
    assert [(p.file, p.message) for p in merged.problems] == [broken, other]


# the CLI -------------------------------------------------------------------------------------------

IDS = ["fx-a", "fx-b", "fx-c", "fx-d", "fx-e", "fx-f"]


@pytest.fixture
def mock_project(tmp_path: Path) -> Path:
    """Six fixtures played by the mock provider; `fx-c` has no turns, so it ends in `error`."""
    root = tmp_path / "proj"
    write_json(root / ".replio" / "config.json", {"provider": "mock", "bundled": False,
                                                  "providers": {"mock": {"script": "script.json"}}})
    write_json(root / "script.json", {i: [turn(text="Done.")] for i in IDS if i != "fx-c"})
    for fid in IDS:
        write_json(root / ".replio" / "eval" / f"{fid}.json", {"task": f"Task {fid}.", "expected": []})
    return root


def shards(project: Path, folder: Path, n: int = 2) -> list[Path]:
    """Run the project's `n` shards, each to its own JSON file; the shard with `fx-c` exits 1."""
    files = [folder / f"shard-{i}" / "replio.json" for i in range(1, n + 1)]
    for i, file in enumerate(files, start=1):
        replio(project, "run", "--no-cassettes", "--shard", f"{i}/{n}", "--output-file", file, ok=(0, 1))
    return files


def test_merge_prints_the_table_of_the_whole_run_and_exits_1_for_an_error(mock_project: Path, tmp_path: Path) -> None:
    files = shards(mock_project, tmp_path)
    whole = replio_process(mock_project, "run", "--no-cassettes", ok=(1,))
    merged = replio_process(mock_project, "merge", *files, "-o", tmp_path / "merged.json", ok=(1,))
    assert merged.stdout == whole.stdout and "fx-c: error: mock script" in merged.stdout
    assert merged.stderr == whole.stderr == "replio: exit 1: 1 fixture ended in error (or cancelled): fx-c\n"
    data = json.loads((tmp_path / "merged.json").read_text())  # JSON while the table prints
    assert [f["id"] for f in data["fixtures"]] == IDS and data["summary"]["errors"] == 1


def test_merge_writes_junit_of_every_fixture(mock_project: Path, tmp_path: Path) -> None:
    files = shards(mock_project, tmp_path, 3)
    done = replio(mock_project, "merge", *files, "--output", "junit", "--junit-xml", tmp_path / "j.xml", ok=(1,))
    root = ET.fromstring(done.stdout)
    assert (root.get("tests"), root.get("errors"), root.get("failures")) == ("6", "1", "0")
    assert [c.get("name") for c in root.iter("testcase")] == IDS
    assert (tmp_path / "j.xml").read_text() == done.stdout


def test_merge_refuses_two_results_of_a_fixture_naming_both_files(mock_project: Path, tmp_path: Path) -> None:
    first, second = shards(mock_project, tmp_path)
    data = json.loads(first.read_text())
    data["fixtures"][0]["answer"] = "something else"
    changed = write_json(tmp_path / "changed.json", data)
    done = replio(mock_project, "merge", first, second, changed, ok=(2,))
    fid = data["fixtures"][0]["id"]
    assert done.stderr.startswith(f"replio: error: {first} and {changed} both hold fixture {fid!r} of mock:scripted, "
                                  "with different results;")
    assert done.stdout == ""


def test_a_merge_of_compared_runs_is_compared_and_the_report_takes_it(mock_project: Path, tmp_path: Path) -> None:
    files = []
    for i in (1, 2):
        files.append(tmp_path / f"{i}.json")
        replio(mock_project, "run", "--no-cassettes", "--compare", "mock:m1,mock:m2", "--shard", f"{i}/2",
               "--output-file", files[-1], ok=(0, 1))
    done = replio(mock_project, "merge", *files, "--output", "json", "-o", tmp_path / "merged.json", ok=(1,))
    data = json.loads(done.stdout)
    assert [(r["model"], [f["id"] for f in r["fixtures"]]) for r in data["runs"]] == [("m1", IDS), ("m2", IDS)]
    assert (tmp_path / "merged.json").read_text() == done.stdout
    html = tmp_path / "report.html"
    replio(mock_project, "report", tmp_path / "merged.json", "-o", html)
    page = html.read_text(encoding="utf-8")
    assert re.findall(r'<th colspan="1">([^<]+)</th>', page) == ["mock:m1", "mock:m2"]
    assert sorted(set(re.findall(r'data-fixture="([^"]+)"', page))) == IDS
    assert {shard_of(i, 2) for i in IDS} == {1, 2}  # both shards had fixtures: this was a real merge


@pytest.mark.parametrize(("change", "says"), [
    (lambda fx: fx.update(passes=5, n=2), "fixtures.0: passes (5) cannot be more than n (2), the trials run"),
    (lambda fx: fx.update(accuracy=1.5), "fixtures.0.accuracy: Input should be less than or equal to 1"),
    (lambda fx: fx.update(accuracy=float("nan")), "not valid JSON: NaN is not a JSON number"),
    (lambda fx: fx.update(tokens=-1), "fixtures.0.tokens: Input should be greater than or equal to 0"),
])
def test_a_saved_result_is_validated_like_any_input(mock_project: Path, tmp_path: Path, change: Any,
                                                    says: str) -> None:
    first, _ = shards(mock_project, tmp_path)
    data = json.loads(first.read_text())
    change(data["fixtures"][0])
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))  # Python writes NaN as the bare token, as an edited file may hold it
    done = replio(mock_project, "merge", first, bad, ok=(2,))
    assert done.stderr.startswith(f"replio: error: {bad}: ") and says in done.stderr, done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr


def test_json_written_never_holds_a_non_finite_number() -> None:
    from replio_replay.report.jsonout import dumps

    with pytest.raises(ValueError):
        dumps({"accuracy": float("nan")})
    with pytest.raises(ValueError):
        fx("a", accuracy=float("inf"))
