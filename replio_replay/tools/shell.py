"""The shell tool: `run_command`, run in the worktree with a timeout and an output cap."""

from __future__ import annotations

from pydantic import Field

from .base import Params, Tool, ToolContext, ToolFailure, model_tool
from .permissions import Category
from .process import base_env, run_bounded

__all__ = ["shell_tools"]

_OUTPUT_CAP = 16_000


class CommandParams(Params):
    command: str = Field(description="Shell command, run from the project root.")
    timeout: float = Field(30, gt=0, le=300, description="Seconds before the command is stopped.")


def run_command(p: CommandParams, ctx: ToolContext) -> str:
    root = ctx.sandbox.root
    if "\x00" in p.command:
        raise ToolFailure("the command must not contain a NUL character")
    done = run_bounded(p.command, shell=True, cwd=root, env=base_env(root, ctx.env),
                       timeout=p.timeout, cap=_OUTPUT_CAP * 4)
    if done.timed_out:
        raise ToolFailure(f"command timed out after {p.timeout:g} s")
    out = (done.stdout + done.stderr).decode("utf-8", "replace").replace(str(root), ".")
    if len(out) > _OUTPUT_CAP or done.cut:
        out = out[:_OUTPUT_CAP] + f"\n(output cut at {_OUTPUT_CAP} characters)"
    code = "stopped" if done.returncode is None else done.returncode
    return f"exit code {code}\n{out}".rstrip()


def shell_tools() -> tuple[Tool, ...]:
    """The tools of this family, as offered by default."""
    return (
        model_tool(
            "run_command",
            "Run a shell command in the project root and return its exit code and output.",
            Category.BASH,
            CommandParams,
            run_command,
        ),
    )
