"""The `ollama` provider, over a real loopback socket."""

from __future__ import annotations

import pytest

from replio_replay.config import Env, ProjectConfig
from replio_replay.errors import ProviderAuthError, UnknownProviderError
from replio_replay.providers.base import ChatRequest, Exchange, Message
from replio_replay.providers.ollama import OllamaProvider, normalize_host
from replio_replay.providers.registry import create_provider
from tests.providers.samples import READ_TOOL, TOOLS, first_turn, settings


def chat(message: dict, prompt: int = 200, completion: int = 20) -> dict:
    return {
        "model": "qwen-test",
        "created_at": "2025-01-01T00:00:00Z",
        "message": {"role": "assistant", **message},
        "done_reason": "stop",
        "done": True,
        "prompt_eval_count": prompt,
        "eval_count": completion,
    }


@pytest.fixture
def provider(llm_server):
    host = llm_server.url.removeprefix("http://")  # OLLAMA_HOST style: no scheme
    p = create_provider("ollama:qwen-test", config=ProjectConfig(), env=Env({"OLLAMA_HOST": host}))
    yield p
    p.close()


def test_host_without_scheme_works_and_the_request_is_not_streamed(llm_server, provider):
    llm_server.reply(json=chat({"content": "8743"}))
    response = provider.generate(first_turn(), Exchange("fx"))
    assert response.text == "8743" and response.usage.tokens == 220
    seen = llm_server.requests[0]
    assert (seen.method, seen.path) == ("POST", "/api/chat")
    body = seen.json()
    assert body["stream"] is False
    assert body["model"] == "qwen-test"
    assert body["options"] == {"temperature": 0.0, "seed": 0, "num_predict": 2048}
    assert body["tools"][0] == {
        "type": "function",
        "function": {
            "name": "file_read",
            "description": "Read a text file.",
            "parameters": READ_TOOL["parameters"],
        },
    }
    assert "authorization" not in seen.headers


def test_calls_get_stable_ids_per_turn_and_results_go_back_with_the_tool_name(llm_server, provider):
    two_calls = {
        "content": "",
        "tool_calls": [
            {"function": {"name": "grep", "arguments": {"pattern": "port"}}},
            {"function": {"name": "file_read", "arguments": {"path": "config/server.toml"}}},
        ],
    }
    llm_server.reply(json=chat(two_calls))
    llm_server.reply(
        json=chat(
            {
                "content": "",
                "tool_calls": [{"function": {"name": "grep", "arguments": {"pattern": "x"}}}],
            }
        )
    )
    first = provider.generate(first_turn(), Exchange("fx"))
    assert [c.id for c in first.tool_calls] == ["call_0_0", "call_0_1"]
    history = (
        *first_turn().messages,
        Message("assistant", "", first.tool_calls),
        Message("tool", "config/server.toml:4:port = 8743", tool_call_id="call_0_0", name="grep"),
        Message("tool", "port = 8743", tool_call_id="call_0_1", name="file_read"),
    )
    second = provider.generate(ChatRequest(history, TOOLS), Exchange("fx"))
    assert [c.id for c in second.tool_calls] == ["call_1_0"]
    sent = llm_server.requests[1].json()["messages"]
    assert sent[2] == {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"function": {"name": "grep", "arguments": {"pattern": "port"}}},
            {"function": {"name": "file_read", "arguments": {"path": "config/server.toml"}}},
        ],
    }
    assert sent[3] == {
        "role": "tool",
        "content": "config/server.toml:4:port = 8743",
        "tool_name": "grep",
    }
    assert sent[4] == {"role": "tool", "content": "port = 8743", "tool_name": "file_read"}


def test_text_with_calls_and_malformed_string_arguments(llm_server, provider):
    llm_server.reply(
        json=chat(
            {
                "content": "Let me search.",
                "tool_calls": [
                    {"function": {"name": "grep", "arguments": '{"pattern": "port"'}},
                ],
            }
        )
    )
    response = provider.generate(first_turn(), Exchange("fx"))
    assert response.text == "Let me search."
    assert response.tool_calls[0].arguments == '{"pattern": "port"'


def test_an_ollama_behind_a_keyed_proxy_gets_the_key_and_a_401_names_the_variable(llm_server):
    p = OllamaProvider(
        settings("ollama", "m", base_url=llm_server.url, api_key="pk", api_key_env="PROXY_KEY")
    )
    llm_server.reply(status=401, json={"error": "unauthorized"})
    with pytest.raises(
        ProviderAuthError,
        match=r"^ollama: authentication failed .*: unauthorized; check that PROXY_KEY",
    ):
        p.generate(first_turn(), Exchange("fx"))
    assert llm_server.requests[0].headers["authorization"] == "Bearer pk"
    p.close()


def test_ollama_needs_a_model_named():
    with pytest.raises(
        UnknownProviderError, match=r"provider 'ollama' needs a model; name one as ollama:MODEL"
    ):
        create_provider("ollama", config=ProjectConfig(), env=Env({}))


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("localhost", "http://localhost:11434"),
        ("127.0.0.1:1234", "http://127.0.0.1:1234"),
        (":11434", "http://127.0.0.1:11434"),
        ("[::1]", "http://[::1]:11434"),
        ("http://gpu-box", "http://gpu-box"),
        ("https://ollama.example:8443/", "https://ollama.example:8443"),
        ("proxy.lan/ollama", "http://proxy.lan:11434/ollama"),
    ],
)
def test_hosts_are_read_like_ollama_host(host, url):
    assert normalize_host(host) == url
    assert OllamaProvider(settings("ollama", base_url=host)).url == url + "/api/chat"


def test_default_host():
    assert OllamaProvider(settings("ollama")).url == "http://127.0.0.1:11434/api/chat"
