"""An imported BFCL multi-turn case recorded over loopback HTTP from an OpenAI-compatible server, then
replayed with the server gone and the network blocked: the same verdict, turn by turn, no request sent."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from replio_replay.cli import main
from tests.helpers import replio_command
from tests.support.isolation import isolated
from tests.support.llm_server import LLMServer, Reply, Seen, chat_completion

# One xdist worker runs the module (--dist loadgroup): its recording, made once for the module,
# is made once, not once by each worker that runs one of its tests.
pytestmark = pytest.mark.xdist_group("recording-bfcl-multi-turn")

SOURCE = Path(__file__).parents[1] / "fixtures" / "bfcl" / "multi_turn"
FIXTURE = "bfcl-multi_turn_miss_func_46"
#: BFCL's possible answer of the turn that adds `rm` (the first turn's makes no call: `rm` is held back).
REFERENCE = [("cd", {"folder": "Drafts"}), ("rm", {"file_name": "DylanProject.txt"}), ("cd", {"folder": ".."}),
             ("rmdir", {"dir_name": "Drafts"})]


def handle(seen: Seen) -> Reply:
    """A model that cannot delete the file until it is given `rm`, then makes BFCL's reference calls."""
    body = seen.json()
    n = sum(1 for m in body["messages"] if m["role"] == "assistant")
    if body["messages"][-1]["role"] == "tool":
        return chat_completion("Done: the Drafts folder is gone.", body["model"], n)
    if "rm" not in {tool["function"]["name"] for tool in body["tools"]}:
        return chat_completion("I have no function to remove a file.", body["model"], n)
    calls = [{"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
             for i, (name, args) in enumerate(REFERENCE)]
    return chat_completion(None, body["model"], n, calls)


def run(project: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(main, ["eval", "--path", str(project), "run", "--fixture", FIXTURE, "--output",
                                       "json", *extra], catch_exceptions=False)
    assert result.exit_code in (0, 1), (result.stdout, result.stderr)
    return result.exit_code, json.loads(result.stdout)["fixtures"][0]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """The case imported and recorded once for the module's tests (its server closed after)."""
    project = tmp_path_factory.mktemp("recorded") / "proj"
    (project / ".replio").mkdir(parents=True)
    (project / ".replio" / "config.json").write_text(json.dumps({"provider": "openai:test-model",
                                                                 "bundled": False}))
    with isolated(tmp_path_factory), LLMServer() as llm_server:
        done = subprocess.run([replio_command(), "eval", "--path", str(project), "import", "bfcl", str(SOURCE),
                               "--category", "multi_turn_miss_func"], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        llm_server.handler = handle
        code, first = run(project, "--base-url", f"{llm_server.url}/v1", "--record-mode", "once",
                          "--update-golden")
        assert code == 0, first
        offered = [{t["function"]["name"] for t in s.json()["tools"]} for s in llm_server.requests]
        assert len(offered) == 3 and "rm" not in offered[0] and "rm" in offered[1] and "rm" in offered[2]
    return project, first


def test_the_recording_passes_as_bfcl_judges_it(recorded: tuple[Path, dict[str, Any]]) -> None:
    _, first = recorded
    assert (first["status"], first["pass"], first["reasons"]) == ("ok", True, [])
    assert [c["name"] for c in first["trace"]] == ["cd", "rm", "cd", "rmdir"]
    assert [m["content"] for m in first["conversation"] if m["role"] == "user"][1] == (
        "I have updated some more functions you can choose from. What about now?")
    assert "Drafts" not in first["state"]["GorillaFileSystem"]["root"]


def test_a_replay_sends_nothing_and_gives_the_same_result(recorded: tuple[Path, dict[str, Any]]) -> None:
    project, first = recorded
    code, again = run(project, "--record-mode", "none", "--strict")
    assert code == 0, {k: again.get(k) for k in ("status", "error", "reasons", "request_drift", "drift")}
    assert again["request_drift"] == []
    same = ("status", "pass", "reasons", "trace", "conversation", "state", "tokens")
    assert {k: again[k] for k in same} == {k: first[k] for k in same}
