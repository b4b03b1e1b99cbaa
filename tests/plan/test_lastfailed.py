"""The record behind --last-failed: how a run updates it, how it narrows a selection, and its file."""

from __future__ import annotations

from pathlib import Path

from replio_replay.judge.metrics import combine_trials, summarize
from replio_replay.judge.results import FixtureResult, RunResult, Status
from replio_replay.plan.lastfailed import load, narrow, save, updated


def result(fixture_id: str, status: Status = Status.OK, passed: bool = True, trial: int = 1) -> FixtureResult:
    return FixtureResult(id=fixture_id, status=status, passed=passed, trial=trial)


def run(*fixtures: FixtureResult, provider: str = "mock") -> RunResult:
    return RunResult(provider=provider, model="m", fixtures=list(fixtures), summary=summarize(list(fixtures)))


def test_a_fixture_that_ran_is_recorded_by_how_it_ended() -> None:
    runs = [run(result("ok"), result("failed-verifier", passed=False), result("truncated", Status.TRUNCATED),
                result("error", Status.ERROR, passed=False))]
    assert updated(None, runs) == {"failed-verifier", "truncated", "error"}


def test_fixtures_that_did_not_run_keep_their_record() -> None:
    previous = {"fixed", "still-broken", "not-run", "cancelled"}
    runs = [run(result("fixed"), result("still-broken", passed=False), result("new", passed=False),
                result("cancelled", Status.CANCELLED, passed=False))]
    assert updated(previous, runs) == {"still-broken", "not-run", "cancelled", "new"}


def test_a_failure_in_any_provider_or_trial_counts() -> None:
    runs = [run(result("a"), result("b")), run(result("a", passed=False), result("b"), provider="other")]
    assert updated(None, runs) == {"a"}
    trials = combine_trials([result("c"), result("c", Status.ERROR, passed=False, trial=2), result("d")])
    assert updated(None, [run(*trials)]) == {"c"}


def test_narrowing_keeps_the_selected_failures() -> None:
    ids, said = narrow(["a", "b", "c"], {"b", "c", "gone"})
    assert ids == ["b", "c"]
    assert said == "--last-failed: running the 2 fixtures that did not pass last time (b, c)"


def test_with_nothing_to_narrow_to_everything_runs_and_it_says_why() -> None:
    assert narrow(["a", "b"], None) == (
        ["a", "b"], "--last-failed: no previous run of this project is recorded; running the 2 fixtures selected")
    assert narrow(["a"], set()) == (
        ["a"], "--last-failed: no fixture failed in the previous run; running the 1 fixture selected")
    assert narrow(["a", "b"], {"z"}) == (
        ["a", "b"], "--last-failed: the 1 fixture that did not pass last time is not selected; "
                    "running the 2 fixtures selected")


def test_the_record_is_one_file_per_project(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    one, two = tmp_path / "one", tmp_path / "two"
    assert load(cache, one) is None
    save(cache, one, {"b", "a"})
    save(cache, two, set())
    assert load(cache, one) == {"a", "b"}
    assert load(cache, two) == set()
    assert load(cache, tmp_path / "." / "one") == {"a", "b"}  # keyed by the resolved path
    (file,) = [p for p in cache.iterdir() if p.read_text().count('"a"')]
    file.write_text("{not json")
    assert load(cache, one) is None
