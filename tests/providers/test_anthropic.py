"""The `anthropic` provider, over a real loopback socket."""

from __future__ import annotations

import pytest

from replio_replay.config import Env, ProjectConfig
from replio_replay.errors import ProviderAuthError
from replio_replay.providers.anthropic import AnthropicProvider
from replio_replay.providers.base import ChatRequest, Exchange, Message
from replio_replay.providers.registry import create_provider
from tests.providers.samples import READ_TOOL, TOOLS, first_turn, settings


def message(content: list[dict], input_tokens: int = 400, output_tokens: int = 30) -> dict:
    return {
        "id": "msg_x",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": "tool_use",
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


@pytest.fixture
def provider(llm_server):
    p = AnthropicProvider(
        settings(
            "anthropic",
            "claude-test",
            base_url=llm_server.url,
            api_key="ak-test",
            api_key_env="ANTHROPIC_API_KEY",
            max_tokens=1000,
        )
    )
    p.sleep = lambda seconds: None
    yield p
    p.close()


def test_sends_messages_request_with_key_version_header_and_input_schema(llm_server, provider):
    llm_server.reply(json=message([{"type": "text", "text": "8743"}]))
    response = provider.generate(first_turn(), Exchange("fx"))
    assert response.text == "8743"
    assert response.usage.tokens == 430
    seen = llm_server.requests[0]
    assert (seen.method, seen.path) == ("POST", "/v1/messages")
    assert seen.headers["x-api-key"] == "ak-test"
    assert seen.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in seen.headers
    body = seen.json()
    assert body["system"] == "Be brief."
    assert body["max_tokens"] == 1000
    assert body["messages"] == [{"role": "user", "content": "What port?"}]
    assert body["tools"][0] == {
        "name": "file_read",
        "description": "Read a text file.",
        "input_schema": READ_TOOL["parameters"],
    }
    assert "seed" not in body


def test_two_tool_uses_round_trip_as_two_results_in_one_user_message(llm_server, provider):
    llm_server.reply(
        json=message(
            [
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_a", "name": "file_read", "input": {"path": "a"}},
                {"type": "tool_use", "id": "toolu_b", "name": "grep", "input": {"pattern": "port"}},
            ]
        )
    )
    llm_server.reply(json=message([{"type": "text", "text": "Port 8743."}], 600, 10))
    first = provider.generate(first_turn(), Exchange("fx"))
    assert first.text == "Checking."
    assert [(c.id, c.name, c.arguments) for c in first.tool_calls] == [
        ("toolu_a", "file_read", {"path": "a"}),
        ("toolu_b", "grep", {"pattern": "port"}),
    ]
    history = (
        *first_turn().messages,
        Message("assistant", first.text, first.tool_calls),
        Message("tool", "port = 8743", tool_call_id="toolu_a", name="file_read"),
        Message("tool", "Error: no match", tool_call_id="toolu_b", name="grep"),
    )
    assert provider.generate(ChatRequest(history, TOOLS), Exchange("fx")).usage.tokens == 610
    sent = llm_server.requests[1].json()["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[1]["content"][1] == {
        "type": "tool_use",
        "id": "toolu_a",
        "name": "file_read",
        "input": {"path": "a"},
    }
    assert sent[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_a", "content": "port = 8743"},
        {
            "type": "tool_result",
            "tool_use_id": "toolu_b",
            "content": "Error: no match",
            "is_error": True,
        },
    ]


def test_a_base_url_ending_in_v1_is_not_doubled():
    p = AnthropicProvider(settings("anthropic", base_url="https://gateway.example/anthropic/v1/"))
    assert p.url == "https://gateway.example/anthropic/v1/messages"
    assert AnthropicProvider(settings("anthropic", base_url="https://api.anthropic.com")).url == (
        "https://api.anthropic.com/v1/messages"
    )


def test_401_names_anthropic_api_key(llm_server):
    llm_server.reply(
        status=401,
        json={
            "type": "error",
            "error": {"type": "authentication_error", "message": "invalid x-api-key"},
        },
    )
    p = create_provider(
        "anthropic", config=ProjectConfig(), env=Env({"ANTHROPIC_BASE_URL": llm_server.url})
    )
    with pytest.raises(ProviderAuthError) as info:
        p.generate(first_turn(), Exchange("fx"))
    assert str(info.value) == (
        f"anthropic: authentication failed (HTTP 401 from {llm_server.url}/v1/messages): invalid x-api-key; "
        "set ANTHROPIC_API_KEY to the API key (it is not set)"
    )
    assert "x-api-key" not in llm_server.requests[0].headers
    p.close()


def test_overloaded_529_is_retried(llm_server, provider):
    llm_server.reply(
        status=529,
        json={"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    )
    llm_server.reply(json=message([{"type": "text", "text": "done"}]))
    assert provider.generate(first_turn(), Exchange("fx")).text == "done"
    assert len(llm_server.requests) == 2
