"""The shell tool: `run_command`, run in the worktree with a timeout and an output cap."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess

from pydantic import Field

from .base import Params, Tool, ToolContext, ToolFailure
from .permissions import Category

__all__ = ["SHELL_TOOLS"]

_OUTPUT_CAP = 16_000


class CommandParams(Params):
    command: str = Field(description="Shell command, run from the project root.")
    timeout: float = Field(30, gt=0, le=300, description="Seconds before the command is stopped.")


def run_command(p: CommandParams, ctx: ToolContext) -> str:
    root = ctx.sandbox.root
    if "\x00" in p.command:
        raise ToolFailure("the command must not contain a NUL character")
    # Its own process group, so that a timeout stops the whole pipeline, not only the shell.
    with subprocess.Popen(
        p.command,
        shell=True,
        cwd=root,
        env={"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(root), **ctx.env},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    ) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=p.timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):  # it may have ended just now
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise ToolFailure(f"command timed out after {p.timeout:g} s") from None
    out = (stdout + stderr).decode("utf-8", "replace").replace(str(root), ".")
    if len(out) > _OUTPUT_CAP:
        out = out[:_OUTPUT_CAP] + f"\n(output cut at {_OUTPUT_CAP} characters)"
    return f"exit code {proc.returncode}\n{out}".rstrip()


SHELL_TOOLS: tuple[Tool, ...] = (
    Tool(
        "run_command",
        "Run a shell command in the project root and return its exit code and output.",
        Category.BASH,
        CommandParams,
        run_command,
    ),
)
