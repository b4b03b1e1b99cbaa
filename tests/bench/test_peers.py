"""bench/peers.py's own logic: the fake model both tools record against, and replio's suite, which a
replio run through that fake passes (one call, then the answer the check looks for)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import tomllib
from click.testing import CliRunner

from replio_replay.cli import main

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import peers  # noqa: E402
from server import BenchServer  # noqa: E402


def test_the_fake_calls_the_tool_for_the_order_asked_then_repeats_its_result() -> None:
    asked = {"messages": [{"role": "user", "content": peers.task(7)}]}
    call = peers.reply(asked)["choices"][0]["message"]["tool_calls"][0]["function"]
    assert call == {"name": "lookup_order", "arguments": json.dumps({"order_id": "A-7"})}
    told = {"messages": [*asked["messages"], {"role": "tool", "content": [{"type": "text", "text": "pending"}]}]}
    assert peers.reply(told)["choices"][0]["message"]["content"] == "Order A-7 is pending."


def test_replios_suite_passes_through_the_fake_with_one_call_each(tmp_path: Path) -> None:
    project = peers.replio_suite(tmp_path / "suite", 3)
    inspect = peers.inspect_suite(tmp_path / "inspect", 3)
    assert json.loads((inspect / "cases.json").read_text())["A-2"] == {"task": peers.task(2), "status": peers.status(2)}
    fake = BenchServer(answer=peers.reply)
    try:
        done = CliRunner().invoke(main, ["eval", "--path", str(project), "run", "--base-url", fake.url,
                                         "--no-cassettes", "--output", "json"])
    finally:
        fake.close()
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert report["summary"]["fixtures"] == 3 and report["summary"]["pass_rate"] == 1.0
    assert [f["calls"] for f in report["fixtures"]] == [1, 1, 1] and fake.served == 6


def test_replios_install_is_made_from_what_its_wheel_packs(tmp_path: Path) -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    packed = {"pyproject.toml", project["project"]["readme"], *project["project"]["license-files"],
              *(pattern.rstrip("*") for pattern in project["tool"]["setuptools"]["packages"]["find"]["include"])}
    (REPO / "replio_replay" / "__pycache__").mkdir(exist_ok=True)  # as any run of the checkout leaves it
    source = peers.replio_source(tmp_path)
    assert {p.name for p in source.iterdir()} == packed == set(peers.SOURCE)
    assert (source / "replio_replay" / "__init__.py").read_bytes() == (REPO / "replio_replay" / "__init__.py").read_bytes()
    assert not list(source.rglob("__pycache__")) and not (source / "build").exists()
