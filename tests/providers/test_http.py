"""Shared HTTP sending over a real loopback socket: retries, backoff, timeouts and error messages."""

from __future__ import annotations

import json
import ssl
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import httpx
import pytest

from replio_replay.errors import (
    ConfigError,
    ContextFullError,
    ProviderAuthError,
    ProviderConnectError,
    ProviderHTTPError,
    ProviderResponseError,
)
from replio_replay.providers import http as http_module
from replio_replay.providers import retry
from replio_replay.providers.base import ChatRequest, Exchange, Message
from replio_replay.providers.http import Endpoint, Pools, post_json
from replio_replay.providers.openai import OpenAIProvider
from replio_replay.providers.retry import Backoff, retry_after_seconds
from tests.providers.samples import first_turn, settings
from tests.support.llm_server import LLMServer, Reply

OK = {
    "choices": [{"message": {"role": "assistant", "content": "fine"}}],
    "usage": {"total_tokens": 3},
}


@pytest.fixture
def provider(llm_server: LLMServer) -> Iterator[OpenAIProvider]:
    p = OpenAIProvider(
        settings(base_url=llm_server.url + "/v1", api_key_env="OPENAI_API_KEY", retries=3)
    )
    p.sleeps = []  # type: ignore[attr-defined]
    p.sleep = p.sleeps.append  # type: ignore[attr-defined]  # record the waits instead of waiting
    yield p
    p.close()


def make(server: LLMServer, **kw) -> OpenAIProvider:
    kw.setdefault("api_key_env", "OPENAI_API_KEY")
    return OpenAIProvider(settings(base_url=server.url + "/v1", **kw))


def ask(p: OpenAIProvider, exchange: Exchange | None = None):
    return p.generate(first_turn(), exchange or Exchange("fx"))



def test_429_then_success_waits_exactly_retry_after(llm_server, provider):
    llm_server.reply(
        status=429, json={"error": {"message": "Rate limit reached"}}, headers={"retry-after": "2"}
    )
    llm_server.reply(json=OK)
    assert ask(provider).text == "fine"
    assert len(llm_server.requests) == 2
    assert provider.sleeps == [2.0]
    assert (
        llm_server.requests[0].body == llm_server.requests[1].body
    )  # the retry resends the same bytes


def test_retry_after_is_really_waited_for(llm_server):
    llm_server.reply(status=429, json={}, headers={"retry-after": "0.3"})
    llm_server.reply(json=OK)
    p = make(llm_server)
    started = time.perf_counter()
    assert ask(p).text == "fine"
    assert time.perf_counter() - started >= 0.3
    p.close()


def test_503_then_success_backs_off_with_jitter(llm_server, provider):
    llm_server.reply(status=503, body=b"Service Unavailable")
    llm_server.reply(status=502, body=b"Bad Gateway")
    llm_server.reply(json=OK)
    assert ask(provider).usage.tokens == 3
    first, second = provider.sleeps
    assert 0.005 <= first <= 0.01  # base 0.01 (tests), jitter in [d/2, d]
    assert 0.01 <= second <= 0.02  # doubled


def test_backoff_base_can_be_set_per_provider(llm_server):
    llm_server.reply(status=503, json={})
    llm_server.reply(json=OK)
    p = make(llm_server, options={"backoff_base": 4.0})
    waits: list[float] = []
    p.sleep = waits.append
    ask(p)
    assert 2.0 <= waits[0] <= 4.0
    p.close()


def test_retries_are_bounded_by_the_setting_and_the_message_counts_attempts(llm_server):
    llm_server.handler = lambda seen: Reply(503, json={"error": {"message": "upstream overloaded"}})
    p = make(llm_server, retries=2)
    with pytest.raises(ProviderHTTPError) as info:
        ask(p)
    assert len(llm_server.requests) == 3
    assert str(info.value) == (
        f"openai: HTTP 503 from {llm_server.url}/v1/chat/completions (3 attempts): upstream overloaded"
    )
    p.close()


def test_zero_retries_means_one_attempt(llm_server):
    llm_server.reply(status=503, json={})
    llm_server.reply(json=OK)
    p = make(llm_server, retries=0)
    with pytest.raises(ProviderHTTPError, match=r"\(1 attempt\)"):
        ask(p)
    assert len(llm_server.requests) == 1
    p.close()


@pytest.mark.parametrize("status", [400, 408, 500, 501])
def test_errors_a_retry_cannot_fix_are_final(llm_server, provider, status):
    llm_server.handler = lambda seen: Reply(status, json={"error": {"message": "model 'x' not loaded"}})
    with pytest.raises(ProviderHTTPError, match=f"HTTP {status} .*: model 'x' not loaded$") as info:
        ask(provider)
    assert not isinstance(info.value, ContextFullError)
    assert len(llm_server.requests) == 1
    assert provider.sleeps == []


@pytest.mark.parametrize(("status", "said"), [
    (400, "request (8367 tokens) exceeds the available context size (8192 tokens), try increasing it"),  # llama.cpp
    (500, "Context size has been exceeded."),  # llama.cpp before
    (400, "This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens."),
    (400, "prompt is too long: 210000 tokens > 200000 maximum"),  # Anthropic
    (400, "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."),  # Gemini
])
def test_a_conversation_longer_than_the_context_window_is_told_apart(llm_server, provider, status, said):
    llm_server.handler = lambda seen: Reply(status, json={"error": {"message": said}})
    with pytest.raises(ContextFullError, match=f"no longer fits the model's context window \\(HTTP {status} "):
        ask(provider)
    assert len(llm_server.requests) == 1


def test_a_local_server_is_not_sent_a_timed_out_request_again(llm_server):
    llm_server.handler = lambda seen: Reply(json=OK, delay=1.0)
    p = make(llm_server, timeout=0.3)
    p.local = True  # as the llamacpp and ollama presets are
    with pytest.raises(ProviderConnectError, match="not retried"):
        ask(p)
    assert len(llm_server.requests) == 1
    p.close()


def test_the_timeout_bounds_the_whole_request_not_each_read(llm_server):
    llm_server.handler = lambda seen: Reply(json=OK, trickle=0.25)
    p = make(llm_server, timeout=1.0, retries=0)
    started = time.perf_counter()
    with pytest.raises(ProviderConnectError, match=r"within 1 s"):
        ask(p)
    assert time.perf_counter() - started < 2.5
    p.close()


def test_a_response_body_over_the_cap_is_refused(llm_server):
    llm_server.handler = lambda seen: Reply(body=b"x" * 5000)
    p = make(llm_server, max_response_bytes=1000)
    with pytest.raises(ProviderResponseError, match="larger than 1,000 bytes"):
        ask(p)
    p.close()


def test_a_retry_after_longer_than_replio_waits_fails_at_once(llm_server, provider):
    llm_server.reply(
        status=429, json={"error": {"message": "quota"}}, headers={"retry-after": "3600"}
    )
    with pytest.raises(ProviderHTTPError, match=r"asks to retry after 3600 s") as info:
        ask(provider)
    assert provider.sleeps == []
    assert len(llm_server.requests) == 1
    assert "\n" not in str(info.value)


def test_401_names_the_provider_and_the_unset_variable(llm_server, provider):
    llm_server.reply(
        status=401,
        json={"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}},
    )
    with pytest.raises(ProviderAuthError) as info:
        ask(provider)
    message = str(info.value)
    assert message.startswith("openai: authentication failed (HTTP 401")
    assert "Incorrect API key provided" in message
    assert "set OPENAI_API_KEY to the API key (it is not set)" in message
    assert len(llm_server.requests) == 1  # never retried
    assert "authorization" not in llm_server.requests[0].headers


def test_403_with_a_key_asks_to_check_the_variable_and_the_key_was_sent(llm_server):
    llm_server.reply(status=403, json={"error": {"message": "forbidden"}})
    p = make(llm_server, api_key="sk-test-123")
    with pytest.raises(
        ProviderAuthError, match=r"HTTP 403 .*check that OPENAI_API_KEY holds a valid key"
    ):
        ask(p)
    assert llm_server.requests[0].headers["authorization"] == "Bearer sk-test-123"
    p.close()


def test_other_client_errors_are_not_retried_and_show_the_server_message(llm_server, provider):
    llm_server.reply(
        status=404,
        json={"error": {"message": "The model `nope` does not exist", "code": "model_not_found"}},
    )
    with pytest.raises(ProviderHTTPError) as info:
        ask(provider)
    assert str(info.value) == (
        f"openai: HTTP 404 from {llm_server.url}/v1/chat/completions: The model `nope` does not exist"
    )
    assert provider.sleeps == []


def test_timeout_is_retried_then_succeeds(llm_server):
    llm_server.reply(json=OK, delay=0.4)
    llm_server.reply(json=OK)
    p = make(llm_server, timeout=0.1, retries=1)
    started = time.perf_counter()
    assert ask(p).text == "fine"
    assert time.perf_counter() - started < 0.4  # it did not wait for the slow answer
    assert len(llm_server.requests) == 2
    p.close()


def test_timeout_after_all_attempts_is_a_connect_error(llm_server):
    llm_server.reply(json=OK, delay=0.3)
    llm_server.reply(json=OK, delay=0.3)
    p = make(llm_server, timeout=0.05, retries=1)
    with pytest.raises(ProviderConnectError) as info:
        ask(p)
    assert str(info.value).startswith(
        f"openai: no response from {llm_server.url}/v1/chat/completions within 0.05 s (2 attempts)"
    )
    assert "providers.openai.timeout" in str(info.value)
    p.close()


def test_dropped_connection_is_retried(llm_server, provider):
    llm_server.reply(drop=True)
    llm_server.reply(json=OK)
    assert ask(provider).text == "fine"
    assert len(llm_server.requests) == 2
    assert len(provider.sleeps) == 1


def test_connection_dropped_every_time_is_a_connect_error(llm_server):
    for _ in range(2):
        llm_server.reply(drop=True)
    p = make(llm_server, retries=1)
    with pytest.raises(
        ProviderConnectError, match=r"^openai: the connection to .* was dropped .*\(2 attempts\)$"
    ):
        ask(p)
    p.close()


def test_connection_refused_names_the_base_url_and_is_not_retried(closed_port):
    base = f"http://127.0.0.1:{closed_port}/v1"
    p = OpenAIProvider(settings(base_url=base, retries=3))
    waits: list[float] = []
    p.sleep = waits.append
    with pytest.raises(ProviderConnectError) as info:
        ask(p)
    assert str(info.value) == (
        f"openai: cannot connect to {base} (connection refused); is the server running? "
        "Set the URL with --base-url, OPENAI_BASE_URL or providers.openai.base_url in .replio/config.json"
    )
    assert waits == []
    p.close()


def test_a_body_that_is_not_json_shows_its_start(llm_server, provider):
    llm_server.reply(body=b"<html>\n<h1>502 Bad Gateway</h1>" + b"x" * 500)
    with pytest.raises(ProviderResponseError) as info:
        ask(provider)
    message = str(info.value)
    assert message.startswith(
        f"openai: the response from {llm_server.url}/v1/chat/completions is not JSON"
    )
    assert "text/plain" in message
    assert "the body starts: <html> <h1>502 Bad Gateway</h1>xxx" in message
    assert message.endswith("...") and "\n" not in message
    assert len(message) < 400


def test_json_of_the_wrong_shape_names_the_provider(llm_server, provider):
    llm_server.reply(json={"result": "ok"})
    with pytest.raises(
        ProviderResponseError,
        match=r'^openai: unexpected response: no choices\[0\]; the body starts: \{"result":"ok"\}$',
    ):
        ask(provider)


class CountingTransport(httpx.BaseTransport):
    """Stands in for the recording wrapper: counts and keeps what passes through."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.requests: list[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


def test_sends_through_the_fixtures_transport_when_one_is_handed_in(llm_server):
    llm_server.reply(json=OK)
    wrapper = CountingTransport()
    p = make(llm_server, timeout=7.5)
    ask(p, Exchange("fx", wrapper))
    assert len(wrapper.requests) == 1
    assert p._transport is None  # the shared one was never made
    timeout = wrapper.requests[0].extensions["timeout"]
    assert timeout["read"] == 7.5 and timeout["write"] == 7.5 and timeout["connect"] == 7.5
    wrapper.close()
    p.close()


def test_one_shared_pooled_transport_for_the_whole_run(llm_server):
    llm_server.handler = lambda seen: Reply(json=OK)
    p = make(llm_server)
    shared = p.transport().inner  # each fixture's bounded view wraps the one pooled transport
    assert isinstance(shared, Pools)
    for fixture in ("a", "b", "c"):
        ask(p, Exchange(fixture, None))
    assert p.transport().inner is shared
    assert len(llm_server.requests) == 3
    p.close()
    assert p._transport is None
    assert p.transport().inner is not shared  # a new run gets a new one
    p.close()


def test_open_makes_the_pool_its_requests_then_go_through(llm_server, monkeypatch):
    made = []

    class Counted(httpx.HTTPTransport):
        def __init__(self, *args, **kwargs):
            made.append(threading.current_thread().name)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(httpx, "HTTPTransport", Counted)
    llm_server.handler = lambda seen: Reply(json=OK)
    p = make(llm_server)
    p.open()
    assert made == [threading.current_thread().name]
    ask(p)
    ask(p, Exchange("other"))
    assert len(llm_server.requests) == 2 and len(made) == 1  # both went through the pool made by `open`
    p.close()


def test_a_pool_that_cannot_be_made_is_left_to_the_first_request(monkeypatch):
    def no_certificates() -> None:
        raise ssl.SSLError("[X509: NO_CERTIFICATE_OR_CRL_FOUND] no certificate or crl found")

    monkeypatch.setattr(http_module, "shared_ssl_context", no_certificates)
    p = OpenAIProvider(settings(base_url="https://127.0.0.1:9/v1", api_key_env="OPENAI_API_KEY"))
    p.open()  # says nothing before the run: the fixture whose request needs the pool says why
    with pytest.raises(ssl.SSLError, match="no certificate"):
        ask(p)
    p.close()


def test_a_plain_http_server_is_reached_without_loading_certificates(llm_server, monkeypatch):
    def no_certificates() -> None:
        raise AssertionError("the CA bundle was loaded for http://")

    monkeypatch.setattr(http_module, "shared_ssl_context", no_certificates)
    llm_server.handler = lambda seen: Reply(json=OK)
    p = make(llm_server)
    ask(p)
    assert len(llm_server.requests) == 1
    p.close()


def test_the_body_is_the_same_bytes_every_time(llm_server):
    llm_server.handler = lambda seen: Reply(json=OK)
    p = make(llm_server)
    ask(p)
    ask(p)
    first, second = llm_server.requests
    assert first.body == second.body
    assert first.body.startswith(b'{"max_tokens":')  # compact, keys sorted: the cassettes' canonical form
    assert json.loads(first.body)["model"] == "test-model"
    assert first.headers["content-type"] == "application/json"
    assert first.headers["accept-encoding"] == "identity"
    p.close()


def test_post_json_can_be_used_directly(llm_server):
    llm_server.reply(json={"anything": [1, 2]})
    ep = Endpoint("custom", llm_server.url + "/x", llm_server.url)
    transport = httpx.HTTPTransport()
    assert post_json(transport, ep, {"b": 1, "a": 2}, headers={"x-extra": "1"}) == {
        "anything": [1, 2]
    }
    assert llm_server.requests[0].body == b'{"a":2,"b":1}'
    assert llm_server.requests[0].headers["x-extra"] == "1"
    transport.close()


@pytest.mark.parametrize(("status", "body", "said"), [
    (200, b"<html>", "openai: the response from http://127.0.0.1:1/v1/chat/completions is not JSON (HTTP 200, "
                     "no content-type); the body starts: <html>"),
    (400, b'{"error": {"message": "bad model"}}',
     "openai: HTTP 400 from http://127.0.0.1:1/v1/chat/completions: bad model"),
])
def test_a_replayed_answers_failure_names_the_url_it_was_recorded_from(status, body, said):
    recorded = "http://127.0.0.1:1/v1/chat/completions"

    def replay(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, content=body, extensions={http_module.REPLAYED: recorded})

    p = OpenAIProvider(settings(base_url="http://127.0.0.1:2/v1", retries=0))
    with pytest.raises((ProviderResponseError, ProviderHTTPError)) as info:
        p.generate(first_turn(), Exchange("fx", httpx.MockTransport(replay)))
    assert str(info.value) == said
    ok = httpx.MockTransport(lambda request: httpx.Response(200, json=OK, extensions={http_module.REPLAYED: recorded}))
    assert p.generate(first_turn(), Exchange("fx", ok)).text == "fine"


def test_backoff_grows_and_is_capped():
    b = Backoff(retries=5, base=1.0, cap=4.0)
    assert [b.delay(n, 1.0) for n in range(5)] == [1.0, 2.0, 4.0, 4.0, 4.0]
    assert [b.delay(n, 0.0) for n in range(3)] == [0.5, 1.0, 2.0]


def test_backoff_base_comes_from_the_module_constant_at_call_time(monkeypatch):
    monkeypatch.setattr(retry, "BACKOFF_BASE", 0.25)
    assert Backoff.from_settings(settings(retries=1)).base == 0.25
    assert Backoff.from_settings(settings(options={"backoff_base": 0.5})).base == 0.5


def test_retry_after_reads_seconds_and_http_dates():
    assert retry_after_seconds("2") == 2.0
    assert retry_after_seconds(" 0.5 ") == 0.5
    assert retry_after_seconds("-3") == 0.0
    assert retry_after_seconds(None) is None
    assert retry_after_seconds("soon") is None
    now = datetime(2025, 1, 1, tzinfo=timezone.utc)
    later = format_datetime(now + timedelta(seconds=30), usegmt=True)
    assert retry_after_seconds(later, now=now.timestamp()) == 30.0


@pytest.mark.parametrize("url", ["127.0.0.1:8080/v1", "ftp://host/v1"])
def test_a_base_url_without_http_is_a_config_error(url):
    with pytest.raises(
        ConfigError, match=r"^openai: base URL .* must start with http:// or https://"
    ):
        OpenAIProvider(settings(base_url=url))


def test_a_trailing_slash_is_dropped():
    p = OpenAIProvider(settings(base_url="http://127.0.0.1:9/v1/"))
    assert p.url == "http://127.0.0.1:9/v1/chat/completions"


def test_generate_accepts_a_request_without_tools(llm_server, provider):
    llm_server.reply(json=OK)
    provider.generate(ChatRequest((Message("user", "hi"),), ()), Exchange("fx"))
    assert "tools" not in llm_server.requests[0].json()
