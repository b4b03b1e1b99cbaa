"""The relay an agent's SDK talks to: routed by path, sent on with the provider's key, refused with a reason."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from replio_replay._runtime.env import Env
from replio_replay.config import ProjectConfig
from replio_replay.providers.base import Provider
from replio_replay.providers.registry import create_provider
from replio_replay.providers.relay import Relay, RelayServer
from tests.support.llm_server import LLMServer, Reply, chat_completion

KEY = "sk-test-" + "0123456789abcdef" * 2


def provider(spec: str, url: str, **env: str) -> Provider:
    return create_provider(spec, config=ProjectConfig(), env=Env({"OPENAI_API_KEY": KEY, "ANTHROPIC_API_KEY": KEY,
                                                                  **env}), base_url=url)


@pytest.fixture
def relayed(llm_server: LLMServer) -> Iterator[tuple[Relay, httpx.Client]]:
    relay = Relay(provider("openai:run-model", f"{llm_server.url}/v1"), None)
    with RelayServer(relay) as server, httpx.Client(base_url=server.base_url, timeout=10) as client:
        yield relay, client


def test_a_chat_request_goes_to_the_provider_with_its_key_and_model(llm_server: LLMServer, relayed) -> None:  # type: ignore[no-untyped-def]
    relay, client = relayed
    llm_server.reply(**vars(chat_completion("hi", "run-model", 1)))
    answer = client.post("/v1/chat/completions", json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "x"}]},
                         headers={"authorization": "Bearer replio", "x-stainless-lang": "python"})
    assert answer.status_code == 200 and answer.json()["choices"][0]["message"]["content"] == "hi"
    seen = llm_server.requests[0]
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    assert "x-stainless-lang" not in seen.headers
    assert seen.json()["model"] == "run-model"  # the spec names a model: it replaces the agent's
    assert [ex.format for ex in relay.exchanges] == ["chat"] and relay.failures == []


def test_a_provider_spec_without_a_model_keeps_the_agents(llm_server: LLMServer) -> None:
    relay = Relay(provider("openai", f"{llm_server.url}/v1"), None)
    llm_server.reply(**vars(chat_completion("hi", "m", 1)))
    with RelayServer(relay) as server:
        httpx.post(f"{server.base_url}/v1/chat/completions", json={"model": "agent-model", "messages": []})
    assert llm_server.requests[0].json()["model"] == "agent-model"


def test_a_stream_is_sent_back_as_the_same_bytes(llm_server: LLMServer, relayed) -> None:  # type: ignore[no-untyped-def]
    relay, client = relayed
    stream = b'data: {"choices":[{"index":0,"delta":{"content":"hel"}}]}\n\ndata: {"choices":[{"index":0,"delta":{"content":"lo"}}]}\n\ndata: [DONE]\n\n'
    llm_server.reply(body=stream, headers={"content-type": "text/event-stream"})
    answer = client.post("/v1/chat/completions", json={"model": "m", "messages": [], "stream": True})
    assert answer.content == stream and answer.headers["content-type"] == "text/event-stream"
    assert llm_server.requests[0].headers["accept"] == "text/event-stream"
    assert relay.exchanges[0].body == stream


def test_a_format_the_provider_does_not_speak_is_refused_naming_both(llm_server: LLMServer, relayed) -> None:  # type: ignore[no-untyped-def]
    relay, client = relayed
    answer = client.post("/v1/messages", json={"model": "claude", "max_tokens": 5, "messages": []})
    assert answer.status_code == 400
    message = answer.json()["error"]["message"]
    assert "Anthropic Messages" in message and "'openai'" in message
    assert relay.failures == [message.removeprefix("replio: ")] and llm_server.requests == []


@pytest.mark.parametrize(("method", "path"), [("GET", "/v1/models"), ("POST", "/v1/embeddings")])
def test_what_is_no_model_turn_is_not_relayed(relayed, method: str, path: str) -> None:  # type: ignore[no-untyped-def]
    relay, client = relayed
    answer = client.request(method, path)
    assert answer.status_code == 404 and "relays POST requests of" in answer.json()["error"]["message"]
    assert relay.failures == []  # an SDK may probe; only model turns matter


def test_a_body_that_is_not_a_json_object_is_refused(relayed) -> None:  # type: ignore[no-untyped-def]
    relay, client = relayed
    answer = client.post("/v1/chat/completions", content=b"[1, 2]")
    assert answer.status_code == 400 and "not a JSON object" in relay.failures[0]


def test_only_the_token_path_is_served(llm_server: LLMServer, relayed) -> None:  # type: ignore[no-untyped-def]
    relay, client = relayed
    root = str(client.base_url).rstrip("/").rsplit("/", 1)[0]
    assert httpx.post(f"{root}/v1/chat/completions", json={"messages": []}).status_code == 404
    assert httpx.post(f"{root}/other/v1/chat/completions", json={"messages": []}).status_code == 404
    assert llm_server.requests == [] and relay.exchanges == []


def test_an_unreachable_provider_is_a_named_failure() -> None:
    relay = Relay(provider("openai:m", "http://127.0.0.1:9/v1"), None)
    with RelayServer(relay) as server:
        answer = httpx.post(f"{server.base_url}/v1/chat/completions", json={"messages": []})
    assert answer.status_code == 502 and "cannot reach" in relay.failures[0]


def test_anthropic_goes_with_its_own_headers(llm_server: LLMServer) -> None:
    relay = Relay(provider("anthropic:claude-run", llm_server.url), None)
    llm_server.reply(json={"id": "m", "type": "message", "role": "assistant", "content": [{"type": "text", "text": "ok"}],
                           "stop_reason": "end_turn", "usage": {"input_tokens": 3, "output_tokens": 1}})
    with RelayServer(relay) as server:
        httpx.post(f"{server.base_url}/v1/messages", json={"model": "claude-x", "max_tokens": 10, "messages": []},
                   headers={"x-api-key": "replio", "anthropic-beta": "tools-2024", "anthropic-version": "2023-06-01"})
    seen = llm_server.requests[0]
    assert seen.path == "/v1/messages" and seen.headers["x-api-key"] == KEY
    assert seen.headers["anthropic-beta"] == "tools-2024" and seen.json()["model"] == "claude-run"


def test_gemini_takes_the_model_in_its_path(llm_server: LLMServer) -> None:
    relay = Relay(create_provider("gemini:gemini-run", config=ProjectConfig(), env=Env({"GEMINI_API_KEY": KEY}),
                                  base_url=f"{llm_server.url}/v1beta"), None)
    llm_server.handler = lambda seen: Reply(json={"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}}]})
    with RelayServer(relay) as server:
        for action in ("generateContent", "streamGenerateContent"):
            httpx.post(f"{server.base_url}/v1beta/models/gemini-agent:{action}", json={"contents": []})
    assert [s.path for s in llm_server.requests] == ["/v1beta/models/gemini-run:generateContent",
                                                      "/v1beta/models/gemini-run:streamGenerateContent?alt=sse"]
    assert llm_server.requests[0].headers["x-goog-api-key"] == KEY
    assert json.loads(relay.exchanges[0].body)["candidates"][0]["content"]["parts"][0]["text"] == "ok"


def test_a_provider_without_http_cannot_answer_an_agent() -> None:
    relay = Relay(create_provider("mock", config=ProjectConfig(), env=Env({})), None)
    with RelayServer(relay) as server:
        answer = httpx.post(f"{server.base_url}/v1/chat/completions", json={"messages": []})
    assert answer.status_code == 400 and "sends no HTTP" in relay.failures[0]


def test_a_body_sent_in_chunks_is_read_whole(llm_server: LLMServer, relayed) -> None:  # type: ignore[no-untyped-def]
    relay, client = relayed
    llm_server.reply(**vars(chat_completion("hi", "run-model", 1)))
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "chunked"}]}).encode()
    answer = client.post("/v1/chat/completions", content=iter([body[:10], body[10:]]))  # an iterator: chunked
    assert answer.status_code == 200, answer.text
    assert llm_server.requests[0].json()["messages"][0]["content"] == "chunked"


@pytest.mark.parametrize(("length", "status"), [("-5", 400), ("abc", 400), (str(64 * 1024 * 1024), 413)])
def test_a_bad_content_length_is_refused_quietly(relayed, length: str, status: int,  # type: ignore[no-untyped-def]
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    relay, client = relayed
    url = httpx.URL(str(client.base_url))
    with socket.create_connection((url.host, url.port), timeout=5) as sock:
        sock.sendall(f"POST {url.path}/v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n\r\n".encode())
        assert sock.recv(100).startswith(f"HTTP/1.1 {status}".encode())
    assert relay.exchanges == [] and capsys.readouterr().err == ""
