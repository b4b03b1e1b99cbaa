"""The readable cassette serializer: YAML whose JSON bodies are structured data, not strings.

A vcrpy serializer (``serialize(dict) -> str``, ``deserialize(str) -> dict``), so the files
load through vcrpy with it registered. JSON bodies are stored under ``json`` with sorted
keys, multi-line text as literal blocks, and a ``replio`` header carries provenance. A
conversation resends every earlier message and the whole tool list with each request: each
of those is written once and referred to afterwards with a YAML alias (``*id001``), so a
cassette grows with the conversation, not with its square, and reads as what is new.
Loading uses libyaml's safe C parser with a lean constructor (plain data only), with the
cyclic garbage collector paused while a cassette's thousands of nodes are built (see `_gc_paused`).
"""

from __future__ import annotations

import gc
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import yaml

from ..errors import CassetteError

__all__ = ["HEADER_KEY", "ReadableSerializer", "canonical_json"]

HEADER_KEY = "replio"

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


def _intern_bodies(interactions: list[dict[str, Any]]) -> None:
    """Make repeated messages and tool lists the same objects, so the dumper aliases them."""
    memo: dict[str, Any] = {}

    def one(value: Any) -> Any:
        return memo.setdefault(json.dumps(value, sort_keys=True), value)

    for item in interactions:
        body = item["request"].get("body")
        data = body.get("json") if isinstance(body, dict) else None
        if not isinstance(data, dict):
            continue
        if isinstance(data.get("messages"), list):
            data["messages"] = [one(m) for m in data["messages"]]
        if "tools" in data:
            data["tools"] = one(data["tools"])


class _ReadableDumper(_Dumper):
    """Multi-line strings as literal blocks, so recorded tool output reads as text."""


def _str(dumper: yaml.Dumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value and not any(c in value for c in "\r\t\x0b\x0c") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_ReadableDumper.add_representer(str, _str)  # type: ignore[arg-type]


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def _structured(body: Any) -> Any:
    """A JSON text body as {'json': data}; anything else unchanged."""
    if isinstance(body, bytes):
        try:
            body = body.decode("utf-8")
        except UnicodeDecodeError:
            return body
    if isinstance(body, str) and body[:1] in ("{", "["):
        try:
            return {"json": _sorted(json.loads(body))}
        except ValueError:
            return body
    return body


def _flat(body: Any) -> Any:
    """Back from {'json': data} to the JSON text vcrpy expects: canonical (sorted, compact), so a
    replayed request can be compared with it as text before anything is parsed."""
    if isinstance(body, dict) and set(body) == {"json"}:
        return canonical_json(body["json"])
    return body


def canonical_json(data: Any) -> str:
    """Sorted keys, no spaces, UTF-8 as is: equal data gives equal text."""
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


class ReadableSerializer:
    """Serialise vcrpy's cassette dict to readable YAML with a provenance header."""

    def __init__(self, header: dict[str, Any] | None = None, source: str = "<cassette>") -> None:
        self.header = header or {}
        self.source = source
        #: The header of the last cassette deserialised (provenance of what is being replayed).
        self.loaded_header: dict[str, Any] = {}

    def serialize(self, cassette_dict: dict[str, Any]) -> str:
        interactions = []
        for item in cassette_dict.get("interactions", []):
            request = dict(item["request"])
            request["body"] = _structured(request.get("body"))
            response = dict(item["response"])
            body = dict(response.get("body") or {})
            if "string" in body:
                structured = _structured(body.pop("string"))
                body.update(structured if isinstance(structured, dict) else {"string": structured})
            response["body"] = body
            interactions.append({"request": request, "response": response})
        _intern_bodies(interactions)
        data = {HEADER_KEY: _sorted(self.header), "version": cassette_dict.get("version", 1),
                "interactions": interactions}
        with _gc_paused():
            return yaml.dump(data, Dumper=_ReadableDumper, sort_keys=False, allow_unicode=True, width=100)

    def deserialize(self, cassette_string: str) -> dict[str, Any]:
        data = load_yaml(cassette_string, self.source)
        if isinstance(data, dict) and isinstance(data.get(HEADER_KEY), dict):
            self.loaded_header = data[HEADER_KEY]
        return to_vcr(data, self.source)


def load_yaml(text: str, source: str) -> Any:
    """Parse YAML safely; a syntax error names the file and line."""
    with _gc_paused():  # around the call, so the node tree is freed before the GC resumes
        return _parse(text, source)


def _parse(text: str, source: str) -> Any:
    loader = _LeanLoader(text)
    try:
        node = loader.get_single_node()
        return None if node is None else _construct(loader, node, {})
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise CassetteError(f"cassette {source} does not parse{where}: {problem}") from None
    finally:
        loader.dispose()


def to_vcr(data: Any, source: str) -> dict[str, Any]:
    """Check the shape and turn structured bodies back into the strings vcrpy expects."""
    if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
        raise CassetteError(f"cassette {source} has the wrong shape: expected a mapping with 'interactions'")
    out = []
    for i, item in enumerate(data["interactions"]):
        try:
            request = dict(item["request"])
            response = dict(item["response"])
            request["method"], request["uri"]  # noqa: B018 - required keys
            response["status"]["code"]  # noqa: B018
        except (KeyError, TypeError):
            raise CassetteError(
                f"cassette {source} has the wrong shape: interaction {i + 1} lacks a request "
                "(method, uri) or a response (status.code)"
            ) from None
        request["body"] = _flat(request.get("body"))
        body = dict(response.get("body") or {})
        if "json" in body:
            body = {"string": _flat({"json": body["json"]})}
        response["body"] = body
        out.append({"request": request, "response": response})
    return {"version": data.get("version", 1), "interactions": out}
