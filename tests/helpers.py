"""Small builders shared by the harness tests: fixtures, mock providers, scripted turns."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from replio_replay.fixtures.cases import Case
from replio_replay.fixtures.discovery import discover
from replio_replay.fixtures.model import Fixture
from replio_replay.fixtures.plugins import plugin_manager
from replio_replay.plan.offer import for_fixture
from replio_replay.providers.base import ProviderSettings
from replio_replay.providers.mock import MockProvider, Turn
from replio_replay.tools.builtin import builtin_tools
from replio_replay.tools.toolset import ToolSet

#: The catalog issue 2 asks for; the bundled catalog may hold more.
CORE_CATALOG = frozenset({"read-file-lines", "find-then-read", "list-directory", "grep-symbol", "page-large-file"})


def bundled_ids() -> frozenset[str]:
    """The ids the bundled catalog plugin registers (no project, no installed plugins)."""
    catalog = discover(Path("/nonexistent-replio-project"), None, plugin_manager())
    return frozenset(catalog.fixtures)


def make_fixture(**data: Any) -> Fixture:
    """A valid fixture (id `fx`, a task) with `data` merged over it."""
    return Fixture.model_validate({"id": "fx", "task": "Do the task.", **data})


def mock_provider(script: Mapping[str, Sequence[Turn]]) -> MockProvider:
    """The scripted mock provider playing `script` (fixture id or "*" -> turns)."""
    return MockProvider(ProviderSettings(name="mock", model="scripted"), script=script)


def call(name: str, arguments: Any = None, **kwargs: Any) -> dict[str, Any]:
    """One scripted tool call; `arguments` may be a raw string to play invalid JSON."""
    return {"name": name, "arguments": kwargs if arguments is None else arguments}


def turn(*calls: dict[str, Any], text: str = "", usage: dict[str, int] | None = None) -> dict[str, Any]:
    """One scripted model turn: text and tool calls, with optional token usage."""
    data: dict[str, Any] = {"text": text, "tool_calls": list(calls)}
    if usage is not None:
        data["usage"] = usage
    return data


def write_json(path: Path, data: Any) -> Path:
    """Write `data` as JSON to `path`, creating folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under `folder`, by relative path; {} when there is none."""
    if not folder.exists():
        return {}
    return {p.relative_to(folder).as_posix(): (p.read_bytes() if p.is_file() else None) for p in folder.rglob("*")}


def builtin_toolset(name: str = "default") -> ToolSet:
    """The eight built-in tools under the default system prompt."""
    return ToolSet(name, builtin_tools())


def make_case(fixture: Fixture, toolset: ToolSet | None = None) -> Case:
    """`fixture` as a run of `toolset` (the built-ins by default) runs it."""
    toolset = toolset or builtin_toolset()
    return Case(fixture, for_fixture(toolset, fixture, "test"), toolset)


def replio_command() -> str:
    """The `replio` script installed beside this interpreter, else the one on PATH."""
    beside = Path(sys.executable).parent / ("replio.exe" if os.name == "nt" else "replio")
    found = str(beside) if beside.is_file() else shutil.which("replio")
    assert found, "the console script `replio` is not installed; run: pip install -e '.[test]'"
    return found


def replio_in_process(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """`replio ARGS...` run in this process through click's CliRunner, ended as the process would
    end: where nothing about the process matters (what is chosen, written or printed), this spares
    a Python start-up and replio's imports; the test's environment is the run's."""
    from replio_replay.cli import main  # the CLI's imports only for the tests that run it

    command = [*map(str, args)]
    result = CliRunner().invoke(main, command, catch_exceptions=False)
    return subprocess.CompletedProcess(command, result.exit_code, result.stdout, result.stderr)
