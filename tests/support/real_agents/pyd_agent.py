"""A weather agent as a pydantic-ai `Agent` with function tools; replio calls `run` in a child
process, once per user message. OpenAIProvider reads OPENAI_BASE_URL and OPENAI_API_KEY, which
replio points at its relay."""

from __future__ import annotations

import weather_tools
from pydantic_ai import Agent, UsageLimitExceeded, UsageLimits
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from replio_replay import Truncated

weather_tools.note_env("pyd_agent")
agent = Agent(OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider()),
              instructions="You are a weather assistant. Use the tools, then answer briefly.")


@agent.tool_plain
def get_weather(city: str) -> str:
    """Get today's weather forecast for a city."""
    return weather_tools.get_weather(city)


@agent.tool_plain
def add(a: float, b: float) -> str:
    """Add two numbers."""
    return weather_tools.add(a, b)


def run(message: str) -> str:
    return agent.run_sync(message).output


def run_limited(message: str) -> str:
    """`run` stopped after three model requests: pydantic-ai's own step limit, said to replio."""
    try:
        return agent.run_sync(message, usage_limits=UsageLimits(request_limit=3)).output
    except UsageLimitExceeded as exc:
        raise Truncated("") from exc
