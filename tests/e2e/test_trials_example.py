"""The committed trials example (examples/trials): three trials of the catalog per local model,
replayed offline, deterministically, with every trial's golden and pass^k in the summary."""

from __future__ import annotations

from pathlib import Path

from tests.support.example_replays import Replay, SharedReplays, replay

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "trials"
MODELS = "llamacpp:qwen2.5-coder-1.5b-instruct,llamacpp:qwen2.5-coder-0.5b-instruct"
#: The replay docs/examples.md shows: both models side by side, on the fixtures of two tags.
ARGS = ("--compare", MODELS, "--tag", "builtin", "--tag", "stub")


def _checked(done: Replay) -> dict:
    """The replay's result, once its exit code is checked: 1 exactly when a trial ended in error
    (as documented), never for drift (it runs under --strict, and there is none)."""
    report = done.report
    errored = any(t["status"] == "error" for run in report["runs"] for f in run["fixtures"] for t in f["trials"])
    assert done.returncode == (1 if errored else 0), done.stderr[-3000:]
    return report


def test_the_trials_example_replays_every_trial_without_drift(tmp_path: Path, example_replay: SharedReplays) -> None:
    assert sorted(f"{p.parent.name}:{p.name}" for p in (EXAMPLE / "golden").glob("*/*")) == sorted(MODELS.split(","))
    report = _checked(example_replay("trials", *ARGS))  # run once for this test and the docs' (tests/support)
    for run in report["runs"]:
        assert len(run["fixtures"]) == 15
        for fixture in run["fixtures"]:
            assert fixture["n"] == 3, fixture["id"]
            assert [t["trial"] for t in fixture["trials"]] == [1, 2, 3]
            # No trial ends in error; the one 0.5B trial that outgrew the server's context window
            # (its recorded HTTP 400) is cut short, saying so, as a turn limit would cut it.
            for t in fixture["trials"]:
                assert t["status"] != "error", (fixture["id"], t)
                if (run["model"], fixture["id"], t["trial"]) == ("qwen2.5-coder-0.5b-instruct", "read-line-range", 3):
                    assert t["status"] == "truncated" and "no longer fits the model's context window" in t["error"]
            assert fixture["drift"] == [] and fixture["request_drift"] == [], fixture["id"]
        summary = run["summary"]
        assert set(summary["pass_hat_k"]) == {"1", "2", "3"}
        assert summary["pass_hat_k"]["3"] <= summary["pass_hat_k"]["2"] <= summary["pass_hat_k"]["1"]
    _the_pass_rate_comparison_is_the_exact_sign_flip_test(report)
    # Replayed again, a builtin and a stub fixture (the one with the cut-short trial among them)
    # report the very same trials, metrics and verdicts: trials replay as deterministically as
    # single runs (the summary and the comparison are computed from these).
    again = _checked(replay("trials", [*ARGS, *AGAIN], tmp_path / "again"))
    assert [_entries(run) for run in again["runs"]] == [_entries(run) for run in report["runs"]]
    assert all(len(_entries(run)) == 2 for run in again["runs"])


#: The fixtures replayed a second time.
AGAIN = ("--fixture", "read-line-range", "--fixture", "convert-currency-args")


def _entries(run: dict) -> list[dict]:
    return [f for f in run["fixtures"] if f["id"] in AGAIN[1::2]]


def _the_pass_rate_comparison_is_the_exact_sign_flip_test(report: dict) -> None:
    """The issue's reproduction: the z-test gave p = 0.006 here; the exact sign-flip test over the
    15 per-fixture differences (scipy's `permutation_test`) gives 0.031, with a t interval."""
    import numpy as np
    from scipy import stats

    first, second = ({f["id"]: f["passes"] / f["n"] for f in run["fixtures"]} for run in report["runs"])
    d = np.array([second[i] - first[i] for i in first])
    c = next(c for c in report["comparisons"] if c["metric"] == "pass_rate")
    reference = stats.permutation_test((np.round(d[d != 0] * 3),), np.sum, permutation_type="samples",
                                       n_resamples=np.inf).pvalue
    assert (c["test"], c["method"], c["p_value"]) == ("sign-flip-exact", "t", round(float(reference), 6))
    assert round(c["p_value"], 3) == 0.031 and c["verdict"] == ("better" if c["diff"] > 0 else "worse")
    low, high = stats.t.interval(0.95, len(d) - 1, loc=d.mean(), scale=stats.sem(d))
    assert c["ci95"] == [round(max(-1.0, low), 6), round(min(1.0, high), 6)]
