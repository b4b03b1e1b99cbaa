"""Environments: a project's Python class whose public methods are tools and whose public attributes are its state.

Declared in a tool set or a fixture as
``"environments": {"shop": {"python": "envs/shop.py:Shop", "initial": {...}, "prefix": "shop_"}}``
(the path relative to the declaring file, loaded by `pyload`). Each public method (a name not
starting with ``_``) is offered as a tool under its name (after `prefix`), described by its
docstring and typed by its hints (see `function.function_tool`); with `methods`, only the
methods it lists are, each with its given description and JSON Schema (the model's arguments
checked against it unless `check_arguments` is false). A method that raises gives the
model an ``Error: ...`` result, and every call is bounded by the fixture's `tool_timeout`, as
any tool's is. The instance is ``Class(**initial)``, built once per fixture and trial (`build`)
and kept in the fixture's `ToolContext`, so every call of the conversation sees the earlier
ones' changes; its state is its public attributes as JSON (`state_of`). `reference_states` plays
a verifier's `state_from_calls` on fresh instances (`play`: on given ones, so a conversation's
turns can carry a reference's state from one turn to the next). Environments run in the harness process: a
replay runs them again.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, model_validator
from pydantic_core import to_jsonable_python

from .._runtime.deadline import Interrupted, TimedOut, run_until
from .._runtime.jsoncanon import canonical
from .._runtime.wording import did_you_mean
from ..errors import ToolSetError
from .base import CODE_ERRORS, Tool, ToolContext, ToolFailure
from .permissions import Category
from .sandbox import Sandbox
from .schema import name_problem

__all__ = ["STATE_CAP", "Environment", "EnvironmentDecl", "MethodDecl", "build", "environment", "play",
           "reference_states", "state_of"]

#: Characters of JSON an environment's end state may take: it goes into the result and its golden.
STATE_CAP = 1_000_000


class MethodDecl(BaseModel):
    """How one method is offered, instead of by its docstring and type hints."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    description: StrictStr = Field(min_length=1, description="What the model is told the tool does.")
    parameters: dict[str, Any] = Field(description="The JSON Schema of its arguments, which are checked against "
                                       "it and passed to the method as they are.")


class EnvironmentDecl(BaseModel):
    """An environment as declared in JSON."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    python: StrictStr = Field(description="PATH.py:Class, the path relative to the declaring file.")
    initial: dict[str, Any] = Field(default_factory=dict, description="Keyword arguments of the class: its "
                                    "state at the start of each fixture and trial.")
    prefix: StrictStr = Field("", max_length=40, description="Put before each method's name to make its tool's.")
    category: Category = Field(Category.READ, description="The permission category of its tools (they change "
                               "only the instance, in memory, so `read`, allowed by default).")
    methods: dict[StrictStr, MethodDecl] | None = Field(
        None, description="Offer only these methods, each described as given (default: every public method, "
        "described by its docstring and type hints).")
    check_arguments: StrictBool = Field(
        True, description="false (with `methods`): the model's arguments go to the method unchecked, as BFCL "
        "passes them; a call the method cannot take fails as the method does.")

    @model_validator(mode="after")
    def _unchecked_needs_methods(self) -> EnvironmentDecl:
        if not self.check_arguments and self.methods is None:
            raise ValueError("check_arguments: false applies to the schemas `methods` gives; a method typed by its "
                             "hints is always checked")
        return self


@dataclass(frozen=True)
class Environment:
    """A loaded environment: its class, initial state and the tools its methods make."""

    name: str
    cls: type
    initial: Mapping[str, Any]
    tools: tuple[Tool, ...]
    where: str


def environment(name: str, decl: EnvironmentDecl, *, base_dir: Path, where: str, source: str) -> Environment:
    """The environment `decl` declares as `name` (in the file or fixture `where` names); ToolSetError
    naming it when the class cannot be loaded or one of its methods cannot be typed."""
    from .function import function_tool
    from .pyload import load_object, signature_problem

    field = f"{where}: environments.{name}.python"
    problem = name_problem(name)
    if problem or "." in name:
        raise ToolSetError(f"{where}: environments.{name}: {problem or 'an environment name has no dot'}")
    cls = load_object(decl.python, base_dir, field)
    if not inspect.isclass(cls):
        raise ToolSetError(f"{field}: {decl.python!r} names a {type(cls).__name__}, not a class")
    tools: list[Tool] = []
    fingerprint = {"kind": "environment", "python": decl.python, "initial": decl.initial}
    if decl.methods is not None:
        fingerprint["methods"] = {k: v.model_dump() for k, v in decl.methods.items()}
    public = _public_methods(cls)
    for method_name in decl.methods or {}:
        if method_name not in public:
            raise ToolSetError(f"{where}: environments.{name}.methods.{method_name}: {cls.__name__} has no public "
                               f"method {method_name!r}; {did_you_mean(method_name, public)}name one of: {', '.join(public)}")
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
                                 parameters=given.parameters if given else None, category=decl.category, source=source,
                                 bind=_binder(name, method_name))
        except Exception as exc:  # no docstring, an annotation pydantic cannot describe, a hint that does not resolve
            raise ToolSetError(f"{where_method}: cannot be offered as a tool: {str(exc).splitlines()[0]}; give it "
                               "a docstring and JSON-able type hints, or a name starting with '_'") from None
        tools.append(dataclasses.replace(made, fingerprint=fingerprint, checks_schema=made.checks_schema and
                                         decl.check_arguments))
    if not tools:
        raise ToolSetError(f"{field}: {cls.__name__} has no public method to offer as a tool")
    return Environment(name, cls, dict(decl.initial), tuple(tools), field)


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
        if instance is None:  # a harness bug: the runner builds every environment it offers
            raise RuntimeError(f"environment {env_name!r} was not built for this fixture")
        return getattr(instance, method_name)

    return bind


def build(environments: Mapping[str, Environment], timeout: float,
          cancel: threading.Event | None = None) -> dict[str, Any]:
    """A fresh instance of each environment, ``Class(**initial)``, each within `timeout` seconds (the
    fixture's `tool_timeout`: a constructor is the user's code, as a call is); ToolSetError naming the
    one that fails or overruns, Interrupted once `cancel` is set."""
    instances = {}
    for name, env in environments.items():
        make = functools.partial(env.cls, **copy.deepcopy(dict(env.initial)))  # no instance shares another's
        try:
            instances[name] = run_until(make, timeout=timeout, cancel=cancel)
        except Interrupted:
            raise
        except TimedOut:
            raise ToolSetError(f"{env.where}: {env.cls.__name__}(**initial) took longer than {timeout:g} s "
                               "(the fixture's tool_timeout); make its constructor quick, or raise tool_timeout") \
                from None
        except CODE_ERRORS as exc:  # the user's code
            raise ToolSetError(f"{env.where}: {env.cls.__name__}(**initial) failed: {type(exc).__name__}: {exc}; "
                               "make `initial` match the class's parameters") from None
    return instances


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


def reference_states(environments: Mapping[str, Environment], calls: Sequence[tuple[str, dict[str, Any]]],
                     timeout: float) -> tuple[dict[str, Any] | str, list[str] | None]:
    """The states fresh instances reach through `calls` (tool name, arguments) in order, and the
    calls' results; or why they cannot (see `play`) and None."""
    try:
        instances = build(environments, timeout)
    except ToolSetError as exc:
        return str(exc), None
    results = play(environments, instances, calls, timeout)
    if isinstance(results, str):
        return results, None
    try:
        return {name: state_of(name, instance) for name, instance in instances.items()}, results
    except ToolSetError as exc:
        return str(exc), None


def play(environments: Mapping[str, Environment], instances: Mapping[str, Any],
         calls: Sequence[tuple[str, dict[str, Any]]], timeout: float) -> list[str] | str:
    """Make `calls` (tool name, arguments) in order on `instances`: each call's result (as the model
    would read it), or why they cannot be made (a call naming no environment's tool, one that
    fails or takes longer than `timeout`)."""
    by_name = {tool.name: tool for env in environments.values() for tool in env.tools}
    ctx = ToolContext(Sandbox(Path(os.devnull)), timeout=timeout, environments=dict(instances))
    results = []
    for i, (name, arguments) in enumerate(calls):
        tool = by_name.get(name)
        if tool is None:
            return (f"state_from_calls[{i}]: no environment has a tool {name!r} "
                    f"(they have: {', '.join(sorted(by_name)) or 'none'})")
        try:
            results.append(run_until(functools.partial(tool.invoke, dict(arguments), ctx), timeout=timeout))
        except TimedOut:
            return f"state_from_calls[{i}] ({name}): took longer than {timeout:g} s"
        except ToolFailure as exc:
            return f"state_from_calls[{i}] ({name}): {exc}"
        except CODE_ERRORS as exc:  # the user's code
            return f"state_from_calls[{i}] ({name}) raised {type(exc).__name__}: {exc}"
    return results
