"""Python tools for plugins: the `tool` decorator turns a typed function into a `Tool`.

    from replio_replay import ToolContext, hookimpl, tool

    @tool(category="read")
    def lookup_order(order_id: str, ctx: ToolContext) -> str:
        \"\"\"Look up an order by its id and return its status.\"\"\"
        return ctx.http.get(f"https://shop.example/orders/{order_id}").text

    @hookimpl
    def register_tools(tools):
        tools["lookup_order"] = lookup_order

The name is the function's, the description its docstring, the parameters its type hints
(through pydantic: ``Annotated[int, Field(ge=1, description=...)]`` works), unless
`parameters` gives a JSON Schema (then the function takes the arguments as keywords and
they are checked against the schema). A parameter annotated `ToolContext` (or named ``ctx``)
receives the fixture's context: sandboxed paths and an HTTP client that is recorded. The
function returns text (other values are written as canonical JSON, a value inside them that JSON
has not as its repr) or raises `ToolFailure`.

A project may also name a function by path in a tool set or fixture (`python_tool`:
``"tools": {"slugify": {"python": "tools/slug.py:slugify"}}``); and an environment's methods
are function tools too (see `environment`). These never run in replio's process: the fork
server describes them (`pyobjects`) and each fixture's child calls them (`remote`), as
`child` says. Plugin tools, the plugin API like pytest's, run in replio's process.
"""

from __future__ import annotations

import copy
import functools
import inspect
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_type_hints

from pydantic import create_model

from .._runtime.jsoncanon import canonical
from .._runtime.surrogates import clean_text
from .base import InvalidArguments, Invoke, Tool, ToolContext, ToolFailure, model_tool
from .permissions import Category
from .schema import name_problem, schema_problem

if TYPE_CHECKING:
    from .child import ForkServer

__all__ = ["CodeFailure", "function_tool", "python_tool", "remote", "tool"]

#: What a bound tool calls at run time, given the fixture's context (an environment's method).
Bind = Callable[[ToolContext], Callable[..., Any]]


def tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    category: Category | str = Category.READ,
    parameters: Mapping[str, Any] | None = None,
) -> Any:
    """Make a `Tool` from a function; usable as ``@tool`` or ``@tool(category="web", ...)``."""

    def make(func: Callable[..., Any]) -> Tool:
        return function_tool(func, name=name, description=description, category=Category(category),
                             parameters=parameters)

    return make(fn) if fn is not None else make


def python_tool(name: str, ref: str, *, base_dir: Path, where: str, category: Category,
                description: str | None, source: str, server: ForkServer) -> Tool:
    """The project-local function `ref` (``PATH.py:function``, relative to `base_dir`) as tool `name`,
    described by `server` and called in each fixture's child (see `child`); ToolSetError naming
    `where` when it cannot be loaded or typed."""
    spec = {"kind": "function", "name": name, "python": ref, "base_dir": str(base_dir.absolute()), "where": where,
            "field": where, "category": category.value, "description": description}
    unit, described = server.describe(spec, f"{where}: {ref}")
    made = described["tool"]
    return Tool(name, made["description"], category, made["parameters"], remote(unit, name, f"Python tool {name} ({ref})"),
                source=source, checks_schema=made["checks_schema"], fingerprint={"kind": "python", "python": ref},
                touches_worktree=made["touches_worktree"], in_child=True)


def remote(unit: int, name: str, what: str) -> Invoke:
    """The `invoke` of tool `name` of the fork server's unit `unit`: the call is made in the fixture's
    child (`ToolContext.child`), within the context's timeout; `what` names it when the child is
    stopped (``environment Shop: cancel_order``), which ends the fixture (UserCodeError)."""

    def invoke(arguments: dict[str, Any], ctx: ToolContext) -> str:
        if ctx.child is None:  # a harness bug: the runner gives a fixture offering such a tool its child
            raise RuntimeError(f"tool {name!r} runs in a child process, and this fixture has none")
        from .childhttp import fetch

        message = {"op": "call", "unit": unit, "tool": name, "arguments": arguments}
        try:
            answer = ctx.child.ask(message, what=what, timeout=ctx.timeout, fetch=functools.partial(fetch, ctx))
        except ValueError:
            raise InvalidArguments("NaN and Infinity are no JSON values; pass numbers JSON can write") from None
        if "result" in answer:
            return clean_text(answer["result"])  # a lone surrogate (a file name os.listdir read) is U+FFFD
        if "invalid" in answer:
            raise InvalidArguments(answer["invalid"])
        if "raised" in answer:
            raise CodeFailure(name, *answer["raised"])
        raise ToolFailure(answer["failure"])

    return invoke


class CodeFailure(ToolFailure):
    """The project's code raised `kind` (any exception class, a `BaseException` too) in a child: the
    model reads ``Error: NAME failed: KIND: MESSAGE``, as for a plugin tool's bug."""

    def __init__(self, name: str, kind: str, message: str) -> None:
        super().__init__(f"{name} failed: {kind}: {message}")
        self.kind = kind
        self.message = message


def function_tool(
    func: Callable[..., Any], *, name: str | None, description: str | None, category: Category,
    parameters: Mapping[str, Any] | None = None, source: str | None = None, bind: Bind | None = None,
) -> Tool:
    """A `Tool` of `func`: named, described and typed by it unless told. With `bind`, `func` is an
    unbound method: its first parameter (``self``) is not offered, and each call goes to the
    callable `bind` returns for the fixture's context."""
    tool_name = name or func.__name__
    problem = name_problem(tool_name)
    if problem:
        raise ValueError(problem)
    text = description or inspect.cleandoc(func.__doc__ or "")
    if not text:
        raise ValueError(f"tool {tool_name!r} has no description")
    signature = inspect.signature(func)
    offered = list(signature.parameters.values())[1 if bind is not None else 0:]
    hints = get_type_hints(func, include_extras=True)
    ctx_name = next((p.name for p in offered if hints.get(p.name) is ToolContext or p.name == "ctx"), None)

    def call(arguments: dict[str, Any], ctx: ToolContext) -> str:
        extra = {ctx_name: ctx} if ctx_name else {}
        target = func if bind is None else bind(ctx)
        # a copy: a method may keep a list it is given and change it later (BFCL's TwitterAPI does),
        # which must not change the call as the trace and the conversation hold it
        return _as_text(target(**copy.deepcopy(arguments), **extra))

    source = source or f"python:{func.__module__}"
    if parameters is not None:
        problem = schema_problem(dict(parameters))
        if problem:
            raise ValueError(f"tool {tool_name!r}: {problem}")
        return Tool(tool_name, text, category, dict(parameters), call, source=source, checks_schema=True,
                    touches_worktree=ctx_name is not None)
    fields: dict[str, Any] = {}
    for param in offered:
        pname = param.name
        if pname == ctx_name or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        default = ... if param.default is param.empty else param.default
        fields[pname] = (hints.get(pname, Any), default)
    model = create_model(f"{tool_name}_params", __config__={"extra": "forbid"}, **fields)

    def run(parsed: Any, ctx: ToolContext) -> str:
        return call({k: getattr(parsed, k) for k in fields}, ctx)

    return model_tool(tool_name, text, category, model, run, source=source, touches_worktree=ctx_name is not None)


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is not None and not isinstance(value, (dict, list, tuple, int, float)):
        raise ToolFailure(f"the tool returned a {type(value).__name__}, not text or JSON")
    try:
        # a value inside that JSON has not is written as its repr (BFCL's long-context data holds `...`)
        return canonical(value, default=repr, allow_nan=False)
    except ValueError:
        raise ToolFailure("the tool returned a value JSON cannot hold (NaN, Infinity or a cycle); return "
                          "numbers JSON can write, or text saying what it means") from None
