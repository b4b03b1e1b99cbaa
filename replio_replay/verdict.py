"""Pure: whether one fixture result fails a CI gate, and the readable text that says why.

Shared by the CLI's exit code, JUnit output and the pytest plugin, so that all three agree.
An `error` fails; drift from the golden fails; with `strict`, request drift and a missing
golden fail too; a verifier failure fails only when the fixture is required to pass.
"""

from __future__ import annotations

from dataclasses import dataclass

from .diffing import Change
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
    """The CI verdict for one result (of a run of the tool set `tools`)."""
    if result.status is Status.ERROR:
        return Verdict("error", f"{result.id}: error: {result.error}")
    if result.status is Status.CANCELLED:
        return Verdict("error", f"{result.id}: cancelled: {result.error or 'the run was interrupted'}")
    problems = []
    if result.drift:
        problems.append(_changes(f"{result.id}: drift from golden ({len(result.drift)} changes)", result.drift))
    if strict and result.request_drift:
        problems.append(_changes(
            f"{result.id}: request drift ({len(result.request_drift)} changes); re-record with "
            f"{record_flags(RecordMode.ALL, result.id, tools)}", result.request_drift))
    if strict and result.drift is None:
        problems.append(f"{result.id}: no golden yet; approve one with --update-golden")
    if require_pass and not result.passed:
        problems.append(f"{result.id}: the verifier failed: {'; '.join(result.reasons)}")
    return Verdict("failed", "\n".join(problems)) if problems else Verdict("passed")
