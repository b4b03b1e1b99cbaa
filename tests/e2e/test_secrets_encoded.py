"""A key written out encoded (base64 from any offset, hex, URL-encoded, UTF-16/32) reaches no output.

Two real runs of the CLI: a recording against a loopback server that echoes the key in a UTF-16 JSON
body, as base64 and as hex; and a `mock` run where the simulated user, the agent, a tool's file and
an environment's error each carry it encoded. What each writes (cassettes, goldens, the JSON result,
JUnit, HTML, Markdown, the table) and prints (stdout, stderr) is searched for the key by decoding
everything in it (tests/support/leaks.py).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import quote

from tests.helpers import replio_command, write_json
from tests.support.leaks import leaks
from tests.support.llm_server import LLMServer, Reply, Seen
from tests.support.project import write_project

KEY = "sk-enc-7f3a9c1e5b2d8f4a6c0e1b3d5f7a9c2e4b6d"


def _replio(project: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENAI_API_KEY": KEY, "XDG_CONFIG_HOME": str(tmp / "xdg"),
           "XDG_CACHE_HOME": str(tmp / "cache")}
    env.pop("CI", None)
    return subprocess.run([replio_command(), "eval", "--path", str(project), *args], env=env, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)


def _files(*folders: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for f in folders if f.exists() for p in f.rglob("*") if p.is_file()}


def _written(inputs: dict[Path, bytes], *folders: Path) -> dict[Path, bytes]:
    """Every file under `folders` that is not one of `inputs` as it was: what the runs wrote."""
    return {p: data for p, data in _files(*folders).items() if inputs.get(p) != data}


def _assert_nowhere(outputs: dict[str, str | bytes]) -> None:
    found = {name: where for name, text in outputs.items() if (where := leaks(text, KEY))}
    assert not found, found


def _echoing(seen: Seen) -> Reply:
    """ALPHA: the key in the answer of a UTF-16 JSON body; BETA: the key as base64 (from offset 1)
    in the answer and as hex in a tool call's arguments, in a UTF-8 body."""
    body = seen.json()
    task = next(m["content"] for m in body["messages"] if m["role"] == "user")
    message: dict[str, Any] = {"role": "assistant", "content": f"your key is {KEY}"}
    if task.startswith("BETA"):
        message["content"] = "encoded: " + base64.b64encode(f"k{KEY}".encode()).decode()
        if not any(m["role"] == "tool" for m in body["messages"]):
            message["tool_calls"] = [{"id": "c1", "type": "function", "function": {
                "name": "glob", "arguments": json.dumps({"pattern": KEY.encode().hex()})}}]
    data = {"choices": [{"index": 0, "message": message}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
    if task.startswith("BETA"):
        return Reply(json=data)
    return Reply(body=json.dumps(data).encode("utf-16"), headers={"content-type": "application/json"})


def test_a_key_echoed_encoded_by_a_server_is_refused_in_cassettes_and_shown_nowhere(
        tmp_path: Path, llm_server: LLMServer) -> None:
    llm_server.handler = _echoing
    project = write_project(tmp_path / "proj")
    out = tmp_path / "out"
    inputs = _files(project)
    done = _replio(project, tmp_path, "run", "--fixture", "alpha", "--fixture", "beta", "--record-mode", "once",
                   "--base-url", f"{llm_server.url}/v1", "-v", "--update-golden", "--output", "json",
                   "--junit-xml", str(out / "junit.xml"), "--html", str(out / "report.html"),
                   "--markdown", str(out / "review.md"))
    assert llm_server.requests, done.stderr
    fixtures = {f["id"]: f for f in json.loads(done.stdout)["fixtures"]}
    # the policy for a plain echoed key: the cassette is refused, and the fixture ends in error naming the field
    assert fixtures["alpha"]["status"] == "error" and "response.body.string" in fixtures["alpha"]["error"]
    assert fixtures["beta"]["status"] == "error" and "not written" in fixtures["beta"]["error"]
    assert "[REDACTED]" in fixtures["beta"]["answer"]
    assert not list(project.rglob("*.yaml"))
    written = _written(inputs, project, out)
    assert {out / "junit.xml", out / "report.html", out / "review.md"} <= set(written)
    _assert_nowhere({"stdout": done.stdout, "stderr": done.stderr, **{str(p): b for p, b in written.items()}})


BOOM = '''
class Boom:
    """Fails as it starts, quoting what it was given."""

    def __init__(self, token: str) -> None:
        raise ValueError(f"cannot start with {token}")

    def ping(self) -> str:
        """Ping."""
        return "pong"
'''


def _mock_project(root: Path) -> Path:
    """A `mock` project: `echo`, whose simulated user sends the key base64-encoded and whose agent
    writes it as hex and URL-safe base64 and reads a file holding it URL-encoded base64 and with
    every character \\u-escaped, and answers with it URL-safe base64 and every byte percent-encoded
    (escapes in mixed case); `boom`, whose environment fails quoting it in base64 (its error is on
    the progress line too)."""
    write_json(root / ".replio" / "config.json",
               {"provider": "mock", "providers": {"mock": {"script": "script.json"}}, "bundled": False})
    user_says = "my key, base64: " + base64.b64encode(f"key={KEY}".encode()).decode()
    write_json(root / ".replio" / "eval" / "echo.json", {
        "user": {"instructions": "Hand over your key.", "max_turns": 3},
        "files": {"notes.txt": quote(base64.b64encode(f"##{KEY}".encode()).decode(), safe="") + "\n"
                  + "".join(f"\\u{ord(c):04{'x' if i % 2 else 'X'}}" for i, c in enumerate(KEY)) + "\n"},
        "verifier": {"answer": "never this"}})
    (root / ".replio" / "envs").mkdir(parents=True)
    (root / ".replio" / "envs" / "boom.py").write_text(BOOM, encoding="utf-8")
    write_json(root / ".replio" / "eval" / "boom.json", {
        "task": "start", "environments": {"boom": {"python": "../envs/boom.py:Boom",
                                                   "initial": {"token": base64.b64encode(KEY.encode()).decode()}}}})
    write_json(root / "script.json", {
        "user:echo": [{"text": user_says}, {"text": "###STOP###"}],
        "echo": [{"tool_calls": [{"name": "file_read", "arguments": {"path": "notes.txt"}},
                                 {"name": "file_write", "arguments": {"path": "k.txt",
                                                                      "content": KEY.encode().hex().upper()}}]},
                 {"text": "kept it: " + base64.urlsafe_b64encode(f"{KEY}!!".encode()).decode() + " and "
                          + "".join(f"%{b:02{'x' if i % 3 else 'X'}}" for i, b in enumerate(KEY.encode()))}],
        "boom": [{"text": "done"}]})
    return root


def test_a_key_written_encoded_by_the_simulated_user_and_the_agent_reaches_no_sink(tmp_path: Path) -> None:
    project = _mock_project(tmp_path / "proj")
    out = tmp_path / "out"
    inputs = _files(project)  # the key is in them, encoded, by design
    runs = [_replio(project, tmp_path, "run", "-v", "--update-golden", "--output", "json",
                    "--output-file", str(out / "run.json"), "--junit-xml", str(out / "junit.xml"),
                    "--html", str(out / "report.html"), "--markdown", str(out / "review.md")),
            _replio(project, tmp_path, "run", "--output", "table")]
    runs.append(_replio(project, tmp_path, "report", str(out / "run.json"), "-o", str(out / "again.html")))
    # an error message quoting what the user typed: the key, hex-encoded, as a provider's name
    runs.append(_replio(project, tmp_path, "run", "--provider", KEY.encode().hex()))
    assert runs[-1].returncode == 2 and "unknown provider '[REDACTED]'" in runs[-1].stderr, runs[-1].stderr
    result = json.loads((out / "run.json").read_text())
    fixtures = {f["id"]: f for f in result["fixtures"]}
    # the key was there to be found in each of these places: each shows the mark instead
    echo = json.dumps(fixtures["echo"])
    assert echo.count("[REDACTED]") >= 4, echo  # the user's message, the file read, the call's content, the answer
    assert fixtures["boom"]["status"] == "error" and "[REDACTED]" in fixtures["boom"]["error"]
    assert "boom: FAIL error" in runs[0].stderr and "cannot start with [REDACTED]" in runs[0].stderr
    written = _written(inputs, project, out)
    assert list((project / "golden").rglob("*.json")) and set(written) >= {out / "junit.xml", out / "review.md",
                                                                           out / "report.html", out / "again.html"}
    _assert_nowhere({**{f"stdout {i}": r.stdout for i, r in enumerate(runs)},
                     **{f"stderr {i}": r.stderr for i, r in enumerate(runs)},
                     **{str(p): b for p, b in written.items()}})
