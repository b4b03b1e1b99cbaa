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
or 502), and remembered in `failures`: the fixture ends in error naming it. So is a body replio
cannot send on as it came: one over `MAX_REQUEST_BYTES` (announced, or sent in chunks), one that is
not strict JSON (`NaN`, a number too long, nesting deeper than `jsonin.MAX_DEPTH`), one holding a lone
surrogate (``"\\ud800"``, which no UTF-8 request can carry). A body the agent stopped sending
(its connection closed, or it was not whole within `BODY_TIMEOUT` seconds) is named as cut short, in `cut`:
the agent usually went away for a reason of its own (it was stopped at its timeout), which its
fixture names first.

What goes back to the agent is redacted as every output is: a provider that echoes the key it was
sent (in an error quoting the request's headers, say) hands the agent ``[REDACTED]``, and an answer
holding the key in a form that cannot be redacted in place (base64 inside a UTF-16 body) is
withheld, named. A replayed request whose conversation is not the recorded one
(`recording.conversation`) is a failure too: its recorded answer was made for another question.

Under ``/replio/tools`` the relay serves the fixture's own tools to the agent (`agents.tools`): GET
lists them as replio's loop offers them, POST ``/replio/tools/NAME`` with the arguments as a JSON
object runs that call as replio's loop runs a model's (`Toolbox.call`: a stub answers with its
recorded result), one call at a time, apart from the model requests; the result is redacted as an
answer is.
"""

from __future__ import annotations

import json
import re
import secrets
import socket
import threading
import time
from collections.abc import Callable, Mapping
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol
from urllib.parse import unquote

import httpx

from .._runtime.deadline import Interrupted
from .._runtime.jsoncanon import canonical
from .._runtime.jsonin import JsonProblem, read_json
from .._runtime.redact import NO_SECRETS, Redactor
from ..errors import ReplioError
from .base import Provider
from .bounded import ResponseTooLarge
from .http import CONNECT_TIMEOUT_MAX, ROLE, SAME_CONVERSATION, HTTPProvider
from .wire.relayed import FORMAT_NAMES, Relayed, route

__all__ = ["MAX_REQUEST_BYTES", "TOOLS_PATH", "FixtureTools", "Relay", "RelayServer"]

#: Where the relay serves the fixture's own tools to the agent (`agents.tools.TOOLS_URL` names it).
TOOLS_PATH = "/replio/tools"

#: The largest request body an agent may send.
MAX_REQUEST_BYTES = 32 * 1024 * 1024
#: How long a request's body may take to arrive once its headers have.
BODY_TIMEOUT = 30.0
#: Request headers of the agent's that are sent on: they change what the model does.
_KEPT_HEADERS = ("anthropic-beta",)
#: A chunk's size: hexadecimal digits, 16 at most (more would be far over `MAX_REQUEST_BYTES` anyway).
_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}")
#: How much of a body is read at once, each read bounded by what is left of `BODY_TIMEOUT`.
_PIECE = 1 << 16


class FixtureTools(Protocol):
    """The fixture's tools as the relay serves them to the agent (a `tools.toolbox.Toolbox`)."""

    @property
    def specs(self) -> tuple[dict[str, Any], ...]:
        """Each tool as replio's loop offers it: name, description, parameters."""

    def call(self, name: str, arguments: Any) -> str:
        """Run one call; a failure is a result starting with ``Error:``."""


class Relay:
    """Sends an agent's requests to `provider` through `transport`, keeping each exchange."""

    def __init__(self, provider: Provider, transport: httpx.BaseTransport | None, *,
                 redactor: Redactor = NO_SECRETS, tools: FixtureTools | None = None) -> None:
        self.provider = provider
        #: The fixture's tools the agent may have replio run (`agents.tools`); None: it is offered none.
        self.tools = tools
        self._tools_lock = threading.Lock()
        self.transport = transport if transport is not None else provider.transport()
        self.redactor = redactor
        self.exchanges: list[Relayed] = []
        self.failures: list[str] = []
        #: Requests the agent stopped sending part way, each named (see the module's docstring).
        self.cut: list[str] = []
        self.closed = False
        self._lock = threading.Lock()

    def handle(self, method: str, path: str, headers: Mapping[str, str], raw: bytes) -> tuple[int, str, bytes]:
        """Answer one request of the agent: (status, content type, body)."""
        if path == TOOLS_PATH or path.startswith(TOOLS_PATH + "/"):
            return self._tool(method, path, raw)
        with self._lock:
            if self.closed:
                return 503, "application/json", _error_body("the fixture has ended")
            try:
                return self._relay(method, path, headers, raw)
            except _Refused as exc:
                return exc.status, "application/json", _error_body(exc.message)
            except Interrupted:
                return 503, "application/json", _error_body("the run was interrupted")
            except Exception as exc:  # noqa: BLE001 (an agent must get an answer, and its fixture the reason)
                failed = self._failed(500, f"replio's relay failed on the agent's request to {path}: "
                                           f"{type(exc).__name__}: {self.redactor.text(str(exc))}")
                return failed.status, "application/json", _error_body(failed.message)

    def _tool(self, method: str, path: str, raw: bytes) -> tuple[int, str, bytes]:
        """The fixture's tools, listed (GET) or one of them run (POST, its arguments the body)."""
        if self.closed:
            return 503, "application/json", _error_body("the fixture has ended")
        if self.tools is None:
            return 404, "application/json", _error_body("this fixture offers the agent no tools of its own")
        if path == TOOLS_PATH:
            if method != "GET":
                return 405, "application/json", _error_body(f"list the fixture's tools with GET {TOOLS_PATH}")
            return 200, "application/json", json.dumps({"tools": list(self.tools.specs)}).encode("utf-8")
        name = unquote(path[len(TOOLS_PATH) + 1:])
        if method != "POST":
            return 405, "application/json", _error_body(f"run a tool with POST {TOOLS_PATH}/NAME, its arguments "
                                                        "a JSON object")
        try:
            arguments = read_json(raw.decode("utf-8")) if raw.strip() else {}
        except (UnicodeDecodeError, JsonProblem) as exc:
            return 400, "application/json", _error_body(f"the arguments of {name!r} are not JSON: {exc}")
        if not isinstance(arguments, dict):
            return 400, "application/json", _error_body(f"the arguments of {name!r} are not a JSON object")
        try:
            with self._tools_lock:
                result = self.tools.call(name, arguments)
        except Interrupted:
            return 503, "application/json", _error_body("the run was interrupted")
        except ReplioError as exc:  # the harness failed, not the tool: the fixture ends in error, named
            message = f"replio failed running the agent's call of {name!r}: {self.redactor.text(str(exc))}"
            self.failures.append(message)
            return 500, "application/json", _error_body(message)
        return 200, "application/json", json.dumps({"result": self.redactor.text(result)}).encode("utf-8")

    def refuse(self, refused: _Refused) -> tuple[int, str, bytes]:
        """Answer a request whose body could not be read whole; kept in `cut` (or `failures`, for one
        malformed) unless the fixture has ended."""
        with self._lock:
            if not self.closed:
                (self.cut if refused.cut else self.failures).append(refused.message)
        return refused.status, "application/json", _error_body(refused.message)

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
        body = self._parsed(raw, f"the agent's {name} request ({path})")
        if self.provider.settings.model_named and found.format != "gemini":
            body["model"] = self.provider.model
        streamed = found.streamed or body.get("stream") is True
        answered = self._send(self.provider, self.transport, url, body, headers, streamed)
        self.exchanges.append(Relayed(found.format, body, answered.status_code, answered.content,
                                      answered.headers.get("content-type")))
        return answered.status_code, answered.headers.get("content-type", "application/json"), self._shown(answered)

    def _parsed(self, raw: bytes, what: str) -> dict[str, Any]:
        """The request's body as a JSON object replio can send on as canonical UTF-8."""
        try:
            body = read_json(raw.decode(json.detect_encoding(raw)))
        except UnicodeDecodeError as exc:
            raise self._failed(400, f"{what} is not text in an encoding JSON may use: {exc.reason} at byte "
                                    f"{exc.start}; send UTF-8") from None
        except JsonProblem as exc:
            raise self._failed(400, f"{what} is {exc}") from None
        if not isinstance(body, dict):
            raise self._failed(400, f"{what} is not a JSON object")
        try:
            canonical(body).encode("utf-8")
        except UnicodeEncodeError:
            raise self._failed(400, f"{what} holds a lone surrogate (an escape such as \\ud800 without its "
                                    "pair), which is no Unicode text and cannot be sent on; send the text it "
                                    "stands for") from None
        return body

    def _shown(self, answered: httpx.Response) -> bytes:
        """The answer's body as the agent may see it: with the key redacted, as every output is."""
        content = answered.content
        if not self.redactor.found(content):
            return content
        shown = self.redactor.text(content.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
        if self.redactor.found(shown):
            raise self._failed(502, f"{self.provider.settings.name}: the answer holds the run's key in a form "
                                    "that cannot be redacted in place (its body is not UTF-8); it was not passed "
                                    "to the agent")
        return shown

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
    """A request answered with an error, not sent on; `cut`: its body did not arrive whole."""

    def __init__(self, status: int, message: str, *, cut: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.cut = cut


def _error_body(message: str) -> bytes:
    """An error every SDK surfaces: OpenAI's and Anthropic's shapes at once."""
    error = {"type": "replio_relay_error", "message": f"replio: {message}", "code": "replio_relay"}
    return json.dumps({"type": "error", "error": error}).encode("utf-8")


class _Body:
    """Reads one request's body, sent with a length or in chunks, within `timeout` seconds of its
    headers and `MAX_REQUEST_BYTES`; `_Refused` naming why it cannot."""

    def __init__(self, rfile: Any, connection: socket.socket, timeout: float) -> None:
        self.rfile, self.connection, self.timeout = rfile, connection, timeout
        self.deadline = time.monotonic() + timeout
        self.body = bytearray()

    def read(self, headers: Message) -> bytes:
        try:
            if "chunked" in headers.get("transfer-encoding", "").lower():
                return self._chunks()
            given = (headers.get("content-length") or "0").strip()
            if not given.isdigit():
                raise _Refused(400, f"the agent's request has no valid content-length ({given[:40]!r}); send "
                                    "a length of 0 or more, or the body in chunks")
            self._exactly(int(given))
            return bytes(self.body)
        finally:
            self.connection.settimeout(None)

    def _chunks(self) -> bytes:
        while True:
            line = self._line()
            if not line:
                raise _Refused(400, f"the agent's request ended after {len(self.body)} bytes, before its last "
                                    "chunk (its connection closed); nothing was sent to the model", cut=True)
            digits = line.split(b";")[0].strip()
            if _CHUNK_SIZE.fullmatch(digits) is None:
                raise _Refused(400, f"the agent's request sent a chunk size that is not a hexadecimal number "
                                    f"({line[:40]!r}); nothing was sent to the model")
            size = int(digits, 16)
            if size == 0:
                while self._line().strip():  # trailers, to the blank line
                    pass
                return bytes(self.body)
            self._exactly(len(self.body) + size)
            self._line()  # the CRLF after each chunk

    def _exactly(self, total: int) -> None:
        """Read on until the body holds `total` bytes."""
        if total > MAX_REQUEST_BYTES:
            raise _Refused(413, f"the agent's request is larger than {MAX_REQUEST_BYTES} bytes, the most replio "
                                "sends on; nothing was sent to the model")
        while len(self.body) < total:
            piece = self._timed(lambda: self.rfile.read1(min(_PIECE, total - len(self.body))), total)
            if not piece:
                raise _Refused(400, f"the agent's request ended after {len(self.body)} of the {total} bytes it "
                                    "announced (its connection closed); nothing was sent to the model", cut=True)
            self.body += piece

    def _line(self) -> bytes:
        return bytes(self._timed(lambda: self.rfile.readline(100), None))

    def _timed(self, read: Callable[[], bytes], total: int | None) -> bytes:
        left = self.deadline - time.monotonic()
        try:
            if left <= 0:
                raise TimeoutError
            self.connection.settimeout(left)
            return read()
        except TimeoutError:
            announced = f" ({len(self.body)} of the {total} bytes it announced came)" if total is not None else ""
            raise _Refused(408, f"the agent's request did not arrive whole within {self.timeout:g} s{announced}; "
                                "nothing was sent to the model", cut=True) from None


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """Nothing on stderr: what went wrong for the agent is in its fixture's result (`Relay.failures`)."""


class RelayServer:
    """`relay` served on a free loopback port under a random path token; `base_url` is what agents get."""

    def __init__(self, relay: Relay, *, body_timeout: float = BODY_TIMEOUT) -> None:
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
                try:
                    raw = _Body(self.rfile, self.connection, body_timeout).read(self.headers)
                except _Refused as refused:
                    self.close_connection = True
                    self._send(*owner.relay.refuse(refused))
                    return
                path = self.path[len(prefix):].split("?", 1)[0] or "/"
                status, kind, body = owner.relay.handle(method, path, dict(self.headers.items()), raw)
                self._send(status, kind, body)

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
