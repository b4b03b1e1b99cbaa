"""The child processes that run the project's Python, seen from replio: a fork server, and one child per fixture.

Environments and Python tools by path never run in replio's process. A `ForkServer` (one per
load of a project's tool sets, started when it first has something to do) is a process of
replio's own (``childmain``), confined as all the user's code is (`_runtime.confine`: under
bubblewrap, a PID namespace apart from replio's, the filesystem read-only but for the temp folder
where the worktrees are, no capabilities), in a session of its own: it imports the project's
modules and describes their classes and functions as tools (`describe`), keeping what it built.
Each fixture (each trial) gets a `Child` forked from it, which starts from that state, holds the
fixture's environment instances and makes its calls. With namespaces (bubblewrap, unshare), each
child walls itself off (`_runtime.nested.own_namespaces`): a PID namespace and ``/proc`` of its
own (it sees and signals no other child, nor the server), every mount read-only but for its
worktree and a temp folder of its own, no capabilities. Without (``none``, or a kernel that makes
no user namespace inside bubblewrap: `_runtime.confine.nesting`), it is only non-dumpable. The
server itself never runs a method.

Every request is one JSON line, and so is its answer (NaN and Infinity are refused both ways).
The project's code can write onto its end of the socket like any descriptor, so every line read is
numbered, its answer must carry its number and be one the request may have (`_fits`), and a line sent when none was asked
for is looked for before each request: a forged or garbled line stops that child (or the server,
when a module wrote it at import), named, as a timeout does. A module whose import leaves threads
running is refused, named: a fork copies no thread, so work given to them would never be done in a
fixture's child; the server is started again without it.
Each is bounded: by `LOAD_TIMEOUT` for a description, by the caller's timeout (the fixture's
`tool_timeout`) and the run's cancel event for a child. A child that takes longer, that ends
(`os._exit`, a crash) or that answers more than `MESSAGE_CAP` bytes is killed with its whole
process group (what it forked), and stays stopped: every later request of its fixture raises
`UserCodeError` with the first reason (`environment Shop: cancel_order took longer than 1 s;
stopped`). `Child.close` kills what is left of its group (and with its first process its PID
namespace) when the fixture ends; the server is tracked by `_runtime.groups`, so whatever
escaped a group (a `setsid` daemon) is killed with the server (its PID namespace, or without one
its mark, which all its children inherit), when the run ends (`ForkServer.close`) or replio
exits; a server that died (a module calling `os._exit` at import) is started again for the next
request, describing again what it had. The server runs the `replio_replay` that started it, with
an environment of a few variables (`child_env`), never a key, and what the project's code prints
goes to replio's standard error.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._runtime.confine import Level, confinement, nesting, spawn
from .._runtime.deadline import Interrupted, TimedOut
from .._runtime.groups import end_group
from .._runtime.jsoncanon import canonical
from ..errors import ToolSetError, UserCodeError
from .sandbox import TEMP_PREFIX

__all__ = ["LOAD_TIMEOUT", "MESSAGE_CAP", "Child", "Fetch", "ForkServer", "child_env", "request", "wire"]

#: Seconds importing a module and describing one class or function may take.
LOAD_TIMEOUT = 60.0
#: Bytes one answer of a child may take (a state is at most 1,000,000 characters; a result is cut for the model).
MESSAGE_CAP = 64 * 1024 * 1024
#: Seconds a process whose line closed gets to end on its own, so that its own exit status is told.
_EXITING = 1.0
#: How often a wait wakes to look at the cancel event.
_STEP = 0.05
_CHUNK = 1 << 16
#: The folder holding the `replio_replay` package this process runs.
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])
#: The variables the child's environment keeps from replio's: what Python and a module need, never a key.
_KEPT = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "VIRTUAL_ENV", "PYTHONPATH", "PYTHONHASHSEED",
         "PYTHONDONTWRITEBYTECODE", "PYTHONUTF8", "SSL_CERT_FILE", "SSL_CERT_DIR")
#: The server's command, given the folder replio's own package is in (so the server runs the replio that
#: started it, whatever `sys.path` it would have) and its two sockets. The current folder is not put first on
#: `sys.path` (a project's `json.py` shadows nothing), nor is replio's folder left there for the project's code.
_MAIN = """import sys
if sys.path[:1] == [""]:
    del sys.path[0]
sys.path.insert(0, sys.argv[1])
from replio_replay.tools.childmain import main
sys.path.remove(sys.argv[1])
main(sys.argv[2:])
"""


#: Makes an HTTP request a child's `ToolContext.http` sent (``{"op": "http", ...}``), and gives the answer to send back.
Fetch = Callable[[dict[str, Any]], dict[str, Any]]


#: Each request's number, which its answer (and an http request sent in the middle of a call) must
#: carry: a line the project's code writes onto the socket, carrying none, is caught at once, even when
#: it has the shape of the answer it comes before.
_IDS = itertools.count(1)


def request(message: Mapping[str, Any]) -> tuple[int, bytes]:
    """`message` numbered, and as one `wire` line."""
    ident = next(_IDS)
    return ident, wire({**message, "id": ident})


def wire(message: Mapping[str, Any]) -> bytes:
    """`message` as one line of the protocol: JSON in ASCII (a lone surrogate crosses as its escape);
    ValueError when it holds NaN or Infinity."""
    return (json.dumps(message, ensure_ascii=True, allow_nan=False, separators=(",", ":")) + "\n").encode("ascii")


def child_env() -> dict[str, str]:
    """The fork server's environment: `_KEPT`, from replio's own; unbuffered, so what the project's
    code prints is on replio's stderr at once, even from a child that is then killed."""
    return {**{name: os.environ[name] for name in _KEPT if name in os.environ}, "PYTHONUNBUFFERED": "1"}


class _Gone(Exception):
    """The other end closed its line: the process ended."""


class _Garbled(_Gone):
    """The other end sent a line that is no answer to the request: the project's code wrote onto
    replio's socket (a forged or garbled line), and the line can no longer be trusted."""

    def __init__(self, line: bytes, why: str) -> None:
        line = line.rstrip(b"\n")
        super().__init__(f"{why}: {line[:80]!r}{'...' if len(line) > 80 else ''}")


def _strings(value: Any, size: int) -> bool:
    return isinstance(value, list) and len(value) == size and all(isinstance(v, str) for v in value)


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


#: Each request's answers: for each key an answer may hold alone, whether its value fits.
_ANSWERS: dict[str, dict[str, Callable[[Any], bool]]] = {
    "describe": {"description": lambda v: isinstance(v, dict), "problem": lambda v: isinstance(v, str)},
    "fork": {"pid": _integer},
    "reap": {"status": lambda v: v is None or _integer(v)},
    "build": {"problem": lambda v: isinstance(v, str)},
    "call": {"result": lambda v: isinstance(v, str), "failure": lambda v: isinstance(v, str),
             "invalid": lambda v: isinstance(v, str), "raised": lambda v: _strings(v, 2)},
    "state": {"state": lambda v: isinstance(v, dict), "problem": lambda v: isinstance(v, str)},
}
#: A request a call's `ctx.http` sends in the middle of the call (see `childhttp`).
_HTTP = {"op": lambda v: v == "http", "method": lambda v: isinstance(v, str), "url": lambda v: isinstance(v, str),
         "headers": lambda v: isinstance(v, list) and all(_strings(h, 2) for h in v),
         "body": lambda v: isinstance(v, str)}
#: Answers that are more than one key: a describe's problem with the threads its import left running.
_EXTRA = {"describe": {"threads": lambda v: isinstance(v, list) and all(isinstance(t, str) for t in v)}}


def _fits(op: str, answer: Any) -> bool:
    """Whether `answer` is one the protocol has for a request `op` (an http request, in a call)."""
    if not isinstance(answer, dict):
        return False
    if op == "call" and answer.get("op") == "http":
        return answer.keys() == _HTTP.keys() and all(check(answer[k]) for k, check in _HTTP.items())
    extra = {k: v for k, v in answer.items() if k in _EXTRA.get(op, {})}
    main = {k: v for k, v in answer.items() if k not in extra}
    if not all(_EXTRA[op][k](v) for k, v in extra.items()):
        return False
    if len(main) != 1:
        return not main and op == "build"  # built: nothing to say
    key, value = next(iter(main.items()))
    return key in _ANSWERS[op] and _ANSWERS[op][key](value)


class _TooLong(Exception):
    """An answer went over `MESSAGE_CAP`."""


class _Line:
    """JSON lines over one end of a socket pair, each wait bounded by a deadline and a cancel event."""

    def __init__(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        self.sock = sock
        self.kept = bytearray()
        self.looked = 0  # how far `kept` holds no newline

    def send(self, data: bytes | memoryview, deadline: float, cancel: threading.Event | None) -> None:
        """Send one `wire` line."""
        data = memoryview(data)
        while data:
            self._wait(select.POLLOUT, deadline, cancel)
            try:
                data = data[self.sock.send(data):]
            except BlockingIOError:
                continue
            except OSError:  # its end is closed: the answer's read says how it ended
                raise _Gone() from None

    def pending(self) -> bytes:
        """What the other end sent that no request asked for (a line the project's code wrote onto the
        socket after an answer), or nothing; read without waiting."""
        if self.kept:
            return bytes(self.kept)
        try:
            return self.sock.recv(_CHUNK, socket.MSG_PEEK)
        except (BlockingIOError, OSError):
            return b""

    def receive(self, deadline: float, cancel: threading.Event | None, op: str, ident: int) -> dict[str, Any]:
        """The answer to request `ident`, an `op`; _Garbled when the line is not one (see `_fits`)."""
        while (end := self.kept.find(b"\n", self.looked)) < 0:
            self.looked = len(self.kept)
            if self.looked > MESSAGE_CAP:
                raise _TooLong()
            self._wait(select.POLLIN, deadline, cancel)
            try:
                chunk = self.sock.recv(_CHUNK)
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                raise _Gone()
            self.kept += chunk
        if end > MESSAGE_CAP:
            raise _TooLong()
        line = bytes(self.kept[:end])
        del self.kept[:end + 1]
        self.looked = 0
        try:
            answer = json.loads(line)
        except (ValueError, RecursionError):
            raise _Garbled(line, "a line that is not JSON") from None
        if not isinstance(answer, dict) or answer.pop("id", None) != ident or not _fits(op, answer):
            raise _Garbled(line, f"a line that is no answer to a {op!r} request")
        return answer  # type: ignore[no-any-return]

    def _wait(self, event: int, deadline: float, cancel: threading.Event | None) -> None:
        poller = select.poll()
        poller.register(self.sock, event | select.POLLHUP)
        while True:
            if cancel is not None and cancel.is_set():
                raise Interrupted()
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimedOut()
            if poller.poll(min(_STEP, left) * 1000):
                return

    def close(self) -> None:
        self.sock.close()


def _bytes(size: int) -> str:
    mib = 1024 * 1024
    return f"{size // mib} MiB" if size % mib == 0 else f"{size:,} bytes"


def _ended(status: int | None) -> str:
    """How a process ended, from its wait status as `ForkServer.reap` gives it."""
    if status is None:
        return "ended its process"
    if status < 0:
        return f"ended its process (killed by signal {-status})"
    return f"ended its process (exit status {status})"


class ForkServer:
    """The process that imports the project's Python and forks each fixture's `Child` (see the module docstring).

    Thread-safe: requests to the server go one at a time. Nothing is started until the first
    `describe` or fork; `close` (or the object's end, or replio's exit) kills it and its children.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._line: _Line | None = None
        self._passing: socket.socket | None = None
        self._units: dict[str, tuple[int, dict[str, Any]]] = {}  # spec's canonical JSON -> (unit, answer)
        self._good: list[tuple[int, dict[str, Any]]] = []  # described without a problem: told again to a new server
        self._finalizer: weakref.finalize | None = None
        self._temps = ""

    def describe(self, spec: Mapping[str, Any], what: str) -> tuple[int, dict[str, Any]]:
        """The unit number and description of what `spec` names (a class or a function: see
        `childmain`), described once per server; ToolSetError naming `what` (the declaring file and
        field) when the server finds a problem, ends, or takes longer than `LOAD_TIMEOUT`."""
        key = canonical(spec)
        with self._lock:
            if key not in self._units:
                unit = len(self._units) + 1
                answer = self._describe(unit, dict(spec), what)
                self._units[key] = unit, answer
                if "problem" not in answer:
                    self._good.append((unit, dict(spec)))
            unit, answer = self._units[key]
        if "problem" in answer:
            raise ToolSetError(answer["problem"])
        return unit, answer["description"]

    def child(self, root: Path, timeout: float, *, cancel: threading.Event | None = None, network: bool = True,
              web_allow: Sequence[str] = ()) -> Child:
        """A fixture's child, forked on its first request: its tools' `ToolContext` has the worktree
        `root`, `timeout`, `network` and `web_allow`; `cancel` interrupts its every wait."""
        context = {"root": str(root), "timeout": timeout, "network": network, "web_allow": list(web_allow)}
        return Child(self, context, cancel)

    def close(self) -> None:
        """Kill the server and every child it forked."""
        with self._lock:
            self._stop()

    def _describe(self, unit: int, spec: dict[str, Any], what: str) -> dict[str, Any]:
        try:
            answer = self._ask({"op": "describe", "unit": unit, "spec": spec}, LOAD_TIMEOUT)
        except _Garbled as exc:
            self._stop()
            return {"problem": f"{what}: loading it sent {exc} onto the socket to replio, which is not replio's "
                               "protocol; stopped. Fix the module"}
        except TimedOut:
            self._stop()
            return {"problem": f"{what}: loading it took longer than {LOAD_TIMEOUT:g} s; stopped"}
        except _Gone:
            status = self._stop(_EXITING)
            return {"problem": f"{what}: loading it {_ended(status)}; fix the module"}
        if "threads" in answer:  # a fork would copy the server without them: no later fixture is forked from it
            self._stop()
        return answer

    def fork(self, cancel: threading.Event | None) -> tuple[int, _Line]:
        """A new child (its pid and line), forked from the server: started first when it is not running;
        Interrupted, and nothing forked, once `cancel` is set."""
        if cancel is not None and cancel.is_set():
            raise Interrupted()
        mine, theirs = socket.socketpair()
        try:
            with self._lock:
                try:
                    pid = self._fork(theirs)
                except (_Gone, _Garbled, OSError, TimedOut):  # it died (or was stopped) since its last request: started again, once
                    pid = self._fork(theirs)
        except BaseException:
            mine.close()
            raise
        finally:
            theirs.close()
        return pid, _Line(mine)

    def _fork(self, theirs: socket.socket) -> int:
        try:
            self._running()
            assert self._passing is not None
            socket.send_fds(self._passing, [b"f"], [theirs.fileno()])
            return int(self._ask({"op": "fork"}, LOAD_TIMEOUT)["pid"])
        except (_Gone, _Garbled, OSError, TimedOut):
            self._stop()  # a descriptor passed and not taken must not reach the next fork
            raise

    def reap(self, pid: int, grace: float = 0.0) -> int | None:
        """The wait status of child `pid` (an exit status, or minus the signal), killed by the server
        after `grace` seconds to end on its own; None when the server is gone (its children went
        with it). The pid is the server's: in its PID namespace it names no process of replio's."""
        with self._lock:
            if self._proc is None:
                return None
            try:
                status = self._ask({"op": "reap", "pid": pid, "grace": grace}, LOAD_TIMEOUT + grace)["status"]
            except (_Gone, _Garbled, TimedOut):  # a line it did not send: its children go with it
                self._stop()
                return None
        return status if isinstance(status, int) else None

    def _ask(self, message: dict[str, Any], timeout: float,
             cancel: threading.Event | None = None) -> dict[str, Any]:
        self._running()
        assert self._line is not None
        deadline = time.monotonic() + timeout
        try:
            ident, data = request(message)
            self._line.send(data, deadline, cancel)
            return self._line.receive(deadline, cancel, message["op"], ident)
        except (Interrupted, KeyboardInterrupt, _TooLong):  # mid-request: its state is unknown
            self._stop()
            raise

    def _running(self) -> None:
        """Start the server unless it runs, describing again what the last one had described."""
        if self._proc is not None and self._proc.poll() is not None:
            # Its confinement ended (bubblewrap killed): what runs inside is being killed with it,
            # and may still take a request it will not live to answer.
            self._stop()
        if self._proc is not None:
            return
        conf = confinement()
        nest = nesting(conf)
        walls = "nest" if nest else "own" if conf.level is Level.UNSHARE else "none"
        # Where each child's own temp folder is made; named as a worktree is, so that what a killed
        # run left there is removed as its worktrees are (`run.worktree.reap_stale_worktrees`).
        temps = tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-children-")
        mine, theirs = socket.socketpair()
        passing, passed = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            # The temp folder, where every fixture's worktree is, is its working folder and writable:
            # one server serves them all, and outlives the thread that starts it (each child then
            # writes only its own worktree: see `childmain`). /tmp stays readable: the project's
            # modules may be there (not only in the project: the global fixture folder).
            self._proc = spawn(
                [sys.executable, "-c", _MAIN, _PACKAGE_ROOT, str(theirs.fileno()), str(passed.fileno()), temps, walls],
                cwd=Path(tempfile.gettempdir()), env=child_env(), outlives_caller=True, readable=[Path("/tmp")],
                nest=nest, stdin=subprocess.DEVNULL,
                stdout=2,  # what the project's code prints goes to stderr, never into replio's output
                pass_fds=(theirs.fileno(), passed.fileno()),
            )
        except BaseException:
            shutil.rmtree(temps, ignore_errors=True)
            raise
        finally:
            theirs.close()
            passed.close()
        self._line, self._passing = _Line(mine), passing
        self._finalizer = weakref.finalize(self, _kill, self._proc, temps, mine, passing)
        self._temps = temps
        for unit, spec in self._good:
            self._ask({"op": "describe", "unit": unit, "spec": spec}, LOAD_TIMEOUT)

    def _stop(self, grace: float = 0.0) -> int | None:
        """Kill the server and its children, once it has had `grace` seconds to end on its own; its
        exit status (None: it was not running)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace)
        if self._finalizer is not None:
            self._finalizer.detach()
        _kill(proc, self._temps, self._line.sock if self._line else None, self._passing)
        self._line = self._passing = None
        return proc.returncode


def _kill(proc: subprocess.Popen[bytes], temps: str, *sockets: socket.socket | None) -> None:
    end_group(proc.pid)  # its group, and by its mark every child it forked
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
    shutil.rmtree(temps, ignore_errors=True)
    for sock in sockets:
        if sock is not None:
            sock.close()


@dataclass
class _Process:
    """A child process as its views share it: its pid and line once forked, why it was stopped once it was."""

    pid: int | None = None
    line: _Line | None = None
    stopped: str | None = None


class Child:
    """One fixture's (one trial's) child process; see the module docstring. Forked on its first
    request; `close` ends it and all it started. Used by one thread at a time. A `view` of it is
    the same process with instances of its own (a verifier's reference calls are made on fresh
    ones beside the fixture's)."""

    def __init__(self, server: ForkServer, context: dict[str, Any], cancel: threading.Event | None,
                 process: _Process | None = None, slot: str = "") -> None:
        self.server = server
        self.context = context
        self.cancel = cancel
        self.process = process or _Process()
        self.slot = slot

    @property
    def stopped(self) -> str | None:
        """Why it was stopped (the first reason), once it was: every later request raises it."""
        return self.process.stopped

    def view(self, slot: str) -> Child:
        """This process, its environment instances under `slot`, apart from this view's."""
        return Child(self.server, self.context, self.cancel, self.process, slot)

    def ask(self, message: Mapping[str, Any], *, what: str, timeout: float,
            fetch: Fetch | None = None) -> dict[str, Any]:
        """The child's answer to `message`, within `timeout` seconds. UserCodeError naming `what`
        (``environment Shop: cancel_order``) when it takes longer, ends or answers too much: the
        child is then killed and stays stopped; Interrupted when the run's cancel event is set;
        ValueError, before anything is sent, when `message` holds NaN or Infinity. A request the
        child's `ToolContext.http` sends meanwhile (``{"op": "http"}``) is answered by `fetch`."""
        process = self.process
        if process.stopped is not None:
            raise UserCodeError(process.stopped)
        ident, data = request({**message, "slot": self.slot} if self.slot else message)
        deadline = time.monotonic() + timeout
        try:
            line = self._line()
            if unasked := line.pending():
                raise _Garbled(unasked, "a line after its last answer")
            line.send(data, deadline, self.cancel)
            while (answer := line.receive(deadline, self.cancel, message["op"], ident)).get("op") == "http":
                line.send(wire(fetch(answer) if fetch is not None else {"refused": "no HTTP in this call"}), deadline,
                          self.cancel)
            return answer
        except TimedOut:
            why = f"{what} took longer than {timeout:g} s; stopped"
        except _TooLong:
            why = f"{what} answered with more than {_bytes(MESSAGE_CAP)}; stopped"
        except _Garbled as exc:
            why = (f"{what}: its process sent {exc}, which is not replio's protocol: the project's code wrote "
                   "onto the socket to replio, so nothing more it says can be trusted; stopped")
        except _Gone:
            why = f"{what} {_ended(self._reap(_EXITING))}"
        except BaseException as exc:  # interrupted, or the harness failed fetching (a replay that lacks the request)
            process.stopped = "the run was interrupted" if isinstance(exc, (Interrupted, KeyboardInterrupt)) else str(exc)
            self.close()
            raise
        process.stopped = why
        self.close()
        raise UserCodeError(why)

    def close(self) -> None:
        """Kill the child and what it started, if it was started."""
        self._reap()
        if self.process.line is not None:
            self.process.line.close()
            self.process.line = None

    def _reap(self, grace: float = 0.0) -> int | None:
        pid, self.process.pid = self.process.pid, None
        return self.server.reap(pid, grace) if pid is not None else None

    def _line(self) -> _Line:
        """The line to the child, forked now if it is not yet, and told its context (which it does not answer)."""
        process = self.process
        if process.line is None:
            try:
                process.pid, process.line = self.server.fork(self.cancel)
            except (_Gone, TimedOut, OSError) as exc:
                process.stopped = f"the process that runs the project's Python could not start this fixture's ({exc!r})"
                raise UserCodeError(process.stopped) from None
            process.line.send(wire({"op": "context", **self.context}), time.monotonic() + LOAD_TIMEOUT, self.cancel)
        return process.line
