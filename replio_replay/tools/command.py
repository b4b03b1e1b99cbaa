"""Command tools: a program in any language, run in the worktree with the call's arguments on stdin.

The argv is run without a shell, in the fixture's worktree, with the arguments as JSON on
stdin and a minimal environment (no keys), confined like `run_command` when bubblewrap works
here. Its stdout is the result; a non-zero exit is an ``Error:`` result ending with the tail
of its stderr; it is stopped, with all it started, after its timeout (or the run's call
limit, whichever is shorter) or when the run is cancelled, and its output is capped.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .base import Invoke, ToolContext, ToolFailure
from .process import base_env, run_bounded

__all__ = ["OUTPUT_CAP", "beside", "command_invoke", "missing_program"]

#: Characters of stdout a command tool may return.
OUTPUT_CAP = 16_000
_STDERR_TAIL = 800


def command_invoke(name: str, argv: Sequence[str], timeout: float) -> Invoke:
    """The `invoke` of a command tool running `argv`."""
    readable = _folders_named(argv)

    def invoke(arguments: dict[str, Any], ctx: ToolContext) -> str:
        root = ctx.sandbox.root
        stdin = json.dumps(arguments, ensure_ascii=False, sort_keys=True).encode("utf-8")
        limit = min(timeout, ctx.timeout)
        try:
            done = run_bounded(list(argv), cwd=root, env=base_env(root), stdin=stdin,
                               timeout=limit, cap=OUTPUT_CAP * 4, cancel=ctx.cancel,
                               network=ctx.network, readable=readable)
        except OSError as exc:
            raise ToolFailure(f"{name} could not be started: {exc.strerror or exc}") from None
        if done.cancelled:
            raise ToolFailure(f"{name} was stopped: the run was interrupted")
        if done.timed_out:
            raise ToolFailure(f"{name} took longer than {limit:g} s")
        out = done.stdout.decode("utf-8", "replace").replace(str(root), ".")
        if done.returncode is not None and done.returncode != 0:
            tail = done.stderr.decode("utf-8", "replace").replace(str(root), ".").strip()[-_STDERR_TAIL:]
            raise ToolFailure(f"{name} exited with status {done.returncode}" + (f": {tail}" if tail else ""))
        if done.cut and not done.stdout_cut:
            raise ToolFailure(f"{name} wrote more than {OUTPUT_CAP * 4} bytes to stderr and was stopped")
        if done.stdout_cut or len(out) > OUTPUT_CAP:
            out = out[:OUTPUT_CAP] + f"\n(output cut at {OUTPUT_CAP} characters)"
        return out

    return invoke


def _folders_named(argv: Sequence[str]) -> tuple[Path, ...]:
    """The folders of the absolute paths in `argv` (`./x` beside the declaration is one).

    Confined, the program must still read its script and the files beside it even when they
    lie in the temp folder, which it otherwise sees empty.
    """
    folders = []
    for arg in argv:
        if os.path.isabs(arg) and os.path.exists(arg):
            folders.append(Path(arg) if os.path.isdir(arg) else Path(arg).parent)
    return tuple(dict.fromkeys(folders))


def missing_program(argv: Sequence[str], declared: Sequence[str]) -> str | None:
    """Why `argv` (written as `declared`) cannot start as it will at run time: its program is not on
    the tools' PATH, or not an executable file, or a file it names beside the declaration is
    missing; None when nothing says so. A relative program path names a file in the worktree,
    which exists only when the fixture runs: it is left to that."""
    program, written = argv[0], declared[0]
    if os.sep not in program:
        if shutil.which(program, path=base_env(Path())["PATH"]) is None:
            return f"the program {written!r} is not on PATH; install it, or give its path (./NAME beside this file)"
    elif os.path.isabs(program):
        if not os.path.isfile(program):
            return f"the program {written!r} ({program}) does not exist"
        if not os.access(program, os.X_OK):
            return (f"the program {written!r} ({program}) is not executable; make it so (chmod +x), or run it "
                    f"through its interpreter, e.g. [\"python3\", \"{written}\"]")
    for arg, text in zip(argv[1:], declared[1:]):
        if beside(text) and not os.path.exists(arg):
            return f"{text!r} ({arg}) does not exist"
    return None


def beside(arg: str) -> bool:
    """Whether a command's argument names a file beside the declaring file."""
    return arg.startswith(("./", "../"))
