"""One fixture's MCP servers as tools: started live, replayed from its cassette, or both and compared.

Each server has a mode for the fixture. `live`: started in the worktree, its tools listed and
its calls made (and written down, when recording). `replay`: nothing is started; the tools
and each call's result come from the cassette's ``mcp:`` section, and a call the recording
does not hold ends the fixture (the conversation went elsewhere). `compare`: started live as
in `live`, and what it says is compared with the recording, every difference request drift.

A server that fails (it does not start, does not answer in time, dies) ends the fixture in
`error`: the failing call, and every call after, gives the model an ``Error:`` result, and
`failure` names the server, its command and the tail of its stderr. A call that fails because
the run was interrupted (its server is stopped under it) is no failure: the fixture is `cancelled`.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from ..._runtime.diffing import Change
from ...errors import CassetteError, McpError, ToolSetError
from ..base import Tool, ToolContext, ToolFailure
from ..permissions import Category
from ..schema import name_problem
from .client import McpConnection
from .config import McpServer
from .convert import result_text
from .recording import CallRecord, ServerRecord, call_drift, recordable, tools_drift

__all__ = ["McpTools", "Mode"]

Mode = Literal["live", "replay", "compare"]

#: The schema offered for a tool that sends none: an object of anything.
_ANY_OBJECT = {"type": "object", "properties": {}}


class McpTools:
    """The MCP tools of one fixture; `open` once, `close` always.

    `recorded` is the cassette's section (for `replay` and `compare`), `cassette` and `again`
    name the file and the command that records it again, for messages; `project` is what
    `{project}` stands for in a server's command and arguments.
    """

    def __init__(
        self,
        servers: Mapping[str, McpServer],
        modes: Mapping[str, Mode],
        *,
        root: Path,
        env: Mapping[str, str],
        recorded: Mapping[str, ServerRecord] | None = None,
        cassette: str = "",
        again: str = "",
        project: Path | None = None,
    ) -> None:
        self.servers = dict(servers)
        self.modes = dict(modes)
        self.root = root
        self.env = env
        self.recorded = dict(recorded or {})
        self.cassette = cassette
        self.again = again
        self.project = project
        #: What the live servers said, per server (the section a recording writes).
        self.records: dict[str, ServerRecord] = {}
        self.drift: list[Change] = []
        self.failures: list[str] = []
        self._connections: dict[str, McpConnection] = {}
        self._lock = threading.Lock()

    @property
    def recording(self) -> bool:
        """Whether every server ran live, so what they said can be written as the fixture's recording."""
        return bool(self.servers) and all(m == "live" for m in self.modes.values())

    def open(self) -> list[Tool]:
        """Start (or read) every server and list its tools; McpError or CassetteError when one cannot be."""
        tools: list[Tool] = []
        for name, server in self.servers.items():
            mode = self.modes.get(name, "live")
            if mode == "live":
                listed = self._start(name, server).tools
            else:
                recorded = self._recorded(name)
                if mode == "replay":
                    listed = recorded.tools
                else:
                    live = self._start(name, server)
                    self.drift.extend(tools_drift(name, recorded, live))
                    listed = live.tools
            tools.extend(self._tool(name, server, spec) for spec in listed)
        return tools

    def _start(self, name: str, server: McpServer) -> ServerRecord:
        connection = McpConnection.open(name, server, root=self.root, env=self.env, project=self.project)
        self._connections[name] = connection
        record = ServerRecord(connection.info, connection.list_tools())
        self.records[name] = record
        return record

    def _recorded(self, name: str) -> ServerRecord:
        recorded = self.recorded.get(name)
        if recorded is None:
            raise CassetteError(f"cassette {self.cassette} holds no recording of MCP server {name!r}; "
                                f"record it again with {self.again}")
        return recorded

    def _tool(self, server_name: str, server: McpServer, spec: dict[str, Any]) -> Tool:
        name = server.prefix + str(spec["name"])
        problem = name_problem(name)
        if problem:
            raise ToolSetError(f"MCP server {server_name!r} offers a tool providers would refuse: {problem}; "
                               "give the server a \"prefix\" or ask its authors to rename the tool")
        schema = spec.get("inputSchema")
        return Tool(
            name=name,
            description=str(spec.get("description") or ""),
            category=Category.MCP,
            parameters=schema if isinstance(schema, dict) else _ANY_OBJECT,
            invoke=functools.partial(self._invoke, server_name, str(spec["name"])),
            source=f"MCP server {server_name!r}",
            touches_worktree=False,  # its server does, when it runs live: started on the worktree
        )

    def _invoke(self, server_name: str, tool: str, arguments: dict[str, Any], ctx: ToolContext) -> str:
        if self.modes.get(server_name) == "replay":
            call = self._recorded(server_name).take(tool, arguments)
            if call is None:
                raise CassetteError(
                    f"the call {tool} {_short(arguments)} to MCP server {server_name!r} has no recording in "
                    f"{self.cassette}; the conversation went further than when it was recorded. Record it again "
                    f"with {self.again}"
                )
            return result_text(call.result)
        connection = self._connections[server_name]
        try:
            result = connection.call(tool, arguments)
        except McpError as exc:
            if ctx.cancel is not None and ctx.cancel.is_set():
                # The interrupt stopped the server under the call: the fixture is cancelled, not failed.
                raise ToolFailure("the run was interrupted") from None
            with self._lock:
                if str(exc) not in self.failures:
                    self.failures.append(str(exc))
            raise ToolFailure(str(exc)) from None
        live = CallRecord(tool, arguments, recordable(result))
        with self._lock:
            calls = self.records[server_name].calls
            calls.append(live)
            number = len(calls)
            if self.modes.get(server_name) == "compare":
                recorded = self._recorded(server_name).calls
                self.drift.extend(call_drift(server_name, number, recorded[number - 1]
                                             if number <= len(recorded) else None, live))
        return result_text(result)

    def finish(self) -> None:
        """Note, for compared servers, the recorded calls the live run did not make."""
        for name, mode in self.modes.items():
            if mode != "compare" or name not in self.records:
                continue
            made = len(self.records[name].calls)
            for number, call in enumerate(self._recorded(name).calls[made:], made + 1):
                self.drift.append(Change(f"mcp {name}: call {number} {call.tool}", "removed", call.arguments))

    def close(self, *, interrupted: bool = False) -> None:
        """Stop every server started (at once when the run was interrupted)."""
        for connection in self._connections.values():
            if interrupted:
                connection.kill()
            connection.close()
        self._connections.clear()


def _short(arguments: dict[str, Any]) -> str:
    import json

    text = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 200 else text[:197] + "..."
