"""The committed examples' replays, each run once for a test session and shared by the tests that
check it: docs/examples.md shows what a command prints and an e2e test checks the result it saves,
so the command runs once for both. Under pytest-xdist the first worker to ask runs it and the
others read what it left (a file lock in the session's shared temporary folder, as pytest-xdist's
documentation shows for session data); nothing outlives the session.

A replay runs as a reader would run it from a clone, from the repository's root with
`--path examples/NAME`, offline: CI set (so nothing is recorded), llama.cpp's URL a port nothing
listens on, no provider keys, folders of its own. `--strict` and `--output-file` are added: they
change neither what is printed nor, when nothing drifted, the exit code, and the saved result is
what the e2e tests check."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock

REPO = Path(__file__).resolve().parents[2]
#: The shell's variables no replay may see: provider keys and URLs, the terminal's width.
DROPPED = ("COLUMNS", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL",
           "LLAMACPP_BASE_URL", "OLLAMA_HOST", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GEMINI_BASE_URL")


@dataclass(frozen=True)
class Replay:
    """One run of `replio eval --path examples/EXAMPLE run ARGS --strict`: what it printed, its exit
    code and the result it saved (JSON, whatever `--output` printed)."""

    example: str
    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    report: dict[str, Any]


def replay(example: str, args: Sequence[str], home: Path) -> Replay:
    """The example's replay run now, with its folders (config, cache, temporary files, the saved
    result) under `home`, which must not exist yet."""
    for folder in ("config", "cache", "tmp"):
        (home / folder).mkdir(parents=True)
    env = {**{k: v for k, v in os.environ.items() if k not in DROPPED}, "CI": "true",
           "LLAMACPP_BASE_URL": "http://127.0.0.1:9/v1",  # any request not answered from a cassette fails
           "XDG_CONFIG_HOME": str(home / "config"), "XDG_CACHE_HOME": str(home / "cache"), "TMPDIR": str(home / "tmp")}
    saved = home / "result.json"
    done = subprocess.run([str(Path(sys.executable).with_name("replio")), "eval", "--path", f"examples/{example}",
                           "run", *args, "--strict", "--output-file", str(saved)],
                          cwd=REPO, capture_output=True, text=True, env=env, timeout=600)
    report = json.loads(saved.read_text(encoding="utf-8")) if saved.is_file() else {}
    return Replay(example, tuple(args), done.returncode, done.stdout, done.stderr, report)


class SharedReplays:
    """Each (example, args) replayed once for the session: in this process, and under xdist once
    for all the workers (`shared` is the folder they share; None without xdist)."""

    def __init__(self, home: Path, shared: Path | None) -> None:
        self._home, self._shared = home, shared
        self._done: dict[tuple[str, tuple[str, ...]], Replay] = {}

    def __call__(self, example: str, *args: str) -> Replay:
        key = (example, args)
        if key not in self._done:
            self._done[key] = self._run_once(example, args)
        return self._done[key]

    def _run_once(self, example: str, args: tuple[str, ...]) -> Replay:
        name = hashlib.sha256(json.dumps([example, *args]).encode()).hexdigest()[:16]
        if self._shared is None:
            return replay(example, args, self._home / name)
        result = self._shared / f"replay-{name}.json"
        with FileLock(f"{result}.lock"):
            if result.is_file():
                data = json.loads(result.read_text(encoding="utf-8"))
                return Replay(**{**data, "args": tuple(data["args"])})
            done = replay(example, args, self._home / name)
            written = result.with_suffix(".part")
            written.write_text(json.dumps(asdict(done)), encoding="utf-8")
            written.replace(result)  # a worker stopped while writing leaves no half result
            return done
