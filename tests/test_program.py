"""The `replio` program as a process: it keeps nothing between runs but what the user keeps,
leaves the environment as it found it, and ends as Python ends."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.helpers import replio_command

REPO = Path(__file__).resolve().parents[1]


def test_a_listing_and_a_replay_keep_nothing_in_the_cache_folder_but_the_last_failed(tmp_path: Path) -> None:
    env = {**os.environ, "CI": "1", "XDG_CACHE_HOME": str(tmp_path)}
    for args in (["list", "--output", "json"], ["run", "--output", "json"]):
        done = subprocess.run([replio_command(), "eval", "--path", str(REPO), *args], env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["fixtures"]
    kept = sorted(re.sub(r"-[0-9a-f]+\.json$", "-<project>.json", p.relative_to(tmp_path).as_posix())
                  for p in tmp_path.rglob("*"))
    assert kept == ["replio", "replio/lastfailed-<project>.json"]


def _entry(tmp_path: Path, before: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`replio eval --path tmp_path list` through `entry()`, after `before` ran in the same process."""
    code = (f"import atexit, os, sys\n{before}\nfrom replio_replay.cli import entry\n"
            f"sys.argv = ['replio', 'eval', '--path', {str(tmp_path)!r}, 'list']\nentry()\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)


def test_the_program_leaves_pydantics_plugins_to_the_user(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    done = _entry(tmp_path, "atexit.register(lambda: print('plugins:', os.environ.get('PYDANTIC_DISABLE_PLUGINS')))",
                  env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "plugins: None"


def test_the_program_ends_as_python_does_flushing_what_a_plugin_left_open(tmp_path: Path) -> None:
    left_open = tmp_path / "left-open.txt"
    done = _entry(tmp_path, f"kept = open({str(left_open)!r}, 'w')\nkept.write('flushed at exit')", dict(os.environ))
    assert done.returncode == 0, done.stderr
    assert left_open.read_text() == "flushed at exit"
