"""Child processes tools start: bounded in time and output, confined, ended with all they spawned.

`run_bounded` starts a program in its own process group with a minimal environment, feeds it
stdin, reads at most `cap` bytes of each stream (more stops the reading and the program), and
kills the whole group when it exits, times out, is cancelled or the caller is interrupted,
and at the latest when replio exits; unconfined, also every process carrying its mark, such
as a daemon it started in a session of its own (see `groups`). What it wrote before it exited
is its output, even when something it started still holds its stdout open.

With `confine` and a working bubblewrap (`bwrap`), the program also runs in its own mount, PID,
IPC and UTS namespaces: the filesystem read-only but for the worktree, a fresh `/tmp`, only its
own processes in `/proc`, no capabilities, and no network unless allowed. Whether bubblewrap
works is probed once (`confinement_problem`); without it programs run unconfined.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from .._runtime.groups import end_group, marked, track_group

__all__ = [
    "Finished",
    "base_env",
    "confinement_available",
    "confinement_problem",
    "run_bounded",
]

_CHUNK = 65536
_STEP = 0.05  # how often a wait wakes to look at the cap and the cancel event
#: Seconds the readers get, once the program is ended, to reach the end of its output.
_DRAIN = 1.0
_TMP = Path("/tmp")


@dataclass(frozen=True)
class Finished:
    """How a bounded process ended: exit code (None if stopped), its output, and why it was stopped.

    `cut`: a stream went over the cap and the program was stopped; `stdout_cut`: that stream was
    stdout; `cancelled`: the cancel event stopped it; `confined`: it ran under bubblewrap.
    """

    returncode: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    cut: bool = False  # a stream went over the cap, so the program was stopped
    stdout_cut: bool = False
    cancelled: bool = False
    confined: bool = False


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
    confine: bool = False,
    network: bool = True,
    readable: Sequence[Path] = (),
) -> Finished:
    """Run `argv` and wait at most `timeout` seconds; each stream is kept up to `cap` bytes.

    `cancel`, once set, kills the program at once (`Finished.cancelled`); set before the call,
    the program is not started. `confine` runs it under bubblewrap when that works here, with
    `cwd` (the worktree) its only writable folder and the network only if `network`;
    `readable` names paths under `/tmp` besides `cwd` it must still see (read-only), such as
    a command tool's script (its PATH and replio's Python stay visible too). Raises OSError
    when the program cannot be started (not found, not executable), confined or not.
    """
    if cancel is not None and cancel.is_set():
        return Finished(None, b"", b"", cancelled=True)
    command = list(_argv(argv, shell))
    bwrap = _bwrap() if confine else None
    if bwrap is not None:
        # Inside bubblewrap a failed exec is only bwrap's exit status 1: look first, as exec would.
        _check_startable(command[0], cwd, env)
        command = _confined(bwrap, command, Path(cwd), env=env, network=network,
                            readable=readable)
        token = None  # its PID namespace holds all it starts
    else:
        env, token = marked(env)
    proc = subprocess.Popen(
        command, cwd=cwd, env=dict(env),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True,  # its own group, so stopping it stops what it spawned too
    )
    track_group(proc.pid, token)
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
                    confined=bwrap is not None)


def confinement_available() -> bool:
    """Whether `run_bounded(confine=True)` really confines here (bubblewrap is there and works)."""
    return confinement_problem() is None


def confinement_problem() -> str | None:
    """Why programs cannot be confined here (bubblewrap missing or failing), or None."""
    return _probe()[1]


def _bwrap() -> str | None:
    return _probe()[0]


_PROBE_LOCK = threading.Lock()
#: Seconds the probe waits for bubblewrap to run `true`, then again: it takes milliseconds, but a
#: loaded machine can stall a process's start for seconds, and a probe given up on leaves every
#: program of the run unconfined.
PROBE_TIMEOUTS = (10.0, 60.0)


def _probe() -> tuple[str | None, str | None]:
    with _PROBE_LOCK:  # concurrent first calls wait for the one probe rather than each running it
        return _probe_once()


@functools.cache
def _probe_once() -> tuple[str | None, str | None]:
    """`(bwrap path, None)` if bubblewrap starts a program with our options, else `(None, why)`.

    Run once: bwrap can be installed yet unusable (no user namespaces, no CAP_SYS_ADMIN in a
    container), and then every call would fail the same way.
    """
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return None, "bubblewrap is missing (no `bwrap` on PATH)"
    for timeout in PROBE_TIMEOUTS:
        try:
            probe = subprocess.run(
                [bwrap, *_options(network=False), "--chdir", "/", "--", "true"],
                stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout, check=False,
            )
        except OSError as exc:
            return None, f"bubblewrap ({bwrap}) cannot start a program here: {exc}"
        except subprocess.TimeoutExpired:
            continue
        break
    else:
        tries = " s, then ".join(f"{t:g}" for t in PROBE_TIMEOUTS)
        return None, f"bubblewrap ({bwrap}) did not start a program within {tries} s (overloaded machine, or bwrap hangs)"
    if probe.returncode != 0:
        said = probe.stderr.decode("utf-8", "replace").strip().splitlines()
        why = said[-1] if said else f"exit status {probe.returncode}"
        return None, f"bubblewrap ({bwrap}) cannot start a program here: {why}"
    return bwrap, None


def _options(*, network: bool, binds: Sequence[str] = ()) -> list[str]:
    """bwrap's options but the working folder: the filesystem, namespaces and privileges.

    `binds` are mounted after the fresh /tmp (order matters: the worktree lives under it).
    """
    options = [
        "--ro-bind", "/", "/",
        "--tmpfs", "/tmp",  # hides other worktrees (they live in the temp folder) and is scratch
        *binds,
        "--dev", "/dev",
        "--proc", "/proc",
        # A command run by root keeps uid 0 even without capabilities, and uid 0 may write these.
        "--ro-bind-try", "/proc/sys", "/proc/sys",
        "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger",
        "--ro-bind-try", "/proc/irq", "/proc/irq",
        "--ro-bind-try", "/proc/bus", "/proc/bus",
        "--unshare-pid",  # only its own processes: no /proc/$PPID/environ of ours with a key
        "--unshare-ipc",
        "--unshare-uts",
        "--cap-drop", "ALL",  # run by root, bwrap would leave every capability (remount rw)
        # Should replio itself be killed, the namespace goes with it. (bwrap watches the thread
        # that started it; run_bounded keeps that thread waiting until bwrap is gone.)
        "--die-with-parent",
        "--new-session",  # no terminal to push input into (TIOCSTI)
    ]
    if not network:
        options.append("--unshare-net")  # only a loopback of its own
    return options


def _confined(bwrap: str, command: list[str], cwd: Path, *, env: Mapping[str, str],
              network: bool, readable: Sequence[Path]) -> list[str]:
    root = os.path.realpath(cwd)
    binds: list[str] = []
    for path in _seen_in_tmp(readable, env):
        binds += ["--ro-bind", path, path]
    binds += ["--bind", root, root]  # last, so it is writable even under a readable folder
    return [bwrap, *_options(network=network, binds=binds), "--chdir", root, "--", *command]


def _seen_in_tmp(readable: Sequence[Path], env: Mapping[str, str]) -> list[str]:
    """What the fresh /tmp would hide that the program still needs: `readable`, the folders on
    its PATH and the Python replio runs on (a virtualenv under /tmp is a shebang's interpreter).

    The rest of the filesystem is visible read-only already.
    """
    wanted = [*map(str, readable), *env.get("PATH", "").split(os.pathsep), sys.prefix,
              sys.base_prefix]
    seen: dict[str, None] = {}
    for path in wanted:
        if not os.path.isabs(path):
            continue
        real = Path(os.path.realpath(path))
        if real.exists() and real.is_relative_to(_TMP) and real != _TMP:
            seen[str(real)] = None
    return list(seen)


def _argv(argv: Sequence[str] | str, shell: bool) -> list[str]:
    """The argv `subprocess` would run: `/bin/sh -c ...` for a shell command."""
    args = [argv] if isinstance(argv, str) else list(argv)
    return ["/bin/sh", "-c", *args] if shell else args


def _check_startable(program: str, cwd: Path, env: Mapping[str, str]) -> None:
    """Raise the OSError that exec would for `program`: missing, or not executable."""
    if "/" not in program:
        if shutil.which(program, path=env.get("PATH", os.defpath)) is None:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
        return
    path = Path(cwd, program)
    if not path.exists():
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
    if path.is_dir() or not os.access(path, os.X_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), program)


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
