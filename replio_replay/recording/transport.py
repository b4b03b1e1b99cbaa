"""A per-fixture httpx transport bound to one cassette: replays in order, records the rest.

It wraps the provider's shared, pooled transport instead of patching httpx globally, so
fixtures running concurrently never write into each other's cassettes. Recorded requests
are matched in order by method and path, not by body, and each replayed JSON body is
compared with the recorded one: the differences are the fixture's *request drift*.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import httpx

from ..diffing import Change
from ..errors import CassetteError
from ..jsoncanon import canonical
from ..providers.http import REPLAYED
from .cassette import Cassette, Request
from .modes import RecordMode, record_flags
from .requests import request_changes

__all__ = ["CassetteTransport"]


#: Response headers not stored: the body is stored decoded, so its encoding and length no longer
#: apply, and `date` would make every re-recording of the same behaviour differ.
_UNSTORED_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding", "date"})


def _serialize_response(response: httpx.Response, content: bytes) -> dict[str, Any]:
    headers: dict[str, list[str]] = defaultdict(list)
    for name, value in response.headers.multi_items():
        if name.lower() not in _UNSTORED_HEADERS:
            headers[name.lower()].append(value)
    return {
        "status": {"code": response.status_code, "message": response.reason_phrase},
        "headers": dict(headers),
        "body": {"string": content},
    }


def _to_httpx(recorded: dict[str, Any], request: httpx.Request, *, replayed: str | None) -> httpx.Response:
    """The recorded response as httpx's; `replayed` is the URL it was recorded from (None: live now)."""
    body = recorded["body"].get("string", b"")
    if isinstance(body, str):
        body = body.encode("utf-8")
    # As bytes: a server may send header values that are not ASCII, which httpx refuses as text.
    headers = [(k.encode("utf-8"), v.encode("utf-8", "replace")) for k, values in recorded["headers"].items()
               for v in values]
    return httpx.Response(recorded["status"]["code"], headers=headers, content=body, request=request,
                          extensions={REPLAYED: replayed} if replayed is not None else {})


def _json(body: Any) -> Any:
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    try:
        return json.loads(body) if body else None
    except (TypeError, ValueError):
        return body


class CassetteTransport(httpx.BaseTransport):
    """One fixture's HTTP: replayed from its cassette or sent through `inner` and recorded."""

    def __init__(
        self,
        cassette: Cassette,
        mode: RecordMode,
        inner: httpx.BaseTransport | None,
        *,
        fixture_id: str,
        loaded: bool,
        tools: str = "default",
    ) -> None:
        self.cassette = cassette
        self.mode = mode
        self.inner = inner
        self.fixture_id = fixture_id
        self.tools = tools
        self.loaded_count = len(cassette.data) if loaded else 0
        self.played: set[int] = set()  # loaded interactions already replayed
        self.protected = mode is RecordMode.NONE or (mode is RecordMode.ONCE and loaded)
        self.sent = 0
        self.recorded = 0
        #: Requests sent on that got no response (refused, timed out, dropped).
        self.unanswered = 0
        self.drift: dict[tuple[str, str, str, str], Change] = {}

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent += 1
        body = request.read()
        live = Request(request.method, str(request.url), body, dict(request.headers))
        index = self._next_recorded(live)
        if index is not None:
            stored, recorded = self.cassette.data[index]
            self.played.add(index)
            self._compare(stored, live)
            return _to_httpx(recorded, request, replayed=stored.uri)
        if self.protected or self.inner is None:
            raise CassetteError(
                f"fixture {self.fixture_id!r}: request #{self.sent} ({request.method} {request.url.path}) "
                f"has no recording in {self.cassette.path}; the conversation went further than when it "
                f"was recorded. Re-record it with {record_flags(RecordMode.ALL, self.fixture_id, self.tools)}"
            )
        try:
            response = self.inner.handle_request(request)
            try:
                content = response.read()
            finally:
                response.close()
        except BaseException:
            self.unanswered += 1
            raise
        self.cassette.append(live, _serialize_response(response, content))
        self.recorded += 1
        return _to_httpx(_serialize_response(response, content), request, replayed=None)

    def replays(self, request: httpx.Request) -> bool:
        """Whether `request` would be answered from the cassette, never sent on."""
        if self.protected or self.inner is None:
            return True
        live = Request(request.method, str(request.url), b"", dict(request.headers))
        return self._next_recorded(live) is not None

    def _next_recorded(self, live: Request) -> int | None:
        """The first loaded interaction not yet played with the same method and path."""
        for i in range(self.loaded_count):
            if i not in self.played and live.matches(self.cassette.data[i][0]):
                return i
        return None

    def _compare(self, stored: Request, live: Request) -> None:
        if live.body == stored.body:
            return  # the common case: providers send canonical JSON, as cassettes store it
        live_data = _json(live.body)
        if isinstance(live_data, (dict, list)) and canonical(live_data).encode("utf-8") == stored.body:
            return  # the same request, sent in another form
        for change in request_changes(_json(stored.body), live_data):
            key = (change.path, change.kind, canonical(change.old), canonical(change.new))
            self.drift.setdefault(key, change)

    @property
    def request_drift(self) -> list[Change]:
        """Each distinct change between recorded and replayed request bodies, once."""
        return list(self.drift.values())

    def close(self) -> None:
        """The inner transport is shared by the whole run: it is not closed here."""
