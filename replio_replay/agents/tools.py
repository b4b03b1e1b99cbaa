"""The fixture's tools as an agent replio runs can call them: listed, and each call answered by replio.

replio's own loop offers the model a fixture's tools (its tool set's, the fixture's stubs, commands
and Python tools) and runs each call. A user's agent keeps its tools in its code; one that wants the
fixture's instead (a production trace imported with `import otel`, whose stubs answer each call with
production's recorded result) lists them with `fixture_tools` and has replio run each call with
`call_tool`, over the relay at ``REPLIO_TOOLS_URL``: the same tools, the same answers, as replio's own
loop gets, confined to the fixture's worktree. Its model requests still go through the relay, so the
calls are the fixture's trace as ever.

    from replio_replay import call_tool, fixture_tools

    specs = fixture_tools()  # [{"name", "description", "parameters"}, ...]
    result = call_tool("lookup_order", {"order_id": "A-1001"})

Like `protocol`, this module imports nothing of replio's engine: an agent pays only for the
standard library.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

__all__ = ["TOOLS_URL", "call_tool", "fixture_tools"]

#: The variable holding where the fixture's tools are served to the agent (the relay's own path).
TOOLS_URL = "REPLIO_TOOLS_URL"
#: How long one call may take to be answered: a tool of the fixture is bounded by the run's
#: `tool_timeout` already; this bounds the agent's wait should replio itself not answer.
TIMEOUT = 600.0


def fixture_tools() -> list[dict[str, Any]]:
    """The tools the fixture offers, each ``{"name", "description", "parameters"}`` (a JSON Schema), as
    replio's own loop would offer them to its model."""
    return list(_exchange("GET", _url())["tools"])


def call_tool(name: str, arguments: dict[str, Any]) -> str:
    """Run the fixture's tool `name` with `arguments`, as replio's own loop runs a model's call: its
    result, a failure coming back as a result that starts with ``Error:`` (an unknown tool, arguments
    its schema refuses, a stub with no recorded answer for them)."""
    url = f"{_url()}/{urllib.parse.quote(name, safe='')}"
    return str(_exchange("POST", url, json.dumps(arguments).encode("utf-8"))["result"])


def _url() -> str:
    url = os.environ.get(TOOLS_URL)
    if not url:
        raise RuntimeError(f"{TOOLS_URL} is not set: fixture_tools and call_tool work in an agent that "
                           "replio runs (`agent` in .replio/config.json, or run --agent)")
    return url


def _exchange(method: str, url: str, body: bytes | None = None) -> dict[str, Any]:
    request = urllib.request.Request(url, body, {"content-type": "application/json"}, method=method)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:  # noqa: S310 (the relay, on loopback)
            data = json.load(response)
    except urllib.error.HTTPError as exc:
        raise RuntimeError(f"replio did not answer {method} {urllib.parse.urlsplit(url).path.rsplit('/replio/', 1)[-1]}: "
                           f"{_said(exc)}") from None
    if not isinstance(data, dict):
        raise RuntimeError(f"replio answered {method} with something that is not a JSON object")
    return data


def _said(exc: urllib.error.HTTPError) -> str:
    try:
        return str(json.load(exc)["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return f"HTTP {exc.code}"
