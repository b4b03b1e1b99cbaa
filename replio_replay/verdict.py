"""Pure: whether one fixture result fails a CI gate, and the readable text that says why.

Shared by the CLI's exit code, JUnit output and the pytest plugin, so that all three agree.
An `error` fails; drift from the golden fails; with `strict`, request drift and a missing
golden fail too; a verifier failure fails only when the fixture is required to pass.
"""

from __future__ import annotations

from dataclasses import dataclass

from .diffing import Change
from .plural import plural
from .recording.modes import RecordMode, record_flags
from .results import FixtureResult, Status

__all__ = ["Verdict", "judge"]


@dataclass(frozen=True)
class Verdict:
    """`outcome` is passed, failed or error; `text` is the report a reviewer reads."""

    outcome: str
    text: str = ""

    @property
    def ok(self) -> bool:
        return self.outcome == "passed"


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
            return Verdict("error", f"{name}: error: {unit.error}")
        if unit.status is Status.CANCELLED:
            return Verdict("error", f"{name}: cancelled: {unit.error or 'the run was interrupted'}")
    problems = []
    for name, unit in units:
        if unit.drift:
            problems.append(_changes(f"{name}: drift from golden ({plural(len(unit.drift), 'change')})", unit.drift))
        if strict and unit.request_drift:
            problems.append(_changes(
                f"{name}: request drift ({plural(len(unit.request_drift), 'change')}); re-record with "
                f"{record_flags(RecordMode.ALL, result.id, tools)}", unit.request_drift))
        if strict and unit.drift is None:
            problems.append(f"{name}: no golden yet; approve one with --update-golden")
    if require_pass and (not result.passed or (result.trials and result.passes != result.n)):
        problems.append(f"{result.id}: the verifier failed: {'; '.join(result.shown_reasons) or 'in some trials'}")
    return Verdict("failed", "\n".join(problems)) if problems else Verdict("passed")
