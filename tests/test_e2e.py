"""One real run of the installed `replio` console script, in a subprocess, with the mock provider."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.helpers import call, replio_command, turn, write_json


def test_the_installed_replio_runs_fixtures_end_to_end(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    write_json(project / ".replio" / "config.json",
               {"provider": "mock", "providers": {"mock": {"script": "script.json"}}})
    write_json(project / "script.json", {
        "read-file-lines": [turn(call("file_read", path="config/server.toml")), turn(text="8743")],
        "mine": [turn(call("grep", pattern="TODO")), turn(text="src/app.py:2")],
    })
    write_json(project / ".replio" / "eval" / "mine.json", {
        "task": "Where is the TODO?",
        "files": {"src/app.py": "x = 1\n# TODO: fix\n"},
        "expected": ["grep"],
        "verifier": {"exact": True, "args": {"grep": {"pattern": {"$contains": "TODO"}}}},
    })
    write_json(project / ".replio" / "eval" / "broken.json", {"task": "t", "avoid": ["grep"]})
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()

    done = subprocess.run(
        [replio_command(), "eval", "--path", str(project), "run",
         "--fixture", "mine", "--fixture", "read-file-lines", "--output", "json"],
        cwd=elsewhere, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )

    assert done.returncode == 1, done.stderr  # the broken file fails the run; the others still ran
    assert done.stderr.startswith(f"skipped {project / '.replio' / 'eval' / 'broken.json'}: avoid: unknown key")
    data = json.loads(done.stdout)
    assert (data["provider"], data["model"]) == ("mock", "scripted")
    results = {f["id"]: f for f in data["fixtures"]}
    assert list(results) == ["mine", "read-file-lines"]
    mine = results["mine"]
    assert mine["trace"] == [{"name": "grep", "arguments": {"pattern": "TODO"}, "result": "src/app.py:2:# TODO: fix"}]
    assert (mine["status"], mine["accuracy"], mine["pass"], mine["errors"], mine["error"]) == ("ok", 1.0, True, 0, None)
    assert results["read-file-lines"]["pass"] is True
    assert data["summary"]["fixtures"] == 2
    assert data["summary"]["pass_rate"] == 1.0
    assert data["summary"]["tokens"] == 4 * 15  # two turns per fixture, the mock's default usage
    assert list(elsewhere.iterdir()) == []  # nothing written where replio was started
