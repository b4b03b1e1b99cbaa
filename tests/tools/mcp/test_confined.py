"""A stdio MCP server confined as all the user's code is, through the real CLI at each level
(``REPLIO_CONFINE``): it finds neither replio's key nor replio's process in ``/proc`` and writes only
its worktree (issue 47). Without namespaces (the last level), run as root here, it *does* find them:
that run is the control showing the looking works.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from replio_replay._runtime.confine import CAP, Level
from replio_replay.errors import McpError
from replio_replay.tools.mcp.config import McpServer
from replio_replay.tools.mcp.source import McpTools
from tests.helpers import replio_command, write_json
from tests.tools.test_confinement import require_level

LOOKER = Path(__file__).with_name("looker.py")
KEY = "sk-test-" + "mcpc0nf1ne" * 3


@pytest.fixture(params=list(Level), ids=[level.value for level in Level])
def level(request: pytest.FixtureRequest) -> Level:
    """Each level of confinement, where it works here."""
    require_level(request.param)
    return request.param  # type: ignore[no-any-return]


def test_a_stdio_server_finds_no_key_nor_replio_and_writes_only_its_worktree(tmp_path: Path, level: Level) -> None:
    project = tmp_path / "p"
    outside = project / "outside.txt"  # in sight (its project), not its to write
    write_json(project / ".replio" / "config.json", {
        "provider": "mock", "bundled": False, "providers": {"mock": {"script": ".replio/script.json"}},
        "mcp_servers": {"l": {"command": "{python}", "args": [str(LOOKER)]}}})
    write_json(project / ".replio" / "script.json", {"look": [
        {"tool_calls": [{"name": "look", "arguments": {"outside": str(outside)}}]}, {"text": "Done."}]})
    write_json(project / ".replio" / "eval" / "look.json", {"task": "Look.", "tool_permission": {"mcp": "allow"}})
    done = subprocess.run([replio_command(), "eval", "--path", str(project), "run", "--no-cassettes", "--output",
                           "json"], capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL,
                          env={**os.environ, "OPENAI_API_KEY": KEY, CAP: level.value})
    (fixture,) = json.loads(done.stdout)["fixtures"]
    looked = json.loads(fixture["trace"][0]["result"])
    assert not looked["own_key"] and looked["worktree"], looked  # never given the key; its worktree is its own
    if level is Level.NONE:  # the control: without namespaces replio is in sight, and its key with it (root)
        assert looked["replio_seen"] and looked["keys"] > 0 and looked["outside"], looked
        return
    assert looked == {"keys": 0, "replio_seen": False, "own_key": False, "worktree": True,
                      "outside": level is Level.UNSHARE}, looked  # unshare leaves the filesystem as replio's
    assert outside.exists() is (level is Level.UNSHARE)


def test_a_writable_folder_that_does_not_exist_is_named_before_the_server_starts(tmp_path: Path) -> None:
    config = TypeAdapter(McpServer).validate_python({"command": "{python}", "args": [str(LOOKER)],
                                                     "writable": ["{project}/logs"]})
    mcp = McpTools({"l": config}, {"l": "live"}, root=tmp_path, env={}, project=tmp_path / "p")
    with pytest.raises(McpError) as raised:
        mcp.open()
    mcp.close()
    assert str(raised.value) == (f"mcp server l: writable '{{project}}/logs' is not a folder ({tmp_path}/p/logs); "
                                 "give an existing folder's absolute path, or one under {project}")
