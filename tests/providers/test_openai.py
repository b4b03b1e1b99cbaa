"""The `openai` provider and its `llamacpp` preset, over a real loopback socket."""

from __future__ import annotations

import json

import pytest

from replio_replay.config import Env, ProjectConfig
from replio_replay.errors import ProviderAuthError, ProviderResponseError
from replio_replay.providers.base import ChatRequest, Exchange, Message
from replio_replay.providers.openai import LlamaCppProvider, OpenAIProvider
from replio_replay.providers.registry import create_provider
from tests.providers.samples import READ_TOOL, TOOLS, first_turn, settings
from tests.support.llm_server import Seen


def completion(message: dict, usage: dict | None = None) -> dict:
    return {
        "id": "chatcmpl-x",
        "object": "chat.completion",
        "model": "test-model",
        "choices": [
            {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "stop"}
        ],
        "usage": usage or {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55},
    }


def call(call_id: str, name: str, arguments: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


@pytest.fixture
def provider(llm_server):
    p = OpenAIProvider(
        settings(base_url=llm_server.url + "/v1", api_key="sk-local", api_key_env="OPENAI_API_KEY")
    )
    yield p
    p.close()


def test_sends_the_chat_completions_request_with_bearer_key_and_function_tools(
    llm_server, provider
):
    llm_server.reply(json=completion({"content": "8743"}))
    response = provider.generate(first_turn(), Exchange("fx"))
    assert response.text == "8743" and response.usage.tokens == 55
    seen: Seen = llm_server.requests[0]
    assert (seen.method, seen.path) == ("POST", "/v1/chat/completions")
    assert seen.headers["authorization"] == "Bearer sk-local"
    assert seen.headers["content-type"] == "application/json"
    body = seen.json()
    assert body["tools"][0] == {
        "type": "function",
        "function": {
            "name": "file_read",
            "description": "Read a text file.",
            "parameters": READ_TOOL["parameters"],
        },
    }
    assert [t["function"]["name"] for t in body["tools"]] == ["file_read", "grep"]
    assert (body["model"], body["temperature"], body["seed"], body["stream"]) == (
        "test-model",
        0.0,
        0,
        False,
    )


def test_no_key_means_no_authorization_header(llm_server):
    llm_server.reply(json=completion({"content": "ok"}))
    p = OpenAIProvider(settings(base_url=llm_server.url + "/v1"))
    p.generate(first_turn(), Exchange("fx"))
    assert "authorization" not in llm_server.requests[0].headers
    p.close()


def test_tool_call_round_trip_sends_the_call_and_its_result_back(llm_server, provider):
    llm_server.reply(
        json=completion(
            {"content": None, "tool_calls": [call("call_9", "file_read", '{"path":"a.txt"}')]}
        )
    )
    llm_server.reply(json=completion({"content": "It says hello."}))
    first = provider.generate(first_turn(), Exchange("fx"))
    assert first.tool_calls[0].arguments == {"path": "a.txt"}
    history = (
        *first_turn().messages,
        Message("assistant", first.text, first.tool_calls),
        Message("tool", "     1\thello", tool_call_id=first.tool_calls[0].id, name="file_read"),
    )
    second = provider.generate(ChatRequest(history, TOOLS), Exchange("fx"))
    assert second.text == "It says hello."
    sent = llm_server.requests[1].json()["messages"]
    assert sent[2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_9",
                "type": "function",
                "function": {"name": "file_read", "arguments": '{"path": "a.txt"}'},
            }
        ],
    }
    assert sent[3] == {"role": "tool", "tool_call_id": "call_9", "content": "     1\thello"}


def test_several_calls_and_text_in_one_response_are_all_kept_in_order(llm_server, provider):
    llm_server.reply(
        json=completion(
            {
                "content": "Reading both files.",
                "tool_calls": [
                    call("c1", "file_read", '{"path":"a"}'),
                    call("c2", "file_read", '{"path":"b"}'),
                ],
            }
        )
    )
    response = provider.generate(first_turn(), Exchange("fx"))
    assert response.text == "Reading both files."
    assert [(c.id, c.arguments) for c in response.tool_calls] == [
        ("c1", {"path": "a"}),
        ("c2", {"path": "b"}),
    ]


def test_malformed_arguments_are_kept_raw_and_sent_back_as_a_json_string(llm_server, provider):
    llm_server.reply(json=completion({"tool_calls": [call("c1", "file_read", '{"path": "a.txt"')]}))
    llm_server.reply(json=completion({"content": "sorry"}))
    first = provider.generate(first_turn(), Exchange("fx"))
    assert first.tool_calls[0].arguments == '{"path": "a.txt"'
    history = (
        *first_turn().messages,
        Message("assistant", "", first.tool_calls),
        Message(
            "tool",
            "Error: arguments for file_read are not valid JSON",
            tool_call_id="c1",
            name="file_read",
        ),
    )
    provider.generate(ChatRequest(history, TOOLS), Exchange("fx"))
    sent = llm_server.requests[1].json()["messages"][2]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(sent) == '{"path": "a.txt"'


def test_llamacpp_preset_defaults_and_errors_name_it(llm_server):
    assert LlamaCppProvider.default_base_url == "http://127.0.0.1:8080/v1"
    assert LlamaCppProvider.api_key_env is None
    env = Env(
        {"LLAMACPP_BASE_URL": llm_server.url + "/v1", "OPENAI_API_KEY": "sk-not-for-llamacpp"}
    )
    p = create_provider("llamacpp", config=ProjectConfig(), env=env)
    assert isinstance(p, LlamaCppProvider)
    assert (p.settings.name, p.model, p.base_url) == ("llamacpp", "default", llm_server.url + "/v1")
    llm_server.reply(json={"choices": []})
    with pytest.raises(ProviderResponseError, match=r"^llamacpp: unexpected response"):
        p.generate(first_turn(), Exchange("fx"))
    assert llm_server.requests[0].path == "/v1/chat/completions"
    assert "authorization" not in llm_server.requests[0].headers
    llm_server.reply(status=401, json={"error": {"message": "Invalid API Key"}})
    with pytest.raises(
        ProviderAuthError, match=r"providers\.llamacpp\.api_key_env in \.replio/config\.json"
    ):
        p.generate(first_turn(), Exchange("fx"))
    p.close()
