"""The tool set of a run, as data: the offered tools with their specs, the system prompt, a digest.

A `ToolSet` is immutable and resolved once per run (see `resolve`), then once more per
fixture that adds or restricts tools, and once more when its MCP servers have said which
tools they have; it is handed to the engine and the toolbox like the provider. Its `digest`
changes whenever what the model is offered, or what a declared tool answers, changes:
cassettes record it, and `status` compares it.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._runtime.jsoncanon import canonical
from ..prices import Price
from .base import Tool
from .mcp.config import McpServer

if TYPE_CHECKING:
    from ..agents.decl import AgentSpec
    from .child import ForkServer
    from .environment import Environment
    from .override import Override

__all__ = ["DEFAULT_SYSTEM_PROMPT", "DEFAULT_TOOLSET", "Pending", "ToolSet", "short_hash"]

#: The name of the project's default tool set (whose recordings keep the paths without `tools=`).
DEFAULT_TOOLSET = "default"

DEFAULT_SYSTEM_PROMPT = (
    "You are a coding agent working inside a project directory. Use the tools to inspect and "
    "change the project as the task requires. Paths are relative to the project root. "
    "When the task is done, reply with your final answer and do not call any more tools."
)


def _fork_server() -> ForkServer:
    from .child import ForkServer

    return ForkServer()


def short_hash(data: Any) -> str:
    """The first 16 hex digits of the SHA-256 of `data`'s canonical JSON."""
    return hashlib.sha256(canonical(data).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Pending:
    """A `disable` (no `override`) or an `override` naming a tool no source had yet: one of the
    set's MCP servers may have it. `where` names the file and field for the message if none does;
    `optional` when the fixture uses only some servers (the tool may be another's)."""

    where: str
    name: str
    override: Override | None = None
    optional: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "override": self.override.model_dump(mode="json") if self.override else None}


@dataclass(frozen=True)
class ToolSet:
    """The tools offered in a run (in offer order) and the system prompt that goes with them.

    `known` holds every tool name the set's sources define, the disabled ones too, so a
    fixture that avoids or denies a disabled tool is not mistaken for a typo.
    `mcp_servers` are the servers whose tools are added per fixture, once they are listed;
    until then `pending` holds the disables and overrides that may name them, and `only`
    the fixture's `tools_offered` (None: all). `environments` are the stateful environments whose
    methods are among the tools: the runner builds them for each fixture and reports their end state.
    """

    name: str
    tools: tuple[Tool, ...]
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    known: frozenset[str] = field(default_factory=frozenset)
    mcp_servers: Mapping[str, McpServer] = field(default_factory=dict)
    pending: tuple[Pending, ...] = ()
    only: tuple[str, ...] | None = None
    environments: Mapping[str, Environment] = field(default_factory=dict)
    #: `PROVIDER:MODEL` -> price, from the set's files (over the config's); no part of `digest`.
    prices: Mapping[str, Price] = field(default_factory=dict)
    #: The user's own agent, run in place of replio's loop (None: replio's loop over `tools`).
    agent: AgentSpec | None = None
    #: The tools a fixture's simulated user calls on its own side (`user.tools`): never the agent's.
    user_tools: tuple[Tool, ...] = ()
    #: Where the project's Python (environments, Python tools by path) is described and run: one fork
    #: server per load, shared by the sets and fixtures resolved from it (no process until it is needed).
    python: ForkServer = field(default_factory=_fork_server, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "known", frozenset(self.known) | frozenset(self.names))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.tools)

    def get(self, name: str) -> Tool | None:
        """The offered tool called `name`, or None."""
        return self._by_name.get(name)

    @functools.cached_property
    def _by_name(self) -> dict[str, Tool]:
        return {t.name: t for t in self.tools}

    @functools.cached_property
    def specs(self) -> tuple[dict[str, Any], ...]:
        """Provider-neutral specs, in offer order: name, description, JSON Schema parameters."""
        return tuple(t.spec() for t in self.tools)

    @property
    def titles(self) -> dict[str, str]:
        """Tool name -> the name reports show, for the offered tools that have a `title`."""
        return {t.name: t.title for t in self.tools if t.title and t.title != t.name}

    @functools.cached_property
    def schema_hash(self) -> str:
        """A hash of the specs offered: changes when a name, description or schema does."""
        return short_hash(list(self.specs))

    @functools.cached_property
    def prompt_hash(self) -> str:
        return short_hash(self.system_prompt)

    @functools.cached_property
    def digest(self) -> str:
        """A hash of everything the set decides: specs, categories, declared behaviour, the prompt."""
        data: dict[str, Any] = {
            "system_prompt": self.system_prompt,
            "tools": [{**t.spec(), "category": t.category.value, "behaviour": t.fingerprint}
                      for t in self.tools],
        }
        if self.user_tools:
            data["user_tools"] = [{**t.spec(), "behaviour": t.fingerprint} for t in self.user_tools]
        if self.agent is not None:  # its tools are in its code: the code's hash stands for them
            data["agent"] = self.agent.to_json()
        if self.mcp_servers:  # what a server's tools are is in its recordings; how it is started is here
            data["mcp_servers"] = {n: s.model_dump(mode="json") for n, s in self.mcp_servers.items()}
            data["pending"] = [p.to_json() for p in self.pending]
        return short_hash(data)

    def replace(self, *, tools: Iterable[Tool] | None = None, system_prompt: str | None = None,
                mcp_servers: Mapping[str, McpServer] | None = None, pending: tuple[Pending, ...] | None = None,
                only: tuple[str, ...] | None = None,
                environments: Mapping[str, Environment] | None = None,
                user_tools: tuple[Tool, ...] | None = None) -> ToolSet:
        """A copy with other tools, prompt, servers, pending changes, `only`, environments or user tools
        (the name and known names kept)."""
        new_tools = tuple(self.tools if tools is None else tools)
        return ToolSet(
            self.name, new_tools, self.system_prompt if system_prompt is None else system_prompt,
            self.known | {t.name for t in new_tools},
            self.mcp_servers if mcp_servers is None else mcp_servers,
            self.pending if pending is None else pending,
            self.only if only is None else only,
            self.environments if environments is None else environments,
            self.prices,
            self.agent,
            self.user_tools if user_tools is None else user_tools,
            self.python,
        )

    def for_user(self) -> ToolSet:
        """The set of the simulated user's tools, as its toolbox offers them."""
        return ToolSet(self.name, self.user_tools, system_prompt="", python=self.python)
