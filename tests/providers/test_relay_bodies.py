"""The relay's reading of what an agent sends and what goes back: every malformed body is a named
refusal kept as the fixture's failure, and nothing of the key reaches the agent.

Bodies are written on raw loopback sockets, so the malformed ones are sent as they would be by a
broken client, not as an HTTP library would fix them up.
"""

from __future__ import annotations

import base64
import json
import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from replio_replay._runtime.redact import Redactor
from replio_replay.providers.relay import Relay, RelayServer
from tests.providers.test_relay import KEY, provider
from tests.support.leaks import leaks
from tests.support.llm_server import LLMServer, chat_completion


@pytest.fixture
def served(llm_server: LLMServer) -> Iterator[tuple[Relay, RelayServer]]:
    relay = Relay(provider("openai:run-model", f"{llm_server.url}/v1"), None, redactor=Redactor((KEY,)))
    with RelayServer(relay, body_timeout=0.5) as server:
        yield relay, server


def _raw(server: RelayServer, head: str, body: bytes = b"", *, close: bool = True) -> bytes:
    """What the relay answers to `head` (the request's headers, without the blank line) and `body`;
    with `close`, the sending side is shut after the body, as a client cut off would."""
    url = httpx.URL(server.base_url)
    with socket.create_connection((url.host, url.port), timeout=10) as sock:
        sock.sendall(f"POST {url.path}/v1/chat/completions HTTP/1.1\r\nHost: x\r\n{head}\r\n\r\n".encode() + body)
        if close:
            sock.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
            if b"\r\n\r\n" in answer and len(answer.split(b"\r\n\r\n", 1)[1]) >= _length(answer):
                break
    return answer


def _length(answer: bytes) -> int:
    for line in answer.split(b"\r\n\r\n", 1)[0].split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return int(line.split(b":")[1])
    return 0


def _status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def _message(answer: bytes) -> str:
    return str(json.loads(answer.split(b"\r\n\r\n", 1)[1])["error"]["message"])


def test_a_chunk_of_negative_size_is_refused_not_read_to_the_end(served, llm_server: LLMServer) -> None:  # type: ignore[no-untyped-def]
    relay, server = served
    body = json.dumps({"model": "m", "messages": []}).encode()
    answer = _raw(server, "Transfer-Encoding: chunked", b"-1\r\n" + body)
    assert _status(answer) in (400, 413) and "chunk" in _message(answer)
    assert llm_server.requests == [] and relay.exchanges == []


def test_a_body_over_the_cap_in_chunks_is_refused(served, llm_server: LLMServer, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    relay, server = served
    monkeypatch.setattr("replio_replay.providers.relay.MAX_REQUEST_BYTES", 1000)
    answer = _raw(server, "Transfer-Encoding: chunked", b"".join(b"200\r\n" + b" " * 512 + b"\r\n" for _ in range(3)))
    assert _status(answer) == 413 and "1000 bytes" in _message(answer)
    assert llm_server.requests == []


@pytest.mark.parametrize(("body", "said"), [
    (b'{"model": "m", "messages": [], "temperature": NaN}', "NaN is not a JSON number"),
    (b'{"model": "m", "messages": [], "temperature": -Infinity}', "-Infinity is not a JSON number"),
    (b'{"model": "m", "messages": [{"role": "user", "content": "\\ud800"}]}', "lone surrogate"),
    (b'{"model": "m", "messages": ' + b"[" * 900 + b"]" * 900 + b"}", "nested deeper than 100 levels"),
    (b'{"model": "m", "messages": ' + b"[" * 200 + b"]" * 200 + b"}", "nested deeper than 100 levels"),
    (b'{"model": "m", "n": 1' + b"0" * 5000 + b"}", "not valid JSON"),
    (b'{"model": "m", "messages": "caf\xe9"}', "is not text in an encoding JSON may use: invalid continuation byte"),
])
def test_a_body_replio_cannot_send_on_is_a_named_failure_of_the_agent(served, llm_server: LLMServer,  # type: ignore[no-untyped-def]
                                                                      body: bytes, said: str) -> None:
    relay, server = served
    answer = _raw(server, f"Content-Length: {len(body)}", body)
    assert _status(answer) == 400, answer
    assert said in _message(answer) and relay.failures and said in relay.failures[0]
    assert "request (/v1/chat/completions)" in relay.failures[0]
    assert llm_server.requests == []


def test_a_body_cut_short_by_the_agent_is_named_as_cut(served, llm_server: LLMServer) -> None:  # type: ignore[no-untyped-def]
    relay, server = served
    body = json.dumps({"model": "m", "messages": []}).encode()
    answer = _raw(server, f"Content-Length: {len(body) + 50}", body)
    assert _status(answer) == 400
    assert relay.failures == [] and relay.cut == [f"the agent's request ended after {len(body)} of the {len(body) + 50} bytes it "
                              "announced (its connection closed); nothing was sent to the model"]
    assert llm_server.requests == []


def test_a_chunked_body_cut_short_by_the_agent_is_named_as_cut(served, llm_server: LLMServer) -> None:  # type: ignore[no-untyped-def]
    relay, server = served
    answer = _raw(server, "Transfer-Encoding: chunked", b"100\r\n" + b"x" * 10)
    assert _status(answer) == 400 and "ended after 10 of the 256 bytes" in relay.cut[0]
    assert llm_server.requests == []


def test_a_body_that_stops_arriving_is_named_as_timed_out(served, llm_server: LLMServer) -> None:  # type: ignore[no-untyped-def]
    relay, server = served
    started = time.monotonic()
    answer = _raw(server, "Content-Length: 100", b'{"model": ', close=False)
    assert time.monotonic() - started < 5
    assert _status(answer) == 408
    assert relay.cut == ["the agent's request did not arrive whole within 0.5 s (10 of the 100 bytes it "
                              "announced came); nothing was sent to the model"]
    assert llm_server.requests == []


def test_an_answer_echoing_the_key_reaches_the_agent_redacted(served, llm_server: LLMServer) -> None:  # type: ignore[no-untyped-def]
    relay, server = served
    llm_server.handler = lambda seen: chat_completion(f"you sent {seen.headers['authorization']}", "run-model", 1)
    answer = httpx.post(f"{server.base_url}/v1/chat/completions", json={"model": "m", "messages": []})
    assert answer.status_code == 200
    assert KEY not in answer.text and KEY[:16] not in answer.text
    assert answer.json()["choices"][0]["message"]["content"] == "you sent Bearer [REDACTED]"
    assert relay.failures == []


@pytest.mark.parametrize("codec", ["utf-16", "utf-32-be"])
def test_an_answer_holding_the_key_in_a_wide_encoding_reaches_the_agent_without_it(  # type: ignore[no-untyped-def]
        served, llm_server: LLMServer, codec: str) -> None:
    relay, server = served
    data = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": f"it is {KEY}"}}]})
    llm_server.reply(body=data.encode(codec), headers={"content-type": "application/json"})
    answer = httpx.post(f"{server.base_url}/v1/chat/completions", json={"model": "m", "messages": []})
    assert leaks(answer.content, KEY) == []
    assert relay.exchanges[0].body == data.encode(codec)  # the trace keeps it, redacted with the results


def test_an_answer_holding_the_key_where_it_cannot_be_redacted_in_place_is_withheld(  # type: ignore[no-untyped-def]
        served, llm_server: LLMServer) -> None:
    relay, server = served
    encoded = base64.b64encode(KEY.encode()).decode()  # base64 in a UTF-16 body: found by reading it, not in place
    data = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": encoded}}]})
    llm_server.reply(body=data.encode("utf-16"), headers={"content-type": "application/json"})
    answer = httpx.post(f"{server.base_url}/v1/chat/completions", json={"model": "m", "messages": []})
    assert answer.status_code == 502 and leaks(answer.content, KEY) == []
    assert relay.failures == ["openai: the answer holds the run's key in a form that cannot be redacted in place "
                              "(its body is not UTF-8); it was not passed to the agent"]


def test_a_fault_of_replios_own_is_answered_and_named_not_a_closed_connection(served, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    relay, server = served

    def broken(*args: object, **kwargs: object) -> str:
        raise RuntimeError("no URL today")

    monkeypatch.setattr(relay.provider, "relay_url", broken)
    answer = httpx.post(f"{server.base_url}/v1/chat/completions", json={"model": "m", "messages": []})
    assert answer.status_code == 500
    assert relay.failures == ["replio's relay failed on the agent's request to /v1/chat/completions: "
                              "RuntimeError: no URL today"]
