"""Whether a cassette still matches what it was recorded from, and the mode `stale` resolves to.

A cassette is **stale** when the fixture's inputs changed (task, files, permissions, its own
tools), its LLM judge did (rubric, provider, budget: the header's `judge_hash`), or its tool set did (a description, a schema, a stub's answer, the system prompt): its
header says what it was recorded with, and this compares that with the fixture and tool set as
they are now. `status` lists the reasons (and `again` says what to run: `--rejudge` for a
cassette whose judge alone changed); `--record-mode stale` re-records those cassettes (and the
missing ones) and replays the rest (recording again, after, those whose replay drifted).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import CassetteError
from ..fixtures.cases import Case
from ..fixtures.model import Fixture
from ..tools.toolset import ToolSet
from .again import JUDGE_CHANGED
from .modes import RecordMode
from .serializer import read_header

__all__ = ["case_mode", "stale_reasons"]


def stale_reasons(header: dict[str, Any], fixture: Fixture, toolset: ToolSet,
                  offered: Callable[[], ToolSet]) -> tuple[str, ...]:
    """Why a recording with `header` no longer matches `fixture` and `toolset` (empty: it does);
    `offered` gives what the fixture is offered, compared only in cassettes older than tool sets."""
    reasons = []
    if header.get("fixture_hash") != fixture.inputs_hash():
        reasons.append("fixture changed")
    if header.get("judge_hash") != fixture.judge_hash():
        reasons.append(JUDGE_CHANGED)
    if "toolset_hash" in header:
        if header["toolset_hash"] != toolset.digest:
            reasons.append(f"tool set {toolset.name!r} changed" + _agent_change(header, toolset))
    elif header.get("tool_schema_hash") != offered().schema_hash:
        reasons.append(f"tool set {toolset.name!r} changed")
    return tuple(reasons)


def _agent_change(header: dict[str, Any], toolset: ToolSet) -> str:
    """What changed of the agent since the recording with `header`, to follow the tool set's change
    (`: the agent's agent/a.py changed`); empty when the agent did not, or the header does not say."""
    agent = toolset.agent
    recorded = header.get("agent")
    if recorded is None and "tool_schema_hash" in header:
        return f": recorded with replio's own loop, now the agent {agent.shown!r}" if agent is not None else ""
    if recorded is None:
        return ""
    if agent is None:
        return f": recorded with the agent {recorded!r}, now replio's own loop"
    if agent.shown != recorded:
        return f": recorded with the agent {recorded!r}, now {agent.shown!r}"
    before = header.get("agent_files")
    if not isinstance(before, dict):
        return ""
    now = dict(agent.files)
    changed = sorted(name for name in {*before, *now} if before.get(name) != now.get(name))
    if not changed:
        return ""
    shown = ", ".join(changed[:3]) + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")
    return f": the agent's {shown} changed"


def case_mode(mode: RecordMode, cassette: Path, case: Case) -> RecordMode:
    """The mode `case` runs in: `stale` is `all` for a stale or unreadable cassette and `once`
    otherwise (a missing one is recorded, a current one replayed); every other mode is itself."""
    if mode is not RecordMode.STALE:
        return mode
    if not cassette.is_file():
        return RecordMode.ONCE
    try:
        header = read_header(cassette)
    except CassetteError:
        return RecordMode.ALL
    current = header and not stale_reasons(header, case.fixture, case.toolset, lambda: case.offered)
    return RecordMode.ONCE if current else RecordMode.ALL
