"""A simulated user with a tool of its own over loopback HTTP: its requests (with its tool) recorded as
role `user`, replayed with the server gone, its calls run again on replay and judged with the state."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from replio_replay.cli import main
from tests.helpers import write_json
from tests.support.environments import shop_decl, write_module
from tests.support.llm_server import LLMServer, Reply, Seen, chat_completion

INSTRUCTIONS = "You are Ana. Cancel your order A-1042 yourself, then ask the agent to confirm. Then ###STOP###."


def handle(seen: Seen) -> Reply:
    """Ana (whose requests offer only `cancel_order`) cancels, then speaks; the agent looks the order up."""
    body = seen.json()
    n = sum(1 for m in body["messages"] if m["role"] == "assistant")
    names = [t["function"]["name"] for t in body.get("tools", [])]
    if names == ["cancel_order"]:  # the user's own tools
        if n == 0:
            call = {"id": "u1", "type": "function",
                    "function": {"name": "cancel_order", "arguments": json.dumps({"order_id": "A-1042"})}}
            return chat_completion(None, body["model"], n, [call])
        return chat_completion("I cancelled A-1042. Is it done?" if n == 1 else "###STOP###", body["model"], n)
    last = body["messages"][-1]
    if last["role"] == "tool":
        return chat_completion("Yes, A-1042 is cancelled.", body["model"], n)
    call = {"id": f"a{n}", "type": "function", "function": {"name": "get_order",
                                                           "arguments": json.dumps({"order_id": "A-1042"})}}
    return chat_completion(None, body["model"], n, [call])


def project_with_user_tools(root: Path) -> Path:
    write_module(root / ".replio" / "envs" / "shop.py")
    write_json(root / ".replio" / "tools.json", {"environments": {"shop": shop_decl()}})
    write_json(root / ".replio" / "eval" / "dual.json", {
        "user": {"instructions": INSTRUCTIONS, "tools": ["cancel_order"]},
        "verifier": {"state": {"shop.orders.A-1042.status": "cancelled"}, "must_include": ["get_order"],
                     "avoid": ["cancel_order"]}})
    write_json(root / ".replio" / "config.json", {"provider": "openai:test-model", "bundled": False})
    return root


def run(project: Path, *extra: str) -> tuple[int, dict[str, Any], str]:
    result = CliRunner().invoke(main, ["eval", "--path", str(project), "run", "--output", "json", *extra],
                                catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout), result.stderr


def test_the_users_own_calls_are_recorded_as_its_role_and_replayed(tmp_path: Path, llm_server: LLMServer,
                                                                   closed_port: int) -> None:
    llm_server.handler = handle
    project = project_with_user_tools(tmp_path / "proj")
    code, recorded, err = run(project, "--base-url", f"{llm_server.url}/v1", "--record-mode", "once",
                              "--update-golden")
    assert code == 0, err
    (fixture,) = recorded["fixtures"]
    assert fixture["pass"], fixture["reasons"]
    assert fixture["user_trace"] == [{"name": "cancel_order", "arguments": {"order_id": "A-1042"},
                                      "result": "Order A-1042 cancelled.", "at": 0}]
    assert [c["name"] for c in fixture["trace"]] == ["get_order"], fixture["conversation"]
    cassette = yaml.safe_load(next(project.rglob("dual.yaml")).read_text())
    user_requests = [i["request"] for i in cassette["interactions"] if i["request"].get("role") == "user"]
    assert user_requests and all(r["body"]["json"]["tools"][0]["function"]["name"] == "cancel_order"
                                 for r in user_requests)
    golden = json.loads(next(project.rglob("golden/**/dual.json")).read_text())
    assert golden["user_calls"] == [{"name": "cancel_order", "arguments": {"order_id": "A-1042"}}]
    code, replayed, err = run(project, "--base-url", f"http://127.0.0.1:{closed_port}/v1", "--record-mode", "none",
                              "--strict")
    assert code == 0, err
    (again,) = replayed["fixtures"]
    assert again["user_trace"] == fixture["user_trace"] and again["state"] == fixture["state"]
    assert again["request_drift"] == [] and again["drift"] == []
