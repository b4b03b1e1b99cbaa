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
``"tools": {"slugify": {"python": "tools/slug.py:slugify"}}``), loaded by `pyload`; and an
environment's methods are function tools too (see `environment`).
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, get_type_hints

from pydantic import create_model

from .._runtime.jsoncanon import canonical
from ..errors import ToolSetError
from .base import Tool, ToolContext, ToolFailure, model_tool
from .permissions import Category
from .schema import name_problem, schema_problem

__all__ = ["function_tool", "python_tool", "tool"]

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
                description: str | None, source: str) -> Tool:
    """The project-local function `ref` (``PATH.py:function``, relative to `base_dir`) as tool `name`;
    ToolSetError naming `where` when it cannot be loaded or typed."""
    from .pyload import load_object, signature_problem

    func = load_object(ref, base_dir, where)
    if not inspect.isfunction(func):
        raise ToolSetError(f"{where}: {ref!r} names a {type(func).__name__}, not a function")
    problem = signature_problem(func)
    if problem:
        raise ToolSetError(f"{where}: {ref}: {problem}")
    if not description and not inspect.cleandoc(func.__doc__ or ""):
        raise ToolSetError(f"{where}: {ref}: the function has no docstring to describe the tool; give it one, "
                           "or the tool a \"description\"")
    try:
        made = function_tool(func, name=name, description=description, category=category, source=source)
    except Exception as exc:  # an annotation pydantic cannot describe, a hint that does not resolve
        raise ToolSetError(f"{where}: {ref}: its parameters cannot be typed: {type(exc).__name__}: "
                           f"{str(exc).splitlines()[0]}; give each parameter a JSON-able type hint") from None
    return dataclasses.replace(made, fingerprint={"kind": "python", "python": ref})


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
    # a value inside that JSON has not is written as its repr (BFCL's long-context data holds `...`)
    return canonical(value, default=repr)
