"""The project's classes and functions as tools, and an instance's state: what the child process makes of them.

This runs in the child process (`childmain`), never in replio's: `class_tools` loads an
environment's class (`pyload`) and makes a tool of each public method (a name not starting with
``_``), described by its docstring and typed by its hints (`function.function_tool`), or, with
`methods`, of the methods it lists, as given; `path_tool` does the same for a Python tool's
function. Each raises ToolSetError naming the declaring file, the field and the name. `state_of`
is an instance's state: its public attributes as JSON.
"""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from .._runtime.jsoncanon import canonical
from .._runtime.wording import did_you_mean
from ..errors import ToolSetError
from .base import Tool, ToolContext
from .environment import EnvironmentDecl
from .function import function_tool
from .permissions import Category
from .pyload import load_object, signature_problem
from .schema import name_problem

__all__ = ["STATE_CAP", "class_tools", "path_tool", "state_of"]

#: Characters of JSON an environment's end state may take: it goes into the result and its golden.
STATE_CAP = 1_000_000


def class_tools(name: str, decl: EnvironmentDecl, *, base_dir: Path, where: str) -> tuple[type, dict[str, Tool]]:
    """The class `decl` declares as environment `name` (in the file or fixture `where` names), and
    the tools of its methods by name; ToolSetError naming it when the class cannot be loaded or one
    of its methods cannot be typed."""
    field = f"{where}: environments.{name}.python"
    cls = load_object(decl.python, base_dir, field)
    if not inspect.isclass(cls):
        raise ToolSetError(f"{field}: {decl.python!r} names a {type(cls).__name__}, not a class")
    public = _public_methods(cls)
    for method_name in decl.methods or {}:
        if method_name not in public:
            raise ToolSetError(f"{where}: environments.{name}.methods.{method_name}: {cls.__name__} has no public "
                               f"method {method_name!r}; {did_you_mean(method_name, public)}name one of: {', '.join(public)}")
    tools: dict[str, Tool] = {}
    for method_name, func in public.items():
        given = decl.methods.get(method_name) if decl.methods is not None else None
        if decl.methods is not None and given is None:
            continue
        tool_name = decl.prefix + method_name
        where_method = f"{field}: {cls.__name__}.{method_name}"
        problem = name_problem(tool_name) or (signature_problem(func) if given is None else None)
        if problem:
            raise ToolSetError(f"{where_method}: {problem}")
        try:
            made = function_tool(func, name=tool_name, description=given.description if given else None,
                                 parameters=given.parameters if given else None, category=decl.category,
                                 bind=_binder(name, method_name))
        except Exception as exc:  # no docstring, an annotation pydantic cannot describe, a hint that does not resolve
            raise ToolSetError(f"{where_method}: cannot be offered as a tool: {str(exc).splitlines()[0]}; give it "
                               "a docstring and JSON-able type hints, or a name starting with '_'") from None
        tools[tool_name] = dataclasses.replace(made, checks_schema=made.checks_schema and decl.check_arguments)
    if not tools:
        raise ToolSetError(f"{field}: {cls.__name__} has no public method to offer as a tool")
    return cls, tools


def _public_methods(cls: type) -> dict[str, Any]:
    """Its public functions, in the order its classes define them (a base's first)."""
    found: dict[str, Any] = {}
    for klass in reversed(cls.__mro__[:-1]):
        for name, value in vars(klass).items():
            if not name.startswith("_") and inspect.isfunction(value):
                found[name] = value
    return found


def _binder(env_name: str, method_name: str) -> Any:
    def bind(ctx: ToolContext) -> Any:
        instance = ctx.environments.get(env_name)
        if instance is None:  # a harness bug: the parent builds every environment it offers
            raise RuntimeError(f"environment {env_name!r} was not built for this fixture")
        return getattr(instance, method_name)

    return bind


def path_tool(name: str, ref: str, *, base_dir: Path, where: str, category: Category,
              description: str | None) -> Tool:
    """The project-local function `ref` (``PATH.py:function``, relative to `base_dir`) as tool `name`;
    ToolSetError naming `where` when it cannot be loaded or typed."""
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
        return function_tool(func, name=name, description=description, category=category)
    except Exception as exc:  # an annotation pydantic cannot describe, a hint that does not resolve
        raise ToolSetError(f"{where}: {ref}: its parameters cannot be typed: {type(exc).__name__}: "
                           f"{str(exc).splitlines()[0]}; give each parameter a JSON-able type hint") from None


def _own_repr(value: Any) -> str:
    """An object JSON cannot hold, as its class shows it (BFCL's file-system nodes); one without a
    `__repr__` of its own is refused: its default one holds a memory address, new on every run."""
    if type(value).__repr__ is object.__repr__:
        raise ValueError(f"a {type(value).__name__} has no JSON form and no repr of its own")
    return repr(value)


def _sets_sorted(value: Any, path: frozenset[int] = frozenset()) -> Any:
    """`value` with every set and frozenset in it (through mappings, sequences, dataclasses and
    pydantic models) a list sorted by its items' canonical JSON, so the state is the same whatever
    the hash seed; a cycle is left as it is (JSON refuses it, naming the attribute)."""
    if id(value) in path:
        return value
    inner = path | {id(value)}
    if isinstance(value, (set, frozenset)):
        items = [_sets_sorted(v, inner) for v in value]
        return sorted(items, key=lambda v: canonical(to_jsonable_python(v, fallback=_own_repr), default=repr))
    if isinstance(value, dict):
        return {k: _sets_sorted(v, inner) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_sets_sorted(v, inner) for v in value]
    if isinstance(value, BaseModel):
        return _sets_sorted(value.model_dump(), inner)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _sets_sorted({f.name: getattr(value, f.name) for f in dataclasses.fields(value)}, inner)
    return value


def state_of(name: str, instance: Any) -> dict[str, Any]:
    """An instance's state: its public attributes (names not starting with ``_``) as JSON, an object
    JSON cannot hold as its own `__repr__` shows it; ToolSetError naming the attribute that is not
    JSON (an object without a repr of its own, NaN, a cycle), or when the whole is more than
    `STATE_CAP` characters, which a result and its golden do not keep. Sets are sorted lists."""
    attributes = getattr(instance, "__dict__", None)
    if attributes is None:
        raise ToolSetError(f"environment {name!r}: {type(instance).__name__} keeps its attributes in __slots__, "
                           "not a __dict__, so its state cannot be read; drop __slots__")
    state: dict[str, Any] = {}
    for key, value in attributes.items():
        if key.startswith("_"):
            continue
        try:
            state[key] = to_jsonable_python(_sets_sorted(value), fallback=_own_repr)
            canonical(state[key], allow_nan=False)
        except ValueError as exc:  # pydantic's serialization error is one too
            raise ToolSetError(f"environment {name!r}: attribute {key!r} is not JSON ({str(exc).splitlines()[0]}); "
                               "keep it in an attribute whose name starts with '_', or make it text, a number, "
                               "a boolean, null, a list or a mapping") from None
    size = len(canonical(state))
    if size > STATE_CAP:
        raise ToolSetError(f"environment {name!r}: its state is {size:,} characters as JSON, more than the "
                           f"{STATE_CAP:,} a result keeps; keep bulky data in attributes whose names start with '_'")
    return state
