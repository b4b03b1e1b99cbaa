"""Start-up stays light: `replio --help` and `replio eval list` load no HTTP, recording or table code."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("httpx", "vcr", "deepdiff", "rich", "yaml", "replio_replay.engine")


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
