"""Confinement of the programs replio starts: command tools, the user's agent, the fork server of the project's Python, an importer's child.

Every spawner calls `spawn` (or `wrap`, for the argv alone), which runs the program at the best
level this machine allows, probed once per run (`confinement`):

- ``bwrap`` (bubblewrap): its own mount, PID, IPC and UTS namespaces; the filesystem read-only
  but for its working folder and what the caller names writable, a fresh ``/tmp``, only its own
  processes in ``/proc``, no capabilities, the network only if allowed (loopback included: the
  agent's relay on 127.0.0.1 stays reachable).
- ``unshare`` (util-linux ``unshare --pid --fork --mount-proc``, in a user namespace where the
  kernel allows one, else as root): its own PID namespace and ``/proc``, so it cannot see
  replio's processes (nor read the key in ``/proc/<replio>/environ``) nor another program's,
  and no network unless allowed (``--net``: a loopback of its own, down). The filesystem is
  replio's, writable where replio's user may write; run as root, the program keeps root's
  capabilities in its namespaces.
- ``none``: neither can run (macOS, a locked-down container). Replio makes itself
  non-dumpable (``PR_SET_DUMPABLE`` 0: a process without ``CAP_SYS_PTRACE``, of its own user or
  another, cannot read its ``/proc/<pid>/environ``; root can) and a child subreaper
  (``PR_SET_CHILD_SUBREAPER``: a process that left its session and emptied its environment is
  reparented to replio and killed when the run ends, not when its fixture does). A program
  still sees every process of the machine, and the filesystem as replio's user does.

At every level the program starts in a session of its own with the mark `groups.marked` adds,
and is tracked (`groups.track_group`) so that `groups.end_group` kills it with all it started:
in a PID namespace, everything in it dies with its first process; at ``none``, what carries the
mark is found in ``/proc``. Below ``bwrap`` the run says once on standard error which
protection is in force and what it does not cover (`notices.once_per_run`).

The fork server's children cannot be started here (they are forked from it): they wall
themselves off from each other in namespaces of their own (`nested`), for which the server is
started with ``nest`` under bubblewrap (`nesting`).

``REPLIO_CONFINE`` (``bwrap``, ``unshare`` or ``none``) caps the level, so tests can run each;
it never raises it above what the machine allows.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import ctypes
import enum
import errno
import functools
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .groups import marked, track_group
from .notices import once_per_run

__all__ = ["CAP", "PROBE_TIMEOUTS", "Confinement", "Level", "check_startable", "confinement", "non_dumpable",
           "nesting", "returncode", "spawn", "wrap"]

#: The variable that caps the level (for tests: the machine's best level is used without it).
CAP = "REPLIO_CONFINE"
#: Seconds a probe waits for a program to run `true`, then again: it takes milliseconds, but a
#: loaded machine can stall a process's start for seconds, and a probe given up on leaves every
#: program of the run less confined.
PROBE_TIMEOUTS = (10.0, 60.0)
_TMP = Path("/tmp")
#: The folder holding the `replio_replay` package this process runs.
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])
_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36


class Level(str, enum.Enum):
    """How confined the programs of a run are, best first."""

    BWRAP = "bwrap"
    UNSHARE = "unshare"
    NONE = "none"


@dataclass(frozen=True)
class Confinement:
    """The level programs run at here, the program that confines them, and why better levels cannot run."""

    level: Level
    program: str | None = None  # bwrap's or unshare's path
    flags: tuple[str, ...] = ()  # unshare's namespaces
    problems: tuple[str, ...] = ()  # why each better level could not run

    @property
    def in_pid_namespace(self) -> bool:
        """Whether a program runs in a PID namespace of its own (everything in it dies with it)."""
        return self.level is not Level.NONE


def confinement() -> Confinement:
    """The confinement of this run: probed once (per value of `CAP`), from the best level down."""
    with _LOCK:  # concurrent first calls wait for the one probe rather than each running it
        return _probe(os.environ.get("REPLIO_CONFINE", ""))


def spawn(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], network: bool = True,
          readable: Sequence[Path] = (), writable: Sequence[Path] = (), outlives_caller: bool = False,
          nest: bool = False, **popen: Any) -> subprocess.Popen[bytes]:
    """Start `argv` confined (see the module docstring), in `cwd` (writable) with exactly `env` and
    the mark, in a session of its own, tracked until `groups.end_group` ends it. `popen` is handed
    to `subprocess.Popen` (the streams, `pass_fds`); `nest` to `wrap`. Raises OSError when the
    program cannot be started, confined or not.

    Under bubblewrap the program dies with the thread that started it, should that thread end
    first (bwrap's ``--die-with-parent`` watches a thread, not a process): so that a program
    meant to outlive its caller's thread (the fork server) dies with replio instead, it is
    started (`outlives_caller`) from a thread of replio's that lasts as long as replio does.
    """
    conf = confinement()
    env, token = marked(env)
    command = wrap(conf, list(argv), cwd=cwd, env=env, network=network, readable=readable, writable=writable,
                   keep_fds=popen.get("pass_fds", ()), nest=nest)

    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(command, cwd=cwd, env=env, start_new_session=True, **popen)

    proc = _lasting().submit(start).result() if outlives_caller else start()
    # In a PID namespace all it starts dies with it: the mark is looked for only where there is none.
    track_group(proc.pid, None if conf.in_pid_namespace else token)
    return proc


def wrap(conf: Confinement, argv: list[str], *, cwd: Path, env: Mapping[str, str], network: bool = True,
         readable: Sequence[Path] = (), writable: Sequence[Path] = (), keep_fds: Sequence[int] = (),
         nest: bool = False) -> list[str]:
    """The argv that runs `argv` at `conf`'s level, handed the descriptors `keep_fds` (OSError
    first when it cannot be started, as exec would say: inside bubblewrap or unshare a failed exec
    is only their exit status).

    `nest` (the fork server, where `nesting` says it works): under bubblewrap the program gets
    the machine's ``/proc`` and ``CAP_SETFCAP`` instead of a ``/proc`` of its own, and must call
    `nested.server_namespaces` before it runs anything else (see `nested`)."""
    if conf.level is Level.NONE:
        return argv
    check_startable(argv[0], cwd, env)
    assert conf.program is not None
    if conf.level is Level.UNSHARE:
        i, e = [fd for fd in range(9, 2, -1) if fd not in keep_fds][:2]
        init = _UNDER_INIT.format(i=i, e=e)
        return [conf.program, *conf.flags, *([] if network else ["--net"]), "--", "/bin/sh", "-c", init, "sh", *argv]
    root = os.path.realpath(cwd)
    binds: list[str] = []
    for path in _seen_in_tmp(readable, env):
        binds += ["--ro-bind", path, path]
    for path in dict.fromkeys([*map(os.path.realpath, writable), root]):
        binds += ["--bind", path, path]  # last, so they are writable even under a readable folder
    return [conf.program, *_bwrap_options(network=network, binds=binds, nest=nest), "--chdir", root, "--", *argv]


def returncode(proc: subprocess.Popen[Any]) -> int | None:
    """`proc`'s return code as if it had not been confined: minus the signal that killed it, where
    bubblewrap or unshare's first process reports that as a shell does (128 + the signal)."""
    code = proc.poll()
    program = proc.args[0] if isinstance(proc.args, (list, tuple)) else proc.args
    if code is not None and code > 128 and os.path.basename(str(program)) in ("bwrap", "unshare"):
        return 128 - code
    return code


def check_startable(program: str, cwd: Path, env: Mapping[str, str]) -> None:
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


def nesting(conf: Confinement) -> bool:
    """Whether a program `wrap` starts with ``nest`` at `conf`'s level gets the namespaces
    `nested.server_namespaces` makes: probed once per run under bubblewrap (a kernel may refuse
    a user namespace inside it); at ``unshare`` level the program has a ``/proc`` of its own
    already, and at ``none`` there is nothing to nest in."""
    if conf.level is not Level.BWRAP:
        return False
    why = _probe_nesting(conf)
    if why and once_per_run("confinement-nesting"):
        print(f"replio: bubblewrap ({conf.program}) {why}: each fixture's Python (environments, Python tools) "
              "runs in the fork server's PID namespace, non-dumpable; not covered: it sees and can signal another "
              "fixture's, and writes the temp folder, other fixtures' worktrees included.", file=sys.stderr)
    return not why


def non_dumpable() -> bool:
    """Make this process non-dumpable (``PR_SET_DUMPABLE`` 0): a process without ``CAP_SYS_PTRACE``
    can no longer read its memory, environment or descriptors through ``/proc``. False where
    ``prctl`` is not there (not Linux)."""
    return _prctl(_PR_SET_DUMPABLE, 0)


_LOCK = threading.Lock()
#: What runs a program as the second process of unshare's PID namespace, as bubblewrap does: its
#: first process is spared the signals it does not handle (a program's kill of itself would do
#: nothing), and says how the program ended, 128 + the signal for a signal. An asynchronous
#: command's standard input would be /dev/null: it is handed over on descriptor {i}; the shell's
#: own standard error (its word on a killed job) goes nowhere, the program's is on descriptor
#: {e}: two of the shell's one-digit descriptors the program is not handed (`keep_fds`).
_UNDER_INIT = 'exec {i}<&0 {e}>&2 2>/dev/null; "$@" <&{i} 2>&{e} {i}<&- {e}>&- & wait $!'


@functools.cache
def _lasting() -> concurrent.futures.ThreadPoolExecutor:
    """The thread that starts the programs meant to outlive their caller's thread: it ends with replio."""
    return concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="replio-lasting-spawner")


@functools.cache
def _probe(cap: str) -> Confinement:
    """The best level that starts a program here, no better than `cap` (a `Level`'s value, or '')."""
    wanted = Level(cap) if cap in {level.value for level in Level} else Level.BWRAP
    problems: list[str] = []
    if wanted is Level.BWRAP:
        bwrap, problem = _probe_bwrap()
        if bwrap is not None:
            return Confinement(Level.BWRAP, bwrap)
        problems.append(problem or "")
    else:
        problems.append(f"{CAP}={cap} asks for no bubblewrap")
    if wanted in (Level.BWRAP, Level.UNSHARE):
        unshare, flags, problem = _probe_unshare()
        if unshare is not None:
            conf = Confinement(Level.UNSHARE, unshare, flags, tuple(problems))
            _tell(conf)
            return conf
        problems.append(problem)
    elif wanted is Level.NONE:
        problems[-1] = f"{CAP}={cap} asks for no namespaces"
    conf = Confinement(Level.NONE, problems=tuple(problems))
    _protect_replio()
    _tell(conf)
    return conf


def _probe_bwrap() -> tuple[str | None, str | None]:
    """`(bwrap path, None)` if bubblewrap starts a program with our options, else `(None, why)`.

    bwrap can be installed yet unusable (no user namespaces, no CAP_SYS_ADMIN in a container).
    """
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return None, "bubblewrap is missing (no `bwrap` on PATH)"
    why = _runs([bwrap, *_bwrap_options(network=False), "--chdir", "/", "--", "true"])
    return (bwrap, None) if why is None else (None, f"bubblewrap ({bwrap}) {why}")


#: What a nesting probe runs: the fork server's first step, then a look at what it made.
_NESTING = """import os, sys
sys.path.insert(0, sys.argv[1])
from replio_replay._runtime.nested import server_namespaces
server_namespaces()
print(os.getpid(), flush=True)
"""


@functools.cache
def _probe_nesting(conf: Confinement) -> str:
    """'' where a program bubblewrap starts with ``nest`` makes its namespaces, else why not."""
    assert conf.program is not None
    # The Python and package the server will run on, where the fresh /tmp would hide them (a virtualenv under /tmp).
    binds = [arg for path in _seen_in_tmp((), {}) for arg in ("--ro-bind", path, path)]
    argv = [conf.program, *_bwrap_options(network=False, binds=binds, nest=True), "--chdir", "/", "--",
            sys.executable, "-c", _NESTING, _PACKAGE_ROOT]
    try:
        probe = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=PROBE_TIMEOUTS[-1],
                               check=False, env={"PATH": os.defpath})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"could not be probed for namespaces inside it ({exc})"
    if probe.returncode == 0 and probe.stdout.strip() == b"2":  # the server is its namespace's second process
        return ""
    said = probe.stderr.decode("utf-8", "replace").strip().splitlines()
    return f"makes no user namespace inside it here ({said[-1] if said else f'exit status {probe.returncode}'})"


def _probe_unshare() -> tuple[str | None, tuple[str, ...], str]:
    """`(unshare path, its flags, '')` if util-linux unshare gives a program a PID namespace of its
    own, in a user namespace where it can (as any user), else as root; else `(None, (), why)`."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return None, (), "util-linux unshare is missing (no `unshare` on PATH)"
    pid = ("--pid", "--fork", "--mount-proc", "--kill-child")
    tries: list[tuple[str, ...]] = [("--user", "--map-current-user", *pid)]
    if os.geteuid() == 0:
        tries.append(pid)
    why = ""
    for flags in tries:
        failed = _runs([unshare, *flags, "--", "true"])
        if failed is None:
            return unshare, flags, ""
        why = f"unshare ({unshare}) {failed}"
    return None, (), why


def _runs(argv: list[str]) -> str | None:
    """None if `argv` runs and exits 0, else why not (the last line it said)."""
    for timeout in PROBE_TIMEOUTS:
        try:
            probe = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout,
                                   check=False)
        except OSError as exc:
            return f"cannot start a program here: {exc}"
        except subprocess.TimeoutExpired:
            continue
        break
    else:
        tries = " s, then ".join(f"{t:g}" for t in PROBE_TIMEOUTS)
        return f"did not start a program within {tries} s (overloaded machine, or it hangs)"
    if probe.returncode == 0:
        return None
    said = probe.stderr.decode("utf-8", "replace").strip().splitlines()
    return f"cannot start a program here: {said[-1] if said else f'exit status {probe.returncode}'}"


def _bwrap_options(*, network: bool, binds: Sequence[str] = (), nest: bool = False) -> list[str]:
    """bwrap's options but the working folder: the filesystem, namespaces and privileges.

    `binds` are mounted after the fresh /tmp (order matters: the worktree lives under it).
    `nest`: see `wrap`. The machine's ``/proc`` is bound writable (the program writes its user
    namespace's maps there) and is then hidden under the program's own, read-only; root keeps
    ``CAP_SETFCAP``, to map itself into that user namespace.
    """
    if nest:
        proc = ["--bind", "/proc", "/proc"]
        privileges = ["--cap-drop", "ALL", *(["--cap-add", "CAP_SETFCAP"] if os.geteuid() == 0 else [])]
    else:
        proc = [
            "--proc", "/proc",
            # A program run by root keeps uid 0 even without capabilities, and uid 0 may write these.
            "--ro-bind-try", "/proc/sys", "/proc/sys",
            "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger",
            "--ro-bind-try", "/proc/irq", "/proc/irq",
            "--ro-bind-try", "/proc/bus", "/proc/bus",
        ]
        privileges = ["--cap-drop", "ALL"]  # run by root, bwrap would leave every capability (remount rw)
    options = [
        "--ro-bind", "/", "/",
        "--tmpfs", "/tmp",  # hides other worktrees (they live in the temp folder) and is scratch
        *binds,
        "--dev", "/dev",
        *proc,
        "--unshare-pid",  # only its own processes: no /proc/$PPID/environ of ours with a key
        "--unshare-ipc",
        "--unshare-uts",
        *privileges,
        "--new-session",  # no terminal to push input into (TIOCSTI)
        # Should replio be killed, the namespace goes with it (bwrap watches the thread that
        # started it: see `spawn`). Killing bwrap's group kills bwrap, not what runs inside.
        "--die-with-parent",
    ]
    if not network:
        options.append("--unshare-net")  # only a loopback of its own
    return options


def _seen_in_tmp(readable: Sequence[Path], env: Mapping[str, str]) -> list[str]:
    """What the fresh /tmp would hide that the program still needs: `readable`, the folders on
    its PATH, the Python replio runs on (a virtualenv under /tmp is a shebang's interpreter) and
    replio's own package (an agent's child and the fork server import it).

    The rest of the filesystem is visible read-only already.
    """
    named = [os.path.realpath(path) for path in readable]
    wanted = [*env.get("PATH", "").split(os.pathsep), sys.prefix, sys.base_prefix, _PACKAGE_ROOT]
    seen: dict[str, None] = {}
    for path in named:  # what the caller names, /tmp itself too (the fork server reads the project there)
        if Path(path).exists() and Path(path).is_relative_to(_TMP):
            seen[path] = None
    for path in wanted:  # never /tmp itself: a PATH naming it would show the other worktrees
        if not os.path.isabs(path):
            continue
        real = Path(os.path.realpath(path))
        if real.exists() and real.is_relative_to(_TMP) and real != _TMP:
            seen[str(real)] = None
    return list(seen)


def _prctl(option: int, value: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    with contextlib.suppress(OSError, AttributeError):
        return bool(ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0) == 0)
    return False


_SUBREAPER = {"on": False}


def _protect_replio() -> None:
    """Without namespaces: replio non-dumpable and a child subreaper, its orphans killed at exit."""
    non_dumpable()
    if _prctl(_PR_SET_CHILD_SUBREAPER, 1) and not _SUBREAPER["on"]:
        _SUBREAPER["on"] = True
        import atexit

        atexit.register(_kill_orphans)


def _kill_orphans() -> None:
    """Kill every child of replio's left at its exit: what replio started is ended by then, so what
    is left is an orphan its subreaper took in (a daemon that left its session and environment)."""
    me = str(os.getpid())
    for _ in range(10):  # each round may find what the last one's victims had forked meanwhile
        found = _children(me)
        if not found:
            return
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, 9)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


def _children(ppid: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()  # after the command name, which may hold spaces
        if fields[1] == ppid and fields[0] != "Z":
            found.append(int(name))
    return found


def _tell(conf: Confinement) -> None:
    """Say once per run, on standard error, which protection is in force below bubblewrap and what it lacks."""
    if not once_per_run(f"confinement-{conf.level.value}"):
        return
    why = "; ".join(p for p in conf.problems if p)
    if conf.level is Level.UNSHARE:
        said = ("the user's code (agents, environments, Python tools, commands, an importer's child) runs in a PID "
                "namespace of its own (unshare): it cannot see replio's processes nor read their environment, and "
                "ends with all it started; not covered: the filesystem (writable wherever your user may write) "
                "and, as root, root's capabilities")
    else:
        said = ("the user's code (agents, environments, Python tools, commands, an importer's child) runs without "
                "namespaces: replio is non-dumpable (a process without CAP_SYS_PTRACE cannot read its environment in "
                "/proc; root's can) and a child subreaper (what left its session is killed when the run ends); "
                "not covered: the code sees every process and the filesystem as your user does, reads replio's key "
                "when run as root, and what it starts may live until the run ends")
    print(f"replio: {why}; {said}. Install bubblewrap (apt-get install bubblewrap) to confine it.", file=sys.stderr)
