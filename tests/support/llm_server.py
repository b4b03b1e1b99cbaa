"""A tiny HTTP server on 127.0.0.1 that plays scripted replies and records every request.

Tests use it to speak each provider's wire format over a real socket:

    with LLMServer() as server:
        server.reply(json={...})            # queued replies, served in order
        server.handler = lambda req: Reply(json=...)   # or compute one per request
        ... server.url ...
        server.requests[0].json()
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """What the server answers: a status, headers, a JSON or raw body, an optional delay or drop."""

    status: int = 200
    json: Any = None
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drop: bool = False  # close the connection without answering
    trickle: float = 0.0  # seconds between the body's bytes: each read is quick, the whole is slow


@dataclass
class Seen:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class LLMServer:
    """A scripted HTTP server on a free loopback port."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.handler: Callable[[Seen], Reply] | None = None
        self.requests: list[Seen] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                seen = Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()},
                            self.rfile.read(length))
                with server._lock:
                    server.requests.append(seen)
                    if server.handler is not None:
                        reply = server.handler(seen)
                    elif server.replies:
                        reply = server.replies.popleft()
                    else:
                        reply = Reply(500, json={"error": "the test server has no reply queued"})
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.drop:
                    self.close_connection = True
                    self.connection.close()
                    return
                body = json.dumps(reply.json).encode() if reply.json is not None else reply.body
                headers = {"content-type": "application/json" if reply.json is not None else "text/plain"}
                headers.update(reply.headers)
                try:
                    self.send_response(reply.status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("content-length", str(len(body)))
                    self.end_headers()
                    if reply.trickle:
                        for i in range(len(body)):
                            self.wfile.write(body[i:i + 1])
                            self.wfile.flush()
                            time.sleep(reply.trickle)
                    else:
                        self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the client went away (a test killed it)

            do_GET = do_POST = _serve

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def reply(self, **kwargs: Any) -> None:
        """Queue one reply (keyword arguments of `Reply`)."""
        self.replies.append(Reply(**kwargs))

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> LLMServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def chat_completion(text: str | None, model: str, n: int, calls: list[dict[str, Any]] | None = None, *,
                    prompt: int = 50, completion: int = 5) -> Reply:
    """An OpenAI chat completion saying `text` (and making `calls`), the `n`-th of its conversation:
    its id and prompt tokens count `n` in."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = calls
    usage = {"prompt_tokens": prompt + n, "completion_tokens": completion, "total_tokens": prompt + n + completion}
    return Reply(json={"id": f"x-{n}", "model": model, "choices": [{"index": 0, "message": message}], "usage": usage})
