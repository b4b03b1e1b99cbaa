"""docs/how-to/environments.md works as written: its example project, written file by file, runs and passes."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from pathlib import Path

from tests.helpers import replio_command

DOC = Path(__file__).resolve().parent.parent / "docs" / "how-to" / "environments.md"
_FILE = re.compile(r"^File `([^`]+)`[^\n]*:\n\n```\w+\n(.*?)```", re.MULTILINE | re.DOTALL)


def test_the_worked_example_runs_as_written(tmp_path: Path) -> None:
    text = DOC.read_text(encoding="utf-8")
    files = _FILE.findall(text)
    assert [name for name, _ in files] == [".replio/envs/shop.py", ".replio/tools/slug.py", ".replio/tools.json",
                                          ".replio/eval/cancel.json", ".replio/mock-script.json", ".replio/config.json"]
    for name, content in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(content, encoding="utf-8")
    command = next(line for line in text.splitlines() if line.startswith("replio eval --path . run"))
    done = subprocess.run([replio_command(), *shlex.split(command)[1:]], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    (result,) = json.loads(done.stdout)["fixtures"]
    assert (result["id"], result["pass"], result["reasons"]) == ("cancel", True, [])
    assert result["state"] == {"shop": {"orders": {"A-1042": {"status": "cancelled"}, "A-1043": {"status": "shipped"}},
                                        "log": ["cancelled A-1042"]}}
    assert not (tmp_path / "cassettes").exists()
