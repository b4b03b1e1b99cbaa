"""The tools the real agents run (each agent declares them to its model in its own SDK's format),
and `note_env`, which leaves the agent's environment where the test can look for replio's key.

Imported by the agents as a sibling module: replio starts them with their folder on `sys.path`.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from pathlib import Path

FORECASTS = {"Paris": {"forecast": "sunny", "celsius": 21}, "London": {"forecast": "rainy", "celsius": 14}}


def get_weather(city: str) -> str:
    """Today's forecast for `city`, as JSON."""
    return json.dumps({"city": city, **FORECASTS.get(city, {"forecast": "unknown"})})


def add(a: float, b: float) -> str:
    """The sum of two numbers, as JSON."""
    return json.dumps({"sum": a + b})


FUNCTIONS = {"get_weather": get_weather, "add": add}


def call(name: str, arguments: str | dict) -> str:
    """Run one tool call as the model asked for it; the model sees any error as the result."""
    try:
        args = json.loads(arguments or "{}") if isinstance(arguments, str) else arguments
        return FUNCTIONS[name](**args)
    except Exception as exc:  # the model sees what went wrong, as with any agent
        return f"Error: {type(exc).__name__}: {exc}"


def note_env(agent: str) -> None:
    """Write this process's whole environment to `$AGENT_ENV_DUMP/<agent>-<uuid>.json` (the test
    sets that folder in the agent's declaration), so the test can check that no key of replio's
    reached the agent; on stderr, only what is the same on every run."""
    folder = os.environ.get("AGENT_ENV_DUMP")
    if folder:
        # not by pid: confined, each agent is pid 2 or so of a PID namespace of its own
        Path(folder, f"{agent}-{uuid.uuid4().hex}.json").write_text(json.dumps(dict(os.environ)), encoding="utf-8")
    print(f"{agent}: OPENAI_API_KEY={os.environ.get('OPENAI_API_KEY')} "
          f"ANTHROPIC_API_KEY={os.environ.get('ANTHROPIC_API_KEY')}", file=sys.stderr, flush=True)
