"""The `openai-responses` provider, over a real loopback socket."""

from __future__ import annotations

import pytest

from replio_replay.config import Env, ProjectConfig
from replio_replay.errors import ProviderAuthError
from replio_replay.providers.base import ChatRequest, Exchange, Message
from replio_replay.providers.registry import create_provider
from replio_replay.providers.responses import ResponsesProvider
from tests.providers.samples import TOOLS, first_turn, settings
from tests.support.agents import reasoning_item


def _response(*output: dict) -> dict:
    return {"id": "resp_1", "object": "response", "status": "completed", "error": None, "output": list(output),
            "usage": {"input_tokens": 40, "output_tokens": 12, "total_tokens": 52}}


@pytest.fixture
def provider(llm_server):
    p = ResponsesProvider(settings("openai-responses", base_url=llm_server.url + "/v1", api_key="sk-local",
                                   api_key_env="OPENAI_API_KEY"))
    yield p
    p.close()


def test_posts_to_responses_with_the_bearer_key(llm_server, provider):
    llm_server.reply(json=_response({"type": "message", "role": "assistant",
                                     "content": [{"type": "output_text", "text": "8743"}]}))
    response = provider.generate(first_turn(), Exchange("fx"))
    assert (response.text, response.usage.tokens) == ("8743", 52)
    seen = llm_server.requests[0]
    assert (seen.method, seen.path) == ("POST", "/v1/responses")
    assert seen.headers["authorization"] == "Bearer sk-local"
    body = seen.json()
    assert (body["model"], body["store"], body["instructions"]) == ("test-model", False, "Be brief.")
    assert [t["name"] for t in body["tools"]] == ["file_read", "grep"]


def test_a_reasoning_item_crosses_a_tool_call_unchanged(llm_server, provider):
    call = {"id": "fc_1", "type": "function_call", "status": "completed", "call_id": "call_1",
            "name": "file_read", "arguments": '{"path":"a.txt"}'}
    llm_server.reply(json=_response(reasoning_item(0), call))
    llm_server.reply(json=_response({"type": "message", "role": "assistant",
                                     "content": [{"type": "output_text", "text": "hello"}]}))
    first = provider.generate(first_turn(), Exchange("fx"))
    history = (*first_turn().messages,
               Message("assistant", first.text, first.tool_calls, provider_items=first.provider_items),
               Message("tool", "     1\thello", tool_call_id="call_1", name="file_read"))
    assert provider.generate(ChatRequest(history, TOOLS), Exchange("fx")).text == "hello"
    sent = llm_server.requests[1].json()["input"]
    assert sent == [{"role": "user", "content": "What port?"}, reasoning_item(0), call,
                    {"type": "function_call_output", "call_id": "call_1", "output": "     1\thello"}]


def test_it_reads_the_openai_variables_and_names_them_on_a_401(llm_server):
    env = Env({"OPENAI_BASE_URL": llm_server.url + "/v1"})
    p = create_provider("openai-responses:gpt-5-mini", config=ProjectConfig(), env=env)
    assert isinstance(p, ResponsesProvider) and (p.model, p.url) == ("gpt-5-mini", llm_server.url + "/v1/responses")
    llm_server.reply(status=401, json={"error": {"message": "Incorrect API key provided"}})
    with pytest.raises(ProviderAuthError, match=r"^openai-responses: authentication failed \(HTTP 401 .*set "
                                                r"OPENAI_API_KEY to the API key \(it is not set\)"):
        p.generate(first_turn(), Exchange("fx"))
    p.close()
