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
function returns text (other values are written as canonical JSON) or raises `ToolFailure`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, get_type_hints

from pydantic import create_model

from .._runtime.jsoncanon import canonical
from .base import Tool, ToolContext, ToolFailure, model_tool
from .permissions import Category
from .schema import name_problem, schema_problem

__all__ = ["tool"]


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
        return _function_tool(func, name=name, description=description, category=Category(category),
                              parameters=parameters)

    return make(fn) if fn is not None else make


def _function_tool(
    func: Callable[..., Any], *, name: str | None, description: str | None, category: Category,
    parameters: Mapping[str, Any] | None,
) -> Tool:
    tool_name = name or func.__name__
    problem = name_problem(tool_name)
    if problem:
        raise ValueError(problem)
    text = description or inspect.cleandoc(func.__doc__ or "")
    if not text:
        raise ValueError(f"tool {tool_name!r} needs a description: give the function a docstring")
    signature = inspect.signature(func)
    hints = get_type_hints(func, include_extras=True)
    ctx_name = next((p for p in signature.parameters
                     if hints.get(p) is ToolContext or p == "ctx"), None)

    def call(arguments: dict[str, Any], ctx: ToolContext) -> str:
        extra = {ctx_name: ctx} if ctx_name else {}
        return _as_text(func(**arguments, **extra))

    source = f"python:{func.__module__}"
    if parameters is not None:
        problem = schema_problem(dict(parameters))
        if problem:
            raise ValueError(f"tool {tool_name!r}: {problem}")
        return Tool(tool_name, text, category, dict(parameters), call, source=source, checks_schema=True,
                    touches_worktree=ctx_name is not None)
    fields: dict[str, Any] = {}
    for pname, param in signature.parameters.items():
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
    try:
        return canonical(value)
    except (TypeError, ValueError):
        raise ToolFailure(f"the tool returned a {type(value).__name__}, not text or JSON") from None
