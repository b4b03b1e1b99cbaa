"""The shell tool: `run_command`, run in the worktree, confined, with a timeout and an output cap.

The command runs under bubblewrap when that works here (see `process`): the worktree its only
writable folder, its own processes only, the network only if the fixture allows `web`. It is
stopped, with everything it started, when its call ends, times out or the run is cancelled.
"""

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
    limit = min(p.timeout, ctx.timeout)  # the model may ask for less than the run allows, not more
    done = run_bounded(p.command, shell=True, cwd=root, env=base_env(root, ctx.env),
                       timeout=limit, cap=_OUTPUT_CAP * 4, cancel=ctx.cancel,
                       network=ctx.network)
    if done.cancelled:
        raise ToolFailure("run_command was stopped: the run was interrupted")
    if done.timed_out:
        raise ToolFailure(f"run_command took longer than {limit:g} s")
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
