"""The committed description A/B example (examples/description-ab): two tool sets that differ only in
three tool descriptions, four trials of each fixture at temperature 0.7, replayed offline with no
drift, compared paired, as docs/examples.md shows."""

from __future__ import annotations

from pathlib import Path

from tests.support.example_replays import SharedReplays

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "description-ab"


def test_the_two_descriptions_replay_every_trial_and_are_compared_paired(example_replay: SharedReplays) -> None:
    # the replay docs/examples.md shows, run once for both tests (tests/support/example_replays.py), under --strict
    done = example_replay("description-ab", "--tools", "default,clear-descriptions")
    assert done.returncode in (0, 1) and done.report, done.stderr[-3000:]
    report = done.report
    assert [r["tools"] for r in report["runs"]] == ["default", "clear-descriptions"]
    for run in report["runs"]:
        assert len(run["fixtures"]) >= 12
        for fixture in run["fixtures"]:
            assert fixture["n"] == 4 and [t["trial"] for t in fixture["trials"]] == [1, 2, 3, 4], fixture["id"]
            assert fixture["drift"] == [] and fixture["request_drift"] == [], fixture["id"]
        assert run["summary"]["ci_method"]["pass_rate"] in ("t", "wilson")
    paired = {c["metric"]: c for c in report["comparisons"]}
    assert set(paired) == {"pass_rate", "accuracy"}
    for c in paired.values():
        assert c["a"] == "llamacpp:qwen2.5-coder-1.5b-instruct" and c["b"] == c["a"] + " tools=clear-descriptions"
        assert c["n"] == len(report["runs"][0]["fixtures"])
        assert c["test"] == "sign-flip-exact" and c["method"] in ("t", "square-and-add")
        assert c["ci95"][0] <= c["diff"] <= c["ci95"][1]
        assert c["verdict"] in ("better", "worse", "no detectable difference")
