"""Loopback servers for the agent budgets of `bench/run.py` (6 and 7).

`ShopUpstream` is a scripted OpenAI-compatible model for the your-agent example's one-task
fixtures (`examples/your-agent`): keyed on the task (the conversation's first user message), it
calls the shop's tools, then answers with text that passes the fixture's checks. The bench
records the example's fixtures against it once, so budget 6 needs no local model.

`Playback` is the bare server replio's relay is measured against: `http.server` (Nagle's
algorithm off, as in `bench/server.py`: a model's server answers without a delayed-ACK stall), one
recorded response body after another for each fixture (`bodies`, read from its cassette by
`recorded_bodies`), nothing parsed, nothing checked. The fixture is the first segment of the path
(`{url}/<fixture>/v1/chat/completions`), and `rewind` starts every fixture's bodies again.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from server import reply

#: What the model does for each task of the example's one-task fixtures: the tool calls of each
#: step, then its answer (as `server.reply` plays a plan).
SHOP_PLANS: dict[str, list[Any]] = {
    "How much is 120 EUR in US dollars?": [
        [("convert_currency", {"amount": 120, "from_currency": "EUR", "to_currency": "USD"})],
        "120 EUR is 130.80 USD at today's rate.",
    ],
    "Hi! Just saying thanks for the quick delivery last week.": [
        "You're welcome! Glad it arrived quickly.",
    ],
    "What did order A-1002 cost, in British pounds?": [
        [("lookup_order", {"order_id": "A-1002"})],
        [("convert_currency", {"amount": 120, "from_currency": "EUR", "to_currency": "GBP"})],
        "Order A-1002 cost 120 EUR, which is 103.20 GBP.",
    ],
    "Order A-1001 is taking a while. Can you check on it? Do not refund anything.": [
        [("lookup_order", {"order_id": "A-1001"})],
        "Order A-1001 (a desk lamp) has shipped and is on its way.",
    ],
    "What is the status of my order A-1001?": [
        [("lookup_order", {"order_id": "A-1001"})],
        "Your order A-1001 has shipped.",
    ],
    "Which of my orders are still pending?": [
        [("list_orders", {"status": "pending"})],
        "Orders A-1004 and A-1005 are still pending.",
    ],
    "My order A-1003 arrived broken. Please refund it.": [
        [("refund_order", {"order_id": "A-1003", "reason": "arrived broken"})],
        "I have refunded 54.5 EUR for order A-1003.",
    ],
}
#: The answer to a task without a plan: no tool, a polite text.
UNPLANNED = ["Sorry, I cannot help with that."]


def _serve(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return httpd


class _Quiet(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # The headers and the body go in two writes: with Nagle's algorithm on, the body would wait
    # for the client's delayed ACK of the headers (40 ms on Linux) on a kept-alive connection.
    disable_nagle_algorithm = True

    def log_message(self, *args: Any) -> None:
        pass

    def answer(self, status: int, data: bytes) -> None:
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def first_user(body: Mapping[str, Any]) -> str:
    """The conversation's first user message: the fixture's task."""
    return next((m.get("content") or "" for m in body.get("messages", []) if m.get("role") == "user"), "")


class ShopUpstream:
    """The scripted model on 127.0.0.1: `url` is its OpenAI base URL (`.../v1`)."""

    def __init__(self) -> None:
        class Handler(_Quiet):
            def do_POST(self) -> None:  # noqa: N802 (the http.server API)
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                plan = SHOP_PLANS.get(first_user(body), UNPLANNED)
                self.answer(200, json.dumps(reply(body, plan)).encode())

        self.httpd = _serve(Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_port}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class Playback:
    """Each fixture's recorded response bodies, in order, on 127.0.0.1 (see the module docstring)."""

    def __init__(self, bodies: Mapping[str, list[bytes]]) -> None:
        self.bodies = dict(bodies)
        self.next: dict[str, int] = {}
        owner = self

        class Handler(_Quiet):
            def do_POST(self) -> None:  # noqa: N802 (the http.server API)
                self.rfile.read(int(self.headers["content-length"]))
                key = self.path.split("/", 2)[1]
                played = owner.bodies.get(key, [])
                index = owner.next.get(key, 0)
                owner.next[key] = index + 1
                if index < len(played):
                    self.answer(200, played[index])
                else:
                    self.answer(400, b'{"error": {"message": "no more recorded responses"}}')

        self.httpd = _serve(Handler)

    def base_url(self, fixture: str) -> str:
        """The OpenAI base URL (`OPENAI_BASE_URL`) that plays `fixture`'s bodies."""
        return f"http://127.0.0.1:{self.httpd.server_port}/{fixture}/v1"

    def rewind(self) -> None:
        self.next.clear()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def recorded_bodies(cassette: Path) -> list[bytes]:
    """The response bodies a cassette recorded, in order, as a replay answers with them (read through vcrpy
    and the public `ReadableSerializer`, as `bench/floor.py` reads cassettes)."""
    import vcr

    from replio_replay import ReadableSerializer

    my_vcr = vcr.VCR(record_mode="none")
    my_vcr.register_serializer("replio", ReadableSerializer())
    with my_vcr.use_cassette(str(cassette), serializer="replio") as recorded:
        out = []
        for response in recorded.responses:
            string = response["body"]["string"]
            out.append(string if isinstance(string, bytes) else string.encode("utf-8"))
        return out
