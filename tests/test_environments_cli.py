"""Environments through the CLI: a broken tool set exits 2 before any request, a broken fixture is a
listed problem, and a replay re-runs the environment, so a changed method shows as drift naming the tool.

The live runs are real replio processes; what only lists, refuses or replays runs the command line in
the test's process (the project's Python still runs in the children replio starts for it)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import replio_command, replio_in_process, write_json
from tests.support.agents import openai_agent
from tests.support.environments import SLUG, shop_decl, write_module
from tests.support.llm_server import LLMServer

KEY = "sk-test-0123456789"
PLANS = {"CANCEL": [[("cancel_order", {"order_id": "A-1042"})], [("slugify", {"text": "All Done"})], "Cancelled."]}


def _replio(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENAI_API_KEY": KEY}
    return subprocess.run([replio_command(), "eval", "--path", str(project), *args], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL, env=env)


@pytest.fixture
def in_process(monkeypatch: pytest.MonkeyPatch) -> Callable[..., subprocess.CompletedProcess[str]]:
    """`_replio` run in the test's process (what is listed, chosen, replayed or printed; the
    project's Python still runs in the children replio starts for it), with the same key."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return lambda project, *args: replio_in_process("eval", "--path", project, *args)


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """A project whose tool set declares the shop environment and a Python tool, and one fixture
    in .replio/eval judged by the shop's end state."""
    project = tmp_path / "shop"
    write_module(project / ".replio" / "envs" / "shop.py")
    write_module(project / ".replio" / "tools" / "slug.py", SLUG)
    write_json(project / ".replio" / "config.json", {"provider": "openai:test-model", "bundled": False})
    write_json(project / ".replio" / "tools.json", {
        "environments": {"shop": shop_decl()}, "tools": {"slugify": {"python": "tools/slug.py:slugify"}}})
    write_json(project / ".replio" / "eval" / "cancel.json", {
        "task": "CANCEL: cancel order A-1042.",
        "verifier": {"state": {"shop.orders.A-1042.status": "cancelled"},
                     "state_from_calls": [{"name": "cancel_order", "arguments": {"order_id": "A-1042"}}]}})
    return project


def test_a_broken_tool_set_exits_2_before_any_request(shop: Path, llm_server: LLMServer, in_process: Any) -> None:
    write_json(shop / ".replio" / "tools.json", {"environments": {"shop": shop_decl("envs/shop.py:Shopp")}})
    done = in_process(shop, "run", "--base-url", f"{llm_server.url}/v1", "--record-mode", "once")
    assert done.returncode == 2, done.stderr
    assert f"{shop / '.replio' / 'tools.json'}: environments.shop.python: shop.py has no 'Shopp'" in done.stderr
    assert llm_server.requests == []


def test_a_broken_fixture_environment_is_listed_and_skipped_by_run(shop: Path, llm_server: LLMServer,
                                                                   in_process: Any) -> None:
    llm_server.handler = openai_agent(PLANS)
    broken = write_json(shop / ".replio" / "eval" / "broken.json", {
        "task": "t", "environments": {"depot": shop_decl("../envs/nowhere.py:Shop", prefix="d_")}})
    listed = in_process(shop, "list", "--output", "json")
    assert listed.returncode == 1, listed.stderr  # as for any broken fixture
    assert "1 problem in the fixtures" in listed.stderr
    data = json.loads(listed.stdout)
    assert [f["id"] for f in data["fixtures"]] == ["cancel"]
    (problem,) = data["problems"]
    assert problem["file"] == str(broken)
    assert "environments.depot.python: no Python file at" in problem["message"]

    ran = _replio(shop, "run", "--base-url", f"{llm_server.url}/v1", "--record-mode", "once", "--output", "json")
    assert ran.returncode == 1, ran.stderr  # the broken file fails the run; the other fixture still ran
    assert str(broken) in ran.stderr and "no Python file at" in ran.stderr
    (result,) = json.loads(ran.stdout)["fixtures"]
    assert (result["id"], result["pass"]) == ("cancel", True)


def test_a_replay_reruns_the_environment_and_names_the_tool_whose_result_changed(
        shop: Path, llm_server: LLMServer, in_process: Any) -> None:
    llm_server.handler = openai_agent(PLANS)
    recorded = _replio(shop, "run", "--base-url", f"{llm_server.url}/v1", "--record-mode", "once", "--output", "json")
    assert recorded.returncode == 0, recorded.stderr
    (first,) = json.loads(recorded.stdout)["fixtures"]
    assert first["pass"] is True and first["state"]["shop"]["orders"]["A-1042"]["status"] == "cancelled"
    assert [c["result"] for c in first["trace"]] == ["Order A-1042 cancelled.", "all-done"]
    llm_server.close()  # the replay reaches no server: the record mode `none` blocks the network too

    approved = in_process(shop, "run", "--record-mode", "none", "--update-golden")
    assert approved.returncode == 0, approved.stderr
    golden = json.loads((shop / "golden" / "openai" / "test-model" / "cancel.json").read_text())
    assert golden["state"] == first["state"]
    replayed = in_process(shop, "run", "--record-mode", "none", "--strict", "--output", "json")
    assert replayed.returncode == 0, replayed.stderr
    (same,) = json.loads(replayed.stdout)["fixtures"]
    assert same["trace"] == first["trace"] and same["state"] == first["state"] and not same.get("request_drift")

    shop_py = shop / ".replio" / "envs" / "shop.py"
    shop_py.write_text(shop_py.read_text().replace('return f"Order {order_id} cancelled."',
                                                   'return f"Order {order_id} is cancelled."'))
    drifted = in_process(shop, "run", "--record-mode", "none", "--output", "json")
    assert drifted.returncode == 0, drifted.stderr
    (changed,) = json.loads(drifted.stdout)["fixtures"]
    assert changed["request_drift"] == [{
        "path": "messages[3](cancel_order, call 1).content", "kind": "tool_result_changed",
        "old": "Order A-1042 cancelled.", "new": "Order A-1042 is cancelled.", "role": "agent"}]
    strict = in_process(shop, "run", "--record-mode", "none", "--strict", "--output", "json")
    assert strict.returncode == 1


BLOATED = '''
import time


class Depot:
    """A depot whose constructor may dawdle and whose state may swell."""

    def __init__(self, wait: float = 0) -> None:
        time.sleep(wait)
        self.bins: list = []

    def fill(self, size: int) -> str:
        """Fill the bins with `size` characters."""
        self.bins.append("x" * size)
        return "filled"
'''


def test_a_constructor_that_never_returns_ends_its_fixture_within_the_tool_timeout(
        shop: Path, llm_server: LLMServer) -> None:
    llm_server.handler = openai_agent(PLANS)
    write_module(shop / ".replio" / "envs" / "depot.py", BLOATED)
    write_json(shop / ".replio" / "config.json", {"provider": "openai:test-model", "bundled": False,
                                                  "tool_timeout": 1})
    write_json(shop / ".replio" / "eval" / "stuck.json", {
        "task": "STUCK: wait.", "environments": {"depot": {"python": "../envs/depot.py:Depot",
                                                           "initial": {"wait": 600}}}})
    ran = _replio(shop, "run", "--base-url", f"{llm_server.url}/v1", "--record-mode", "once", "--output", "json")
    assert ran.returncode == 1, ran.stderr
    results = {r["id"]: r for r in json.loads(ran.stdout)["fixtures"]}
    assert results["cancel"]["pass"] is True  # the other fixture ran as ever
    assert results["stuck"]["status"] == "error"
    assert results["stuck"]["error"] == (
        f"{shop / '.replio' / 'eval' / 'stuck.json'}: environments.depot.python: Depot(**initial) took longer than "
        "1 s; stopped")
    assert not any("STUCK" in json.dumps(seen.json()) for seen in llm_server.requests)  # nothing was asked


def test_an_end_state_too_big_for_a_result_ends_its_fixture_in_error_and_is_never_written(
        shop: Path, llm_server: LLMServer) -> None:
    llm_server.handler = openai_agent({**PLANS, "SWELL": [[("fill", {"size": 3_000_000})], "Filled."],
                                       "SMALL": [[("fill", {"size": 10})], "Filled."]})
    write_module(shop / ".replio" / "envs" / "depot.py", BLOATED)
    for name in ("swell", "small"):
        write_json(shop / ".replio" / "eval" / f"{name}.json", {
            "task": f"{name.upper()}: fill.", "environments": {"depot": {"python": "../envs/depot.py:Depot"}}})
    ran = _replio(shop, "run", "--base-url", f"{llm_server.url}/v1", "--record-mode", "once", "--update-golden",
                  "--output", "json")
    assert ran.returncode == 1, ran.stderr
    assert len(ran.stdout) < 100_000
    results = {r["id"]: r for r in json.loads(ran.stdout)["fixtures"]}
    assert results["swell"]["status"] == "error" and "state" not in results["swell"]
    assert results["swell"]["error"] == (
        "environment 'depot': its state is 3,000,013 characters as JSON, more than the 1,000,000 a result keeps; "
        "keep bulky data in attributes whose names start with '_'")
    assert results["small"]["state"]["depot"] == {"bins": ["x" * 10]}
    assert not (shop / "golden" / "openai" / "test-model" / "swell.json").exists()


QUITTER = '''
import sys


class Quitter:
    """Methods that try to end the process."""

    def __init__(self, leave_at_once: bool = False) -> None:
        if leave_at_once:
            sys.exit(4)
        self.calls = 0

    def leave(self) -> str:
        """Exit."""
        self.calls += 1
        sys.exit(3)

    def interrupt(self) -> str:
        """Raise KeyboardInterrupt."""
        self.calls += 1
        raise KeyboardInterrupt
'''


def test_user_code_that_exits_or_raises_keyboard_interrupt_fails_its_call_not_the_run(
        shop: Path, llm_server: LLMServer) -> None:
    llm_server.handler = openai_agent({**PLANS, "QUIT": [[("leave", {})], [("interrupt", {})], "Stayed."]})
    write_module(shop / ".replio" / "envs" / "quit.py", QUITTER)
    write_json(shop / ".replio" / "eval" / "quit.json", {
        "task": "QUIT: try.", "environments": {"q": {"python": "../envs/quit.py:Quitter"}}})
    write_json(shop / ".replio" / "eval" / "gone.json", {
        "task": "GONE: try.", "environments": {"q": {"python": "../envs/quit.py:Quitter",
                                                      "initial": {"leave_at_once": True}}}})
    ran = _replio(shop, "run", "--base-url", f"{llm_server.url}/v1", "--record-mode", "once", "--output", "json")
    assert ran.returncode == 1, ran.stderr
    assert "Traceback" not in ran.stderr
    results = {r["id"]: r for r in json.loads(ran.stdout)["fixtures"]}
    assert results["cancel"]["pass"] is True
    assert [c["result"] for c in results["quit"]["trace"]] == [
        "Error: leave failed: SystemExit: 3", "Error: interrupt failed: KeyboardInterrupt: "]
    assert (results["quit"]["status"], results["quit"]["answer"]) == ("ok", "Stayed.")
    assert results["quit"]["state"]["q"] == {"calls": 2}
    assert results["gone"]["status"] == "error"
    assert results["gone"]["error"].endswith("environments.q.python: Quitter(**initial) failed: SystemExit: 4; "
                                             "make `initial` match the class's parameters")


CHATTY = '''
print("loading the chatty module")


class Chatty:
    """An environment that prints as it goes."""

    def __init__(self) -> None:
        print("built")
        self.said = 0

    def say(self) -> str:
        """Print something."""
        print("said something")
        self.said += 1
        return "said"
'''


def test_what_the_projects_python_prints_goes_to_stderr_and_json_output_stays_json(
        shop: Path, llm_server: LLMServer) -> None:
    llm_server.handler = openai_agent({**PLANS, "CHAT": [[("say", {})], "Done."]})
    write_module(shop / ".replio" / "envs" / "chatty.py", CHATTY)
    write_json(shop / ".replio" / "eval" / "chat.json", {
        "task": "CHAT: say.", "environments": {"c": {"python": "../envs/chatty.py:Chatty"}}})
    listed = _replio(shop, "list", "--output", "json")
    assert listed.returncode == 0, listed.stderr
    assert [f["id"] for f in json.loads(listed.stdout)["fixtures"]] == ["cancel", "chat"]
    assert "loading the chatty module" in listed.stderr
    ran = _replio(shop, "run", "--base-url", f"{llm_server.url}/v1", "--record-mode", "once", "--output", "json")
    assert ran.returncode == 0, ran.stderr
    results = {r["id"]: r for r in json.loads(ran.stdout)["fixtures"]}
    assert results["chat"]["state"]["c"] == {"said": 1}
    assert all(line in ran.stderr for line in ("loading the chatty module", "built", "said something"))
