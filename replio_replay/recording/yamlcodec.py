"""Safe YAML in and out through PyYAML (libyaml's C loader and dumper where installed), bounded on the way in.

Aliases let a document share one object many times, and whatever later writes the data out
(the serializer turns request bodies back into JSON text) expands every alias. So a load first
composes the node tree (libyaml's parser), then weighs what it would expand to (`MAX_EXPANDED`
values, `MAX_DEPTH` levels, no alias cycles) as it builds the data, and refuses a "billion
laughs" file, naming it, before anything expands it: the data built shares each aliased object,
as PyYAML's does, so building it costs what the file holds, not what it expands to. `refusal`
lets a writer check what it wrote against the same bounds.

The build (`_Builder`) is PyYAML's safe construction of plain data (`str`, `map` and `seq` nodes
built directly; every other scalar tag through the loader's own constructor), done in the same walk
as the weighing: PyYAML's generic `construct_document` (its per-node bookkeeping for recursive
objects and generator constructors) took as long as libyaml's parse of a cassette. A document using
anything else (a merge key `<<`, `!!set`, `!!omap`, a tag on a collection) is weighed and built by
PyYAML's own constructor: a person may write that by hand; a recording never does.
"""

from __future__ import annotations

from collections.abc import Callable
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

#: A scalar counts as one value per this many characters (and at least one): written out it
#: costs about as much as that many small values, so a long string aliased many times is
#: caught as surely as many aliased lists, and the bound caps the text written out.
_CHARS_PER_VALUE = 16

_BUSY = -1  # the weight of a collection still being weighed: reaching it again is a cycle


class _Refused(Exception):
    """A document refused before or while it is built; `load_yaml` makes it a CassetteError naming the file."""


class _BoundedLoader(_Loader):
    """The safe loader; a value its tag cannot hold (`!!int x`) is refused naming its line."""

    def resolve(self, kind: type[yaml.Node], value: str, implicit: tuple[bool, bool]) -> str:
        """PyYAML's `BaseResolver.resolve` for a loader without path resolvers nor catch-all implicit
        ones, as the safe loader is: libyaml's composer calls it for every node, and the general
        method's list building and path checks were a tenth of a cassette's composition."""
        if kind is yaml.ScalarNode:
            if implicit[0]:  # a plain scalar: the implicit resolvers for its first character, in order
                for tag, pattern in _IMPLICIT.get(value[:1], ()):
                    if pattern.match(value):
                        return tag  # type: ignore[no-any-return]
            return _STR
        return _MAP if kind is yaml.MappingNode else _SEQ


_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_IMPLICIT = _Loader.yaml_implicit_resolvers
if _Loader.yaml_path_resolvers or None in _IMPLICIT:  # pragma: no cover - another PyYAML: its own method
    del _BoundedLoader.resolve


def _guarded(construct: Callable[[Any, yaml.Node], Any]) -> Callable[[Any, yaml.Node], Any]:
    def guarded(loader: Any, node: yaml.Node) -> Any:
        try:
            return construct(loader, node)
        except (ArithmeticError, KeyError, TypeError, ValueError) as exc:
            raise _Refused(f"has a value its tag cannot hold at line {node.start_mark.line + 1} "
                           f"({node.tag.rsplit(':', 1)[-1]}: {exc})") from None
    return guarded


# The constructors that can refuse a value (`!!int x`, `!!bool maybe`) name its line; str, map and seq never refuse.
for _tag, _construct in list(_Loader.yaml_constructors.items()):
    if _tag not in ("tag:yaml.org,2002:str", "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"):
        _BoundedLoader.add_constructor(_tag, _guarded(_construct))


def _weigh(node: yaml.Node, weights: dict[int, int], depth: int = 0) -> int:
    """What `node` expands to once every alias is followed (an alias is the same node again,
    weighed once and remembered in `weights`): 1 per collection, plus its children."""
    if isinstance(node, yaml.ScalarNode):
        return 1 + len(node.value) // _CHARS_PER_VALUE
    key = id(node)
    weight = weights.get(key)
    if weight == _BUSY:
        raise _Refused(f"refers to itself through an alias at line {node.start_mark.line + 1}, "
                       "so it expands without end")
    if weight is not None:
        return weight
    if depth > MAX_DEPTH:
        raise _Refused(f"nests deeper than {MAX_DEPTH} levels at line {node.start_mark.line + 1}")
    weights[key] = _BUSY
    weight = 1
    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            weight += _weigh(item, weights, depth + 1)
    else:
        for name, value in node.value:
            if not isinstance(name, yaml.ScalarNode):  # YAML allows it; neither Python nor JSON does
                raise _Refused(f"has a list or mapping as a key at line {name.start_mark.line + 1}; "
                               "keys must be plain values")
            weight += _weigh(name, weights) + _weigh(value, weights, depth + 1)
    if weight > MAX_EXPANDED:
        raise _Refused(f"expands its aliases beyond {MAX_EXPANDED:,} values")
    weights[key] = weight
    return weight


_PLAIN_KEYS = frozenset({_STR, "tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:bool",
                         "tag:yaml.org,2002:null", "tag:yaml.org,2002:binary", "tag:yaml.org,2002:timestamp"})


class _Unplain(Exception):
    """The document uses what `_Builder` leaves to PyYAML's constructor (a merge key, a tagged collection)."""


class _Builder:
    """Builds a composed document's plain data and weighs it in one walk, with `_weigh`'s bounds and
    messages; each collection node is built once, so an alias is the same object again."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader
        self.constructors = loader.yaml_constructors
        #: id(node) -> (data, weight) of each collection built; _BUSY while it is being built.
        self.built: dict[int, Any] = {}

    def scalar(self, node: yaml.ScalarNode) -> Any:
        construct = self.constructors.get(node.tag)
        return construct(self.loader, node) if construct is not None else self.loader.construct_object(node)

    def node(self, node: yaml.Node, depth: int) -> tuple[Any, int]:
        if isinstance(node, yaml.ScalarNode):
            weight = 1 + len(node.value) // _CHARS_PER_VALUE
            return (node.value if node.tag == _STR else self.scalar(node)), weight
        key = id(node)
        built = self.built.get(key)
        if built == _BUSY:
            raise _Refused(f"refers to itself through an alias at line {node.start_mark.line + 1}, "
                           "so it expands without end")
        if built is not None:
            return built  # type: ignore[no-any-return]
        if depth > MAX_DEPTH:
            raise _Refused(f"nests deeper than {MAX_DEPTH} levels at line {node.start_mark.line + 1}")
        self.built[key] = _BUSY
        weight = 1
        data: Any
        if isinstance(node, yaml.SequenceNode) and node.tag == _SEQ:
            data = []
            for item in node.value:
                value, more = self.node(item, depth + 1)
                data.append(value)
                weight += more
        elif isinstance(node, yaml.MappingNode) and node.tag == _MAP:
            data = {}
            for name, item in node.value:
                if not isinstance(name, yaml.ScalarNode):  # YAML allows it; neither Python nor JSON does
                    raise _Refused(f"has a list or mapping as a key at line {name.start_mark.line + 1}; "
                                   "keys must be plain values")
                if name.tag not in _PLAIN_KEYS:  # `<<` (a merge), `=`, or a tag of the writer's own
                    raise _Unplain
                value, more = self.node(item, depth + 1)
                data[name.value if name.tag == _STR else self.scalar(name)] = value
                weight += 1 + len(name.value) // _CHARS_PER_VALUE + more
        else:
            raise _Unplain
        if weight > MAX_EXPANDED:
            raise _Refused(f"expands its aliases beyond {MAX_EXPANDED:,} values")
        self.built[key] = (data, weight)
        return data, weight


def _build(text: str) -> Any:
    """The data of `text`, bounded; _Refused, RecursionError or yaml.YAMLError when it cannot be."""
    loader = _BoundedLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        try:
            try:
                return _Builder(loader).node(node, 0)[0]
            except _Unplain:  # what only a hand-edited file holds: PyYAML's constructor, weighed first
                _weigh(node, {})
                return loader.construct_document(node)
        except (ArithmeticError, KeyError, TypeError, ValueError) as exc:  # a `!!set` built lazily
            raise _Refused(f"has a value plain data cannot hold ({exc})") from None
    finally:
        loader.dispose()


class _ReadableDumper(_Dumper):
    """Multi-line strings as literal blocks, so recorded tool output reads as text."""


def _str(dumper: yaml.Dumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value and not any(c in value for c in "\r\t\x0b\x0c") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_ReadableDumper.add_representer(str, _str)  # type: ignore[arg-type]


def dump_yaml(data: Any) -> str:
    """Block-style YAML in the mapping order given, multi-line text as literal blocks, repeated objects aliased."""
    return yaml.dump(data, Dumper=_ReadableDumper, sort_keys=False, allow_unicode=True, width=100)


def load_yaml(text: str, source: str) -> Any:
    """Parse YAML safely; a syntax error names the file and line, and so does a document that
    would expand beyond `MAX_EXPANDED` values, nest deeper than `MAX_DEPTH` levels, refer to
    itself, or hold a key or tagged value that plain data cannot."""
    try:
        return _build(text)
    except _Refused as exc:
        raise CassetteError(
            f"cassette {source} {exc}; a recording never does this, so the file was edited by hand "
            "or is not a cassette: fix it, or delete it and record again"
        ) from None
    except RecursionError:
        raise CassetteError(
            f"cassette {source} nests too deeply to load; fix it, or delete it and record again"
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise CassetteError(f"cassette {source} does not parse{where}: {problem}") from None


def refusal(text: str) -> str | None:
    """Why `load_yaml` would refuse `text`, as a phrase (`expands its aliases beyond ...`), or
    None when it loads: a writer checks with it that what it writes reads back."""
    try:
        _build(text)
    except _Refused as exc:
        return str(exc)
    except RecursionError:
        return "nests too deeply to load"
    except yaml.YAMLError as exc:
        return f"does not parse ({str(exc).splitlines()[0]})"
    return None
