"""Fast, safe YAML in and out: libyaml's C parser with a lean constructor, literal blocks on the way out.

Cassettes are big, plain documents (thousands of scalars, no custom tags), read once per
fixture. Loading composes nodes in C, resolves each distinct plain scalar's tag once, and
builds plain data directly, aliases giving the same object twice. The cyclic GC is paused
while a document is built or written (see `_gc_paused`).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import yaml

from ..errors import CassetteError

__all__ = ["dump_yaml", "load_yaml"]

try:  # libyaml: a fast, safe loader and dumper
    from yaml import CSafeDumper as _Dumper
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - pure-Python fallback
    from yaml import SafeDumper as _Dumper  # type: ignore[assignment]
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

_STR = "tag:yaml.org,2002:str"

_gc_lock = threading.Lock()
_gc_pausers = 0
_gc_was_enabled = False


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while a cassette is built or written.

    The collector runs every few hundred container allocations whether or not they can form
    cycles, and a cassette allocates thousands that all survive: measured on a replay, the
    collections they set off (full ones included, which walk every object in the process)
    cost about as much as parsing. Cassette data is plain and acyclic, so nothing is lost by
    pausing. Counting the threads inside makes it safe under --jobs: the last one out
    restores what the first one in found.
    """
    global _gc_pausers, _gc_was_enabled
    with _gc_lock:
        if _gc_pausers == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pausers += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pausers -= 1
            if _gc_pausers == 0 and _gc_was_enabled:
                gc.enable()


class _LeanLoader(_Loader):
    """The safe loader, with tag resolution memoised: cassettes repeat the same keys thousands of times."""

    _resolved: dict[str, str] = {}

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is yaml.ScalarNode:
            if not implicit[0]:  # quoted: always a string
                return _STR
            tag = self._resolved.get(value)
            if tag is None:
                tag = super().resolve(kind, value, implicit)
                if len(self._resolved) < 50_000:
                    self._resolved[value] = tag
            return tag
        return super().resolve(kind, value, implicit)


def _construct(loader: _LeanLoader, node: yaml.Node, seen: dict[int, Any]) -> Any:
    """Plain data from a node tree; aliases (the same node twice) give the same object."""
    known = seen.get(id(node))
    if known is not None:
        return known
    if isinstance(node, yaml.ScalarNode):
        return node.value if node.tag == _STR else loader.construct_object(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        out: Any = []
        seen[id(node)] = out
        out.extend(_construct(loader, item, seen) for item in node.value)
        return out
    if node.tag != "tag:yaml.org,2002:map":  # anything unusual: the safe constructor decides
        return loader.construct_object(node, deep=True)
    out = {}
    seen[id(node)] = out
    for key, value in node.value:
        out[_construct(loader, key, seen)] = _construct(loader, value, seen)
    return out


class _ReadableDumper(_Dumper):
    """Multi-line strings as literal blocks, so recorded tool output reads as text."""


def _str(dumper: yaml.Dumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value and not any(c in value for c in "\r\t\x0b\x0c") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_ReadableDumper.add_representer(str, _str)  # type: ignore[arg-type]


def dump_yaml(data: Any) -> str:
    """Block-style YAML in the mapping order given, multi-line text as literal blocks, repeated objects aliased."""
    with _gc_paused():
        return yaml.dump(data, Dumper=_ReadableDumper, sort_keys=False, allow_unicode=True, width=100)


def load_yaml(text: str, source: str, given: Mapping[str, Any] | None = None) -> Any:
    """Parse YAML safely; a syntax error names the file and line.

    `given` supplies the values of top-level keys already parsed elsewhere: the document's
    node for such a key (a placeholder) and every alias of it become the given object.
    """
    with _gc_paused():  # around the call, so the node tree is freed before the GC resumes
        return _parse(text, source, given or {})


def _parse(text: str, source: str, given: Mapping[str, Any]) -> Any:
    loader = _LeanLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        seen: dict[int, Any] = {}
        if given and isinstance(node, yaml.MappingNode):
            seen.update((id(v), given[k.value]) for k, v in node.value if k.value in given)
        return _construct(loader, node, seen)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise CassetteError(f"cassette {source} does not parse{where}: {problem}") from None
    finally:
        loader.dispose()


