"""Tools declared in JSON (a tool set's or a fixture's `tools`): the declaration model and the `Tool` it makes.

Three kinds, told apart by their keys: a **stub** (`result` or `results`) answers from its
declaration (see `stub`); a **command** (`command`) runs a program (see `command`); a
**Python** tool (`python`: ``PATH.py:function``, relative to the declaring file) calls a
project function, described and typed by its docstring and hints unless `description` is given
(see `function.python_tool`). Two kinds or none is an error. A stub's or command's `parameters`
must be a valid JSON Schema of type object; the model's arguments are checked against it before
the tool runs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictStr,
    field_validator,
    model_validator,
)

from ..errors import ToolSetError
from .base import Tool
from .permissions import Category
from .schema import name_problem, schema_problem
from .stub import StubCase, stub_invoke

if TYPE_CHECKING:
    from .child import ForkServer

__all__ = ["DEFAULT_COMMAND_TIMEOUT", "ToolDecl", "ToolDecls", "answering_for", "command_argv", "declared_tool"]

#: Seconds a command tool may run when its declaration gives no `timeout`.
DEFAULT_COMMAND_TIMEOUT = 30.0

_EMPTY_OBJECT: dict[str, Any] = {"type": "object", "properties": {}}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class ToolDecl(_Strict):
    """A stub, command or Python tool as declared in JSON."""

    description: StrictStr | None = Field(None, min_length=1, description="Required but for a Python tool "
                                          "(default: its docstring), and for a fixture's stub with no `parameters` "
                                          "either, which answers for the tool set's tool of its name.")
    title: StrictStr | None = Field(None, min_length=1, max_length=200, description=(
        "The name reports show for the tool (its key is the name the model is offered), such as an "
        "imported benchmark's own name; it is not sent to the model."))
    parameters: dict[str, Any] = Field(default_factory=lambda: dict(_EMPTY_OBJECT))
    category: Category | None = Field(None, description="Default: read for a stub or Python tool, bash for a "
                                      "command.")
    result: Any = Field(None, description="stub: the answer to every call.")
    results: list[StubCase] | None = Field(None, description="stub: answers tried in order.")
    unmatched: StrictStr | None = Field(None, min_length=1, description=(
        "stub: what the model is told, after `no stubbed result for NAME with ARGUMENTS`, when no clause of "
        "`results` matches a call (an imported trace's stubs say production never made that call)."))
    command: list[StrictStr] | None = Field(None, min_length=1, description="command: the argv, no shell.")
    timeout: float | None = Field(None, gt=0, le=3600, description="command: seconds before it is stopped.")
    python: StrictStr | None = Field(None, min_length=1, description="Python: PATH.py:function, relative to "
                                     "the declaring file.")

    @field_validator("parameters")
    @classmethod
    def _valid_schema(cls, schema: dict[str, Any]) -> dict[str, Any]:
        problem = schema_problem(schema)
        if problem:
            raise ValueError(problem)
        return schema

    @model_validator(mode="after")
    def _one_kind(self) -> ToolDecl:
        stub = "result" in self.model_fields_set or self.results is not None
        command = self.command is not None
        if stub + command + (self.python is not None) > 1:
            raise ValueError("a tool has one of `command` (a command tool), `result`/`results` (a stub) and "
                             "`python` (a Python tool), not two")
        if not stub and not command and self.python is None:
            raise ValueError("give `command` for a command tool, `result`/`results` for a stub, or `python` for "
                             "a Python tool")
        if self.command is not None and self.description is None:
            raise ValueError("description: field required (a command tool needs a description)")
        if stub and self.description is None and "parameters" in self.model_fields_set:
            raise ValueError("description: field required (a stub with `parameters` needs a description; a "
                             "fixture's stub with neither answers for the tool set's tool of its name)")
        if self.python is not None and (self.timeout is not None or "parameters" in self.model_fields_set):
            raise ValueError("a Python tool is typed by its hints and bounded by tool_timeout: give it no "
                             "`parameters` or `timeout`")
        if "result" in self.model_fields_set and self.results is not None:
            raise ValueError("give `result` (one answer) or `results` (answers by arguments), not both")
        if self.unmatched is not None and self.results is None:
            raise ValueError("`unmatched` is what a stub with `results` answers a call none of them matches; "
                             "give `results`, or leave `unmatched` out")
        if stub and self.timeout is not None:
            raise ValueError("`timeout` applies to command tools only")
        return self

    @property
    def kind(self) -> str:
        """``command``, ``python`` or ``stub``."""
        return "command" if self.command is not None else "python" if self.python is not None else "stub"


def _valid_names(tools: dict[str, ToolDecl]) -> dict[str, ToolDecl]:
    for name in tools:
        problem = name_problem(name)
        if problem:
            raise ValueError(problem)
    return tools


#: A `tools` table (tool name -> declaration) as tool-set files and fixtures write it.
ToolDecls = Annotated[dict[str, ToolDecl], AfterValidator(_valid_names)]


def declared_tool(name: str, decl: ToolDecl, *, source: str, base_dir: Path | None,
                  python: ForkServer | None = None) -> Tool:
    """The `Tool` a declaration makes; `base_dir` is the declaring file's folder (for `./` in argv and
    a Python tool's path); a Python tool is described by `python` (by default a fork server of its own)."""
    if decl.python is not None:
        from .function import python_tool

        where = f"{source}: tools.{name}.python"
        if base_dir is None:
            raise ToolSetError(f"{where}: a plugin's fixture has no folder to find {decl.python!r} in; register "
                               "the tool from the plugin instead")
        from .child import ForkServer

        return python_tool(name, decl.python, base_dir=base_dir, where=where, category=decl.category or Category.READ,
                           description=decl.description, source=source, server=python or ForkServer())
    assert decl.description is not None  # `_one_kind` requires it of a stub or command
    if decl.command is not None:
        from .command import command_invoke

        argv = command_argv(decl.command, base_dir)
        timeout = decl.timeout or DEFAULT_COMMAND_TIMEOUT
        invoke = command_invoke(name, argv, timeout)
        category = decl.category or Category.BASH
        fingerprint: Any = {"kind": "command", "command": list(decl.command), "timeout": timeout}
    else:
        if decl.description is None:
            raise ToolSetError(f"{source}: tools.{name}: a stub needs a description (only a fixture's stub may "
                               "leave it and `parameters` out, to answer for the tool set's tool of that name)")
        invoke = stub_invoke(name, decl.result, decl.results, decl.unmatched)
        category = decl.category or Category.READ
        fingerprint = {"kind": "stub", **decl.model_dump(mode="json", include={"result", "results"}),
                       **({"unmatched": decl.unmatched} if decl.unmatched is not None else {})}
    return Tool(name, decl.description, category, decl.parameters, invoke, source=source,
                checks_schema=True, fingerprint=fingerprint, touches_worktree=decl.command is not None,
                title=decl.title)


def answering_for(tool: Tool, decl: ToolDecl, source: str) -> Tool:
    """The tool set's `tool`, as it is offered (description, schema, category), answered by the stub
    `decl` of a fixture (`source`): an imported trace's recorded results for a tool the user's tool
    set describes."""
    return dataclasses.replace(
        tool, invoke=stub_invoke(tool.name, decl.result, decl.results, decl.unmatched), source=source,
        checks_schema=True, touches_worktree=False, in_child=False,
        fingerprint={"kind": "stub", "answers": tool.fingerprint,
                     **decl.model_dump(mode="json", include={"result", "results", "unmatched"}, exclude_none=True)})


def command_argv(command: Sequence[str], base_dir: Path | None) -> tuple[str, ...]:
    """The argv a command tool runs: `./x` and `../x` name files beside the declaring file (in
    `base_dir`); every other argument is passed as is."""
    from .command import beside

    return tuple(str((base_dir / arg).resolve()) if base_dir is not None and beside(arg) else arg for arg in command)
