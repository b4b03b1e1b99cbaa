"""The toolbox: executes a model's calls for one fixture, under its tool set and permissions.

Every outcome is a string for the model. An unknown tool, a denied call, arguments that are
not a JSON object or do not fit the tool's schema, a tool's own failure, a call over the
fixture's time limit and an interrupted run all come back as results starting ``Error:``; every
result is capped. Only a bug in a built-in tool, and the harness's own errors (a replayed MCP
call the cassette does not hold, the project's Python overrunning or ending the child process it
runs in), raise: the fixture then ends in `error`.
"""

from __future__ import annotations

from typing import Any

from .._runtime.deadline import Interrupted, TimedOut, run_until
from ..errors import ReplioError
from .base import BUILTIN, CODE_ERRORS, InvalidArguments, Tool, ToolContext, ToolFailure
from .environment import states
from .permissions import Permissions
from .sandbox import SandboxError
from .schema import argument_problem
from .toolset import ToolSet

__all__ = ["RESULT_CAP", "Toolbox"]

#: Characters of any tool's result the model receives.
RESULT_CAP = 100_000


class Toolbox:
    """Runs tool calls for one fixture."""

    def __init__(self, ctx: ToolContext, permissions: Permissions, toolset: ToolSet) -> None:
        self.ctx = ctx
        self.permissions = permissions
        self.toolset = toolset
        #: Tools of the set not offered yet (a scripted turn offers them later): not in `specs`, and
        #: a call of one is answered as a call of an unknown tool.
        self.held: frozenset[str] = frozenset()

    @property
    def specs(self) -> tuple[dict[str, Any], ...]:
        """What the model is offered."""
        if not self.held:
            return self.toolset.specs
        return tuple(spec for spec in self.toolset.specs if spec["name"] not in self.held)

    @property
    def system_prompt(self) -> str:
        return self.toolset.system_prompt

    def call(self, name: str, arguments: Any) -> str:
        """Execute one call; failures come back as a result starting with ``Error:``."""
        tool = self.toolset.get(name) if name not in self.held else None
        if tool is None:
            offered = [n for n in self.toolset.names if n not in self.held]
            return f"Error: unknown tool {name!r}; available tools: {', '.join(offered)}"
        if not self.permissions.allows(name, tool.category):
            return f"Error: permission denied: {name} ({tool.category.value}) is not allowed in this run"
        if isinstance(arguments, str):
            return f"Error: arguments for {name} are not valid JSON: {arguments[:200]}"
        problem = argument_problem(tool.parameters, arguments) if tool.checks_schema else None
        if problem:
            return f"Error: invalid arguments for {name}: {problem}"
        return _capped(self._invoke(tool, arguments))

    def _invoke(self, tool: Tool, arguments: dict[str, Any]) -> str:
        name, ctx = tool.name, self.ctx
        try:
            if tool.in_child or not tool.waits:  # bounded by its child, or by what it declares (`Tool.waits`)
                return tool.invoke(arguments, ctx)
            return run_until(lambda: tool.invoke(arguments, ctx), timeout=ctx.timeout, cancel=ctx.cancel)
        except TimedOut:
            return f"Error: {name} took longer than {ctx.timeout:g} s"
        except Interrupted:
            return "Error: the run was interrupted"
        except InvalidArguments as exc:
            return f"Error: invalid arguments for {name}: {exc.problem}"
        except (ToolFailure, SandboxError) as exc:
            return f"Error: {exc}"
        except OSError as exc:
            return f"Error: {name} failed: {exc.strerror or type(exc).__name__}"
        except ReplioError:
            raise  # the harness failed, not the tool: the fixture ends in `error`
        except CODE_ERRORS as exc:
            if tool.source == BUILTIN:
                raise  # our own bug: the fixture ends in `error`, loudly
            # a plugin tool's bug: the model is told, and the run goes on
            return f"Error: {name} failed: {type(exc).__name__}: {exc}"

    def states(self) -> dict[str, Any] | None:
        """Each environment's state as the fixture's child holds it; None when the set has no
        environment, or the child was stopped (its state is neither judged nor kept)."""
        if not self.toolset.environments or self.ctx.child is None:
            return None
        return states(self.toolset.environments, self.ctx.child, self.ctx.timeout)

    def close(self) -> None:
        """Release what the fixture's tools opened."""
        self.ctx.close()


def _capped(result: str) -> str:
    if len(result) <= RESULT_CAP:
        return result
    return result[:RESULT_CAP] + f"\n(output cut at {RESULT_CAP} characters)"
