"""Start-up stays light: `replio --help` and `replio eval list` load no HTTP, recording or table code,
and a replay loads none of what only recording, a terminal or an unusual tool schema needs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from replio_replay.cli import main
from tests.support.agents import openai_agent
from tests.support.llm_server import LLMServer
from tests.support.project import PLANS

HEAVY = ("httpx", "vcr", "deepdiff", "rich", "yaml", "replio_replay.run.engine")


@pytest.mark.parametrize("argv", [["--help"], ["eval", "--path", ".", "list"]], ids=["help", "list"])
def test_light_commands_import_only_what_they_need(argv: list[str], tmp_path: Path) -> None:
    code = (
        "import sys, json, io, contextlib\n"
        "from replio_replay.cli import main\n"
        f"sys.argv = ['replio', *{argv!r}]\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n        main()\n    except SystemExit:\n        pass\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True)
    loaded = set(json.loads(done.stdout.splitlines()[-1]))
    assert [m for m in HEAVY if m in loaded] == []


#: What a replay piped to a file needs none of: httpx's command-line client and the rich and pygments
#: it brings (the table is plain text when piped), and the pure-Python jsonschema with the referencing,
#: attrs and rpds it brings (tool schemas are checked by jsonschema-rs). vcrpy it does need: it replays.
#: Nor what only other runs use: the wire formats of the providers it does not speak (OpenAI's Chat
#: Completions only), the relay and process of a user's own agent, the MCP SDK, the HTML report and
#: its Jinja2, the importers, and the score gates and baseline comparisons (none is given).
NOT_IN_A_REPLAY = ("httpx._main", "rich", "pygments", "jsonschema", "referencing", "attr",
                   "replio_replay.judge.baseline", "replio_replay.judge.paired",
                   "replio_replay.providers.wire.anthropic", "replio_replay.providers.wire.gemini",
                   "replio_replay.providers.wire.ollama", "replio_replay.providers.wire.responses",
                   "replio_replay.providers.relay", "replio_replay.run.agent", "replio_replay.agents.process",
                   "mcp", "jinja2", "replio_replay.report.html", "replio_replay.fixtures.bfcl",
                   "replio_replay.fixtures.tau2")

LOOKUP = {"lookup_order": {
    "description": "Look an order up by its id.",
    "parameters": {"type": "object", "properties": {"order_id": {"type": "string", "description": "The id."}},
                   "required": ["order_id"], "additionalProperties": False},
    "result": "shipped",
}}


def test_a_replay_imports_only_what_it_needs(project: Path, llm_server: LLMServer) -> None:
    (project / ".replio" / "eval" / "gamma.json").write_text(json.dumps({
        "task": "GAMMA: where is order A-1?", "tools": LOOKUP, "expected": ["lookup_order"],
    }))
    llm_server.handler = openai_agent({**PLANS, "GAMMA": [[("lookup_order", {"order_id": "A-1"})], "Shipped."]})
    recorded = CliRunner().invoke(main, ["eval", "--path", str(project), "run", "--no-bundled",
                                         "--base-url", f"{llm_server.url}/v1"])
    assert recorded.exit_code == 0, recorded.output
    llm_server.close()
    code = (
        "import atexit, json, sys\n"
        "from replio_replay.cli import entry\n"
        "atexit.register(lambda: sys.stderr.write(json.dumps(sorted(\n"
        "    name for name, module in sys.modules.items() if module is not None)) + '\\n'))\n"
        f"sys.argv = ['replio', 'eval', '--path', {str(project)!r}, 'run', '--record-mode', 'none', '--no-bundled']\n"
        "entry()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "gamma" in done.stdout and "lookup_order" in done.stdout  # the table, with the stub tool called
    loaded = set(json.loads(done.stderr.splitlines()[-1]))
    assert {"replio_replay.recording.transport", "vcr.cassette"} <= loaded  # it did replay, through vcrpy
    assert [m for m in NOT_IN_A_REPLAY if m in loaded or any(n.startswith(f"{m}.") for n in loaded)] == []


def test_a_live_run_without_cassettes_imports_no_recording_library(project: Path, llm_server: LLMServer) -> None:
    """vcrpy and PyYAML (about a third of a one-fixture live run's start-up) are for cassettes; a
    run with --no-cassettes (and no --max-cost, whose estimate reads the last ones) loads neither."""
    llm_server.handler = openai_agent(PLANS)
    code = (
        "import atexit, json, sys\n"
        "from replio_replay.cli import entry\n"
        "atexit.register(lambda: sys.stderr.write(json.dumps(sorted(\n"
        "    name for name, module in sys.modules.items() if module is not None)) + '\\n'))\n"
        f"sys.argv = ['replio', 'eval', '--path', {str(project)!r}, 'run', '--no-cassettes', '--no-bundled',\n"
        f"            '--base-url', {llm_server.url + '/v1'!r}]\n"
        "entry()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    loaded = set(json.loads(done.stderr.splitlines()[-1]))
    assert "replio_replay.run.engine" in loaded and llm_server.requests  # it did run, live
    assert [m for m in ("vcr", "yaml") if m in loaded] == []
