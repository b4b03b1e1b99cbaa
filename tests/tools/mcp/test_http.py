"""A real streamable-HTTP server (the SDK's, on loopback) as tools, its credential given by variable name."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import TypeAdapter

from replio_replay.errors import McpError
from replio_replay.tools.base import ToolContext
from replio_replay.tools.mcp.config import McpServer
from replio_replay.tools.mcp.source import McpTools
from replio_replay.tools.sandbox import Sandbox

# One xdist worker runs the module (--dist loadgroup): its HTTP server, started once for the module,
# is started once, not once by each worker that runs one of its tests.
pytestmark = pytest.mark.xdist_group("mcp-http")

SERVER = TypeAdapter(McpServer)
TOKEN = "http-secret-token-4242"


def _tools(root: Path, url: str, env: dict[str, str]) -> McpTools:
    config = SERVER.validate_python({"url": url, "timeout": 10,
                                     "headers": {"Authorization": {"from_env": "DOCS_TOKEN"}, "X-Client": "tests"}})
    return McpTools({"docs": config}, {"docs": "live"}, root=root, env=env)


def test_an_http_server_is_listed_and_called_with_its_header(tmp_path: Path, http_server: str) -> None:
    mcp = _tools(tmp_path, http_server, {"DOCS_TOKEN": f"Bearer {TOKEN}"})
    try:
        tools = {t.name: t for t in mcp.open()}
        assert {"echo", "add", "picture"} <= set(tools)
        ctx = ToolContext(Sandbox(tmp_path))
        assert tools["echo"].invoke({"text": "over http"}, ctx) == "over http"
        assert tools["picture"].invoke({}, ctx) == "[image image/png, 69 bytes]"
        assert mcp.records["docs"].server["name"] == "test-server"
    finally:
        mcp.close()


def test_a_refused_credential_is_an_error_naming_the_server_and_url(tmp_path: Path, http_server: str) -> None:
    mcp = _tools(tmp_path, http_server, {"DOCS_TOKEN": "Bearer wrong-token-000"})
    with pytest.raises(McpError, match=rf"mcp server docs \({http_server}\): it did not start: .*401"):
        mcp.open()
    mcp.close()


def test_a_server_that_is_not_there_is_named(tmp_path: Path, closed_port: int) -> None:
    mcp = _tools(tmp_path, f"http://127.0.0.1:{closed_port}/mcp", {"DOCS_TOKEN": "x"})
    with pytest.raises(McpError, match=rf"mcp server docs \(http://127.0.0.1:{closed_port}/mcp\): it did not start"):
        mcp.open()
    mcp.close()
