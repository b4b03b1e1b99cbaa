"""`ctx.http` in a child process: every request is made by replio's own client, so it is checked and recorded.

A Python tool by path or an environment's method that takes the `ToolContext` runs in the fixture's
child (see `child`), away from the fixture's HTTP transport, which records and replays. There its
`ctx.http` is a client whose transport (`Relayed`) sends each request to replio as one line
(``{"op": "http", "method", "url", "headers", "body"}``, the body in base64) in the middle of the
call, and waits for the answer: replio makes the request with the fixture's own `ToolContext.http`
(`fetch`: the network guard, the redirects and the cassette are all there) and sends back the
response, or why it was refused (a `ToolFailure`, as in-process), or the error the request met.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import IO, Any

import httpx

from ..errors import ReplioError
from .base import ToolContext, ToolFailure

__all__ = ["Relayed", "fetch", "relayed_client"]

#: Headers of a response that say how its body was sent, not what it is: replio's client has decoded it.
_SENT_AS = frozenset({"content-encoding", "content-length", "transfer-encoding"})


def fetch(ctx: ToolContext, message: dict[str, Any]) -> dict[str, Any]:
    """Make the request a child sent, with `ctx.http` (the fixture's client): its answer for the child.
    A harness error (a replay whose cassette lacks the request) is raised: the fixture ends in error."""
    request = httpx.Request(message["method"], message["url"], headers=message["headers"],
                            content=base64.b64decode(message["body"]))
    try:
        response = ctx.http.send(request)
    except ToolFailure as exc:  # refused by the network guard
        return {"refused": str(exc)}
    except ReplioError:
        raise
    except Exception as exc:  # the network's: the tool may handle it, as it would in-process
        return {"error": f"{type(exc).__name__}: {exc}"}
    headers = [[k, v] for k, v in response.headers.multi_items() if k.lower() not in _SENT_AS]
    return {"status": response.status_code, "headers": headers,
            "body": base64.b64encode(response.content).decode("ascii")}


class Relayed(httpx.BaseTransport):
    """A child's HTTP transport: each request goes to replio over the child's line (see the module docstring)."""

    def __init__(self, send: Callable[[dict[str, Any]], None], answers: IO[bytes]) -> None:
        self.send = send
        self.answers = answers

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.send({"op": "http", "method": request.method, "url": str(request.url),
                   "headers": [[k, v] for k, v in request.headers.multi_items()],
                   "body": base64.b64encode(request.read()).decode("ascii")})
        answer = json.loads(self.answers.readline())
        if "refused" in answer:
            raise ToolFailure(answer["refused"])
        if "error" in answer:
            raise httpx.TransportError(answer["error"])
        return httpx.Response(answer["status"], headers=answer["headers"], content=base64.b64decode(answer["body"]),
                              request=request)


def relayed_client(send: Callable[[dict[str, Any]], None], answers: IO[bytes]) -> httpx.Client:
    """A child's `ctx.http`: unchecked and never following a redirect itself, as replio's client does both."""
    return httpx.Client(transport=Relayed(send, answers), timeout=None)
