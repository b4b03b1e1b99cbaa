"""Pure metrics: a trace's numbers (accuracy, redundant calls, errors), the suite summary, and
repeated trials combined with pass^k and pass@k (computed as tau-bench and inspect_ai do)."""

from __future__ import annotations

from collections.abc import Sequence
from math import comb
from typing import Any

from .._runtime.jsoncanon import canonical
from ..fixtures.trajectory import Call, MatchMode, trajectory_matches
from .results import FixtureResult, Status, Summary, TrialResult, build_result_models
from .statistics import Estimate, estimate

__all__ = ["accuracy", "combine_trials", "cost_by_role", "cost_unknown", "pass_at_k", "pass_hat_k", "redundant",
           "summarize", "total_cost", "units"]


def accuracy(calls: Sequence[Call], expected: Sequence[Any] | None, mode: MatchMode = MatchMode.STRICT) -> float | None:
    """1.0 when the calls match `expected` under `mode` (see `trajectory`), 0.0 otherwise, None when
    nothing is expected."""
    if expected is None:
        return None
    return 1.0 if trajectory_matches(calls, expected, mode) else 0.0


def redundant(calls: Sequence[tuple[str, Any]]) -> int:
    """Calls minus distinct (name, canonical arguments) pairs."""
    return len(calls) - len({(name, canonical(args)) for name, args in calls})


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def summarize(results: Sequence[FixtureResult]) -> Summary:
    """The suite summary over fixture results; with repeated trials, over every trial.

    The pass rate and the accuracy are means of the fixtures' means (each fixture's trials
    averaged first, so that a fixture run more often does not weigh more); the counts are totals
    over every trial. A fixture drifts when any trial drifts. pass^k and pass@k are each over the
    fixtures run at least k times (`pass_hat_k_fixtures` says how many, when not all).
    """
    build_result_models()
    trials = [t for r in results for t in units(r)]
    judged = [r for r in results if not r.unjudged]  # a fixture with no verifier yet neither passes nor fails
    drifts = {r.id: [t.drift for t in units(r)] for r in results}
    errored = {r.id: all(t.status is Status.ERROR for t in units(r)) for r in results}
    accuracies = [[t.accuracy for t in units(r) if t.accuracy is not None] for r in results]
    summary = Summary(
        fixtures=len({r.id for r in results}),
        accuracy=_mean([sum(a) / len(a) for a in accuracies if a]),
        pass_rate=_mean([sum(t.passed for t in units(r)) / len(units(r)) for r in judged]),
        calls=sum(t.calls for t in trials),
        redundant=sum(t.redundant for t in trials),
        errors=sum(t.errors for t in trials),
        tokens=sum(t.tokens for t in trials),
        cost=total_cost(trials),
        cost_by_role=cost_by_role(trials),
        cost_unknown=sum(1 for t in trials if t.cost_unknown) or None,
        drifted=sum(1 for ds in drifts.values() if any(ds)),
        new=sum(1 for i, ds in drifts.items() if any(d is None for d in ds) and not errored[i]),
        unjudged=len({r.id for r in results if r.unjudged}) or None,
    )
    counts = [(sum(1 for t in units(r) if t.passed), len(units(r))) for r in judged]
    n = max((len(units(r)) for r in results), default=1)
    summary = summary.model_copy(update=_uncertainty(results, judged, counts, n))
    if n == 1:
        return summary
    if not judged:  # every fixture unjudged: no pass^k or pass@k to give, not a made-up 0
        return summary.model_copy(update={"trials": n})
    over = {str(k): sum(1 for _, m in counts if m >= k) for k in range(1, n + 1)}
    return summary.model_copy(update={
        "trials": n,
        "pass_hat_k": {str(k): _mean([pass_hat_k(c, m, k) for c, m in counts if m >= k]) or 0.0
                       for k in range(1, n + 1)},
        "pass_at_k": {str(k): _mean([pass_at_k(c, m, k) for c, m in counts if m >= k]) or 0.0
                      for k in range(1, n + 1)},
        "pass_hat_k_fixtures": over if len(set(over.values())) > 1 else None,
        "flaky": sorted(r.id for r, (c, m) in zip(judged, counts) if 0 < c < m),
    })


def _uncertainty(results: Sequence[FixtureResult], judged: Sequence[FixtureResult], counts: Sequence[tuple[int, int]],
                 n: int) -> dict[str, Any]:
    """The summary's error bars (`se`, `ci95`, `ci_method`) over fixtures, the unit of sampling
    (see `statistics`): for the pass rate and each pass^k (over the `judged` fixtures, `counts`
    theirs), and for the accuracy."""
    if not results:
        return {}
    estimates: dict[str, Estimate] = {}
    if judged:
        estimates["pass_rate"] = estimate([[1.0 if u.passed else 0.0 for u in units(r)] for r in judged],
                                          [r.group for r in judged])
    scored = [(r, [u.accuracy for u in units(r) if u.accuracy is not None]) for r in results]
    scored = [(r, s) for r, s in scored if s]
    if scored:
        estimates["accuracy"] = estimate([s for _, s in scored], [r.group for r, _ in scored])
    for k in range(1, n + 1) if n > 1 else ():
        kept = [(r.group, pass_hat_k(c, m, k)) for r, (c, m) in zip(judged, counts) if m >= k]
        if k == 1 and "pass_rate" in estimates:  # pass^1 is the pass rate, the same number: the same interval
            estimates["pass^1"] = estimates["pass_rate"]
        elif kept:
            estimates[f"pass^{k}"] = estimate([[v] for _, v in kept], [g for g, _ in kept], wilson_ok=False)
    return {"se": {k: round(e.se, 6) for k, e in estimates.items()},
            "ci95": {k: (round(e.ci95[0], 6), round(e.ci95[1], 6)) for k, e in estimates.items()},
            "ci_method": {k: e.method for k, e in estimates.items()}}


def total_cost(units: Sequence[TrialResult | FixtureResult]) -> float | None:
    """The USD of those of `units` with a known cost; None when none has one, or when one's cost is
    unknown (`cost_unknown`): the sum of the others would understate it."""
    costs = [u.cost for u in units if u.cost is not None]
    return round(sum(costs), 6) if costs and not cost_unknown(units) else None


def cost_by_role(units: Sequence[TrialResult | FixtureResult]) -> dict[str, float] | None:
    """Each role's USD summed over `units`; None when none has a cost, or one's is unknown."""
    if cost_unknown(units):
        return None
    roles: dict[str, float] = {}
    for unit in units:
        for role, usd in (unit.cost_by_role or {}).items():
            roles[role] = round(roles.get(role, 0.0) + usd, 6)
    return roles or None


def cost_unknown(units: Sequence[TrialResult | FixtureResult]) -> list[str] | None:
    """The roles whose cost is unknown in any of `units` (see `FixtureResult.cost_unknown`); None: none."""
    return sorted({role for unit in units for role in unit.cost_unknown or ()}) or None


def units(result: FixtureResult) -> list[TrialResult | FixtureResult]:
    """A fixture's trials, or the result itself when it ran once."""
    return list(result.trials) if result.trials else [result]


def pass_hat_k(c: int, n: int, k: int) -> float:
    """pass^k (tau-bench): the chance that k trials drawn from n, c of which passed, all pass."""
    return comb(c, k) / comb(n, k)


def pass_at_k(c: int, n: int, k: int) -> float:
    """pass@k: the chance that at least one of k trials drawn from n, c of which passed, passes."""
    return 1.0 - comb(n - c, k) / comb(n, k)


def combine_trials(results: Sequence[FixtureResult]) -> list[FixtureResult]:
    """One result per fixture: its first trial's, with every trial in brief under `trials` and
    the count of those that passed (`passes`, of `n`). Fixtures keep their first appearance's order."""
    by_id: dict[str, list[FixtureResult]] = {}
    for r in results:
        by_id.setdefault(r.id, []).append(r)
    combined = []
    for runs in by_id.values():
        runs = sorted(runs, key=lambda r: r.trial)
        trials = [TrialResult(trial=r.trial, status=r.status, passed=r.passed, accuracy=r.accuracy, calls=r.calls,
                              redundant=r.redundant, errors=r.errors, tokens=r.tokens, cost=r.cost,
                              cost_by_role=r.cost_by_role, cost_unknown=r.cost_unknown, error=r.error, drift=r.drift,
                              drift_info=r.drift_info, request_drift=r.request_drift, judge=r.judge) for r in runs]
        combined.append(runs[0].model_copy(update={
            "trials": trials, "cost": total_cost(trials), "cost_by_role": cost_by_role(trials),
            "cost_unknown": cost_unknown(trials), "passes": sum(t.passed for t in trials), "n": len(trials),
            "seconds": sum(r.seconds for r in runs),
        }))
    return combined
