"""The process that runs the project's Python: the fork server, and each fixture's child forked from it.

Started by `child.ForkServer` (``main(CONTROL, PASSING)``, in a session of its own), it reads one
JSON request a line on the socket CONTROL and answers each with one line:

- ``{"op": "describe", "unit": N, "spec": {...}}``: load an environment's class (``"kind":
  "environment"``) or a Python tool's function (``"kind": "function"``) and make its tools
  (`pyobjects`), kept as unit N: ``{"description": {...}}``, or ``{"problem": "..."}`` whatever
  the module raises (a `BaseException` too), or when its import left threads running (``"threads":
  [names]`` beside the problem: a fork copies no thread, so a child could wait for ever on work
  given to them, and replio starts a new server without them);
- ``{"op": "fork"}``, one end of a socket pair passed on PASSING beforehand: fork a child serving
  that socket, in a session of its own: ``{"pid": N}``. The child reads replio's first line (its
  context, below) and, walled (see `main`), forks once more into namespaces of its own
  (`_runtime.nested.own_namespaces`), whose first process serves the socket and dies with the
  child; either way the one that serves is non-dumpable, so another fixture's child (same user,
  no capabilities) cannot read it through ``/proc``;
- ``{"op": "reap", "pid": N, "grace": G}``: kill that child with its group, after at most G
  seconds (default 0) for it to end on its own, and wait for it: ``{"status": S}``, an exit
  status or minus the signal. The server kills it, not replio: the pid is the server's, which
  in a PID namespace of its own is not replio's.

A fixture's child has every unit the server had described when it forked. It is told its context
first (``{"op": "context", ...}``: the worktree and limits its tools' `ToolContext` gets; not
answered), then answers the requests below, each for its ``"slot"`` (default ``""``: the
fixture's own instances; a verifier's reference calls are made on instances of another slot):

- ``{"op": "build", "env", "unit", "initial"}``: ``Class(**initial)`` kept as environment `env`:
  ``{}``, or ``{"problem": ...}``;
- ``{"op": "call", "unit", "tool", "arguments"}``: ``{"result": text}``, ``{"failure": ...}`` (a
  `ToolFailure`: the model reads ``Error: ...``), ``{"raised": [class name, message]}`` (whatever
  else the code raised, a `BaseException` too) or ``{"invalid": ...}`` (the arguments do not fit
  its hints);
- ``{"op": "state", "env"}``: ``{"state": {...}}``, or ``{"problem": ...}``.

In the middle of a call, the child may send ``{"op": "http", ...}`` and read replio's answer: a
request of the call's `ctx.http` (see `childhttp`). Nothing here bounds the project's code: replio
does, and kills a child that overruns or ends. A process the project's code forks keeps no line to
replio: its end of the socket is /dev/null.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import json
import os
import shutil
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Union

from .._runtime.confine import non_dumpable
from .._runtime.nested import follow, own_namespaces, server_namespaces
from ..errors import ToolSetError
from .base import InvalidArguments, Tool, ToolContext, ToolFailure
from .child import wire
from .environment import EnvironmentDecl
from .permissions import Category
from .pyobjects import class_tools, path_tool, state_of
from .sandbox import Sandbox, SandboxError

if TYPE_CHECKING:
    import httpx

__all__ = ["main"]


@dataclass(frozen=True)
class _Class:
    """An environment's class and its tools by name; `where` names its declaration."""

    cls: type
    tools: dict[str, Tool]
    where: str


Unit = Union[_Class, Tool]


def main(argv: list[str]) -> None:
    """Serve replio's requests on the sockets whose descriptors `argv` holds, until it closes CONTROL.

    `argv` is CONTROL, PASSING, the folder the children's temp folders are made in, and how the
    children are walled off: ``nest`` (this process makes its namespaces first:
    `nested.server_namespaces`; then as ``own``), ``own`` (each child makes namespaces of its
    own: `nested.own_namespaces`) or ``none`` (no namespaces: each child is non-dumpable).
    """
    control = socket.socket(fileno=int(argv[0]))
    passing = socket.socket(fileno=int(argv[1]))
    walls = _Walls(argv[2], argv[3] != "none")
    if argv[3] == "nest":
        server_namespaces()
    units: dict[int, Unit] = {}
    for line in control.makefile("rb"):
        message = json.loads(line)
        if message["op"] == "fork":
            answer: dict[str, Any] = {"pid": _fork(control, passing, units, walls)}
        elif message["op"] == "reap":
            answer = {"status": _reap(message["pid"], float(message.get("grace", 0)), walls)}
        else:
            answer = _describe(units, message)
        control.sendall(wire({**answer, "id": message.get("id")}))


def _describe(units: dict[int, Unit], message: dict[str, Any]) -> dict[str, Any]:
    spec = message["spec"]
    try:
        unit = _unit(spec)
        answer = {"description": _description(unit)}
        wire(answer)  # a schema holding NaN, say
    except ToolSetError as exc:
        return {"problem": str(exc)}
    except BaseException as exc:  # the project's code, whatever it raises
        return {"problem": f"{spec['field']}: loading {spec['python']} failed: {type(exc).__name__}: {exc}; "
                           "fix the module"}
    threads = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
    if threads:
        return {"threads": threads, "problem": (
            f"{spec['field']}: loading {spec['python']} started threads at import ({', '.join(threads[:4])}"
            f"{', ...' if len(threads) > 4 else ''}) that still run; each fixture's process is forked from the one "
            "that imported it, and a fork copies no thread, so work given to them there (a ThreadPoolExecutor's, "
            "say) would never be done. Start them when the class is made or on the first call, not at import")}
    units[message["unit"]] = unit
    return answer


def _unit(spec: dict[str, Any]) -> Unit:
    base_dir = Path(spec["base_dir"])
    if spec["kind"] == "function":
        return path_tool(spec["name"], spec["python"], base_dir=base_dir, where=spec["where"],
                         category=Category(spec["category"]), description=spec["description"])
    decl = EnvironmentDecl.model_validate(spec["decl"])
    cls, tools = class_tools(spec["name"], decl, base_dir=base_dir, where=spec["where"])
    return _Class(cls, tools, spec["field"])


def _description(unit: Unit) -> dict[str, Any]:
    if isinstance(unit, Tool):
        return {"tool": _tool(unit)}
    return {"class": unit.cls.__name__, "tools": [_tool(t) for t in unit.tools.values()]}


def _tool(tool: Tool) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "parameters": dict(tool.parameters),
            "checks_schema": tool.checks_schema, "touches_worktree": tool.touches_worktree}


@dataclass(frozen=True)
class _Walls:
    """How each child is walled off: in namespaces of its own (`own`) or not, and where the temp
    folders of their own are made, one per child, named by its pid (removed when it is reaped)."""

    temps: str
    own: bool

    def temp(self, pid: int) -> str:
        return os.path.join(self.temps, str(pid))


def _reap(pid: int, grace: float, walls: _Walls) -> int | None:
    """Kill child `pid`'s group, once it has had `grace` seconds to end (a child whose line closed
    is ending: its own exit status says more than our signal), and wait for it."""
    deadline = time.monotonic() + grace
    try:
        while time.monotonic() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            time.sleep(0.01)
        else:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
    except ChildProcessError:  # not ours (an earlier server's), or reaped already
        return None
    finally:
        shutil.rmtree(walls.temp(pid), ignore_errors=True)
    return os.waitstatus_to_exitcode(status)


def _fork(control: socket.socket, passing: socket.socket, units: dict[int, Unit], walls: _Walls) -> int:
    """Fork a fixture's child on the socket passed on `passing`; its pid (in the child: never returns)."""
    _, fds, _, _ = socket.recv_fds(passing, 1, 1)
    gc.freeze()  # what the server built is only read by its children: the collector leaves it (and its pages) alone
    pid = os.fork()
    if pid:
        os.close(fds[0])
        return pid
    code = 0
    try:
        os.setsid()  # its own session and group: killed as one, with all it forks
        # Closed for good: `control.close()` would keep the descriptor open while the server's
        # reader of it (a makefile) lives, and the project's code could write onto the server's line.
        os.close(control.detach())
        os.close(passing.detach())
        os.set_inheritable(fds[0], False)
        channel = socket.socket(fileno=fds[0])
        requests = channel.makefile("rb")
        context = json.loads(requests.readline())  # replio's first line, the fixture's: its worktree
        inner = _walled(context, walls) if walls.own else None
        if inner:  # this process stands for the namespace's first process, which dies with it
            os.close(channel.detach())
            code = follow(inner)
        else:
            if inner is None:
                non_dumpable()  # another fixture's child cannot read its memory, descriptors or environment
            _serve(channel, requests, context, units)
    except BaseException:  # replio's line broke, or the walls could not be put up: nothing left to answer
        code = 1
    finally:
        os._exit(code)  # a forked child never runs the server's exit


def _walled(context: dict[str, Any], walls: _Walls) -> int | None:
    """`nested.own_namespaces` for this child, writable in its worktree and a temp folder of its own."""
    temp = walls.temp(os.getpid())
    os.mkdir(temp, 0o700)
    try:
        inner = own_namespaces([context["root"]], temp)
    except OSError as exc:
        print(f"replio: this fixture's process could not be walled off from the others ({exc}); it ends",
              file=sys.stderr, flush=True)
        raise
    if inner is None:
        os.rmdir(temp)  # no namespaces: its temp folder is replio's
    return inner


class _Context(ToolContext):
    """A call's `ToolContext` in the child: its `http` sends each request to replio (see `childhttp`)."""

    line: tuple[socket.socket, IO[bytes]] | None = None
    asked: int | None = None  # the number of the request being answered, which its http requests carry too

    @property
    def http(self) -> httpx.Client:
        if self._client is None:
            from .childhttp import relayed_client

            assert self.line is not None
            channel = self.line[0]
            self._client = relayed_client(lambda m: channel.sendall(wire({**m, "id": self.asked})), self.line[1])
        return self._client


def _serve(channel: socket.socket, requests: IO[bytes], context: dict[str, Any], units: dict[int, Unit]) -> None:
    os.register_at_fork(after_in_child=functools.partial(_unplug, channel.fileno()))
    slots: dict[str, _Context] = {}  # each slot's context, holding its environment instances
    for line in requests:
        message = json.loads(line)
        slot = message.get("slot", "")
        if slot not in slots:
            slots[slot] = _Context(Sandbox(Path(context["root"])), timeout=context["timeout"],
                                   network=context["network"], web_allow=tuple(context["web_allow"]))
            slots[slot].line = channel, requests
        slots[slot].asked = message.get("id")
        channel.sendall(wire({**_answer(message, units, slots[slot]), "id": message.get("id")}))


def _unplug(fd: int) -> None:
    """In a process the project's code forked: its copy of replio's line becomes /dev/null, so it
    never answers replio, nor keeps the line open once the child has ended."""
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, fd, inheritable=False)
    os.close(null)


def _answer(message: dict[str, Any], units: dict[int, Unit], ctx: ToolContext) -> dict[str, Any]:
    op = message["op"]
    if op == "call":
        return _call(units[message["unit"]], message["tool"], message["arguments"], ctx)
    env = message["env"]
    if op == "state":
        try:
            return {"state": state_of(env, ctx.environments[env])}
        except ToolSetError as exc:
            return {"problem": str(exc)}
        except BaseException as exc:  # a `__repr__` of the project's
            return {"problem": f"environment {env!r}: reading its state failed: {type(exc).__name__}: {exc}"}
    unit = units[message["unit"]]
    assert isinstance(unit, _Class)
    try:
        ctx.environments[env] = unit.cls(**message["initial"])
    except BaseException as exc:  # the project's code
        return {"problem": f"{unit.where}: {unit.cls.__name__}(**initial) failed: {type(exc).__name__}: {exc}; "
                           "make `initial` match the class's parameters"}
    return {}


def _call(unit: Unit, name: str, arguments: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """One call, answered as the toolbox words each outcome for the model."""
    tool = unit if isinstance(unit, Tool) else unit.tools[name]
    try:
        return {"result": tool.invoke(arguments, ctx)}
    except InvalidArguments as exc:
        return {"invalid": exc.problem}
    except (ToolFailure, SandboxError) as exc:
        return {"failure": str(exc)}
    except OSError as exc:
        return {"failure": f"{name} failed: {exc.strerror or type(exc).__name__}"}
    except BaseException as exc:  # the project's code, whatever it raises
        return {"raised": [type(exc).__name__, str(exc)]}
