"""Approving goldens: refused results are listed, the rest written together."""

from __future__ import annotations

import io
from pathlib import Path

from replio_replay.golden.review import approve
from replio_replay.golden.store import GoldenStore
from replio_replay.judge.metrics import summarize
from replio_replay.judge.results import FixtureResult, RunResult, Status, TraceCall
from replio_replay.report.text import write_approvals


def _run(*fixtures: FixtureResult) -> RunResult:
    return RunResult(provider="p", model="m", fixtures=list(fixtures), summary=summarize(list(fixtures)))


def test_a_result_that_cannot_be_a_golden_is_refused_and_the_rest_are_written(tmp_path: Path) -> None:
    nan = FixtureResult(id="nan", trace=[TraceCall(name="x", arguments={"n": float("nan")})], turns=[0])
    error = FixtureResult(id="err", status=Status.ERROR, error="boom")
    fine = FixtureResult(id="fine", answer="ok")
    store = GoldenStore(tmp_path)
    done = {a.fixture_id: (a.action, a.reason) for a in approve([_run(nan, error, fine)], store)}
    assert done["fine"] == ("created", "")
    assert done["err"][0] == "refused" and "ended in error" in done["err"][1]
    assert done["nan"][0] == "refused" and "NaN" in done["nan"][1]
    assert sorted(p.name for p in tmp_path.rglob("*.json")) == ["fine.json"]


def test_a_refused_trial_is_named_with_its_trial(tmp_path: Path) -> None:
    first = FixtureResult(id="flaky", answer="ok")
    third = FixtureResult(id="flaky", trial=3, status=Status.ERROR, error="context overflow")
    approvals = approve([_run(first, third)], GoldenStore(tmp_path))
    out = io.StringIO()
    write_approvals(approvals, out)
    assert "golden refused: p:m flaky (trial 3) (it ended in error: context overflow)" in out.getvalue()
    assert "golden created: p:m flaky\n" in out.getvalue()
    assert sorted(p.name for p in tmp_path.rglob("*.json")) == ["flaky.json"]
