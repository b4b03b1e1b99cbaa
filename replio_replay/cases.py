"""A case: one fixture as a run runs it, with the tools it is offered and the run's tool set.

Cases are made once, when a run is planned (`suite.prepare`): the fixture's own tools,
`tools_offered` and system prompt are resolved against the run's tool set then, so problems
are found before anything runs, and the runner, the engine and recording get plain data.
"""

from __future__ import annotations

from dataclasses import dataclass

from .fixtures.model import Fixture
from .tools.toolset import ToolSet

__all__ = ["Case", "trial_stem"]


@dataclass(frozen=True)
class Case:
    """`offered`: what this fixture's model is offered; `toolset`: the run's set it was resolved
    from; `trial`: which of the run's repeated trials (1-based) this is."""

    fixture: Fixture
    offered: ToolSet
    toolset: ToolSet
    trial: int = 1

    @property
    def id(self) -> str:
        return self.fixture.id

    @property
    def stem(self) -> str:
        """The name of this case's cassette and golden: the id, and `.t<k>` for trial k > 1."""
        return trial_stem(self.fixture.id, self.trial)


def trial_stem(fixture_id: str, trial: int) -> str:
    """Trial 1 keeps the fixture's own file name; trial k is `<id>.t<k>`."""
    return fixture_id if trial == 1 else f"{fixture_id}.t{trial}"
