"""What a tool is: a name, a description, a permission category, a pydantic parameter model, a function."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict

from .permissions import Category
from .sandbox import Sandbox

if TYPE_CHECKING:
    import httpx

__all__ = ["Params", "Tool", "ToolContext", "ToolFailure"]

P = TypeVar("P", bound="Params")


class Params(BaseModel):
    """Base of every tool's parameter model; unknown arguments are refused."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


class ToolFailure(Exception):
    """A tool could not do what the model asked; the message goes back as ``Error: ...``."""


@dataclass
class ToolContext:
    """What a tool may touch for one fixture: its sandboxed worktree and its HTTP transport."""

    sandbox: Sandbox
    transport: httpx.BaseTransport | None = None
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Tool(Generic[P]):
    """One tool offered to the model."""

    name: str
    description: str
    category: Category
    params: type[P]
    run: Callable[[P, ToolContext], str]

    def schema(self) -> dict[str, Any]:
        """The JSON Schema of the parameters, without pydantic's titles (they are noise to a model)."""
        return json.loads(_schema_text(self.params))


@functools.cache
def _schema_text(params: type[Params]) -> str:
    # Generating a schema costs milliseconds; every turn of every fixture needs them all.
    return json.dumps(_strip_titles(params.model_json_schema()))


def _strip_titles(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip_titles(v) for k, v in node.items() if k != "title"}
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node
