"""A key split by a cut, and a key in the base URL's query: neither reaches any output of a real run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.llm_server import LLMServer, Reply, Seen

#: 53 characters; each test places it so that its 40-character prefix ends exactly at a cut.
KEY = "sk-cut-" + "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"
PREFIX = KEY[:40]
QUERY_KEY = "query-key-5d1e9a7c3b"
#: file_read shows the key from character 3960, and enough after it to be cut even once redacted
TRACE_LINES = ["a" * 1300, "b" * 1300, "c" * 1334 + KEY, "d" * 100]


def _reply(message: dict[str, Any]) -> Reply:
    return Reply(json={"choices": [{"index": 0, "message": {"role": "assistant", **message}}],
                       "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})


def _splitting(seen: Seen) -> Reply:
    """ANSWER: an answer quoted to 80 characters; ERROR: an error body cut at 160; TRACE: a tool
    result kept to 4,000 characters in the trace; LINE: a line file_read shows 2,000 characters of
    (a cut where no redactor is at hand). Each has the key's prefix end at the cut."""
    body = seen.json()
    task = next(m["content"] for m in body["messages"] if m["role"] == "user")
    if task.startswith("ANSWER"):
        return _reply({"content": "x" * 40 + KEY})
    if task.startswith("ERROR"):
        return Reply(400, json={"error": {"message": "y" * 120 + KEY}})
    if any(m["role"] == "tool" for m in body["messages"]):
        return _reply({"content": "read it"})
    return _reply({"content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
        "name": "file_read", "arguments": json.dumps({"path": task.split()[2]})}}]})


def _project(root: Path) -> Path:
    fixtures = root / ".replio" / "eval"
    fixtures.mkdir(parents=True)
    (fixtures / "answer.json").write_text(json.dumps({"task": "ANSWER: what is it?",
                                                      "verifier": {"answer": "something else"}}))
    (fixtures / "error.json").write_text(json.dumps({"task": "ERROR: fail"}))
    (fixtures / "trace.json").write_text(json.dumps({"task": "TRACE: read secret.txt",
                                                     "files": {"secret.txt": "\n".join(TRACE_LINES) + "\n"}}))
    (fixtures / "line.json").write_text(json.dumps({"task": "LINE: read long.txt",
                                                    "files": {"long.txt": "d" * 1960 + KEY + "\n"}}))
    # the project's four fixtures alone (as the other secrets tests select theirs): the bundled
    # catalog's would only send the same key in the same header
    (root / ".replio" / "config.json").write_text(json.dumps({"provider": "openai:test-model", "bundled": False}))
    return root


def _replio(project: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENAI_API_KEY": KEY, "XDG_CONFIG_HOME": str(tmp / "xdg"),
           "XDG_CACHE_HOME": str(tmp / "cache")}
    env.pop("CI", None)
    replio = str(Path(sys.executable).with_name("replio"))
    return subprocess.run([replio, "eval", "--path", str(project), "run", "--no-cassettes", *args],
                          env=env, capture_output=True, text=True, timeout=120)


def test_a_key_cut_at_each_limit_leaves_no_prefix_in_any_output(tmp_path: Path, llm_server: LLMServer) -> None:
    shown = "\n".join(f"{n:>6}  {line}" for n, line in enumerate(TRACE_LINES, 1))
    assert shown.index(KEY) + 40 == 4000  # the trace's cut falls 40 characters into the key
    llm_server.handler = _splitting
    project = _project(tmp_path / "proj")
    out = tmp_path / "out"
    runs = [
        _replio(project, tmp_path, "--base-url", f"{llm_server.url}/v1", "--output", "json",
                "--junit-xml", str(out / "junit.xml"), "--html", str(out / "report.html")),
        _replio(project, tmp_path, "--base-url", f"{llm_server.url}/v1"),
        _replio(project, tmp_path, "--base-url", f"{llm_server.url}/v1", "--output", "junit"),
    ]
    fixtures = {f["id"]: f for f in json.loads(runs[0].stdout)["fixtures"]}
    assert fixtures["answer"]["reasons"] == [
        'answer: expected "something else", the answer is "' + "x" * 40 + '[REDACTED]"']
    assert "y" * 120 + "[REDACTED]" in fixtures["error"]["error"]
    result = fixtures["trace"]["trace"][0]["result"]
    assert "c" * 1334 + "[REDACTED]\n" in result and result.endswith("[... cut: 79 more characters not shown]")
    assert fixtures["line"]["trace"][0]["result"] == "     1  " + "d" * 1960 + "[REDACTED]"
    outputs = "".join(r.stdout + r.stderr for r in runs) + "".join(p.read_text() for p in out.iterdir())
    assert PREFIX[:8] not in outputs


def _failing(seen: Seen) -> Reply:
    return Reply(400, json={"error": {"message": "bad request"}})


def test_a_key_in_the_base_url_query_is_sent_as_a_query_and_shown_nowhere(
        tmp_path: Path, llm_server: LLMServer, closed_port: int) -> None:
    llm_server.handler = _failing
    project = _project(tmp_path / "proj")
    out = tmp_path / "out"
    runs = [
        _replio(project, tmp_path, "--fixture", "answer", "--base-url", f"{llm_server.url}/v1?api_key={QUERY_KEY}",
                "--output", "json", "--junit-xml", str(out / "junit.xml"), "--html", str(out / "report.html")),
        _replio(project, tmp_path, "--fixture", "answer", "--base-url", f"{llm_server.url}/v1?api_key={QUERY_KEY}"),
        _replio(project, tmp_path, "--fixture", "answer",
                "--base-url", f"http://127.0.0.1:{closed_port}/v1?api_key={QUERY_KEY}"),
    ]
    assert {seen.path for seen in llm_server.requests} == {f"/v1/chat/completions?api_key={QUERY_KEY}"}
    error = json.loads(runs[0].stdout)["fixtures"][0]["error"]
    assert error == f"openai: HTTP 400 from {llm_server.url}/v1/chat/completions?api_key=%5BREDACTED%5D: bad request"
    assert "cannot connect to" in runs[2].stdout
    outputs = "".join(r.stdout + r.stderr for r in runs) + "".join(p.read_text() for p in out.iterdir())
    assert QUERY_KEY not in outputs
