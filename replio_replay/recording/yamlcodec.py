"""Fast, safe YAML in and out: libyaml's C parser with a lean constructor, literal blocks on the way out.

Cassettes are big, plain documents (thousands of scalars, no custom tags), read once per
fixture. Loading composes nodes in C, resolves each distinct plain scalar's tag once, and
builds plain data directly, aliases giving the same object twice. The cyclic GC is paused
while a document is built or written (see `_gc_paused`).

Sharing aliased objects keeps a load small, but whatever later writes the data out (the
serializer turns request bodies back into JSON text) expands every alias. So the load
itself bounds what the document would expand to (`MAX_EXPANDED` values, `MAX_DEPTH`
levels) and refuses a "billion laughs" file, naming it, before anything expands it; and
`refusal` lets a writer check what it wrote against the same bounds.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import yaml

from ..errors import CassetteError
from .limits import MAX_DEPTH, MAX_EXPANDED

__all__ = ["MAX_DEPTH", "MAX_EXPANDED", "dump_yaml", "load_yaml", "refusal"]

try:  # libyaml: a fast, safe loader and dumper
    from yaml import CSafeDumper as _Dumper
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - pure-Python fallback
    from yaml import SafeDumper as _Dumper  # type: ignore[assignment]
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

_STR = "tag:yaml.org,2002:str"
_SCALAR = yaml.ScalarNode

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


#: A string counts as one value per this many characters (and at least one): written out it
#: costs about as much as that many small values, so a long string aliased many times is
#: caught as surely as many aliased lists, and the bound caps the text written out.
_CHARS_PER_VALUE = 16

_BUSY = -1  # the weight of a collection still being built: reaching it again is a cycle


class _Refused(Exception):
    """A document refused while it is built; `_parse` makes it a CassetteError naming the file."""


def _scalar_weight(text: str) -> int:
    return 1 + len(text) // _CHARS_PER_VALUE


def _cycle(node: yaml.Node) -> _Refused:
    return _Refused(f"refers to itself through an alias at line {node.start_mark.line + 1}, "
                    "so it expands without end")


def _bounded(weight: int) -> int:
    if weight > MAX_EXPANDED:
        raise _Refused(f"expands its aliases beyond {MAX_EXPANDED:,} values")
    return weight


def _node_weight(node: yaml.Node, weights: dict[int, int]) -> int:
    """The expanded weight of a subtree the safe constructor builds (rare tags), memoised."""
    key = id(node)
    weight = weights.get(key)
    if weight is not None:
        if weight == _BUSY:
            raise _cycle(node)
        return weight
    if isinstance(node, yaml.ScalarNode):
        return _scalar_weight(node.value)
    weights[key] = _BUSY
    items = node.value if isinstance(node, yaml.SequenceNode) else [n for kv in node.value
                                                                    for n in kv]
    weight = weights[key] = _bounded(1 + sum(_node_weight(n, weights) for n in items))
    return weight


def _safe_construct(loader: _LeanLoader, node: yaml.Node) -> Any:
    """The safe constructor's value for `node`; a value its tag cannot hold names the line."""
    try:
        return loader.construct_object(node, deep=True)
    except (ArithmeticError, KeyError, TypeError, ValueError) as exc:  # `!!int x`, `!!bool no`
        raise _Refused(f"has a value its tag cannot hold at line {node.start_mark.line + 1} "
                      f"({node.tag.rsplit(':', 1)[-1]}: {exc})") from None


def _construct(loader: _LeanLoader, node: yaml.Node, seen: dict[int, Any], weights: dict[int, int],
               depth: int = 0) -> Any:
    """Plain data from a node tree; aliases (the same node twice) give the same object.

    Each collection's expanded weight (1, plus its children's; an alias weighs what its
    target does) is memoised in `weights` as it is built, so bounding it costs an addition
    per value, never an expansion. Scalar children are built inline, not by a call each:
    that saves more than the weighing costs.
    """
    key = id(node)
    known = seen.get(key)
    if known is not None:
        return known
    if node.__class__ is _SCALAR:
        return node.value if node.tag == _STR else _safe_construct(loader, node)
    if depth > MAX_DEPTH:
        raise _Refused(f"nests deeper than {MAX_DEPTH} levels at line {node.start_mark.line + 1}")
    depth += 1
    weight = 1
    if isinstance(node, yaml.SequenceNode):
        out: Any = []
        seen[key] = out
        weights[key] = _BUSY
        append = out.append
        for item in node.value:
            if item.__class__ is _SCALAR:
                append(item.value if item.tag == _STR else _safe_construct(loader, item))
                weight += 1 + len(item.value) // _CHARS_PER_VALUE
                continue
            append(_construct(loader, item, seen, weights, depth))
            w = weights[id(item)]
            if w == _BUSY:
                raise _cycle(item)
            weight += w
        weights[key] = _bounded(weight)
        return out
    if node.tag != "tag:yaml.org,2002:map":  # anything unusual: the safe constructor decides
        _node_weight(node, weights)
        return _safe_construct(loader, node)
    out = {}
    seen[key] = out
    weights[key] = _BUSY
    for k, v in node.value:
        if k.__class__ is _SCALAR:
            name = k.value if k.tag == _STR else _safe_construct(loader, k)
            weight += 1 + len(k.value) // _CHARS_PER_VALUE
        else:  # YAML allows a list or mapping as a key; neither can be one in Python or JSON
            raise _Refused(f"has a list or mapping as a key at line {k.start_mark.line + 1}; "
                           "keys must be plain values")
        if v.__class__ is _SCALAR:
            value = v.value if v.tag == _STR else _safe_construct(loader, v)
            weight += 1 + len(v.value) // _CHARS_PER_VALUE
        else:
            value = _construct(loader, v, seen, weights, depth)
            w = weights[id(v)]
            if w == _BUSY:
                raise _cycle(v)
            weight += w
        try:
            out[name] = value
        except TypeError:  # an unhashable scalar key (`? !!set {a}`)
            raise _Refused(f"has a key that cannot be one at line {k.start_mark.line + 1}; "
                           "keys must be plain values") from None
    weights[key] = _bounded(weight)
    return out


_given_weights: dict[int, tuple[Any, int]] = {}


def _data_weight(value: Any, memo: dict[int, int]) -> int:
    """The expanded weight of plain data, as `_construct` counts it."""
    if isinstance(value, str):
        return _scalar_weight(value)
    if not isinstance(value, (list, dict)):
        return 1
    weight = memo.get(id(value))
    if weight is None:
        items = value if isinstance(value, list) else [x for kv in value.items() for x in kv]
        weight = memo[id(value)] = 1 + sum(_data_weight(x, memo) for x in items)
    return weight


def _given_weight(value: Any) -> int:
    """The weight of a value given to `load_yaml` (the shared tool list): computed once per object.

    The cache holds the object itself, so its id cannot be reused by another while cached.
    """
    cached = _given_weights.get(id(value))
    if cached is not None and cached[0] is value:
        return cached[1]
    weight = _data_weight(value, {})
    if len(_given_weights) >= 64:
        _given_weights.clear()
    _given_weights[id(value)] = (value, weight)
    return weight


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
    """Parse YAML safely; a syntax error names the file and line, and so does a document that
    would expand beyond `MAX_EXPANDED` values, nest deeper than `MAX_DEPTH` levels, refer to
    itself, or hold a key or tagged value that plain data cannot.

    `given` supplies the values of top-level keys already parsed elsewhere: the document's
    node for such a key (a placeholder) and every alias of it become the given object.
    """
    with _gc_paused():  # around the call, so the node tree is freed before the GC resumes
        return _parse(text, source, given or {})


def refusal(text: str) -> str | None:
    """Why `load_yaml` would refuse `text`, as a phrase (`expands its aliases beyond ...`), or
    None when it loads: a writer checks with it that what it writes reads back."""
    with _gc_paused():
        try:
            _build(text, {})
        except _Refused as exc:
            return str(exc)
        except RecursionError:
            return "nests too deeply to load"
        except yaml.YAMLError as exc:
            return f"does not parse ({str(exc).splitlines()[0]})"
    return None


def _build(text: str, given: Mapping[str, Any]) -> Any:
    """The data of `text`, bounded; _Refused, RecursionError or yaml.YAMLError when it cannot be."""
    loader = _LeanLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        seen: dict[int, Any] = {}
        weights: dict[int, int] = {}
        if given and isinstance(node, yaml.MappingNode):
            for k, v in node.value:  # the placeholder, and so its aliases, become the given object
                if isinstance(k, yaml.ScalarNode) and k.value in given:
                    seen[id(v)] = given[k.value]
                    weights[id(v)] = _given_weight(given[k.value])
        return _construct(loader, node, seen, weights)
    finally:
        loader.dispose()


def _parse(text: str, source: str, given: Mapping[str, Any]) -> Any:
    try:
        return _build(text, given)
    except _Refused as exc:
        raise CassetteError(
            f"cassette {source} {exc}; a recording never does this, so the file was edited by hand "
            "or is not a cassette: fix it, or delete it and record again"
        ) from None
    except RecursionError:  # a rare tag nesting deeply, built by the safe constructor
        raise CassetteError(
            f"cassette {source} nests too deeply to load; fix it, or delete it and record again"
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise CassetteError(f"cassette {source} does not parse{where}: {problem}") from None
