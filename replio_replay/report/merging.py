"""Saved results merged into one: the shards of a run (`--shard`), or separate runs of the same providers; pure.

Runs are matched by provider, model and tool set, in the order they first appear; a run's
fixtures are the union of its parts, sorted by id (the order a run lists them in), and its
summary is computed afresh from them (with pass^k and pass@k from each fixture's trials).
The same fixture of the same run in two parts is refused unless both hold the same result
(`timing` apart), which is then kept once: a shard given twice is harmless, two different
results cannot both be the truth. So is one run from two tool sets of the same name (their
`tools_hash` differs). Problems (files that could not be loaded) are kept once each, in order:
every shard of a run reports the same broken file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import UsageError
from ..judge.metrics import summarize
from ..judge.results import FixtureResult, RunResult, SavedProblem, SavedRuns

__all__ = ["merge"]


@dataclass
class _Part:
    """A run being merged: its first part, where that came from, and every fixture so far with its file."""

    run: RunResult
    origin: str
    fixtures: dict[str, tuple[FixtureResult, str]] = field(default_factory=dict)


def merge(saved: Sequence[tuple[str, SavedRuns]]) -> SavedRuns:
    """The runs of every (file name, saved result) merged into one result; a UsageError naming
    both files for a fixture with two different results or a run with two different tool sets."""
    parts: dict[tuple[str, str, str], _Part] = {}
    problems: list[SavedProblem] = []
    for origin, result in saved:
        problems.extend(p for p in result.problems if p not in problems)
        for run in result.runs:
            part = parts.setdefault((run.provider, run.model, run.tools), _Part(run, origin))
            _same_tools(part, run, origin)
            for fixture in run.fixtures:
                _add(part, fixture, origin)
    return SavedRuns(runs=[_merged(part) for part in parts.values()], problems=problems)


def _same_tools(part: _Part, run: RunResult, origin: str) -> None:
    """Refuse a part of another tool set; a part saved without a digest (an older result) is taken as the same."""
    mine, theirs = part.run.tools_hash, run.tools_hash
    if mine is None:
        part.run = part.run.model_copy(update={"tools_hash": theirs})
    elif theirs is not None and mine != theirs:
        raise UsageError(
            f"{part.origin} and {origin} hold runs of {run.key.label} with different tool sets "
            f"(tools_hash {mine} and {theirs}); merge only results of the same tool set, or run them again")


def _add(part: _Part, fixture: FixtureResult, origin: str) -> None:
    seen = part.fixtures.get(fixture.id)
    if seen is None:
        part.fixtures[fixture.id] = (fixture, origin)
    elif _volatile_apart(seen[0]) != _volatile_apart(fixture):
        raise UsageError(
            f"{seen[1]} and {origin} both hold fixture {fixture.id!r} of {part.run.key.label}, with different "
            "results; merge each fixture's result from one file only (the same shard twice, or runs of "
            "different commits?)")


def _volatile_apart(fixture: FixtureResult) -> FixtureResult:
    return fixture.model_copy(update={"timing": None})


def _merged(part: _Part) -> RunResult:
    fixtures = [part.fixtures[i][0] for i in sorted(part.fixtures)]
    return part.run.model_copy(update={"fixtures": fixtures, "summary": summarize(fixtures)})
