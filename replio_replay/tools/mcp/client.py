"""The bridge to the official `mcp` SDK, and the only module that imports it.

`McpConnection.open` starts one server for one fixture (a stdio program in the fixture's
worktree, or a streamable-HTTP endpoint), initialises it and keeps the session open on an
event loop in a background thread, so the synchronous engine can list tools and call them.
Every step is bounded by the server's `timeout`; a failure is an `McpError` naming the server,
its command and the tail of what it wrote to stderr. A stdio server is confined as all the
user's code is (`_runtime.confine.wrap`: its worktree writable, the network kept), with an
environment built from scratch (`process.base_env` and what its config declares; the SDK adds
its few safe variables, `PATH`, `HOME`, `USER` and such); it runs in its own process group (the
SDK's doing) and carries a mark in its environment (`groups`): the group (in a PID namespace,
all it started with it), and every process carrying the mark (a daemon it started in a session
of its own), is killed when the connection closes, and at the latest when replio exits (the
event loop's thread is a daemon: it never holds the exit).
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any, TypeVar

from ...errors import McpError
from .config import HttpServer, StdioServer, argv, resolve_values, writable
from .stderr import StderrTail

__all__ = ["McpConnection"]

T = TypeVar("T")

#: Characters of a server's stderr an error message quotes.
_STDERR_TAIL = 600


class McpConnection:
    """One open session with one server."""

    def __init__(self, name: str, server: StdioServer | HttpServer) -> None:
        self.name = name
        self.server = server
        self._stack = ExitStack()
        self._portal: Any = None
        self._session: Any = None
        self._stderr: StderrTail | None = None  # a stdio server's
        self.info: dict[str, Any] = {}
        self.dead: str | None = None
        self.pids: list[int] = []  # the stdio server's process group (its leader's pid)
        self._token: str | None = None  # the mark in the stdio server's environment
        self.http_status: str | None = None  # the last error status an HTTP server answered
        self.project: Path | None = None

    @classmethod
    def open(cls, name: str, server: StdioServer | HttpServer, *, root: Path, env: Mapping[str, str],
             project: Path | None = None) -> McpConnection:
        """Start (or reach) and initialise the server; McpError when it cannot be done in time.

        A stdio server runs in `root` (the fixture's worktree); `{project}` in its command and
        arguments is `project`.
        """
        connection = cls(name, server)
        connection.project = project
        try:
            connection._start(root, env)
        except BaseException:
            connection.close()
            raise
        return connection

    def _start(self, root: Path, env: Mapping[str, str]) -> None:
        from mcp.client.session import ClientSession

        try:
            transport = self._transport(root, env)
        except ValueError as exc:  # a variable the config names is not set, a writable folder missing
            raise McpError(str(exc)) from None
        except FileNotFoundError:  # found missing before it is confined (see `confine.wrap`)
            raise self._failed(f"its command {self._command()!r} does not exist") from None
        except PermissionError:
            raise self._failed(f"its command {self._command()!r} is not executable") from None
        self._portal, thread = _start_portal(f"replio-mcp-{self.name}")
        self._stack.callback(_stop_portal, self._portal, thread)
        try:
            # Entered from this thread, run on the portal's loop, left when the connection closes.
            streams = self._portal.wrap_async_context_manager(transport)
            self._stack.callback(self._end_groups)  # after the SDK stopped the server: what is left of it
            read, write, *_ = self._stack.enter_context(streams)
            if self._stderr is not None:
                self._stderr.spawned()
            self._track(thread)
            self._session = self._stack.enter_context(
                self._portal.wrap_async_context_manager(ClientSession(read, write)))
            result = self._portal.call(self._bounded, self._session.initialize())
        except McpError:
            raise
        except FileNotFoundError:
            raise self._failed(f"its command {self._command()!r} does not exist") from None
        except TimeoutError:
            raise self._failed(f"it did not answer initialize within {self.server.timeout:g} s") from None
        except BaseException as exc:  # the server exited, or spoke nonsense
            raise self._failed(f"it did not start: {_reason(exc)}") from None
        info = result.server_info
        self.info = {"name": info.name, "version": info.version}

    def _track(self, thread: threading.Thread) -> None:
        """Note the server's process (a child of the loop's thread) so it is killed at exit at the latest."""
        from ..._runtime.groups import track_group

        if not isinstance(self.server, StdioServer) or thread.native_id is None:
            return
        try:
            with open(f"/proc/self/task/{thread.native_id}/children", encoding="ascii") as fh:
                self.pids = [int(p) for p in fh.read().split()]
        except OSError:  # not Linux: the SDK still ends the server when the connection closes
            return
        for pid in self.pids:
            track_group(pid, self._token)

    def _end_groups(self) -> None:
        from ..._runtime.groups import end_group, kill_marked

        for pid in self.pids:
            end_group(pid)
        if self._token is not None and not self.pids:  # its pid was not seen: what carries its mark
            kill_marked(self._token)

    def kill(self) -> None:
        """End the server's processes at once (an interrupted run does not wait for a clean close)."""
        self._end_groups()

    def _transport(self, root: Path, env: Mapping[str, str]) -> Any:
        where = f"mcp server {self.name}"
        if isinstance(self.server, StdioServer):
            from mcp.client.stdio import StdioServerParameters, stdio_client

            from ..._runtime.confine import confinement, wrap
            from ..._runtime.groups import marked
            from ..process import base_env

            server_env, self._token = marked(base_env(root, resolve_values(self.server.env, env, where)))
            # Confined as a command tool is, but with the network (it may be a remote service's
            # bridge): the SDK starts the confining program, which starts the server.
            command, *args = wrap(confinement(), argv(self.server, self.project), cwd=root, env=server_env,
                                  readable=[self.project] if self.project else [],
                                  writable=writable(self.server, self.project, where))
            params = StdioServerParameters(command=command, args=args, cwd=str(root), env=server_env)
            self._stderr = StderrTail()
            return stdio_client(params, errlog=self._stderr.errlog)
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        headers = resolve_values(self.server.headers, env, where)

        async def note_status(response: Any) -> None:  # the SDK's errors do not say what the server answered
            if response.status_code >= 400:
                self.http_status = f"HTTP {response.status_code} {response.reason_phrase}".strip()

        client = httpx2.AsyncClient(headers=headers, timeout=self.server.timeout,
                                    event_hooks={"response": [note_status]})
        return streamable_http_client(self.server.url, http_client=client)

    async def _bounded(self, awaitable: Awaitable[T]) -> T:
        import anyio

        with anyio.fail_after(self.server.timeout):
            return await awaitable

    def list_tools(self) -> list[dict[str, Any]]:
        """Every tool the server offers, as the protocol's JSON (paginated lists followed)."""
        from mcp_types import PaginatedRequestParams

        tools: list[dict[str, Any]] = []
        cursor = None
        for _ in range(100):
            params = PaginatedRequestParams(cursor=cursor) if cursor else None

            def listing(p: Any = params) -> Awaitable[Any]:
                return self._session.list_tools(params=p)

            result: Any = self._call(listing, "tools/list")
            tools.extend(t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in result.tools)
            cursor = result.next_cursor
            if not cursor:
                break
        return tools

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """One `tools/call`, its result as the protocol's JSON; McpError when the server is gone."""
        result = self._call(lambda: self._session.call_tool(tool, arguments), f"tools/call {tool}")
        return dict(result.model_dump(mode="json", by_alias=True, exclude_none=True))

    def _call(self, make: Callable[[], Awaitable[T]], what: str) -> T:
        if self.dead is not None:
            raise McpError(self.dead)
        try:
            return self._portal.call(self._bounded, make())  # type: ignore[no-any-return]
        except TimeoutError:
            raise self._failed(f"{what} got no answer within {self.server.timeout:g} s") from None
        except BaseException as exc:
            failure = self._failed(f"{what} failed: {_reason(exc)}")
            self.dead = str(failure)
            raise failure from None

    def _command(self) -> str:
        if isinstance(self.server, HttpServer):
            return self.server.url
        return " ".join([self.server.command, *self.server.args])

    def _failed(self, why: str) -> McpError:
        if self.http_status:
            why += f" (the server answered {self.http_status})"
        tail = self.stderr_tail()
        return McpError(f"mcp server {self.name} ({self._command()}): {why}" + (f"; its stderr ends: {tail}" if tail else ""))

    def stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        text = " ".join(self._stderr.text().split())
        if len(text) <= _STDERR_TAIL:
            return text
        # From the first whole word: the end of a word cut in two (a token's) could be a secret's.
        return "... " + text[-_STDERR_TAIL:].partition(" ")[2]

    def close(self) -> None:
        """End the session and the server (and all it started)."""
        try:
            self._stack.close()
        except BaseException:  # a server that dies noisily on the way out changes nothing now
            pass
        if self._stderr is not None:
            self._stderr.spawned()  # when it never started


def _start_portal(name: str) -> tuple[Any, threading.Thread]:
    """An event loop in a daemon thread, and the portal to call into it from this one.

    Not anyio's `start_blocking_portal`: a connection abandoned by an interrupted run would leave
    its generator to be closed while Python exits, which waits on the loop and can hang the exit.
    """
    import queue

    import anyio
    from anyio.from_thread import BlockingPortal

    ready: queue.SimpleQueue[Any] = queue.SimpleQueue()

    async def serve() -> None:
        async with BlockingPortal() as portal:
            ready.put(portal)
            await portal.sleep_until_stopped()

    def run() -> None:
        try:
            anyio.run(serve)
        except BaseException as exc:  # noqa: BLE001 - handed to the thread that waits for the portal
            ready.put(exc)

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    portal = ready.get()
    if isinstance(portal, BaseException):
        raise portal
    return portal, thread


def _stop_portal(portal: Any, thread: threading.Thread) -> None:
    try:
        portal.call(portal.stop, True)
    except RuntimeError:  # the loop has already ended
        pass
    thread.join(timeout=5)


def _reason(exc: BaseException) -> str:
    group = getattr(exc, "exceptions", None)  # an exception group (anyio's task groups raise them)
    if isinstance(group, (list, tuple)) and group:
        return "; ".join(_reason(e) for e in group)
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
