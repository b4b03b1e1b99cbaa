"""Pure: whether one fixture result fails a CI gate, and the readable text that says why.

Shared by the CLI's exit code, JUnit output and the pytest plugin, so that all three agree.
An `error` fails; drift from the golden fails; with `strict`, request drift and a missing
golden fail too; a verifier failure fails only when the fixture is required to pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .._runtime.diffing import Change
from .._runtime.wording import plural
from ..judge.results import FixtureResult, Status
from ..recording.again import fixture_hint, judge_alone, run_hint

__all__ = ["KINDS", "Verdict", "failure_line", "judge"]


@dataclass(frozen=True)
class Verdict:
    """`outcome` is passed, failed or error; `text` is the report a reviewer reads; `kinds` are
    the gates it failed (`KINDS`)."""

    outcome: str
    text: str = ""
    kinds: frozenset[str] = frozenset()

    @property
    def ok(self) -> bool:
        return self.outcome == "passed"


#: Each gate a fixture can fail, and how a line about several fixtures says it (after their count).
KINDS = {
    "error": "ended in error (or cancelled)",
    "drift": "drifted from the golden (the drift is shown above)",
    "request drift": f"with request drift (--strict; {run_hint(judge=False)})",
    "judge drift": f"whose judge's requests changed (--strict; {run_hint(judge=True)})",
    "no golden": "without a golden (--strict; approve with --update-golden)",
    "verifier": "failed a verifier that require_pass lists",
}


def _changes(title: str, items: list[dict]) -> str:
    lines = [title]
    lines += [f"  {Change(str(c['path']), str(c['kind']), c.get('old'), c.get('new')).describe()}" for c in items]
    return "\n".join(lines)


def judge(result: FixtureResult, *, strict: bool = False, require_pass: bool = False, tools: str = "default") -> Verdict:
    """The CI verdict for one result (of a run of the tool set `tools`); with repeated trials,
    every trial is held to it (and a required fixture must pass every trial)."""
    units = [(f"{result.id} (trial {t.trial})", t) for t in result.trials] if result.trials else [(result.id, result)]
    for name, unit in units:
        if unit.status is Status.ERROR:
            return Verdict("error", f"{name}: error: {unit.error}", frozenset({"error"}))
        if unit.status is Status.CANCELLED:
            return Verdict("error", f"{name}: cancelled: {unit.error or 'the run was interrupted'}",
                           frozenset({"error"}))
    problems = []
    kinds = set()
    for name, unit in units:
        if unit.drift:
            kinds.add("drift")
            problems.append(_changes(f"{name}: drift from golden ({plural(len(unit.drift), 'change')})", unit.drift))
        if strict and unit.request_drift:
            kinds.add("judge drift" if judge_alone(unit.request_drift) else "request drift")
            problems.append(_changes(
                f"{name}: request drift ({plural(len(unit.request_drift), 'change')}); "
                f"{fixture_hint(unit.request_drift, result.id, tools)}", unit.request_drift))
        if strict and unit.drift is None:
            kinds.add("no golden")
            problems.append(f"{name}: no golden yet; approve one with --update-golden")
    if require_pass and result.unjudged:
        kinds.add("verifier")
        problems.append(f"{result.id}: unjudged: it has no verifier yet, and require_pass asks it to pass; write "
                        "one (or import it with --expect observed)")
    elif require_pass and (not result.passed or (result.trials and result.passes != result.n)):
        kinds.add("verifier")
        problems.append(f"{result.id}: the verifier failed: {'; '.join(result.shown_reasons) or 'in some trials'}")
    return Verdict("failed", "\n".join(problems), frozenset(kinds)) if problems else Verdict("passed")


def failure_line(verdicts: Sequence[tuple[str, str, Verdict]], problems: int) -> str:
    """One line saying why a run fails, from each fixture's verdict as (run label, fixture id,
    verdict) and the number of problems (files skipped); '' when nothing fails."""
    parts = [f"{plural(problems, 'problem')} in the fixtures (skipped, named above)"] if problems else []
    labels = {label for label, _, _ in verdicts}
    for kind, says in KINDS.items():
        which = list(dict.fromkeys((label, fid) for label, fid, v in verdicts if kind in v.kinds))
        if not which:
            continue
        names = [fid if len(labels) == 1 else f"{fid} ({label})" for label, fid in which]
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        parts.append(f"{plural(len(which), 'fixture')} {says}: {shown}")
    return "; ".join(parts)
