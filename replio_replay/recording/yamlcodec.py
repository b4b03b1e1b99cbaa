"""Safe YAML in and out through PyYAML (libyaml's C loader and dumper where installed), bounded on the way in.

Aliases let a document share one object many times, and whatever later writes the data out
(the serializer turns request bodies back into JSON text) expands every alias. So a load first
composes the node tree, then weighs what it would expand to (`MAX_EXPANDED` values, `MAX_DEPTH`
levels, no alias cycles) and refuses a "billion laughs" file, naming it, before PyYAML's safe
constructor builds anything. A writer checks what it writes against the same bounds: `dump_checked`
weighs the very nodes the dumper emits, which are the nodes the text composes back to (the same
scalars, an object written twice the same node, as an alias is), and parses the text again only
when they are refused, so that `refusal` names the line.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import yaml

from ..errors import CassetteError
from .limits import MAX_DEPTH, MAX_EXPANDED

__all__ = ["MAX_DEPTH", "MAX_EXPANDED", "dump_checked", "dump_yaml", "load_yaml", "refusal"]

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


def _at(node: yaml.Node) -> str:
    """Where `node` is, " at line N", for a node read from text (a node a dumper made has no line)."""
    return "" if node.start_mark is None else f" at line {node.start_mark.line + 1}"


def _weigh(node: yaml.Node, weights: dict[int, int], depth: int = 0) -> int:
    """What `node` expands to once every alias is followed (an alias is the same node again,
    weighed once and remembered in `weights`): 1 per collection, plus its children."""
    if isinstance(node, yaml.ScalarNode):
        return 1 + len(node.value) // _CHARS_PER_VALUE
    key = id(node)
    weight = weights.get(key)
    if weight == _BUSY:
        raise _Refused(f"refers to itself through an alias{_at(node)}, "
                       "so it expands without end")
    if weight is not None:
        return weight
    if depth > MAX_DEPTH:
        raise _Refused(f"nests deeper than {MAX_DEPTH} levels{_at(node)}")
    weights[key] = _BUSY
    weight = 1
    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            weight += _weigh(item, weights, depth + 1)
    else:
        for name, value in node.value:
            if not isinstance(name, yaml.ScalarNode):  # YAML allows it; neither Python nor JSON does
                raise _Refused(f"has a list or mapping as a key{_at(name)}; "
                               "keys must be plain values")
            weight += _weigh(name, weights) + _weigh(value, weights, depth + 1)
    if weight > MAX_EXPANDED:
        raise _Refused(f"expands its aliases beyond {MAX_EXPANDED:,} values")
    weights[key] = weight
    return weight


def _build(text: str) -> Any:
    """The data of `text`, bounded; _Refused, RecursionError or yaml.YAMLError when it cannot be."""
    loader = _BoundedLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _weigh(node, {})
        try:
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


#: How a cassette is written: block style, in the mapping order given, text as it is, 100 columns.
_STYLE: dict[str, Any] = {"sort_keys": False, "allow_unicode": True, "width": 100}


def dump_yaml(data: Any) -> str:
    """Block-style YAML in the mapping order given, multi-line text as literal blocks, repeated objects aliased."""
    return yaml.dump(data, Dumper=_ReadableDumper, **_STYLE)


class _WeighingDumper(_ReadableDumper):
    """The readable dumper, weighing each document's node graph as it emits it (`fits`: none refused)."""

    fits = True

    def serialize(self, node: yaml.Node) -> None:
        try:
            _weigh(node, {})
        except (_Refused, RecursionError):
            self.fits = False
        super().serialize(node)


def _dump_weighed(data: Any) -> tuple[str, bool]:
    """`dump_yaml`'s text of `data`, and whether the nodes it was written from are within the reader's bounds."""
    stream = io.StringIO()
    dumper = _WeighingDumper(stream, **_STYLE)
    try:
        dumper.open()
        dumper.represent(data)
        dumper.close()
    finally:
        dumper.dispose()
    return stream.getvalue(), dumper.fits


def dump_checked(data: Any) -> tuple[str, str | None]:
    """`dump_yaml(data)`, and why `load_yaml` would refuse that text (`refusal`'s phrase), or None
    when it loads; the text is parsed again only when it is refused, for the phrase naming the line."""
    text, fits = _dump_weighed(data)
    return text, None if fits else refusal(text)


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
