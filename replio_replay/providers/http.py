"""Shared HTTP sending for the real providers: one JSON POST, bounded retries, one-line errors.

`post_json` builds an `httpx.Request` with a deterministic JSON body and sends it with
``transport.handle_request`` (the per-fixture transport, which recording may wrap, or the
provider's shared pooled one), retrying as `retry` says; every failure becomes a
`ProviderError` with a one-line message. `HTTPProvider` is the base of the providers that
speak HTTP: it owns the one pooled `httpx.HTTPTransport` each keeps for the whole run.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import functools
import json
import random
import re
import ssl
import threading
import time
from abc import abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar
from urllib.parse import unquote

import httpx

from .._runtime.jsoncanon import canonical
from .._runtime.redact import NO_SECRETS, Redactor, shown_url, without_credentials
from ..errors import (
    ConfigError,
    ContextFullError,
    ProviderAuthError,
    ProviderConnectError,
    ProviderHTTPError,
    ProviderResponseError,
)
from .base import ChatRequest, ChatResponse, Exchange, Provider, ProviderSettings, Usage
from .bounded import BoundedTransport, ResponseTooLarge
from .retry import RETRY_STATUSES, Backoff, Retryable, Sleep, retry_after_seconds, with_retries
from .wire import clean_response, clean_text, preview
from .wire.relayed import Relayed, decoded, route

__all__ = ["REPLAYED", "ROLE", "SAME_CONVERSATION", "Endpoint", "HTTPProvider", "Pools", "joined", "post_json", "shared_ssl_context"]

#: The response extension a cassette sets on what it replays: the URL it was recorded from, which
#: messages name (so a replay says what the recording said), and retries do not wait again.
REPLAYED = "replio.replayed"
#: The request extension naming whose request it is (`Exchange.role`): a cassette records and
#: matches it; it is never sent to the server.
ROLE = "replio.role"
#: The request extension marking a request whose conversation a replay must find as recorded (a
#: user's agent's, sent through the relay): one that differs is answered with no recording.
SAME_CONVERSATION = "replio.same_conversation"

#: Connecting never waits longer than this, even with a long read timeout.
CONNECT_TIMEOUT_MAX = 10.0

#: Headers every provider sends. ``identity`` keeps recorded bodies readable (no gzip).
BASE_HEADERS: Mapping[str, str] = {
    "accept": "application/json",
    "accept-encoding": "identity",
    "content-type": "application/json",
    "user-agent": "replio-replay",
}


_ssl_lock = threading.Lock()
_ssl_context: ssl.SSLContext | None = None


def shared_ssl_context() -> ssl.SSLContext | None:
    """One verifying SSL context for every transport (building one costs ~20-100 ms).

    Made like httpx's own default (certifi, honouring SSL_CERT_FILE / SSL_CERT_DIR); None
    with an httpx too old to have `create_ssl_context`, which then builds its own.
    """
    global _ssl_context
    create = getattr(httpx, "create_ssl_context", None)
    if create is None:
        return None
    with _ssl_lock:
        if _ssl_context is None:
            _ssl_context = create()
        return _ssl_context


class Pools(httpx.BaseTransport):
    """A provider's pooled connections: https:// through a pool with the shared verifying context,
    made on its first request, http:// through one that never loads certificates.

    Loading the CA bundle costs 20-40 ms of start-up that a run against a server on this
    machine (http://) never needs. The plain pool's context trusts no certificate at all, so it
    could not make a TLS connection even if it were asked to.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pools: dict[str, httpx.HTTPTransport] = {}

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self._pool(request.url.scheme).handle_request(request)

    def open(self, url: str) -> None:
        """Make the pool requests to `url` go through now, not on the first of them. A pool that
        cannot be made (a CA bundle that does not load) is left to that request, whose fixture says why."""
        with contextlib.suppress(OSError):  # ssl.SSLError is one
            self._pool(httpx.URL(url).scheme)

    def _pool(self, scheme: str) -> httpx.HTTPTransport:
        kind = "https" if scheme == "https" else "http"
        with self._lock:
            pool = self._pools.get(kind)
            if pool is None:
                context = shared_ssl_context() if kind == "https" else ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                pool = self._pools[kind] = httpx.HTTPTransport(verify=context) if context else httpx.HTTPTransport()
            return pool

    def close(self) -> None:
        with self._lock:
            pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            pool.close()


@dataclass(frozen=True)
class Endpoint:
    """Where a request goes and what its error messages should name (`shown`: never a key)."""

    provider: str
    url: str
    base_url: str
    key_env: str | None = None
    has_key: bool = False
    base_url_env: str | None = None
    redactor: Redactor = NO_SECRETS

    @property
    def shown(self) -> str:
        """The URL as messages name it: no userinfo, no key-like query value."""
        return shown_url(self.url)


def _server_message(raw: bytes, redactor: Redactor) -> str:
    """What the server said went wrong: its JSON error message, else the body's start; printable
    (a lone surrogate its JSON escapes becomes U+FFFD, as in an answer)."""
    return clean_text(_said(raw, redactor))


def _said(raw: bytes, redactor: Redactor) -> str:
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return preview(raw, 160, redactor)
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and error.get("message"):
            return preview(str(error["message"]), 160, redactor)
        for candidate in (error, data.get("message"), data.get("detail")):
            if isinstance(candidate, str) and candidate:
                return preview(candidate, 160, redactor)
    return preview(raw, 160, redactor)


def _reason(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    if "refused" in text.lower():
        return "connection refused"
    return text or type(exc).__name__


def _auth_error(ep: Endpoint, status: int, said: str) -> ProviderAuthError:
    if ep.key_env and ep.has_key:
        hint = f"check that {ep.key_env} holds a valid key"
    elif ep.key_env:
        hint = f"set {ep.key_env} to the API key (it is not set)"
    else:
        hint = (
            f"the server wants a key: name the variable that holds it with "
            f"providers.{ep.provider}.api_key_env in .replio/config.json"
        )
    return ProviderAuthError(
        f"{ep.provider}: authentication failed (HTTP {status} from {ep.shown}): {said}; {hint}"
    )


def _connect_error(ep: Endpoint, exc: Exception) -> ProviderConnectError:
    where = "--base-url" + (f", {ep.base_url_env}" if ep.base_url_env else "")
    return ProviderConnectError(
        f"{ep.provider}: cannot connect to {shown_url(ep.base_url)} ({_reason(exc)}); is the server running? "
        f"Set the URL with {where} or providers.{ep.provider}.base_url in .replio/config.json"
    )


def _attempt(
    transport: httpx.BaseTransport,
    request: httpx.Request,
    ep: Endpoint,
    timeout: float,
    backoff: Backoff,
) -> Any:
    """Send once: the decoded JSON, a ProviderError, or `Retryable`."""
    try:
        response = transport.handle_request(request)
        try:
            raw = response.read()
        finally:
            response.close()
    except httpx.TimeoutException as exc:
        def no_answer(tries: str) -> ProviderConnectError:
            return ProviderConnectError(
                f"{ep.provider}: no response from {ep.shown} within {timeout:g} s ({tries}); "
                f"check the server or raise providers.{ep.provider}.timeout in .replio/config.json"
            )

        if isinstance(exc, httpx.ConnectTimeout) or backoff.read_timeouts:
            raise Retryable(no_answer) from None
        raise no_answer("1 attempt; not retried: the server may still be working on it") from None
    except ResponseTooLarge as exc:
        raise ProviderResponseError(
            f"{ep.provider}: the response from {ep.shown} was refused: {exc}; raise max_response_bytes "
            "in .replio/config.json if that is expected"
        ) from None
    except httpx.ConnectError as exc:  # refused or unresolvable: another try will not help
        raise _connect_error(ep, exc) from None
    except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:  # dropped
        reason = _reason(exc)
        raise Retryable(
            lambda tries: ProviderConnectError(
                f"{ep.provider}: the connection to {ep.shown} was dropped ({reason}) ({tries})"
            )
        ) from None
    except httpx.TransportError as exc:  # an unsupported scheme, a proxy error, ...
        raise _connect_error(ep, exc) from None

    status = response.status_code
    recorded_from = response.extensions.get(REPLAYED)
    if recorded_from:
        ep = dataclasses.replace(ep, url=str(recorded_from))
    if 200 <= status < 300:
        try:
            return json.loads(raw)
        except (ValueError, RecursionError):  # not JSON, or nested past what Python can read
            kind = response.headers.get("content-type", "no content-type")
            raise ProviderResponseError(
                f"{ep.provider}: the response from {ep.shown} is not JSON (HTTP {status}, {kind}); "
                f"the body starts: {preview(raw, redactor=ep.redactor)}"
            ) from None
    said = _server_message(raw, ep.redactor)
    if status in (401, 403):
        raise _auth_error(ep, status, said)
    if status in RETRY_STATUSES:
        # A replayed answer is retried at once: the wait happened when it was recorded.
        wait = 0.0 if recorded_from else retry_after_seconds(response.headers.get("retry-after"))
        if wait is not None and wait > backoff.retry_after_max:
            raise ProviderHTTPError(
                f"{ep.provider}: HTTP {status} from {ep.shown}: {said}; the server asks to retry "
                f"after {wait:g} s, longer than replio waits ({backoff.retry_after_max:g} s)"
            )
        raise Retryable(
            lambda tries: ProviderHTTPError(
                f"{ep.provider}: HTTP {status} from {ep.shown} ({tries}): {said}"
            ),
            wait,
        )
    if status in (400, 413, 500) and CONTEXT_FULL.search(said):
        raise ContextFullError(
            f"{ep.provider}: the conversation no longer fits the model's context window "
            f"(HTTP {status} from {ep.shown}: {said})"
        )
    raise ProviderHTTPError(f"{ep.provider}: HTTP {status} from {ep.shown}: {said}")


#: What servers say when a request's conversation is longer than the model's context window:
#: llama.cpp (`request (8367 tokens) exceeds the available context size (8192 tokens)`, and
#: in older builds `Context size has been exceeded`), OpenAI and vLLM (`This
#: model's maximum context length is ...`), Anthropic (`prompt is too long`), Gemini (`The input
#: token count (...) exceeds the maximum number of tokens allowed`).
CONTEXT_FULL = re.compile(
    r"exceeds the available context size|context size has been exceeded|maximum context length"
    r"|context_length_exceeded|prompt is too long|input token count .{0,40}exceeds the maximum",
    re.IGNORECASE,
)


def post_json(
    transport: httpx.BaseTransport,
    endpoint: Endpoint,
    body: Any,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = 60.0,
    backoff: Backoff | None = None,
    sleep: Sleep = time.sleep,
    rand: Callable[[], float] = random.random,
    role: str = "agent",
) -> Any:
    """POST `body` as JSON to `endpoint.url` through `transport` and return the decoded JSON reply;
    the request carries `role` as its `ROLE` extension.

    Retries what `retry` says is worth it up to ``backoff.retries`` times, waiting
    ``Retry-After`` when the server sends one, else the jittered backoff. Raises
    ProviderAuthError (401/403), ProviderHTTPError (any other error status, or one retries
    did not cure), ProviderConnectError (refused, timed out, dropped) or
    ProviderResponseError (a 2xx body that is not JSON); every message is one line.
    """
    backoff = backoff or Backoff()
    # canonical: the form cassettes store request bodies in, so an unchanged replayed request is
    # recognised by its bytes before anything is parsed
    content = canonical(body, allow_nan=False).encode("utf-8")
    all_headers = {**BASE_HEADERS, **(headers or {})}
    timeouts = httpx.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT_MAX)).as_dict()

    def attempt() -> Any:
        request = httpx.Request(
            "POST", endpoint.url, content=content, headers=all_headers, extensions={"timeout": timeouts, ROLE: role},
        )
        return _attempt(transport, request, endpoint, timeout, backoff)

    return with_retries(attempt, backoff, sleep=sleep, rand=rand)


def joined(base_url: str, path: str) -> str:
    """`path` appended to the path of `base_url`, whose query stays the query."""
    base = httpx.URL(base_url)
    return str(base.copy_with(path=base.path.rstrip("/") + path))


def _basic_auth(url: str) -> dict[str, str]:
    parts = httpx.URL(url)
    if not parts.userinfo:
        return {}
    token = base64.b64encode(unquote(parts.userinfo.decode("ascii")).encode("utf-8")).decode("ascii")
    return {"authorization": f"Basic {token}"}


class HTTPProvider(Provider):
    """A provider that POSTs JSON to one endpoint: base URL, headers and wire format per subclass.

    It keeps ONE pooled `httpx.HTTPTransport` for the whole run, made on first use and
    closed by `close`. `generate` sends through the fixture's transport when the runner hands
    one in (recording wraps it), else through that shared one. `sleep` is what waits between
    retries; tests replace it.
    """

    speaks_http = True

    #: The path appended to the base URL.
    path: ClassVar[str] = ""
    #: The wire formats (`wire.relayed`) the server speaks, by the path appended to the base URL
    #: for each: where the requests of a user's agent go.
    relays: ClassVar[Mapping[str, str]] = {}

    def __init__(self, settings: ProviderSettings) -> None:
        super().__init__(settings)
        base_url = self.normalize_base_url(settings.base_url or self.default_base_url or "")
        #: Credentials in the base URL (`http://user:pass@host`) go in a header, never in a URL.
        self.basic_auth = _basic_auth(base_url)
        self.base_url = without_credentials(base_url) or base_url
        self.sleep: Sleep = time.sleep
        self._transport: Pools | None = None
        self._lock = threading.Lock()

    def normalize_base_url(self, url: str) -> str:
        """The base URL without a trailing slash; ConfigError unless it is a usable http(s) URL."""
        url = url.strip().rstrip("/")
        where = "--base-url" + (f", {self.base_url_env}" if self.base_url_env else "")
        fix = f"set it with {where} or providers.{self.settings.name}.base_url in .replio/config.json"
        shown = shown_url(url) if url.startswith(("http://", "https://")) else url
        if not url.startswith(("http://", "https://")):
            raise ConfigError(f"{self.settings.name}: base URL {shown!r} must start with http:// or https:// ({fix})")
        try:
            parts = httpx.URL(url)
        except (httpx.InvalidURL, ValueError) as exc:
            raise ConfigError(f"{self.settings.name}: base URL {shown!r} is not a valid URL: {exc} ({fix})") from None
        if not parts.host:
            raise ConfigError(f"{self.settings.name}: base URL {shown!r} names no host ({fix})")
        return url

    @functools.cached_property
    def url(self) -> str:
        """The full URL requests are sent to, joined once: each request would parse the base URL twice."""
        return joined(self.base_url, self.path)

    def relay_url(self, fmt: str, model: str | None = None, *, streamed: bool = False) -> str | None:
        path = self.relays.get(fmt)
        return None if path is None else joined(self.base_url, path)

    def endpoint(self, redactor: Redactor = NO_SECRETS) -> Endpoint:
        """The target and what error messages name, quoting nothing of `redactor`'s secrets."""
        return Endpoint(
            provider=self.settings.name,
            url=self.url,
            base_url=self.base_url,
            key_env=self.settings.api_key_env,
            has_key=bool(self.settings.api_key),
            base_url_env=self.base_url_env,
            redactor=redactor,
        )

    def headers(self) -> dict[str, str]:
        """Headers beyond the JSON ones: a bearer key when there is one (OpenAI and Ollama's way)."""
        if self.settings.api_key:
            return {"authorization": f"Bearer {self.settings.api_key}"}
        return {}

    @abstractmethod
    def encode(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body for one turn."""

    @abstractmethod
    def decode(self, data: Any, request: ChatRequest) -> ChatResponse:
        """The parsed reply to `request`."""

    def generate(self, request: ChatRequest, exchange: Exchange) -> ChatResponse:
        transport = exchange.transport if exchange.transport is not None else self.transport()
        data = post_json(
            transport,
            self.endpoint(exchange.redactor),
            self.encode(request),
            headers={**self.basic_auth, **self.headers()},
            timeout=self.settings.timeout,
            backoff=Backoff.from_settings(self.settings, read_timeouts=not self.local),
            sleep=self.sleep,
            role=exchange.role,
        )
        return clean_response(self.decode(data, request))

    def answer_usage(self, url: str, body: bytes, content_type: str | None) -> Usage:
        """The token usage of an answer this provider's server gave, live or recorded, to a request
        sent to `url`: one of `generate`'s, read as `decode` reads it, or an agent's in a format the
        server speaks (`relays`), a stream too; ProviderResponseError when the body is not one."""
        found = None if url == self.url else route(httpx.URL(url).path)
        if found is not None:
            return decoded(Relayed(found.format, {}, 200, body, content_type), 0).usage
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):
            raise ProviderResponseError(f"{self.settings.name}: the answer is not JSON; the body starts: "
                                        f"{preview(body)}") from None
        return self.decode(data, ChatRequest((), ())).usage

    def transport(self, cancel: threading.Event | None = None) -> httpx.BaseTransport:
        """The pooled connection, bounded per request by `timeout` and `max_response_bytes`."""
        return BoundedTransport(self._pooled(), timeout=self.settings.timeout,
                                max_bytes=self.settings.max_response_bytes, cancel=cancel)

    def open(self) -> None:
        """Make the pooled connection (`Pools`) for this provider's URL now, before the run's fixtures start."""
        self._pooled().open(self.url)

    def _pooled(self) -> Pools:
        with self._lock:
            if self._transport is None:
                self._transport = Pools()
            return self._transport

    def close(self) -> None:
        with self._lock:
            transport, self._transport = self._transport, None
        if transport is not None:
            transport.close()
