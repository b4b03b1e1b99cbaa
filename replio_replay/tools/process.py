"""Child processes tools start: bounded in time and output, confined, ended with all they spawned.

`run_bounded` starts a program confined as all the user's code is (`_runtime.confine`: under
bubblewrap where it works, the worktree its only writable folder), in its own process group with
a minimal environment, feeds it stdin, reads at most `cap` bytes of each stream (more stops the
reading and the program), and kills the whole group when it exits, times out, is cancelled or
the caller is interrupted, and at the latest when replio exits: with it, its PID namespace and
all it started, or without namespaces every process carrying its mark, such as a daemon it
started in a session of its own (see `groups`). What it wrote before it exited is its output,
even when something it started still holds its stdout open.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from .._runtime.confine import Level, confinement, spawn
from .._runtime.groups import end_group

__all__ = ["Finished", "base_env", "run_bounded"]

_CHUNK = 65536
_STEP = 0.05  # how often a wait wakes to look at the cap and the cancel event
#: Seconds the readers get, once the program is ended, to reach the end of its output.
_DRAIN = 1.0


@dataclass(frozen=True)
class Finished:
    """How a bounded process ended: exit code (None if stopped), its output, and why it was stopped.

    `cut`: a stream went over the cap and the program was stopped; `stdout_cut`: that stream was
    stdout; `cancelled`: the cancel event stopped it; `level`: how it was confined.
    """

    returncode: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    cut: bool = False  # a stream went over the cap, so the program was stopped
    stdout_cut: bool = False
    cancelled: bool = False
    level: Level = Level.NONE


def base_env(root: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """What a tool's process sees: PATH, HOME in the worktree, the locale; never a key."""
    # A child's environment: these four names are read from the process itself rather than the
    # `Env` snapshot, which holds every key and stays out of the tools' reach.
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
    cancel: threading.Event | None = None,
    network: bool = True,
    readable: Sequence[Path] = (),
) -> Finished:
    """Run `argv` and wait at most `timeout` seconds; each stream is kept up to `cap` bytes.

    `cancel`, once set, kills the program at once (`Finished.cancelled`); set before the call,
    the program is not started. Under bubblewrap, `cwd` (the worktree) is its only writable
    folder and `readable` names paths under `/tmp` besides `cwd` it must still see (read-only),
    such as a command tool's script (its PATH and replio's Python stay visible too); the network
    is there only if `network`. Raises OSError when the program cannot be started (not found,
    not executable), confined or not.
    """
    if cancel is not None and cancel.is_set():
        return Finished(None, b"", b"", cancelled=True)
    proc = spawn(_argv(argv, shell), cwd=cwd, env=env, network=network, readable=readable,
                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    over = threading.Event()
    out, err = bytearray(), bytearray()
    readers = [
        threading.Thread(target=_read, args=(proc.stdout, cap, over, out), daemon=True),
        threading.Thread(target=_read, args=(proc.stderr, cap, over, err), daemon=True),
    ]
    for reader in readers:
        reader.start()
    writer = threading.Thread(target=_feed, args=(proc, stdin), daemon=True)
    writer.start()  # a program that never reads its input must not hold the timeout off
    stopped: str | None = None  # "timeout" or "cancel"
    try:
        stopped = _wait(proc, timeout, over, cancel)
    finally:
        # However the call ends (exit, timeout, cap, cancel, an exception here), nothing it
        # started survives it: the group is killed, and what left the group (setsid, daemons)
        # with its mark, or under bubblewrap with the PID namespace.
        end_group(proc.pid)
        proc.wait()
        _join((*readers, writer), _DRAIN)  # what it wrote is in the pipes: read by now
    cut = over.is_set()  # also when the reader hit the cap after the program had exited
    code = None if stopped is not None or cut else proc.returncode
    return Finished(code, bytes(out), bytes(err), timed_out=stopped == "timeout", cut=cut,
                    stdout_cut=cut and len(out) >= cap, cancelled=stopped == "cancel",
                    level=confinement().level)


def _argv(argv: Sequence[str] | str, shell: bool) -> list[str]:
    """The argv `subprocess` would run: `/bin/sh -c ...` for a shell command."""
    args = [argv] if isinstance(argv, str) else list(argv)
    return ["/bin/sh", "-c", *args] if shell else args


def _feed(proc: subprocess.Popen[bytes], data: bytes) -> None:
    assert proc.stdin is not None
    with contextlib.suppress(BrokenPipeError, OSError):  # it may not read its input at all
        proc.stdin.write(data)
    with contextlib.suppress(BrokenPipeError, OSError):
        proc.stdin.close()


def _wait(proc: subprocess.Popen[bytes], timeout: float, over: threading.Event,
          cancel: threading.Event | None) -> str | None:
    """Wait for the exit; None once it exits or goes over the cap, else ``timeout`` or ``cancel``.

    It wakes often, so a program that writes too much, or a cancelled run, is stopped promptly.
    """
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        try:
            proc.wait(timeout=max(0.0, min(_STEP, left)))
            return None
        except subprocess.TimeoutExpired:
            pass
        if over.is_set():
            return None  # `cut` says why it is stopped
        if cancel is not None and cancel.is_set():
            return "cancel"
        if time.monotonic() >= deadline:
            return "timeout"


def _join(threads: Sequence[threading.Thread], seconds: float) -> None:
    """Wait for `threads` to end, `seconds` at most in all (a reader whose pipe an escaped process
    holds open never sees its end; what it read so far is kept as it goes)."""
    deadline = time.monotonic() + seconds
    for thread in threads:
        thread.join(timeout=max(0.0, deadline - time.monotonic()))


def _read(stream: IO[bytes] | None, cap: int, over: threading.Event, kept: bytearray) -> None:
    """Append what `stream` gives to `kept`, up to `cap` bytes (more sets `over` and stops)."""
    if stream is None:
        return
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
