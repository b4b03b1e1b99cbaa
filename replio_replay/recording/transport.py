"""A per-fixture httpx transport bound to one vcrpy cassette: replays in order, records the rest.

It wraps the provider's shared, pooled transport instead of patching httpx globally (vcrpy's
patchers are never activated), so fixtures running concurrently never write into each other's
cassettes. It asks the cassette as vcrpy's own stubs do (`can_play_response_for`,
`play_response`, `append`): recorded requests are matched in order by method, path and role
(`roles`: the agent's, a simulated user's), not by body, and each replayed body that the
registered canonical-JSON matcher finds changed is compared with the recorded one: the
differences are the fixture's *request drift*, each named by its role. A user's agent's request
whose conversation is not the recorded one (`conversation`) has no recording: the replay went
another way.

Every role's requests go into the one cassette; a role whose provider is not the agent's sends
what it records through its own inner transport (`inners`). `forget` drops a role's recorded
requests, so they are recorded again (`--rejudge`: the judge's) while the others replay.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import httpx
from vcr.matchers import requests_match

from .._runtime.diffing import Change
from .._runtime.jsoncanon import canonical
from ..errors import CassetteError
from ..providers.http import REPLAYED, ROLE, SAME_CONVERSATION
from .cassette import Cassette, Request, json_body
from .conversation import difference
from .modes import RecordMode, record_flags, rejudge_flags
from .requests import request_changes
from .roles import AGENT, JUDGE, ROLE_HEADER, role_of

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


class CassetteTransport(httpx.BaseTransport):
    """One fixture's HTTP: replayed from its cassette or sent through `inner` and recorded."""

    def __init__(
        self,
        cassette: Cassette,
        inner: httpx.BaseTransport | None,
        *,
        body_matcher: Callable[[Request, Request], None],
        fixture_id: str,
        tools: str = "default",
        volatile: re.Pattern[str] | None = None,
    ) -> None:
        self.cassette = cassette
        self.inner = inner
        #: The inner transport of a role whose provider is not the agent's (`inner` for the rest).
        self.inners: dict[str, httpx.BaseTransport | None] = {}
        self.body_matcher = body_matcher
        self.fixture_id = fixture_id
        self.tools = tools
        #: Change paths left out of request drift (fields a user's agent varies: `requests.volatile_pattern`).
        self.volatile = volatile
        self.loaded_count = len(cassette) if cassette.rewound else 0  # vcrpy rewinds what it loaded
        self.protected = cassette.write_protected
        self.sent = 0
        self.recorded = 0
        #: Requests sent on that got no response (refused, timed out, dropped).
        self.unanswered = 0
        #: The only roles whose requests may be sent on and recorded (None: every role's); the
        #: others are replayed, as under --rejudge, where only the judge's are sent.
        self.live_roles: frozenset[str] | None = None
        self.drift: dict[tuple[str, str, str, str, str], tuple[str, Change]] = {}

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent += 1
        role = str(request.extensions.get(ROLE, AGENT))
        headers = dict(request.headers)
        if role != AGENT:
            headers[ROLE_HEADER] = role
        live = Request(request.method, str(request.url), request.read(), headers)
        if self.cassette.can_play_response_for(live):
            answer = self.cassette.play_response(live)
            stored = next(kept for kept, response in self.cassette.data if response is answer)
            self._compare(stored, live, role, same_conversation=bool(request.extensions.get(SAME_CONVERSATION)))
            return _to_httpx(answer, request, replayed=stored.uri)
        inner = self.inners.get(role, self.inner)
        if self.protected or inner is None or (self.live_roles is not None and role not in self.live_roles):
            whose = "" if role == AGENT else f" of the {role}"
            rerecord = f"Re-record it with {record_flags(RecordMode.ALL, self.fixture_id, self.tools)}"
            if role == JUDGE and self.live_roles is None:
                why = ("the judge was added or asks more than when it was recorded. Record its requests with "
                       f"{rejudge_flags(self.fixture_id, self.tools)}")
            elif not any(role_of(kept) == role for kept, _ in self.cassette.data):
                why = f"the cassette holds no request of the {role}: it was recorded before the fixture had one. {rerecord}"
            elif (moved := self._moved(request.url.path, role)) is not None:
                why = f"{moved}. Set the base URL as it was when recorded, or {rerecord[0].lower()}{rerecord[1:]}"
            else:
                why = f"the conversation went further than when it was recorded. {rerecord}"
            raise CassetteError(
                f"fixture {self.fixture_id!r}: request #{self.sent}{whose} ({request.method} {request.url.path}) "
                f"has no recording in {self.cassette.path}; {why}"
            )
        try:
            response = inner.handle_request(request)
            try:
                content = response.read()
            finally:
                response.close()
        except BaseException:
            self.unanswered += 1
            raise
        recorded = _serialize_response(response, content)
        self.cassette.append(live, recorded)  # vcrpy keeps a scrubbed copy
        # Counted as played, so a later request on the same path is never answered with this one.
        self.cassette.play_counts[len(self.cassette) - 1] += 1
        self.recorded += 1
        return _to_httpx(recorded, request, replayed=None)

    def _moved(self, path: str, role: str) -> str | None:
        """Why a request on `path` cannot match when the cassette holds none of `role` on that path
        (a base URL without the `/v1` it was recorded with, say); None when it holds one."""
        paths = sorted({kept.path for kept, _ in self.cassette.data if role_of(kept) == role})
        if path in paths:
            return None
        held = f"its path is not one the cassette holds ({', '.join(paths)})"
        for at in (i for i, char in enumerate(path) if char == "/"):
            tail = path[at:]
            old = next((p[:-len(tail)] for p in paths if tail != "/" and p.endswith(tail)), None)
            if old is not None:
                return (f"{held}: the provider's base URL has another path than when it was recorded "
                        f"(recorded under {old or '/'}, now under {path[:at] or '/'})")
        return f"{held}: the request goes to another endpoint than when it was recorded (its provider's base URL or wire format changed)"

    def forget(self, role: str, live: frozenset[str]) -> None:
        """Drop the loaded requests of `role` (before any is played), so they are recorded again, and
        let only the roles `live` be sent on: every other role's requests must replay."""
        self.cassette.data = [(request, response) for request, response in self.cassette.data
                              if role_of(request) != role]
        self.live_roles = live

    def replays(self, request: httpx.Request) -> bool:
        """Whether `request` would be answered from the cassette, never sent on."""
        if self.protected or self.inner is None:
            return True
        return bool(self.cassette.can_play_response_for(Request(request.method, str(request.url), b"",
                                                                dict(request.headers))))

    def _compare(self, stored: Request, live: Request, role: str, *, same_conversation: bool = False) -> None:
        """Keep the request drift of `live` from `stored`; with `same_conversation`, CassetteError when
        the conversation it carries is not the recorded one (`conversation`)."""
        if requests_match(live, stored, [self.body_matcher]):
            return
        recorded, sent = json_body(stored.body), json_body(live.body)
        differs = difference(recorded, sent, self.volatile) if same_conversation else None
        if differs is not None:
            raise CassetteError(
                f"fixture {self.fixture_id!r}: request #{self.sent} does not carry the conversation it was recorded "
                f"with: {differs}. The replay went another way (the agent sent a request more or fewer, or acted "
                "on another answer), so the recorded answer is for another question; make the agent send the same "
                "requests each run, or re-record with "
                f"{record_flags(RecordMode.ALL, self.fixture_id, self.tools)}")
        for change in request_changes(recorded, sent, self.volatile):
            key = (role, change.path, change.kind, canonical(change.old), canonical(change.new))
            self.drift.setdefault(key, (role, change))

    @property
    def request_drift(self) -> list[tuple[str, Change]]:
        """Each distinct change between recorded and replayed request bodies, once, with whose
        request it is."""
        return list(self.drift.values())

    def close(self) -> None:
        """The inner transport is shared by the whole run: it is not closed here."""
