"""One fixture's cassette: a vcrpy `Cassette`, configured through vcrpy's own registry, never patched in.

The harness answers HTTP itself (`transport.CassetteTransport` asks the cassette for
responses), so none of vcrpy's patchers is ever activated: a `VCR` config registers the
readable serializer, the atomic persister, the canonical-JSON body matcher and the role matcher
the vcrpy way, and its merged config builds (or loads) the `Cassette`. Requests are matched by
vcrpy's `method` and `path` matchers and by whose request it is (`role`: the agent's, a
simulated user's, a judge's: `roles`); its `before_record_*` hooks scrub secrets from each interaction
as it is kept, loaded or recorded, so no secret is in memory and so none in the file.

Importing vcrpy costs a replay about 45 ms: its package imports `vcr.config`, and with it a
patcher for every HTTP library installed (wrapt, and httpx2 here), even when only
`vcr.cassette` is asked for.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

from vcr.cassette import Cassette
from vcr.config import VCR
from vcr.request import Request

from .._runtime.jsoncanon import canonical
from .modes import RecordMode
from .persister import AtomicPersister
from .roles import same_role
from .scrub import SECRET_HEADERS, scrub_headers, scrub_url
from .serializer import ReadableSerializer

__all__ = ["BODY_MATCHER", "MATCH_ON", "Cassette", "Request", "canonical_json_body", "open_cassette"]

#: The vcrpy matchers a recorded request is found by, in order: not the body, whose changes are drift.
MATCH_ON = ("method", "path", "role")

#: The name the body matcher is registered under; it tells drift apart from the same request resent.
BODY_MATCHER = "canonical_json_body"
_SERIALIZER = "replio-readable"
#: What of vcrpy's merged config a `Cassette` takes (the rest is for its decorator).
_CASSETTE_ARGS = frozenset(inspect.signature(Cassette).parameters)


def json_body(body: bytes | str | None) -> Any:
    """A request body as JSON data; the text itself when it is not JSON, None when empty."""
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    try:
        return json.loads(body) if body else None
    except (TypeError, ValueError):
        return body


def canonical_json_body(r1: Request, r2: Request) -> None:
    """vcrpy matcher: `r1`'s body is `r2`'s, byte for byte or once written as canonical JSON, the
    form cassettes store; else AssertionError."""
    if r1.body == r2.body:
        return  # the common case: providers send canonical JSON, as cassettes store it
    data = json_body(r1.body)
    if isinstance(data, (dict, list)) and canonical(data).encode("utf-8") == r2.body:
        return  # the same request, sent in another form
    raise AssertionError(f"the body of {r1!r} differs from the recorded one")


def scrub_request(request: Request) -> Request:
    """vcrpy's `before_record_request`: the request without secret headers or key-like query values
    (the request itself when it has none: the cassette calls this three times for each request it
    answers, and a replayed request has had them taken out when it was recorded)."""
    uri = scrub_url(request.uri)
    if uri == request.uri and not any(name.lower() in SECRET_HEADERS for name in request.headers):
        return request
    return Request(request.method, uri, request.body, scrub_headers(dict(request.headers)))


def scrub_response(response: dict[str, Any]) -> dict[str, Any]:
    """vcrpy's `before_record_response`: the response without secret headers."""
    return {**response, "headers": scrub_headers(response["headers"])}


def open_cassette(path: Path, mode: RecordMode, serializer: ReadableSerializer, persister: AtomicPersister,
                  *, load: bool) -> tuple[Cassette, VCR]:
    """The cassette at `path` in `mode` (`stale` already resolved), loaded when `load`, and the vcrpy
    config that built it, its matchers registered; CassetteError when it cannot be loaded."""
    config = VCR(record_mode=mode.value, match_on=MATCH_ON, before_record_request=scrub_request,
                 before_record_response=scrub_response)
    config.register_serializer(_SERIALIZER, serializer)
    config.register_persister(persister)
    config.register_matcher(BODY_MATCHER, canonical_json_body)
    config.register_matcher("role", same_role)
    merged = config.get_merged_config(path=str(path), serializer=_SERIALIZER)
    arguments = {name: value for name, value in merged.items() if name in _CASSETTE_ARGS}
    # The merged hook deep-copies each request, bodies and all, before the filters run, so that a
    # filter changing it in place spares the caller's; the only filter here is `scrub_request`, which
    # builds a new request. The cassette calls the hook once for each request it loads and three times
    # for each it answers (`can_play_response_for`, the `in` within it, `play_response`): given the
    # filter itself, a replay copies no body to match it.
    arguments["before_record_request"] = scrub_request
    return (Cassette.load(**arguments) if load else Cassette(**arguments)), config
