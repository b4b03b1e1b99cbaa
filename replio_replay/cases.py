"""A case: one fixture as a run runs it, with the tools it is offered and the run's tool set.

Cases are made once, when a run is planned (`suite.prepare`): the fixture's own tools,
`tools_offered` and system prompt are resolved against the run's tool set then, so problems
are found before anything runs, and the runner, the engine and recording get plain data.
"""

from __future__ import annotations

from dataclasses import dataclass

from .fixtures.model import Fixture
from .tools.toolset import ToolSet

__all__ = ["Case"]


@dataclass(frozen=True)
class Case:
    """`offered`: what this fixture's model is offered; `toolset`: the run's set it was resolved from."""

    fixture: Fixture
    offered: ToolSet
    toolset: ToolSet

    @property
    def id(self) -> str:
        return self.fixture.id
