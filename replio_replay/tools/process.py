"""Child processes that tools start: bounded in time and in output, and ended with all they spawned.

`run_bounded` starts a program in its own process group with a minimal environment, feeds it
stdin, reads at most `cap` bytes of each stream (more stops the reading and the program), and
kills the whole group when it exits, times out or the caller is interrupted.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

__all__ = ["Finished", "base_env", "run_bounded"]

_CHUNK = 65536


@dataclass(frozen=True)
class Finished:
    """How a bounded process ended: exit code (None if stopped), its output, and why it was stopped.

    `cut`: a stream went over the cap and the program was stopped; `stdout_cut`: that stream was stdout.
    """

    returncode: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    cut: bool = False  # a stream went over the cap, so the program was stopped
    stdout_cut: bool = False


def base_env(root: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """What a tool's process sees: PATH, HOME in the worktree, the locale; never a key."""
    env = {"PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"), "HOME": str(root)}
    for name in ("LANG", "LC_ALL", "TZ"):
        if name in os.environ:
            env[name] = os.environ[name]
    return {**env, **(extra or {})}


def run_bounded(
    argv: Sequence[str] | str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    stdin: bytes = b"",
    timeout: float,
    cap: int,
    shell: bool = False,
) -> Finished:
    """Run `argv` and wait at most `timeout` seconds; each stream is kept up to `cap` bytes.

    Raises OSError when the program cannot be started (not found, not executable).
    """
    proc = subprocess.Popen(
        argv, shell=shell, cwd=cwd, env=dict(env),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True,  # its own group, so stopping it stops what it spawned too
    )
    over = threading.Event()
    outputs: dict[str, bytes] = {}
    readers = [
        threading.Thread(target=_read, args=(proc.stdout, cap, over, outputs, "out"), daemon=True),
        threading.Thread(target=_read, args=(proc.stderr, cap, over, outputs, "err"), daemon=True),
    ]
    for reader in readers:
        reader.start()
    writer = threading.Thread(target=_feed, args=(proc, stdin), daemon=True)
    writer.start()  # a program that never reads its input must not hold the timeout off
    timed_out = False
    try:
        try:
            _wait(proc, timeout, over)
        except subprocess.TimeoutExpired:
            timed_out = True
    finally:
        _kill_group(proc)
        proc.wait()
        for thread in (*readers, writer):
            thread.join(timeout=2)
    code = None if timed_out or over.is_set() else proc.returncode
    out, err = outputs.get("out", b""), outputs.get("err", b"")
    return Finished(code, out, err, timed_out, over.is_set(), stdout_cut=len(out) >= cap and over.is_set())


def _feed(proc: subprocess.Popen[bytes], data: bytes) -> None:
    assert proc.stdin is not None
    with contextlib.suppress(BrokenPipeError, OSError):  # it may not read its input at all
        proc.stdin.write(data)
    with contextlib.suppress(BrokenPipeError, OSError):
        proc.stdin.close()


def _wait(proc: subprocess.Popen[bytes], timeout: float, over: threading.Event) -> None:
    """Wait for the exit, waking often enough to stop a program that writes too much."""
    step = 0.05
    waited = 0.0
    while True:
        try:
            proc.wait(timeout=step)
            return
        except subprocess.TimeoutExpired:
            waited += step
            if over.is_set():
                return
            if waited >= timeout:
                raise


def _read(stream: IO[bytes] | None, cap: int, over: threading.Event, out: dict[str, bytes], key: str) -> None:
    if stream is None:
        return
    kept = bytearray()
    with stream:
        while True:
            chunk = stream.read1(_CHUNK) if hasattr(stream, "read1") else stream.read(_CHUNK)
            if not chunk:
                break
            room = cap - len(kept)
            kept += chunk[:room]
            if len(chunk) > room:
                over.set()
                break
    out[key] = bytes(kept)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # already gone
        os.killpg(proc.pid, signal.SIGKILL)
