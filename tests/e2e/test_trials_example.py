"""The committed trials example (examples/trials): three trials of the catalog per local model,
replayed offline, deterministically, with every trial's golden and pass^k in the summary."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "trials"


def _replay(tmp_path: Path) -> dict:
    env = {**os.environ, "CI": "true", "XDG_CONFIG_HOME": str(tmp_path), "TMPDIR": str(tmp_path)}
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "LLAMACPP_BASE_URL", "OPENAI_BASE_URL"):
        env.pop(var, None)
    specs = sorted({f"{p.parent.name}:{p.name}" for p in (EXAMPLE / "golden").glob("*/*")})
    assert len(specs) == 2, specs
    args = [str(Path(sys.executable).with_name("replio")), "eval", "--path", str(EXAMPLE), "run",
            "--tag", "builtin", "--tag", "stub", "--compare", ",".join(specs), "--output", "json", "--strict"]
    done = subprocess.run(args, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    report = json.loads(done.stdout)
    # Exit 1 exactly when a trial ended in error (as documented), never for drift: there is none.
    errored = any(t["status"] == "error" for run in report["runs"] for f in run["fixtures"] for t in f["trials"])
    assert done.returncode == (1 if errored else 0), done.stderr[-3000:]
    return report


def test_the_trials_example_replays_every_trial_without_drift(tmp_path: Path) -> None:
    report = _replay(tmp_path)
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
    # A second replay reports the very same result: trials replay as deterministically as single runs.
    again = tmp_path / "again"
    again.mkdir()
    assert _replay(again) == report


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
