"""A loopback OpenAI-compatible server for the benchmark: a scripted agent with a settable latency.

Every fixture plays three requests: a file_read, a grep, then a final answer (two requests,
`requests=2`: the file_read, then the answer).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PLAN: list[Any] = [
    [("file_read", {"path": "notes.txt"})],
    [("grep", {"pattern": "needle"})],
    "The needle is on line 2.",
]


def reply(body: dict[str, Any], plan: list[Any] = PLAN) -> dict[str, Any]:
    index = sum(1 for m in body["messages"] if m["role"] == "assistant")
    turn = plan[min(index, len(plan) - 1)]
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if isinstance(turn, str):
        message["content"] = turn
    else:
        message["tool_calls"] = [
            {"id": f"call_{index}_{i}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for i, (n, a) in enumerate(turn)
        ]
    return {"id": f"chatcmpl-{index}", "object": "chat.completion", "model": "bench",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 200, "completion_tokens": 20, "total_tokens": 220}}


class _Listener(ThreadingHTTPServer):
    """A threading HTTP server that listens as a provider's does."""

    daemon_threads = True
    # socketserver listens with a backlog of 5: eight fixtures connecting at once overflowed it, and
    # the kernel dropped the last ones' handshakes, which a client retries a second later: a second
    # added to a `--jobs 8` run now and then, by the bench. uvicorn (vLLM's server) listens with 2048.
    request_queue_size = 2048


class BenchServer:
    """Serve the plan on 127.0.0.1 with `latency` seconds added to every answer (or, given `answer`,
    what it makes of each request's body); `served` counts the answers."""

    def __init__(self, latency: float = 0.0, requests: int = 3,
                 answer: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> None:
        self.latency = latency
        self.served = 0
        plan = PLAN if requests == 3 else [*PLAN[: requests - 1], PLAN[-1]]
        respond = answer or (lambda body: reply(body, plan))
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                if server.latency:
                    time.sleep(server.latency)
                data = json.dumps(respond(body)).encode()
                server.served += 1
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = _Listener(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_port}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
