"""Secrets never reach disk: scrubbed headers and query values, and refused cassettes (the key in
any encoding JSON may use, or written as base64 or hex, as surely as the key as it is)."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from replio_replay.cli import main
from replio_replay.fixtures.model import Fixture
from replio_replay.judge.results import Status
from replio_replay.providers.base import ProviderSettings
from replio_replay.providers.openai import OpenAIProvider
from replio_replay.recording.modes import RecordMode
from replio_replay.recording.session import CassetteSessions
from tests.helpers import make_case
from tests.support.agents import openai_agent
from tests.support.leaks import leaks
from tests.support.llm_server import LLMServer, Reply, Seen
from tests.support.project import run_args

KEY = "sk-test-0123456789abcdefghijklmnop"


def test_scrub_request_drops_secret_headers_and_key_values_and_keeps_the_rest_as_it_is() -> None:
    from replio_replay.recording.cassette import Request, scrub_request

    plain = Request("POST", "http://127.0.0.1/v1/chat?x=1", b"{}", {"content-type": "application/json"})
    assert scrub_request(plain) is plain  # nothing to take out: no copy
    keyed = Request("POST", "http://127.0.0.1/v1/chat?key=" + KEY, b"{}",
                    {"Authorization": f"Bearer {KEY}", "content-type": "application/json"})
    scrubbed = scrub_request(keyed)
    assert KEY not in scrubbed.uri and "authorization" not in {k.lower() for k in scrubbed.headers}
    assert scrubbed.headers["content-type"] == "application/json" and scrubbed.body == b"{}"
    assert KEY in keyed.uri and keyed.headers["Authorization"] == f"Bearer {KEY}"  # the original unchanged
    assert KEY not in scrub_request(Request("GET", "http://127.0.0.1/v1?x=1", b"", {"X-Api-Key": KEY})).headers.values()


def _all_files_text(folder: Path) -> str:
    return "".join(p.read_text() for p in folder.rglob("*") if p.is_file())


def test_authorization_header_is_scrubbed(project: Path, agent: LLMServer, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    result = CliRunner().invoke(main, run_args(project, "--base-url", f"{agent.url}/v1"))
    assert result.exit_code == 0, result.output
    assert agent.requests[0].headers["authorization"] == f"Bearer {KEY}"
    text = _all_files_text(project / "cassettes")
    assert KEY not in text
    assert "authorization" not in text.lower()


def test_key_in_query_string_is_redacted(tmp_path: Path, llm_server: LLMServer) -> None:
    llm_server.reply(json={"ok": True})
    provider = OpenAIProvider(ProviderSettings(name="openai", model="m", base_url=f"{llm_server.url}/v1"))
    sessions = CassetteSessions(tmp_path, RecordMode.ONCE)
    session = sessions(make_case(Fixture(id="q", task="t")), provider)
    client = httpx.Client(transport=session.transport)
    response = client.get(f"{llm_server.url}/data?api_key={KEY}&page=2")
    assert response.json() == {"ok": True}
    session.finish(Status.OK)
    provider.close()
    text = (tmp_path / "openai" / "m" / "q.yaml").read_text()
    assert KEY not in text
    assert "api_key=REDACTED" in text and "page=2" in text


def test_cassette_holding_the_key_is_refused(project: Path, llm_server: LLMServer, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    agent = openai_agent({"ALPHA": ["done"], "BETA": ["done"]})

    def leaky(seen):  # a server that echoes the key back in its answer
        reply = agent(seen)
        reply.json["choices"][0]["message"]["content"] = f"your key is {KEY}"
        return reply

    llm_server.handler = leaky
    result = CliRunner().invoke(main, run_args(project, "--base-url", f"{llm_server.url}/v1"))
    assert result.exit_code == 1
    fixtures = json.loads(result.stdout)["fixtures"]
    for fx in fixtures:
        assert fx["status"] == "error"
        assert "not written" in fx["error"] and "content" in fx["error"]
    assert not list((project / "cassettes").rglob("*.yaml")) if (project / "cassettes").exists() else True


def test_set_cookie_from_server_is_not_recorded(project: Path, llm_server: LLMServer) -> None:
    agent = openai_agent({"ALPHA": ["done"], "BETA": ["done"]})

    def with_cookie(seen):
        reply = agent(seen)
        return Reply(json=reply.json, headers={"set-cookie": "session=abc123secret"})

    llm_server.handler = with_cookie
    result = CliRunner().invoke(main, run_args(project, "--base-url", f"{llm_server.url}/v1"))
    assert result.exit_code == 0
    assert "abc123secret" not in _all_files_text(project / "cassettes")


def test_cassette_holding_the_key_in_a_binary_body_is_refused(project: Path, llm_server: LLMServer,
                                                              monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    # not UTF-8: the body would be stored as base64 (!!binary), where the key is not in the text
    llm_server.handler = lambda seen: Reply(200, body=b"\xff\xfe key " + KEY.encode())
    result = CliRunner().invoke(main, run_args(project, "--base-url", f"{llm_server.url}/v1"))
    fixtures = json.loads(result.stdout)["fixtures"]
    assert [fx["status"] for fx in fixtures] == ["error", "error"]
    assert all("not written" in fx["error"] and "interactions[0].response.body.string" in fx["error"]
               for fx in fixtures), fixtures
    assert not list(project.rglob("*.yaml"))


def _wide_body(codec: str) -> Callable[[Seen], Reply]:
    """An OpenAI answer echoing the key, its JSON body in `codec` (json.loads reads each)."""
    agent = openai_agent({"ALPHA": ["done"], "BETA": ["done"]})

    def reply(seen: Seen) -> Reply:
        data = agent(seen).json
        data["choices"][0]["message"]["content"] = f"your key is {KEY}"
        return Reply(body=json.dumps(data).encode(codec), headers={"content-type": "application/json"})
    return reply


def _encoded_echo(encode: Callable[[bytes], bytes], offset: int) -> Callable[[Seen], Reply]:
    """An OpenAI answer (UTF-8 JSON) holding the key encoded, `offset` bytes into what is encoded."""
    agent = openai_agent({"ALPHA": ["done"], "BETA": ["done"]})

    def reply(seen: Seen) -> Reply:
        data = agent(seen).json
        data["choices"][0]["message"]["content"] = "echo " + encode(b"@" * offset + KEY.encode()).decode()
        return Reply(json=data)
    return reply


@pytest.mark.parametrize("server", [
    *(pytest.param(_wide_body(codec), id=codec) for codec in ("utf-16", "utf-16-le", "utf-16-be", "utf-32",
                                                              "utf-32-le", "utf-32-be")),
    *(pytest.param(_encoded_echo(encode, offset), id=f"{name}@{offset}")
      for name, encode in (("base64", base64.b64encode), ("urlsafe-base64", base64.urlsafe_b64encode),
                           ("hex", binascii.hexlify), ("HEX", lambda b: binascii.hexlify(b).upper()))
      for offset in range(3)),
    pytest.param(_encoded_echo(lambda b: "".join(f"%{x:02{'x' if i % 2 else 'X'}}" for i, x in enumerate(b)).encode(),
                               0), id="every-byte-percent-mixed-case"),
    pytest.param(_encoded_echo(lambda b: "".join(f"\\u{x:04x}" for x in b).encode(), 0), id="every-char-u-escaped"),
])
def test_cassette_holding_the_key_in_any_encoding_is_refused(project: Path, llm_server: LLMServer, monkeypatch,
                                                             server: Callable[[Seen], Reply]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    llm_server.handler = server
    result = CliRunner().invoke(main, run_args(project, "--base-url", f"{llm_server.url}/v1"))
    assert result.exit_code == 1, result.output
    for fx in json.loads(result.stdout)["fixtures"]:  # as for a key echoed as it is
        assert fx["status"] == "error" and "not written" in fx["error"], fx
        assert "interactions[0].response.body" in fx["error"]
        assert not leaks(json.dumps(fx), KEY)
    assert not list(project.rglob("*.yaml"))
