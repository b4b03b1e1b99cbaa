"""Project Python code loaded by path: ``PATH.py:Name``, relative to the file that declares it.

A tool set's or a fixture's ``"python": "envs/shop.py:Shop"`` names a module file beside the
declaring file and a name in it (a class for an environment, a function for a Python tool).
This runs in the fork server (`childmain`), never in replio's process. The module is loaded
from its file with importlib, without packaging and without touching `sys.path`: once, under a
name unique to its real path (``replio_local_<digest>``), so two files both called ``shop.py``
never share a module. Every problem (no such file, a module that raises anything at all while it
is imported, no such name, a signature that cannot be typed) is a `ToolSetError` naming the
declaring file, the field and the name, so a broken tool set stops before any request and a
broken fixture is listed as a problem.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ToolSetError

__all__ = ["load_object", "signature_problem", "split_ref"]


def split_ref(ref: str) -> tuple[str, str] | None:
    """(`PATH.py`, `Name`) of ``PATH.py:Name``, or None when `ref` is not of that form."""
    path, sep, name = ref.rpartition(":")
    if not sep or not path.endswith(".py") or not name.isidentifier():
        return None
    return path, name


def load_object(ref: str, base_dir: Path, where: str) -> Any:
    """The object `ref` (``PATH.py:Name``, PATH relative to `base_dir`) names; ToolSetError naming
    `where` (the declaring file and field) when it cannot be had."""
    parts = split_ref(ref)
    if parts is None:
        raise ToolSetError(f"{where}: {ref!r} is not a Python reference; write it as PATH.py:Name, the path "
                           "relative to this file (say \"envs/shop.py:Shop\")")
    relative, name = parts
    path = (base_dir / relative).resolve()
    if not path.is_file():
        raise ToolSetError(f"{where}: no Python file at {path} (from {relative!r}, relative to {base_dir}); "
                           "the path is relative to the file that declares it")
    module = _load_module(path, where)
    try:
        return getattr(module, name)
    except AttributeError:
        raise ToolSetError(f"{where}: {path.name} has no {name!r}; define it there or fix the name after ':'") from None
    except BaseException as exc:  # a module `__getattr__` that imports more (BFCL's classes): the user's code
        raise ToolSetError(f"{where}: getting {name!r} from {path} failed: {type(exc).__name__}: {exc}; fix the "
                           "module or install what it imports") from None


def _load_module(path: Path, where: str) -> Any:
    module_name = f"replio_local_{hashlib.sha256(str(path).encode()).hexdigest()[:16]}"
    if module_name in sys.modules:  # another class or function of the same file
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ToolSetError(f"{where}: {path} cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and pydantic look their module up by name
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:  # the user's code, whatever it raises: one line naming it
        sys.modules.pop(module_name, None)
        raise ToolSetError(f"{where}: importing {path} failed: {type(exc).__name__}: {exc}; fix the module") from None
    return module


def signature_problem(func: Callable[..., Any]) -> str | None:
    """Why the parameters of `func` cannot be offered as a JSON Schema (``*args``, ``**kwargs``), or None."""
    for param in inspect.signature(func).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            star = "*" if param.kind is param.VAR_POSITIONAL else "**"
            return (f"parameter {star}{param.name} cannot be described to a model; name each parameter "
                    "and give it a type hint")
    return None
