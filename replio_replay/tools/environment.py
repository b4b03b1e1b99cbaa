"""Environments: a project's Python class whose public methods are tools and whose public attributes are its state.

Declared in a tool set or a fixture as
``"environments": {"shop": {"python": "envs/shop.py:Shop", "initial": {...}, "prefix": "shop_"}}``
(the path relative to the declaring file). Each public method (a name not starting with ``_``)
is offered as a tool under its name (after `prefix`), described by its docstring and typed by its
hints; with `methods`, only the methods it lists are, each with its given description and JSON
Schema (the model's arguments checked against it unless `check_arguments` is false). A method that
raises gives the model an ``Error: ...`` result.

The class never runs in replio's process: the fork server (`child.ForkServer`) loads and describes
it (`environment`, through `pyobjects.class_tools`), and each fixture and trial gets a child process
forked from that server (`child.Child`) in which the instance, ``Class(**initial)``, is built
(`build`) and lives, so every call of the conversation sees the earlier ones' changes and no other
fixture sees them. Its state is its public attributes as JSON, read in the child (`states`). A call,
a constructor or a state read that takes longer than the fixture's `tool_timeout`, or that ends the
child, stops the child and ends the fixture in `error` (`UserCodeError`); a stopped environment's
state is neither judged nor kept. `reference_states` plays a verifier's `state_from_calls` on fresh
instances, built in the fixture's child once its own state has been read, apart from its own
instances (`Child.view`); `play` makes calls on given ones, so a conversation's turns can carry a
reference's state from one turn to the next. A replay runs the environments again.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, model_validator

from .._runtime.surrogates import clean
from ..errors import ToolSetError, UserCodeError
from .base import Tool, ToolContext, ToolFailure
from .permissions import Category
from .sandbox import Sandbox
from .schema import name_problem

if TYPE_CHECKING:
    from .child import Child, ForkServer

__all__ = ["Environment", "EnvironmentDecl", "MethodDecl", "build", "environment", "play", "reference_states",
           "states"]


class MethodDecl(BaseModel):
    """How one method is offered, instead of by its docstring and type hints."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    description: StrictStr = Field(min_length=1, description="What the model is told the tool does.")
    parameters: dict[str, Any] = Field(description="The JSON Schema of its arguments, which are checked against "
                                       "it and passed to the method as they are.")


class EnvironmentDecl(BaseModel):
    """An environment as declared in JSON."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    python: StrictStr = Field(description="PATH.py:Class, the path relative to the declaring file.")
    initial: dict[str, Any] = Field(default_factory=dict, description="Keyword arguments of the class: its "
                                    "state at the start of each fixture and trial.")
    prefix: StrictStr = Field("", max_length=40, description="Put before each method's name to make its tool's.")
    category: Category = Field(Category.READ, description="The permission category of its tools (they change "
                               "only the instance, in memory, so `read`, allowed by default).")
    methods: dict[StrictStr, MethodDecl] | None = Field(
        None, description="Offer only these methods, each described as given (default: every public method, "
        "described by its docstring and type hints).")
    check_arguments: StrictBool = Field(
        True, description="false (with `methods`): the model's arguments go to the method unchecked, as BFCL "
        "passes them; a call the method cannot take fails as the method does.")

    @model_validator(mode="after")
    def _unchecked_needs_methods(self) -> EnvironmentDecl:
        if not self.check_arguments and self.methods is None:
            raise ValueError("check_arguments: false applies to the schemas `methods` gives; a method typed by its "
                             "hints is always checked")
        return self


@dataclass(frozen=True)
class Environment:
    """A described environment: its class's name, initial state and the tools its methods make (each
    call made in the fixture's child), the field declaring it, and its unit in the fork server."""

    name: str
    class_name: str
    initial: Mapping[str, Any]
    tools: tuple[Tool, ...]
    where: str
    unit: int


def environment(name: str, decl: EnvironmentDecl, *, base_dir: Path, where: str, source: str,
                server: ForkServer) -> Environment:
    """The environment `decl` declares as `name` (in the file or fixture `where` names), described
    by `server`; ToolSetError naming it when the class cannot be loaded or one of its methods cannot
    be typed."""
    from .function import remote

    field = f"{where}: environments.{name}.python"
    problem = name_problem(name)
    if problem or "." in name:
        raise ToolSetError(f"{where}: environments.{name}: {problem or 'an environment name has no dot'}")
    spec = {"kind": "environment", "name": name, "python": decl.python, "base_dir": str(base_dir.absolute()),
            "where": where, "field": field, "decl": decl.model_dump(mode="json", exclude={"initial"})}
    unit, described = server.describe(spec, field)
    fingerprint: dict[str, Any] = {"kind": "environment", "python": decl.python, "initial": decl.initial}
    if decl.methods is not None:
        fingerprint["methods"] = {k: v.model_dump() for k, v in decl.methods.items()}
    cls = described["class"]
    tools = tuple(
        Tool(t["name"], t["description"], decl.category, t["parameters"],
             remote(unit, t["name"], f"environment {cls}: {t['name'][len(decl.prefix):]}"), source=source,
             checks_schema=t["checks_schema"], fingerprint=fingerprint, touches_worktree=t["touches_worktree"],
             in_child=True)
        for t in described["tools"])
    return Environment(name, cls, dict(decl.initial), tools, field, unit)


def build(environments: Mapping[str, Environment], child: Child, timeout: float) -> None:
    """Build a fresh instance of each environment, ``Class(**initial)``, in `child`, each within
    `timeout` seconds (the fixture's `tool_timeout`: a constructor is the project's code, as a call
    is); ToolSetError naming the one whose constructor fails, UserCodeError when one overruns or
    ends the child, Interrupted once the run is."""
    for name, env in environments.items():
        message = {"op": "build", "env": name, "unit": env.unit, "initial": env.initial}
        try:
            answer = child.ask(message, what=f"{env.where}: {env.class_name}(**initial)", timeout=timeout)
        except ValueError:
            raise ToolSetError(f"{env.where}: initial holds NaN or Infinity, which JSON has not; give numbers "
                               "JSON can write") from None
        if "problem" in answer:
            raise ToolSetError(answer["problem"])


def states(environments: Mapping[str, Environment], child: Child, timeout: float) -> dict[str, Any] | None:
    """Each environment's state, as `child` holds its instance (see `pyobjects.state_of`), or None
    when `child` was stopped: the state of a stopped environment is neither judged nor kept.
    ToolSetError naming an attribute that is not JSON; UserCodeError when reading overruns."""
    if child.stopped is not None:
        return None
    found = {}
    for name, env in environments.items():
        answer = child.ask({"op": "state", "env": name}, what=f"environment {env.class_name}: reading its state",
                           timeout=timeout)
        if "problem" in answer:
            raise ToolSetError(answer["problem"])
        found[name] = clean(answer["state"])
    return found


def reference_states(environments: Mapping[str, Environment], calls: Sequence[tuple[str, dict[str, Any]]],
                     timeout: float, child: Child) -> tuple[dict[str, Any] | str, list[str] | None]:
    """The states fresh instances reach through `calls` (tool name, arguments) in order, built in
    `child` (a view apart from the fixture's own instances), and the calls' results; or why they
    cannot (see `play`) and None."""
    try:
        build(environments, child, timeout)
        results = play(environments, child, calls, timeout)
        if isinstance(results, str):
            return results, None
        found = states(environments, child, timeout)
    except (ToolSetError, UserCodeError) as exc:
        return str(exc), None
    assert found is not None  # `play` says when the child was stopped
    return found, results


def play(environments: Mapping[str, Environment], child: Child, calls: Sequence[tuple[str, dict[str, Any]]],
         timeout: float) -> list[str] | str:
    """Make `calls` (tool name, arguments) in order on the instances `child` holds: each call's result
    (as the model would read it), or why they cannot be made (a call naming no environment's tool,
    one that fails, one that takes longer than `timeout` or ends the child, which is then stopped)."""
    from .function import CodeFailure

    by_name = {tool.name: tool for env in environments.values() for tool in env.tools}
    ctx = ToolContext(Sandbox(Path(os.devnull)), timeout=timeout, child=child)
    results = []
    for i, (name, arguments) in enumerate(calls):
        tool = by_name.get(name)
        if tool is None:
            return (f"state_from_calls[{i}]: no environment has a tool {name!r} "
                    f"(they have: {', '.join(sorted(by_name)) or 'none'})")
        try:
            results.append(tool.invoke(dict(arguments), ctx))
        except CodeFailure as exc:
            return f"state_from_calls[{i}] ({name}) raised {exc.kind}: {exc.message}"
        except (ToolFailure, UserCodeError) as exc:
            return f"state_from_calls[{i}] ({name}): {exc}"
    return results
