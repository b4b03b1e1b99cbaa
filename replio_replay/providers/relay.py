"""The relay: a loopback endpoint a user's agent sends its model requests to, for one fixture.

`RelayServer` listens on 127.0.0.1 (a free port) under a random path token, so no other process
on the machine can send through it, and hands each request to `Relay`. The relay tells the wire
format by the path (`wire.relayed.route`), refuses one the run's provider does not speak (naming
both), puts the run's model in the body when the provider spec names one, and sends it to the
provider's URL for that format with the provider's own key and headers, through the fixture's
transport: the cassette's, which records it as role ``agent`` or answers it from the recording
(then nothing leaves the machine), or the live pooled one. The agent's own credentials and SDK
headers are dropped; the answer (a stream too: it is read whole, then sent on as the same bytes)
goes back to the agent as it came, and is kept (`Relayed`) for the trace.

Requests of one agent are relayed one at a time, in the order they arrive, so a recording's order
is the order its agent asked in. A request that could not be relayed (no recording for it, the
server unreachable) is answered with an error the SDK surfaces (HTTP 400, which no SDK retries,
or 502), and remembered in `failures`: the fixture ends in error naming it. So is a replayed
request whose conversation is not the recorded one (`recording.conversation`): its recorded
answer was made for another question.
"""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from .._runtime.deadline import Interrupted
from .._runtime.jsoncanon import canonical
from .._runtime.redact import NO_SECRETS, Redactor
from ..errors import ReplioError
from .base import Provider
from .bounded import ResponseTooLarge
from .http import CONNECT_TIMEOUT_MAX, ROLE, SAME_CONVERSATION, HTTPProvider
from .wire.relayed import FORMAT_NAMES, Relayed, route

__all__ = ["MAX_REQUEST_BYTES", "Relay", "RelayServer"]

#: The largest request body an agent may send.
MAX_REQUEST_BYTES = 32 * 1024 * 1024
#: Request headers of the agent's that are sent on: they change what the model does.
_KEPT_HEADERS = ("anthropic-beta",)


class Relay:
    """Sends an agent's requests to `provider` through `transport`, keeping each exchange."""

    def __init__(self, provider: Provider, transport: httpx.BaseTransport | None, *,
                 redactor: Redactor = NO_SECRETS) -> None:
        self.provider = provider
        self.transport = transport if transport is not None else provider.transport()
        self.redactor = redactor
        self.exchanges: list[Relayed] = []
        self.failures: list[str] = []
        self.closed = False
        self._lock = threading.Lock()

    def handle(self, method: str, path: str, headers: Mapping[str, str], raw: bytes) -> tuple[int, str, bytes]:
        """Answer one request of the agent: (status, content type, body)."""
        with self._lock:
            if self.closed:
                return 503, "application/json", _error_body("the fixture has ended")
            try:
                return self._relay(method, path, headers, raw)
            except _Refused as exc:
                return exc.status, "application/json", _error_body(exc.message)
            except Interrupted:
                return 503, "application/json", _error_body("the run was interrupted")

    def close(self) -> bool:
        """Refuse every request from now on; whether one was in flight then (the agent was stopped
        while waiting for the model: its answer may still come, and be kept, after the fixture)."""
        idle = self._lock.acquire(blocking=False)
        self.closed = True
        if idle:
            self._lock.release()
        return not idle

    def _relay(self, method: str, path: str, headers: Mapping[str, str], raw: bytes) -> tuple[int, str, bytes]:
        found = route(path) if method == "POST" else None
        if found is None:
            known = ", ".join(f"{name} (…{suffix})" for name, suffix in _SUFFIXES.items())
            raise _Refused(404, f"replio's relay does not serve {method} {path}; it relays POST requests of: {known}")
        name = FORMAT_NAMES[found.format]
        if not isinstance(self.provider, HTTPProvider) or self.transport is None:
            raise self._failed(400, f"the provider {self.provider.settings.name!r} sends no HTTP, so it cannot answer "
                                    "an agent's requests; run the agent against a provider that speaks HTTP, or "
                                    "replay its recording")
        url = self.provider.relay_url(found.format, found.model, streamed=found.streamed)
        if url is None:
            raise self._failed(400, f"the agent sent an {name} request ({path}), which the run's provider "
                                    f"{self.provider.settings.name!r} does not speak; run it with a provider that "
                                    "does, or point the agent's SDK at one the provider speaks")
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError):
            body = None
        if not isinstance(body, dict):
            raise self._failed(400, f"the agent's {name} request ({path}) is not a JSON object")
        if self.provider.settings.model_named and found.format != "gemini":
            body["model"] = self.provider.model
        streamed = found.streamed or body.get("stream") is True
        answered = self._send(self.provider, self.transport, url, body, headers, streamed)
        self.exchanges.append(Relayed(found.format, body, answered.status_code, answered.content,
                                      answered.headers.get("content-type")))
        return answered.status_code, answered.headers.get("content-type", "application/json"), answered.content

    def _send(self, provider: HTTPProvider, transport: httpx.BaseTransport, url: str, body: dict[str, Any],
              headers: Mapping[str, str], streamed: bool) -> httpx.Response:
        settings = provider.settings
        sent = {"accept": "text/event-stream" if streamed else "application/json", "accept-encoding": "identity",
                "content-type": "application/json", "user-agent": "replio-replay",
                **{k: v for k, v in headers.items() if k.lower() in _KEPT_HEADERS},
                **provider.basic_auth, **provider.headers()}
        timeouts = httpx.Timeout(settings.timeout, connect=min(settings.timeout, CONNECT_TIMEOUT_MAX)).as_dict()
        request = httpx.Request("POST", url, content=canonical(body, allow_nan=False).encode("utf-8"), headers=sent,
                                extensions={"timeout": timeouts, ROLE: "agent", SAME_CONVERSATION: True})
        try:
            response = transport.handle_request(request)
            try:
                content = response.read()
            finally:
                response.close()
        except ReplioError as exc:  # the cassette holds no answer for it
            raise self._failed(400, str(exc)) from None
        except ResponseTooLarge as exc:
            raise self._failed(502, f"{settings.name}: the response was refused: {exc}") from None
        except httpx.TimeoutException:
            raise self._failed(504, f"{settings.name}: no response within {settings.timeout:g} s") from None
        except httpx.TransportError as exc:
            raise self._failed(502, f"{settings.name}: cannot reach {self.redactor.text(url)}: "
                                    f"{self.redactor.text(str(exc)) or type(exc).__name__}") from None
        return httpx.Response(response.status_code, headers=response.headers, content=content)

    def _failed(self, status: int, message: str) -> _Refused:
        """Remember why a request could not be relayed (the fixture ends in error) and refuse it."""
        self.failures.append(message)
        return _Refused(status, message)


_SUFFIXES = {"OpenAI Chat Completions": "/chat/completions", "OpenAI Responses": "/responses",
             "Anthropic Messages": "/messages", "Gemini": "/models/M:generateContent", "Ollama": "/api/chat"}


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _error_body(message: str) -> bytes:
    """An error every SDK surfaces: OpenAI's and Anthropic's shapes at once."""
    error = {"type": "replio_relay_error", "message": f"replio: {message}", "code": "replio_relay"}
    return json.dumps({"type": "error", "error": error}).encode("utf-8")


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """Nothing on stderr: what went wrong for the agent is in its fixture's result (`Relay.failures`)."""


class RelayServer:
    """`relay` served on a free loopback port under a random path token; `base_url` is what agents get."""

    def __init__(self, relay: Relay) -> None:
        self.relay = relay
        self.token = secrets.token_hex(8)
        prefix = f"/{self.token}"
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes: with Nagle's algorithm, each answer on a
            # kept-alive connection would wait for the agent's delayed ACK (about 40 ms).
            disable_nagle_algorithm = True

            def do_POST(self) -> None:  # noqa: N802 (the http.server API)
                self._answer("POST")

            def do_GET(self) -> None:  # noqa: N802
                self._answer("GET")

            def _answer(self, method: str) -> None:
                if not (self.path == prefix or self.path.startswith(prefix + "/")):
                    self._send(404, "application/json", _error_body("not a path of this relay"))
                    return
                raw = self._body()
                if raw is None:
                    self.close_connection = True
                    self._send(413, "application/json", _error_body("the request body is too large or malformed"))
                    return
                path = self.path[len(prefix):].split("?", 1)[0] or "/"
                status, kind, body = owner.relay.handle(method, path, dict(self.headers.items()), raw)
                self._send(status, kind, body)

            def _body(self) -> bytes | None:
                """The request body, sent with a length or in chunks (None: too large, or not HTTP)."""
                if "chunked" not in self.headers.get("transfer-encoding", "").lower():
                    given = self.headers.get("content-length") or "0"
                    length = int(given) if given.strip().isdigit() else -1
                    return self.rfile.read(length) if 0 <= length <= MAX_REQUEST_BYTES else None
                body = bytearray()
                while True:
                    try:
                        size = int(self.rfile.readline(100).split(b";")[0].strip() or b"0", 16)
                    except ValueError:
                        return None
                    if size == 0:
                        while self.rfile.readline(8192).strip():  # trailers, to the blank line
                            pass
                        return bytes(body)
                    if len(body) + size > MAX_REQUEST_BYTES:
                        return None
                    body += self.rfile.read(size)
                    self.rfile.readline(3)  # the CRLF after each chunk

            def _send(self, status: int, kind: str, body: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("content-type", kind)
                    self.send_header("content-length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:  # the agent went away (stopped at its timeout, say): nobody to answer
                    self.close_connection = True

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the http.server API)
                """Quiet: the agent's requests are in the cassette, not on stderr."""

        self.server = _QuietServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                       name="replio-relay", daemon=True)

    @property
    def base_url(self) -> str:
        port = self.server.server_address[1]
        return f"http://127.0.0.1:{port}/{self.token}"

    def __enter__(self) -> RelayServer:
        self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.relay.close()
        # The relay refuses everything once closed (`Relay.close`); the server's loop notices the
        # shutdown at its next poll, which the fixture need not wait for.
        threading.Thread(target=self._stop, name="replio-relay-stop", daemon=True).start()

    def _stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
