"""MCP server configuration: in the config file, tool-set files and fixtures, with messages naming the field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replio_replay.config import load_project_config
from replio_replay.errors import ConfigError, FixtureError, ToolSetError
from replio_replay.fixtures.model import load_fixture
from replio_replay.tools.mcp.config import (
    FromEnv,
    HttpServer,
    StdioServer,
    resolve_values,
    secret_names,
)
from replio_replay.tools.setfile import load_chain


def _config(tmp_path: Path, servers: Any) -> str:
    (tmp_path / ".replio").mkdir(exist_ok=True)
    (tmp_path / ".replio" / "config.json").write_text(json.dumps({"mcp_servers": servers}))
    with pytest.raises(ConfigError) as err:
        load_project_config(tmp_path)
    return str(err.value)


def test_both_kinds_of_server_are_read_from_the_config(tmp_path: Path) -> None:
    (tmp_path / ".replio").mkdir()
    (tmp_path / ".replio" / "config.json").write_text(json.dumps({"mcp_servers": {
        "git": {"command": "uvx", "args": ["mcp-server-git"], "env": {"TOKEN": {"from_env": "GIT_TOKEN"}},
                "timeout": 10, "prefix": "git_"},
        "docs": {"url": "http://127.0.0.1:8765/mcp", "headers": {"Authorization": {"from_env": "DOCS_TOKEN"}},
                 "replay": "live"},
    }}))
    servers = load_project_config(tmp_path).mcp_servers
    git, docs = servers["git"], servers["docs"]
    assert isinstance(git, StdioServer) and isinstance(docs, HttpServer)
    assert (git.command, git.args, git.timeout, git.prefix, git.replay) == ("uvx", ["mcp-server-git"], 10, "git_",
                                                                             "cassette")
    assert docs.replay == "live"
    assert secret_names(git) == ["GIT_TOKEN"] and secret_names(docs) == ["DOCS_TOKEN"]


@pytest.mark.parametrize(("servers", "message"), [
    ({"git": {}}, "mcp_servers.git.command: required key is missing"),
    ({"git": "uvx mcp-server-git"}, 'mcp_servers.git: must be an object: {"command": ...} for a program'),
    ({"git": {"command": "x", "timeout": 0}}, "mcp_servers.git.timeout: Input should be greater than 0"),
    ({"git": {"command": "x", "timeout": 10_000}}, "mcp_servers.git.timeout"),
    ({"git": {"command": "x", "prefix": "a.b"}}, "mcp_servers.git.prefix: prefix 'a.b' may hold only"),
    ({"git": {"command": "x", "replay": "always"}}, "mcp_servers.git.replay: Input should be 'cassette' or 'live'"),
    ({"git": {"command": "x", "env": {"A": 1}}}, 'mcp_servers.git.env.A: must be text, or {"from_env": "VARIABLE"}'),
    ({"git": {"command": "x", "cwd": "/"}}, "mcp_servers.git.cwd: unknown key"),
    ({"docs": {"url": "ftp://host/mcp"}}, "mcp_servers.docs.url: url 'ftp://host/mcp' is not an http"),
    ({"docs": {"url": "http://h/mcp", "headers": {"Authorization": "Bearer abc"}}},
     "mcp_servers.docs.headers: header 'Authorization' carries a credential"),
    ({"docs": {"url": "http://h/mcp?token=url-token-12345678&x=1"}},  # the file's text would hold it
     "mcp_servers.docs.url: url 'http://h/mcp?token=%5BREDACTED%5D&x=1' carries a credential"),
    ({"docs": {"url": "http://user:url-pass-12345678@h/mcp"}}, "mcp_servers.docs.url: url 'http://h/mcp' carries a credential"),
    ({"a b": {"command": "x"}}, "server name 'a b' may hold only"),
])
def test_a_bad_server_is_refused_naming_the_file_and_field(tmp_path: Path, servers: Any, message: str) -> None:
    text = _config(tmp_path, servers)
    assert str(tmp_path / ".replio" / "config.json") in text
    assert message in text


def test_a_tool_set_file_adds_and_removes_servers(tmp_path: Path) -> None:
    (tmp_path / "base.json").write_text(json.dumps({"mcp_servers": {"docs": {"url": "http://127.0.0.1:1/mcp"}}}))
    (tmp_path / "v.json").write_text(json.dumps({"extends": "base.json", "mcp_servers": {
        "docs": None, "git": {"command": "git-server"}}}))
    chain = load_chain(tmp_path / "v.json")
    assert chain[1].data.mcp_servers["docs"] is None
    (tmp_path / "bad.json").write_text(json.dumps({"mcp_servers": {"git": {"command": ""}}}))
    with pytest.raises(ToolSetError, match=r"bad.json: mcp_servers.git.command: String should have at least 1"):
        load_chain(tmp_path / "bad.json")


@pytest.mark.parametrize(("value", "message"), [
    (5, "mcp_servers: must be a list of server names, or an object of servers of its own"),
    (["a b"], "mcp_servers.0: server name 'a b' may hold only"),
    ({"git": {"args": []}}, "mcp_servers.git.command: required key is missing"),
])
def test_a_fixtures_servers_are_checked_too(value: Any, message: str) -> None:
    with pytest.raises(FixtureError) as err:
        load_fixture({"id": "f", "task": "t", "mcp_servers": value}, source="f.json")
    assert message in str(err.value) and "f.json" in str(err.value)


def test_a_fixture_lists_servers_or_brings_its_own() -> None:
    listed = load_fixture({"id": "f", "task": "t", "mcp_servers": ["git"]}, source="f.json")
    own = load_fixture({"id": "f", "task": "t", "mcp_servers": {"git": {"command": "x"}}}, source="f.json")
    assert listed.mcp_servers == ["git"]
    assert isinstance(own.mcp_servers, dict) and isinstance(own.mcp_servers["git"], StdioServer)
    assert listed.inputs_hash() != own.inputs_hash()


def test_values_come_from_the_environment_by_name_only() -> None:
    values = {"PLAIN": "text", "TOKEN": FromEnv(from_env="MY_TOKEN")}
    assert resolve_values(values, {"MY_TOKEN": "s3cret-value"}, "mcp server x") == {"PLAIN": "text",
                                                                                     "TOKEN": "s3cret-value"}
    with pytest.raises(ValueError, match="mcp server x: TOKEN comes from the variable MY_TOKEN, which is not set"):
        resolve_values(values, {}, "mcp server x")
