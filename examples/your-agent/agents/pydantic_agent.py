"""The same support desk as a pydantic-ai `Agent` with function tools: replio calls `run` in a child
process of its own, once per user message (the message history is kept between them). Like the
openai-SDK agent, it asks the model at most six times per message, then gives up with no answer."""

from __future__ import annotations

from pydantic_ai import Agent
from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import UsageLimits
from shop_tools import TOOLS

SYSTEM = ("You are the support desk of a small web shop. Use the tools to look up orders, refunds and prices; "
          "answer the customer briefly, in plain text, once you know the answer.")

# OpenAIProvider reads OPENAI_BASE_URL and OPENAI_API_KEY, which replio points at its relay.
agent = Agent(OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider()), system_prompt=SYSTEM, tools=TOOLS,
              model_settings=ModelSettings(temperature=0))
history: list[ModelMessage] = []


def run(message: str) -> str:
    try:
        result = agent.run_sync(message, message_history=history, usage_limits=UsageLimits(request_limit=6))
    except UsageLimitExceeded:
        return ""
    history[:] = result.all_messages()
    return result.output
