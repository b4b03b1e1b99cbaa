"""The readable cassette serializer: YAML whose JSON bodies are structured data, not strings.

A vcrpy serializer (``serialize(dict) -> str``, ``deserialize(str) -> dict``), so the files
load through vcrpy with it registered. JSON bodies are stored under ``json`` with sorted
keys, multi-line text as literal blocks, and a ``replio`` header carries provenance. A
conversation resends every earlier message and the whole tool list with each request: each
of those is written once and referred to afterwards with a YAML alias (``*id001``), so a
cassette grows with the conversation, not with its square, and reads as what is new.

A fixture that used MCP servers has an ``mcp`` block too (see `mcp.recording`): what each
server said, readable, beside the HTTP interactions.

The tool list is written first, as the top-level ``tools`` block under the header, and each
request body aliases it.
"""

from __future__ import annotations

import json
import re
from operator import itemgetter
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .._runtime.jsoncanon import canonical
from .._runtime.jsonin import too_deep
from .._runtime.wording import plural
from ..errors import CassetteError
from .limits import MAX_DEPTH
from .roles import AGENT, stored, unstored

__all__ = ["HEADER_KEY", "MCP_KEY", "TOOLS_KEY", "ReadableSerializer", "load_cassette", "read_header"]

HEADER_KEY = "replio"
TOOLS_KEY = "tools"
MCP_KEY = "mcp"



def _intern_bodies(interactions: list[dict[str, Any]]) -> list[Any] | None:
    """Make repeated messages and tool lists the same objects, so the dumper aliases them.

    Returns the first request's tool list (None when no request sends one).
    """
    first: list[Any] | None = None
    memo: dict[str, Any] = {}

    def one(value: Any) -> Any:
        return memo.setdefault(canonical(value), value)

    for item in interactions:
        body = item["request"].get("body")
        data = body.get("json") if isinstance(body, dict) else None
        if not isinstance(data, dict):
            continue
        if isinstance(data.get("messages"), list):
            data["messages"] = [one(m) for m in data["messages"]]
        if isinstance(data.get("tools"), list):
            data["tools"] = one(data["tools"])
            first = data["tools"] if first is None else first
    return first


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


#: A JSON escape of a surrogate (`\ud800`): the only way parsed JSON text can hold a lone one.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _structured(body: Any) -> Any:
    """A JSON text body as {'json': data}; anything else unchanged.

    JSON whose strings hold a lone surrogate (a provider may send `"\\ud800"`) stays the text
    the server sent: no UTF-8 file can hold the parsed string, and the escape replays as sent.
    """
    if isinstance(body, bytes):
        try:
            body = body.decode("utf-8")
        except UnicodeDecodeError:
            return body
    if isinstance(body, str) and body[:1] in ("{", "["):
        try:
            data = json.loads(body, object_pairs_hook=_sorted_object)
        except ValueError:
            return body
        if _SURROGATE_ESCAPE.search(body) and not _utf8(data):
            return body
        return {"json": data}
    return body


def _sorted_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object with its keys sorted, as `json.loads` reads it (a key given twice keeps its last value,
    as `json.loads` keeps it): the body is sorted as it is parsed, not walked again after."""
    return dict(sorted(pairs, key=itemgetter(0)))


def _utf8(data: Any) -> bool:
    """Whether UTF-8 can hold every string in `data` (it cannot hold a lone surrogate)."""
    try:
        canonical(data).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class ReadableSerializer:
    """Serialise vcrpy's cassette dict to readable YAML with a provenance header."""

    def __init__(self, header: dict[str, Any] | None = None, source: str = "<cassette>") -> None:
        self.header = header or {}
        self.source = source
        #: The header of the last cassette deserialised (provenance of what is being replayed).
        self.loaded_header: dict[str, Any] = {}
        #: The MCP section to write (None: none), and the one the last cassette deserialised held.
        self.mcp: dict[str, Any] | None = None
        self.loaded_mcp: Any = None

    def serialize(self, cassette_dict: dict[str, Any]) -> str:
        interactions = []
        for item in cassette_dict.get("interactions", []):
            request = stored(item["request"])
            request["body"] = _structured(request.get("body"))
            response = dict(item["response"])
            body = dict(response.get("body") or {})
            if "string" in body:
                structured = _structured(body.pop("string"))
                body.update(structured if isinstance(structured, dict) else {"string": structured})
            response["body"] = body
            interactions.append({"request": request, "response": response})
        tools = _intern_bodies(interactions)
        data: dict[str, Any] = {HEADER_KEY: _sorted(self.header)}
        if tools is not None:
            data[TOOLS_KEY] = tools
        if self.mcp:
            data[MCP_KEY] = self.mcp
        data.update(version=cassette_dict.get("version", 1), interactions=interactions)
        from .yamlcodec import dump_checked

        text, problem = dump_checked(data)  # what is written must replay: checked with the reader's own bounds
        if problem is not None:
            raise CassetteError(
                f"cassette {self.source} was not written: a replay would refuse it, as it {problem} "
                f"({plural(len(interactions), 'request')}, each resending the conversation so far); lower the "
                "fixture's max_turns or the size of what its tools return, and record again")
        return text

    def deserialize(self, cassette_string: str) -> dict[str, Any]:
        loaded = load_cassette(cassette_string, self.source)
        self.loaded_header = loaded["header"]
        self.loaded_mcp = loaded["mcp"]
        return loaded["cassette"]  # type: ignore[no-any-return]


def load_cassette(text: str, source: str) -> dict[str, Any]:
    """A cassette's text parsed and checked: its ``header`` ({} when it has none), its ``mcp``
    block and the ``cassette`` in vcrpy's form (`to_vcr`)."""
    from .yamlcodec import load_yaml

    data = load_yaml(text, source)
    cassette = to_vcr(data, source)  # first: it says what is wrong with data that is no mapping
    header = data.get(HEADER_KEY)
    return {"header": header if isinstance(header, dict) else {}, "mcp": data.get(MCP_KEY), "cassette": cassette}


#: The keys of a recorded request: vcrpy builds its `Request(**request)` from these but `role`
#: (`roles`: whose request it is, `agent` when absent).
_REQUEST_KEYS = ("role", "method", "uri", "body", "headers")


def _kind(value: Any) -> str:
    """How a wrong value is named in a message: its YAML kind and, when short, the value."""
    if value is None:
        return "null"
    name = {dict: "a mapping", list: "a list", str: "text", bytes: "binary data", bool: "a boolean",
            int: "an integer", float: "a number"}.get(type(value)) or f"a {type(value).__name__}"
    shown = repr(value)
    return f"{name} ({shown})" if not isinstance(value, (dict, list)) and len(shown) <= 40 else name


def _nests_too_deeply(body: str | bytes | None) -> bool:
    """Whether a text body is JSON nested deeper than a cassette may be.

    Bodies a recording stores as text are rare (JSON is stored structured, its depth bounded
    as the YAML loads), so parsing the ones that look like JSON costs nothing that shows.
    """
    if isinstance(body, bytes):
        try:
            body = body.decode("utf-8")
        except UnicodeDecodeError:
            return False
    if not body or body.lstrip()[:1] not in ("{", "["):
        return False
    try:
        data = json.loads(body)
    except RecursionError:
        return True
    except ValueError:
        return False
    return too_deep(data, MAX_DEPTH)


class _Shape:
    """Checks one interaction: each failure a CassetteError naming file, interaction and field."""

    def __init__(self, source: str, number: int) -> None:
        self.source = source
        self.number = number

    def wrong(self, field: str, problem: str) -> CassetteError:
        subject = f"{field} " if field else "the interaction "
        return CassetteError(
            f"cassette {self.source} has the wrong shape: in interaction {self.number}, "
            f"{subject}{problem}; fix that field, or delete the cassette and record it again"
        )

    def mapping(self, value: Any, field: str, what: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.wrong(field, f"must be a mapping ({what}), not {_kind(value)}")
        return value

    def text(self, value: Any, field: str, what: str = "text") -> str:
        if not isinstance(value, str):
            raise self.wrong(field, f"must be {what}, not {_kind(value)}")
        return value

    def headers(self, value: Any, field: str, *, ascii_only: bool) -> dict[str, list[str]]:
        """Header name -> its values as a list of strings (one string is a list of one).

        A response's headers are handed to httpx, which encodes names and values as ASCII.
        """
        if value is None:
            return {}
        headers = self.mapping(value, field, "header name -> list of values")
        out: dict[str, list[str]] = {}
        for name, values in headers.items():
            if not isinstance(name, str) or not name:
                raise self.wrong(field, f"has a header name that is {_kind(name)}; "
                                 "names are non-empty text")
            listed = [values] if isinstance(values, str) else values
            if not isinstance(listed, list) or not all(isinstance(v, str) for v in listed):
                raise self.wrong(f"{field}.{name}",
                                 f"must be text or a list of text, not {_kind(values)}")
            if ascii_only and not (name.isascii() and all(v.isascii() for v in listed)):
                raise self.wrong(f"{field}.{name}", "is not ASCII; HTTP sends headers as ASCII, so "
                                 "remove the other characters or the header")
            if listed:  # a header with no values is no header (vcrpy takes a request's first)
                out[name] = list(listed)
        return out

    def body(self, value: Any, field: str) -> str | bytes | None:
        """Text, binary data or nothing; structured JSON (`{json: data}`) back to the canonical
        text vcrpy expects, so a replayed request can be compared with it as text before anything
        is parsed."""
        if value is None or isinstance(value, (str, bytes)):
            if _nests_too_deeply(value):
                raise self.wrong(field, f"holds JSON nested deeper than {MAX_DEPTH} levels, which "
                                 "replaying would parse and compare; no provider answers so")
            return value
        if isinstance(value, dict) and set(value) == {"json"}:
            try:
                return canonical(value["json"])
            except (TypeError, ValueError, RecursionError) as exc:  # a date, a set, a cycle
                raise self.wrong(f"{field}.json", f"cannot be written as JSON ({exc})") from None
        raise self.wrong(field, "must be text, binary data or a mapping with only 'json', "
                         f"not {_kind(value)}")

    def request(self, value: Any) -> dict[str, Any]:
        request = self.mapping(value, "request", "method, uri, body, headers")
        unknown = [k for k in request if k not in _REQUEST_KEYS]
        if unknown:
            raise self.wrong("request", f"has the unknown key {unknown[0]!r}; a request has only "
                             f"{', '.join(_REQUEST_KEYS)}")
        method = self.text(request.get("method"), "request.method", "text such as POST")
        uri = self.text(request.get("uri"), "request.uri", "a URL")
        try:
            urlsplit(uri)
        except ValueError as exc:  # vcrpy parses it as it builds the request
            raise self.wrong("request.uri", f"is not a URL ({exc})") from None
        role = self.text(request.get("role", AGENT), "request.role", "text such as agent or user")
        return unstored({
            "method": method,
            "uri": uri,
            "body": self.body(request.get("body"), "request.body"),
            "headers": self.headers(request.get("headers"), "request.headers", ascii_only=False),
        }, role)

    def response(self, value: Any) -> dict[str, Any]:
        response = self.mapping(value, "response", "status, headers, body")
        status = self.mapping(response.get("status"), "response.status", "code, message")
        code = status.get("code")
        if not isinstance(code, int) or isinstance(code, bool) or not 100 <= code <= 599:
            raise self.wrong("response.status.code", "must be an HTTP status code "
                             f"(an integer from 100 to 599), not {_kind(code)}")
        message = status.get("message")
        if "message" in status and not isinstance(message, str):
            raise self.wrong("response.status.message", f"must be text, not {_kind(message)}")
        raw = response.get("body")
        body = self.mapping({} if raw is None else raw, "response.body", "'string' or 'json'")
        out: dict[str, Any] = {}
        if "json" in body and "string" in body:
            raise self.wrong("response.body",
                             "has both 'json' and 'string'; keep the one that is the body")
        if "json" in body:
            out["string"] = self.body({"json": body["json"]}, "response.body")
        elif "string" in body:
            string = body["string"]
            if not isinstance(string, (str, bytes)):
                raise self.wrong("response.body.string",
                                 f"must be text or binary data, not {_kind(string)}")
            out["string"] = string
        return {
            **response,
            "status": dict(status),
            "headers": self.headers(response.get("headers"), "response.headers", ascii_only=True),
            "body": out,
        }


def to_vcr(data: Any, source: str) -> dict[str, Any]:
    """Check the shape and turn structured bodies back into the strings vcrpy expects.

    Everything vcrpy and the replaying transport read is checked here, so a hand-edited or
    damaged cassette is a CassetteError naming the file, the interaction and the field, never
    a failure deeper in: the method and URI are text, headers map names to lists of text,
    bodies are text or JSON data, and a response has an integer status code.
    """
    if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
        raise CassetteError(
            f"cassette {source} has the wrong shape: expected a mapping with a list of "
            "'interactions'; delete it and record again"
        )
    out = []
    for number, item in enumerate(data["interactions"], 1):
        shape = _Shape(source, number)
        item = shape.mapping(item, "", "request, response")
        out.append({"request": shape.request(item.get("request")),
                    "response": shape.response(item.get("response"))})
    return {"version": data.get("version", 1), "interactions": out}


def read_header(path: Path) -> dict[str, Any]:
    """A cassette's `replio` header ({} when it has none); CassetteError when it cannot be read."""
    try:
        with path.open(encoding="utf-8") as fh:
            lines: list[str] = []
            for line in fh:
                if lines and line[:1] not in (" ", "\n", "#"):
                    break  # the next top-level key: the header is complete
                lines.append(line)
                if len(lines) > 200:
                    break
    except (OSError, UnicodeDecodeError) as exc:
        raise CassetteError(f"cassette {path} cannot be read: {exc}") from None
    if not lines or not lines[0].startswith(f"{HEADER_KEY}:"):
        return {}
    from .yamlcodec import load_yaml

    data = load_yaml("".join(lines), str(path))
    header = data.get(HEADER_KEY) if isinstance(data, dict) else None
    return header if isinstance(header, dict) else {}
