"""What a tool is, whatever its source: a name, a description, a category, a JSON Schema and a function.

Built-in tools, stubs and commands declared in a tool set, Python tools from plugins (and MCP
tools later) are all a `Tool`. A tool's `invoke` gets the model's arguments (a dict) and the
fixture's `ToolContext`; it returns the text for the model or raises `ToolFailure` (the
message goes back as ``Error: ...``). Tools whose arguments are described only by a JSON
Schema (`checks_schema`) are validated against it by the toolbox before they run.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError

from .modelschema import schema_of
from .permissions import Category
from .sandbox import Sandbox

if TYPE_CHECKING:
    import httpx

    from .child import Child

__all__ = ["BUILTIN", "CODE_ERRORS", "DEFAULT_TOOL_TIMEOUT", "InvalidArguments", "Invoke", "Params", "Tool", "ToolContext", "ToolFailure", "model_tool"]


class Params(BaseModel):
    """Base of every built-in tool's parameter model; unknown arguments are refused."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


class ToolFailure(Exception):
    """A tool could not do what the model asked; the message goes back as ``Error: ...``."""


#: Seconds one tool call may take unless the config (`tool_timeout`) or the fixture says less.
DEFAULT_TOOL_TIMEOUT = 30.0

#: What a plugin tool may raise that ends its call, not the run: it runs in a worker thread, where `sys.exit()`
#: or a `KeyboardInterrupt` is no signal to the process (a real Ctrl-C reaches the main thread, which cancels
#: the run). The project's own Python (environments, Python tools by path) runs in a child process, where
#: whatever it raises is the call's failure.
CODE_ERRORS = (Exception, SystemExit, KeyboardInterrupt)


@dataclass
class ToolContext:
    """What a tool may touch for one fixture: its sandboxed worktree, its HTTP transport, its limits.

    `timeout` bounds every call (the toolbox stops waiting after it; tools that start
    processes stop them by then); `cancel` is set when the run is interrupted; `network`
    says whether programs a tool starts may use the network (the fixture allows `web`);
    `web_allow` names the private hosts `http` may reach anyway (see `netguard`); `child` is the
    fixture's child process, where its environments live and its Python tools by path run (see
    `child`); in that child, `environments` holds the instances (see `pyobjects`).
    """

    sandbox: Sandbox
    transport: httpx.BaseTransport | None = None
    env: dict[str, str] = field(default_factory=dict)
    timeout: float = DEFAULT_TOOL_TIMEOUT
    cancel: threading.Event | None = None
    network: bool = True
    web_allow: tuple[str, ...] = ()
    environments: dict[str, Any] = field(default_factory=dict)  # name -> this fixture's (trial's) instance
    child: Child | None = None
    _client: httpx.Client | None = field(default=None, init=False, repr=False)

    @property
    def root(self) -> Path:
        """The worktree's real path (never shown to the model)."""
        return self.sandbox.root

    def path(self, relative: str) -> Path:
        """The real path for a worktree-relative path; `ToolFailure` if it would leave the worktree."""
        from .sandbox import SandboxError

        try:
            return self.sandbox.resolve(relative)
        except SandboxError as exc:
            raise ToolFailure(str(exc)) from None

    @property
    def http(self) -> httpx.Client:
        """An HTTP client sending through the fixture's transport, so what it fetches is recorded.

        Requests to this machine and to private addresses are refused (`ToolFailure`), after a
        redirect too, unless `web_allow` names them; a request the cassette replays is not
        checked again (it was when it was recorded).
        """
        if self._client is None:
            import httpx

            transport = _lent(self.transport) if self.transport is not None else None
            self._client = httpx.Client(transport=transport, timeout=30, follow_redirects=True,
                                        event_hooks={"request": [self._guard]})
        return self._client

    def _guard(self, request: httpx.Request) -> None:
        from .netguard import forbidden_reason

        replays = getattr(self.transport, "replays", None)
        if replays is not None and replays(request):
            return
        reason = forbidden_reason(request.url.host, self.web_allow)
        if reason is not None:
            raise ToolFailure(
                f"refused to fetch {request.url}: {reason}; a model may not reach the machine's or the "
                f"network's own services (allow it with \"web_allow\": [\"{request.url.host}\"] in "
                ".replio/config.json)"
            )

    def close(self) -> None:
        """Release the client made for this fixture (the transport itself belongs to the run)."""
        if self._client is not None:
            self._client.close()
            self._client = None


def _lent(inner: httpx.BaseTransport) -> httpx.BaseTransport:
    """The fixture's transport, lent to a client: closing the client must not close it."""
    import httpx

    class Lent(httpx.BaseTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            return inner.handle_request(request)

    return Lent()


Invoke = Callable[[dict[str, Any], ToolContext], str]

#: The source of the built-in tools.
BUILTIN = "built-in"


@dataclass(frozen=True)
class Tool:
    """One tool that can be offered to the model.

    `parameters` is the JSON Schema offered; `source` names where the tool came from
    (``built-in``, a tool-set file, ``plugin:NAME``, a fixture) for messages; `fingerprint`
    is whatever else decides its behaviour (a stub's results, a command's argv), so a
    tool set's digest changes when it does. `touches_worktree` is False for a tool that can
    neither see nor change the fixture's files (a stub; a Python tool not taking the
    `ToolContext`; an MCP tool, whose server is started on the worktree when it runs live), so
    a fixture offering only such tools need not have a worktree (see the runner's
    `_worktree_seen`). `title` is the name reports show, when it is
    not `name` (it is never offered to the model). `in_child`: the project's Python, called in the
    fixture's child process (`child`), which bounds the call by the context's timeout and cancel
    event itself, and stops the child (ending the fixture) when it overruns. `waits` is False for a
    tool whose call waits on nothing and ends in time bounded by what it declares (a stub: a lookup
    among its results, its `when` matchers RE2's, linear): the toolbox calls it in the fixture's
    own thread, there being nothing a deadline could cut short.
    """

    name: str
    description: str
    category: Category
    parameters: Mapping[str, Any]
    invoke: Invoke
    source: str = BUILTIN
    checks_schema: bool = False
    fingerprint: Any = None
    touches_worktree: bool = True
    title: str | None = None
    in_child: bool = False
    waits: bool = True

    def spec(self) -> dict[str, Any]:
        """The provider-neutral spec: name, description, JSON Schema parameters."""
        return {"name": self.name, "description": self.description, "parameters": dict(self.parameters)}


def model_tool(
    name: str,
    description: str,
    category: Category,
    params: type[BaseModel],
    run: Callable[[Any, ToolContext], str],
    *,
    source: str = BUILTIN,
    touches_worktree: bool = True,
) -> Tool:
    """A tool whose arguments are a pydantic model: validated by it, offered as its schema."""

    def invoke(arguments: dict[str, Any], ctx: ToolContext) -> str:
        try:
            parsed = params.model_validate(arguments)
        except ValidationError as exc:
            raise InvalidArguments(_brief(exc)) from None
        return run(parsed, ctx)

    return Tool(name, description, category, schema_of(params), invoke, source=source,
                touches_worktree=touches_worktree)


class InvalidArguments(ToolFailure):
    """The model's arguments do not fit the tool's parameters (the toolbox names the tool called)."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


def _brief(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors()
    ) + f" (got {json.dumps(exc.errors()[0].get('input'), default=str)[:120]})"
