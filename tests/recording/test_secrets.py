"""Secrets never reach disk: scrubbed headers and query values, and refused cassettes."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
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
from tests.support.llm_server import LLMServer, Reply
from tests.support.project import run_args

KEY = "sk-test-0123456789abcdefghijklmnop"


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
