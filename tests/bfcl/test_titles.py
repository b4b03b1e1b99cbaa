"""BFCL's own names in what a person reads: an imported fixture's tools carry BFCL's name as their
`title`, which the table, the reasons, JUnit and the HTML report show, while the JSON, the
golden and the cassette keep the tool name the model was offered."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.helpers import replio_command
from tests.support.llm_server import LLMServer, Reply, Seen

DATA = Path(__file__).parent / "data"


def _factorial_of_six(seen: Seen) -> Reply:
    """Calls BFCL's math.factorial (as its tool name) with 6, where the case expects 5."""
    body = seen.json()
    call = {"id": "call_0", "type": "function", "function": {"name": "math-factorial", "arguments": '{"number": 6}'}}
    message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
    return Reply(json={"choices": [{"index": 0, "message": message}], "model": body["model"],
                       "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})


def replio(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL", "OPENAI_API_KEY")}
    return subprocess.run([replio_command(), "eval", "--path", str(project), *args], capture_output=True,
                          text=True, timeout=120, env={**env, "COLUMNS": "200"})


def test_reports_show_bfcl_names_and_the_files_keep_the_tool_names(tmp_path: Path, llm_server: LLMServer) -> None:
    project = tmp_path / "project"
    (project / ".replio").mkdir(parents=True)
    (project / ".replio" / "config.json").write_text('{"bundled": false, "provider": "openai:test-model"}')
    imported = replio(project, "import", "bfcl", str(DATA), "--category", "simple_python")
    assert imported.returncode == 0, imported.stderr
    fixture = json.loads((project / ".replio" / "eval" / "bfcl" / "bfcl-simple_python_1.json").read_text())
    assert fixture["tools"]["math-factorial"]["title"] == "math.factorial"
    llm_server.handler = _factorial_of_six
    saved, junit, html = tmp_path / "run.json", tmp_path / "junit.xml", tmp_path / "report.html"
    done = replio(project, "run", "--fixture", "bfcl-simple_python_1", "--base-url", f"{llm_server.url}/v1",
                  "--output-file", str(saved), "--junit-xml", str(junit), "--html", str(html), "--update-golden")
    assert "Traceback" not in done.stderr, done.stderr

    row = next(line for line in done.stdout.splitlines() if line.startswith("bfcl-simple_python_1 "))
    assert row.split()[-1] == "math.factorial"
    reason = next(line for line in done.stdout.splitlines() if line.startswith("  bfcl-simple_python_1: "))
    assert "math.factorial's argument 'number' is 6" in reason and "math-factorial" not in reason

    result = json.loads(saved.read_text())["fixtures"][0]
    assert result["names"] == ["math-factorial"] and result["trace"][0]["name"] == "math-factorial"
    assert result["titles"] == {"math-factorial": "math.factorial"}
    assert "math-factorial's argument" in result["reasons"][0]

    assert '<property name="names" value="math.factorial" />' in junit.read_text()
    assert "math.factorial's argument" in junit.read_text() and "math-factorial" not in junit.read_text()
    page = html.read_text(encoding="utf-8")
    assert '<div class="callname">math.factorial</div>' in page and "math-factorial" not in page

    golden = project / "golden" / "openai" / "test-model" / "bfcl-simple_python_1.json"
    assert json.loads(golden.read_text())["turns"][0][0]["name"] == "math-factorial"
    cassette = (project / "cassettes" / "openai" / "test-model" / "bfcl-simple_python_1.yaml").read_text()
    assert "math-factorial" in cassette and "math.factorial" not in cassette  # the title is not sent

    report = tmp_path / "again.html"
    again = replio(project, "report", str(saved), "-o", str(report))
    assert again.returncode == 0, again.stderr
    assert '<div class="callname">math.factorial</div>' in report.read_text(encoding="utf-8")


def _factorial_twice(seen: Seen) -> Reply:
    """Calls math.factorial (as its tool name) twice in one turn."""
    body = seen.json()
    calls = [{"id": f"call_{i}", "type": "function", "function": {"name": "math-factorial", "arguments": '{"number": 6}'}}
             for i in range(2)]
    message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": calls}
    return Reply(json={"choices": [{"index": 0, "message": message}], "model": body["model"],
                       "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})


def test_golden_drift_shows_bfcl_names_and_the_json_keeps_the_tool_names(tmp_path: Path, llm_server: LLMServer) -> None:
    project = tmp_path / "project"
    (project / ".replio").mkdir(parents=True)
    (project / ".replio" / "config.json").write_text('{"bundled": false, "provider": "openai:test-model"}')
    assert replio(project, "import", "bfcl", str(DATA), "--category", "simple_python").returncode == 0
    args = ("--fixture", "bfcl-simple_python_1", "--base-url", f"{llm_server.url}/v1", "--record-mode", "all")
    llm_server.handler = _factorial_of_six
    assert replio(project, "run", *args, "--update-golden").returncode == 0
    llm_server.handler = _factorial_twice
    saved, html = tmp_path / "run.json", tmp_path / "report.html"
    drifted = replio(project, "run", *args, "--output-file", str(saved), "--html", str(html))
    assert drifted.returncode == 1, drifted.stderr
    added = '+ turns[0][1] call_added: {"arguments": {"number": 6}, "name": "math.factorial"}'
    assert f"    {added}" in drifted.stdout.splitlines()
    page = html.read_text(encoding="utf-8")
    assert "math-factorial" not in page and "call_added: {&#34;arguments&#34;: {&#34;number&#34;: 6}, &#34;name&#34;: " \
                                               "&#34;math.factorial&#34;}" in page
    change = json.loads(saved.read_text())["fixtures"][0]["drift"][-1]
    assert change["kind"] == "call_added" and change["new"]["name"] == "math-factorial"
