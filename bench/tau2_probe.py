"""Conversations made up to probe the τ² rules: `python bench/tau2_probe.py PROJECT --tau2 CHECKOUT [--seed N]...`.

For every imported τ² fixture of PROJECT (``replio eval import tau2 CHECKOUT --domain ...``), it
writes a script for the `mock` provider playing both sides: the agent makes the task's reference
actions that are its own and then says the task's communicate_info; the simulated user makes the
actions that are its own, asks, and ends with ###STOP###. Seed 0 leaves that as it is; other
seeds change it at random: an action dropped, an argument changed, an action made twice, a
communicated string left out or written with commas and in capitals, the user's actions left
out. It runs the fixtures on those scripts (no cassette, nothing sent anywhere) and saves each
seed's result as ``probe-<seed>.json`` in PROJECT, for `tau2_agreement.py --results` to hand to
τ²'s own evaluator. PROJECT is a scratch project: its ``.replio/config.json`` is written.

    python bench/tau2_probe.py /tmp/t2 --tau2 ~/src/tau2-bench --seed 0 --seed 1 --seed 2 --seed 3
    python bench/tau2_agreement.py --tau2 ~/src/tau2-bench --results /tmp/t2/probe-0.json --results ...
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.tau2_agreement import tasks  # noqa: E402


def commas(text: str) -> str:
    """`text` with its long numbers written with thousands commas, in capitals."""
    return re.sub(r"\d{4,}", lambda m: f"{int(m.group()):,}", text).upper()


def steps(fixture: dict[str, Any], task: dict[str, Any], rng: random.Random | None) -> tuple[list[Any], list[Any]]:
    """The agent's and the user's scripted responses for one fixture."""
    criteria = task.get("evaluation_criteria") or {}
    own = set((fixture.get("user") or {}).get("tools") or [])
    actions = [{"name": a["name"], "arguments": dict(a.get("arguments") or {})} for a in criteria.get("actions") or []]
    agent_calls = [a for a in actions if a["name"] not in own]
    user_calls = [a for a in actions if a["name"] in own]
    said = [str(s) for s in criteria.get("communicate_info") or []]
    if rng is not None:
        roll = rng.random()
        if agent_calls and roll < 0.2:
            agent_calls.pop(rng.randrange(len(agent_calls)))
        elif agent_calls and roll < 0.35:
            call = rng.choice(agent_calls)
            if call["arguments"]:
                key = rng.choice(sorted(call["arguments"]))
                value = call["arguments"][key]
                call["arguments"][key] = value + "x" if isinstance(value, str) else value
        elif agent_calls and roll < 0.45:
            agent_calls.append(dict(agent_calls[0]))
        elif said and roll < 0.6:
            said.pop(rng.randrange(len(said)))
        elif said and roll < 0.75:
            said = [commas(s) for s in said]
        elif user_calls and roll < 0.9:
            user_calls = []
    history = fixture.get("history") or []
    agent: list[Any] = [{"text": "-"}] * sum(m["role"] == "assistant" for m in history)
    agent += ([{"tool_calls": agent_calls}] if agent_calls else []) + [{"text": " ".join(["Done.", *said])}]
    user: list[Any] = [{"text": "-"}] * sum(m["role"] == "user" for m in history)
    user += ([{"tool_calls": user_calls}] if user_calls else []) + [{"text": "Please help me with my request."},
                                                                      {"text": "###STOP###"}]
    return agent, user


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("project", type=Path)
    parser.add_argument("--tau2", type=Path, required=True, help="the tau2-bench checkout the fixtures came from")
    parser.add_argument("--seed", type=int, action="append", default=[])
    args = parser.parse_args(argv)
    fixtures = [json.loads(p.read_text(encoding="utf-8"))
                for p in sorted((args.project / ".replio" / "eval").rglob("tau2-*.json"))]
    if not fixtures:
        sys.exit(f"tau2_probe: no τ² fixture under {args.project}/.replio/eval; import some")
    known = tasks(args.tau2, {f["id"].split("-")[1] for f in fixtures})
    replio = str(Path(sys.executable).with_name("replio"))
    for seed in args.seed or [0]:
        rng = random.Random(seed) if seed else None
        script: dict[str, Any] = {}
        for fixture in fixtures:
            agent, user = steps(fixture, known[fixture["id"]][1], rng)
            script[fixture["id"]], script[f"user:{fixture['id']}"] = agent, user
            script[f"judge:{fixture['id']}"] = [{"text": json.dumps({"verdict": "yes", "reason": "probe"})}] * 20
        path = args.project / f"probe-{seed}.script.json"
        path.write_text(json.dumps(script), encoding="utf-8")
        config = {"provider": "mock", "providers": {"mock": {"script": str(path.resolve())}}, "bundled": False}
        (args.project / ".replio" / "config.json").write_text(json.dumps(config), encoding="utf-8")
        done = subprocess.run([replio, "eval", "--path", str(args.project), "run", "--no-cassettes", "--output",
                               "json"], capture_output=True, text=True)
        if not done.stdout.strip():
            sys.exit(f"tau2_probe: the run gave no result (exit {done.returncode}): {done.stderr[-2000:]}")
        (args.project / f"probe-{seed}.json").write_text(done.stdout, encoding="utf-8")
        print(f"seed {seed}: {args.project / f'probe-{seed}.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
