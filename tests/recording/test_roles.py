"""Every request of a fixture has a role (agent, user): one cassette records both streams, in
order, the role written only when it is not `agent`, replayed by role with the network blocked."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from replio_replay.errors import CassetteError
from replio_replay.providers.base import ChatRequest, Exchange, Message
from replio_replay.providers.ollama import OllamaProvider
from replio_replay.providers.openai import OpenAIProvider
from replio_replay.recording.cassette import BODY_MATCHER, open_cassette
from replio_replay.recording.modes import RecordMode
from replio_replay.recording.network import network_blocked
from replio_replay.recording.persister import AtomicPersister
from replio_replay.recording.serializer import ReadableSerializer
from replio_replay.recording.transport import CassetteTransport
from tests.providers.samples import settings
from tests.support.llm_server import LLMServer, Reply, Seen


def _echo(seen: Seen) -> Reply:
    last = seen.json()["messages"][-1]["content"]
    return Reply(json={"choices": [{"message": {"role": "assistant", "content": f"re: {last}"}}],
                      "usage": {"prompt_tokens": 5, "completion_tokens": 2}})


def _ask(provider: OpenAIProvider, transport: CassetteTransport, role: str, text: str) -> str:
    exchange = Exchange("conv", transport, role=role)
    return provider.generate(ChatRequest((Message("user", text),), ()), exchange).text


def _transport(path: Path, mode: RecordMode, provider: OpenAIProvider | None) -> CassetteTransport:
    serializer = ReadableSerializer(source=str(path))
    cassette, config = open_cassette(path, mode, serializer, AtomicPersister(), load=path.is_file())
    inner = provider.transport() if provider is not None else None
    return CassetteTransport(cassette, inner, body_matcher=config.matchers[BODY_MATCHER], fixture_id="conv")


@pytest.fixture
def recorded(tmp_path: Path, llm_server: LLMServer) -> tuple[Path, OpenAIProvider]:
    llm_server.handler = _echo
    provider = OpenAIProvider(settings(base_url=f"{llm_server.url}/v1"))
    path = tmp_path / "conv.yaml"
    t = _transport(path, RecordMode.ALL, provider)
    assert _ask(provider, t, "agent", "a1") == "re: a1"
    assert _ask(provider, t, "user", "u1") == "re: u1"
    assert _ask(provider, t, "agent", "a2") == "re: a2"
    t.cassette._save(force=True)
    assert all("x-replio-role" not in s.headers for s in llm_server.requests)  # never sent
    llm_server.close()
    return path, provider


def test_the_role_is_written_only_when_not_the_agents(recorded: tuple[Path, OpenAIProvider]) -> None:
    text = recorded[0].read_text()
    requests = [item["request"] for item in yaml.safe_load(text)["interactions"]]
    assert [r.get("role") for r in requests] == [None, "user", None]
    assert list(requests[1])[0] == "role"  # read first
    assert "x-replio-role" not in text


def test_each_role_replays_its_own_recordings_in_order_with_the_network_blocked(
        recorded: tuple[Path, OpenAIProvider]) -> None:
    path, provider = recorded
    t = _transport(path, RecordMode.NONE, None)
    with network_blocked():
        assert _ask(provider, t, "user", "u1") == "re: u1"  # the user's, though the agent's came first
        assert _ask(provider, t, "agent", "a1") == "re: a1"
        assert _ask(provider, t, "agent", "a2") == "re: a2"
        with pytest.raises(CassetteError, match="request #4 of the user .* has no recording"):
            _ask(provider, t, "user", "u2")
    assert t.request_drift == []


def test_a_changed_user_request_is_drift_named_by_its_role(recorded: tuple[Path, OpenAIProvider]) -> None:
    path, provider = recorded
    t = _transport(path, RecordMode.NONE, None)
    with network_blocked():
        _ask(provider, t, "agent", "a1")
        _ask(provider, t, "user", "u1 changed")
    [(role, change)] = t.request_drift
    assert role == "user" and change.old == "u1" and change.new == "u1 changed"


def test_a_cassette_read_and_saved_again_is_byte_for_byte_the_same(recorded: tuple[Path, OpenAIProvider]) -> None:
    path, _ = recorded
    before = path.read_bytes()
    t = _transport(path, RecordMode.NEW_EPISODES, None)
    t.cassette._save(force=True)
    assert path.read_bytes() == before


@pytest.mark.parametrize(("kind", "base", "said"), [
    (OpenAIProvider, "http://127.0.0.1:9/api/v1", "the provider's base URL has another path than when it was "
                                                  "recorded (recorded under /, now under /api)"),
    (OpenAIProvider, "http://127.0.0.1:9", "the provider's base URL has another path than when it was recorded "
                                           "(recorded under /v1, now under /)"),
    (OllamaProvider, "http://127.0.0.1:9/v1", "the request goes to another endpoint than when it was recorded"),
])
def test_a_request_on_a_path_the_cassette_does_not_hold_names_both_paths(recorded: tuple[Path, OpenAIProvider],
                                                                         kind: type[OpenAIProvider], base: str,
                                                                         said: str) -> None:
    path, _ = recorded
    moved = kind(settings(base_url=base))
    t = _transport(path, RecordMode.NONE, None)
    with network_blocked(), pytest.raises(CassetteError) as raised:
        _ask(moved, t, "agent", "a1")
    assert "its path is not one the cassette holds (/v1/chat/completions): " + said in str(raised.value)
    assert "went further" not in str(raised.value)
