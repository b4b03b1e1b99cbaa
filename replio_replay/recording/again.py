"""What to run to record again what no longer matches its recording, decided here for every sink
(the table, `diff`, the HTML report, the Markdown review, JUnit, the exit line, `status`), pure.

A fixture whose judge alone changed (every request that drifted is the judge's; a cassette stale
only because its `judge_hash` changed) is **re-judged**: `--rejudge` replays the recorded run and
sends only the judge's requests again. Anything else is **recorded again**, which sends the
agent's requests too: one fixture with `--record-mode all --fixture ID`, a whole run's with
`--record-mode stale` (stale cassettes, then those whose replay drifted).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .modes import RecordMode, record_flags, rejudge_flags
from .roles import JUDGE

__all__ = ["JUDGE_CHANGED", "fixture_hint", "judge_alone", "run_hint", "stale_judge_alone"]

#: The reason a cassette is stale when its fixture's LLM judge changed (rubric, provider, budget).
JUDGE_CHANGED = "judge changed"


def judge_alone(request_drift: Sequence[Mapping[str, Any]]) -> bool:
    """Whether every request that drifted is the judge's (and some did)."""
    return bool(request_drift) and all(change.get("role") == JUDGE for change in request_drift)


def stale_judge_alone(reasons: Sequence[str]) -> bool:
    """Whether a cassette is stale only because its judge changed."""
    return tuple(reasons) == (JUDGE_CHANGED,)


def fixture_hint(request_drift: Sequence[Mapping[str, Any]], fixture_id: str, tools: str = "default") -> str:
    """How to record one fixture (of tool set `tools`) again after its requests drifted:
    `re-judge with --rejudge --fixture ID` or `re-record with --record-mode all --fixture ID`."""
    if judge_alone(request_drift):
        return f"re-judge with {rejudge_flags(fixture_id, tools)}"
    return f"re-record with {record_flags(RecordMode.ALL, fixture_id, tools)}"


def run_hint(judge: bool) -> str:
    """How to record again, at once, every fixture of a run whose judge alone changed (`judge`), or
    whose recording no longer matches for any other reason."""
    return "re-judge with --rejudge" if judge else "re-record with --record-mode stale"
