"""A small project with two local fixtures (`alpha`, `beta`) and the agent plans that answer them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PLANS = {
    "ALPHA": [[("file_read", {"path": "notes.txt"})], "The note says hello."],
    "BETA": [[("list_dir", {"path": "."}), ("glob", {"pattern": "*.txt"})], "There are two files."],
}


def write_project(root: Path, *, provider: str = "openai:test-model") -> Path:
    fixtures = root / ".replio" / "eval"
    fixtures.mkdir(parents=True)
    (fixtures / "alpha.json").write_text(json.dumps({
        "task": "ALPHA: read notes.txt and tell me what it says.",
        "files": {"notes.txt": "hello\n"},
        "expected": ["file_read"],
    }))
    (fixtures / "beta.json").write_text(json.dumps({
        "task": "BETA: which text files are there?",
        "files": {"a.txt": "a\n", "b.txt": "b\n"},
        "expected": ["list_dir", "glob"],
    }))
    (root / ".replio" / "config.json").write_text(json.dumps({"provider": provider}))
    return root


def run_args(project: Path, *extra: Any) -> list[str]:
    return ["eval", "--path", str(project), "run", "--fixture", "alpha", "--fixture", "beta",
            "--output", "json", *map(str, extra)]
