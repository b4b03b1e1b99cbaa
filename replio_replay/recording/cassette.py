"""One fixture's cassette in memory: its recorded requests and responses, held and written as vcrpy holds them.

The harness answers HTTP itself (`transport.CassetteTransport` wraps the provider's transport),
so it needs none of vcrpy's patching, and importing vcrpy (wrapt, and a patcher for every HTTP
library installed) cost a replay about a sixth of its time. What the harness used of vcrpy is
here, with vcrpy's semantics, so the files are the same: a request keeps its body as bytes and
one value per header, a response is vcrpy's dict (status, headers, body), and a cassette is
vcrpy's ``version: 1`` list of ``interactions``. They still load through vcrpy with
`ReadableSerializer` registered (a test checks this).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlparse

from .scrub import scrub_headers, scrub_url

if TYPE_CHECKING:
    from .serializer import ReadableSerializer

__all__ = ["FORMAT_VERSION", "Cassette", "Persister", "Request"]


class Persister(Protocol):
    """Where a cassette is read from and written to (vcrpy's persister interface; `store.AtomicPersister`)."""

    def load_cassette(self, cassette_path: str, serializer: Any) -> tuple[list[Request], list[dict[str, Any]]]:
        """The requests and responses stored at `cassette_path`."""

    def save_cassette(self, cassette_path: str, cassette_dict: dict[str, Any], serializer: Any) -> None:
        """Write `cassette_dict` to `cassette_path`."""

#: The cassette format version vcrpy reads and writes.
FORMAT_VERSION = 1


class Request:
    """A request as vcrpy's `Request` holds it: the body as bytes, one value per header."""

    __slots__ = ("body", "headers", "method", "path", "uri")

    def __init__(self, method: str, uri: str, body: str | bytes | None,
                 headers: Mapping[str, str | list[str]]) -> None:
        self.method = method
        self.uri = uri
        #: The URI's path, '/' when it is empty (RFC 3986 6.2.3), as vcrpy's `path` matcher compares it.
        self.path = urlparse(uri).path or "/"
        self.body = body.encode("utf-8") if isinstance(body, str) else body
        self.headers = _one_value_each(headers)

    def matches(self, other: Request) -> bool:
        """Same method and path: vcrpy's `method` and `path` matchers, the ones cassettes are matched on."""
        return self.method == other.method and self.path == other.path

    def scrubbed(self) -> Request:
        """This request without secret headers or key-like query values."""
        return Request(self.method, scrub_url(self.uri), self.body, scrub_headers(self.headers))

    def to_dict(self) -> dict[str, Any]:
        """As vcrpy writes a request: the body as text when it is UTF-8, each header as a list of one."""
        return {"method": self.method, "uri": self.uri, "body": _text(self.body),
                "headers": {name: [value] for name, value in self.headers.items()}}

    def __repr__(self) -> str:
        return f"<Request ({self.method}) {self.uri}>"


class Cassette:
    """One fixture's interactions: those loaded from its file, then those recorded now, each scrubbed
    as it is kept (no secret header or key-like query value in memory, so none in the file)."""

    def __init__(self, path: str, serializer: ReadableSerializer, persister: Persister) -> None:
        self.path = path
        self.serializer = serializer
        self.persister = persister
        self.data: list[tuple[Request, dict[str, Any]]] = []

    @classmethod
    def load(cls, path: str, serializer: ReadableSerializer, persister: Persister) -> Cassette:
        """The cassette stored at `path` (CassetteError when it cannot be read or has the wrong shape)."""
        cassette = cls(path, serializer, persister)
        for request, response in zip(*persister.load_cassette(path, serializer)):
            cassette.append(request, response)
        return cassette

    def append(self, request: Request, response: dict[str, Any]) -> None:
        """Keep an interaction, scrubbed: vcrpy's `before_record_request` and `before_record_response`."""
        self.data.append((request.scrubbed(), {**response, "headers": scrub_headers(response["headers"])}))

    def save(self) -> None:
        """Write the cassette through its persister, in vcrpy's format."""
        interactions = [{"request": request.to_dict(), "response": _response_text(response)}
                        for request, response in self.data]
        self.persister.save_cassette(self.path, {"version": FORMAT_VERSION, "interactions": interactions},
                                     self.serializer)


def interactions(data: Mapping[str, Any]) -> tuple[list[Request], list[dict[str, Any]]]:
    """The requests and responses of a deserialized cassette (`serializer.to_vcr`'s shape), response
    bodies as bytes: what vcrpy's `deserialize` returns."""
    requests = [Request(**item["request"]) for item in data["interactions"]]
    responses = [_response_bytes(item["response"]) for item in data["interactions"]]
    return requests, responses


def _one_value_each(headers: Mapping[str, str | list[str]]) -> dict[str, str]:
    """The first value of each header, names compared without case, the first spelling kept (vcrpy's `HeadersDict`)."""
    kept: dict[str, tuple[str, str]] = {}
    for name, value in headers.items():
        first = value[0] if isinstance(value, (list, tuple)) else value
        seen = kept.get(name.lower())
        kept[name.lower()] = (seen[0] if seen else name, first)
    return dict(kept.values())


def _text(body: Any) -> Any:
    """Bytes as text where they are UTF-8, anything else as it is (vcrpy's `convert_to_unicode`)."""
    if isinstance(body, bytes):
        try:
            return body.decode("utf-8")
        except UnicodeDecodeError:
            return body
    return body


def _response_text(response: dict[str, Any]) -> dict[str, Any]:
    body = response.get("body")
    if isinstance(body, dict) and "string" in body:
        return {**response, "body": {**body, "string": _text(body["string"])}}
    return response


def _response_bytes(response: dict[str, Any]) -> dict[str, Any]:
    """The response with its body as bytes where it is text that UTF-8 can encode (vcrpy's `convert_to_bytes`)."""
    body = response.get("body")
    if not (isinstance(body, dict) and isinstance(body.get("string"), str)):
        return response
    try:
        return {**response, "body": {**body, "string": body["string"].encode("utf-8")}}
    except UnicodeEncodeError:  # a lone surrogate: kept as text, as vcrpy does
        return response
