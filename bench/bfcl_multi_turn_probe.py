"""Responses made up to probe the multi-turn rules: `python bench/bfcl_multi_turn_probe.py PROJECT [--seed N]...`.

For every imported BFCL multi-turn fixture of PROJECT (``replio eval import bfcl WHEEL --category
multi_turn_base ...``), it writes a script for the `mock` provider that answers each user turn
with BFCL's reference calls, changed at random (seed 0 leaves them as they are): the last call
dropped, every other call dropped, the calls in another order, an argument changed, a call
added, the calls split over two responses. It runs the fixtures on those scripts (no cassette,
nothing sent anywhere) and saves each seed's result as ``probe-<seed>.json`` in PROJECT, for
`bfcl_agreement.py --results` to hand to BFCL's own checker. PROJECT is a scratch project: its
``.replio/config.json`` is written (the mock, its script, `max_calls` 1000).

    python bench/bfcl_multi_turn_probe.py /tmp/mt --seed 0 --seed 1 --seed 2 --seed 3
    python bench/bfcl_agreement.py --bfcl WHEEL --results /tmp/mt/probe-0.json --results /tmp/mt/probe-1.json ...
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def changed(calls: list[dict[str, Any]], rng: random.Random, offered: Sequence[str]) -> list[dict[str, Any]]:
    """`calls` changed in one way at random (or not at all)."""
    roll = rng.random()
    if calls and roll < 0.15:
        return calls[:-1]
    if calls and roll < 0.25:
        return rng.sample(calls, len(calls))
    if calls and roll < 0.35:
        i = rng.randrange(len(calls))
        arguments = dict(calls[i]["arguments"])
        if arguments:
            key = rng.choice(sorted(arguments))
            value = arguments[key]
            if isinstance(value, str):
                arguments[key] = value + "x"
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                arguments[key] = value + 1
        return [*calls[:i], {**calls[i], "arguments": arguments}, *calls[i + 1:]]
    if calls and roll < 0.42:
        return calls[::2]
    if roll < 0.47 and "ls" in offered:
        return [*calls, {"name": "ls", "arguments": {}}]
    return calls


def script(fixtures: Sequence[dict[str, Any]], seed: int) -> dict[str, list[dict[str, Any]]]:
    """The mock's script: per fixture, per user turn, its (changed) reference calls, then a text answer."""
    rng = random.Random(seed)
    out = {}
    for fx in fixtures:
        steps: list[dict[str, Any]] = []
        for turn in fx["turns"]:
            calls = list((turn.get("verifier") or {}).get("state_from_calls") or [])
            if seed:
                calls = changed(calls, rng, fx["tools_offered"])
            if len(calls) > 1 and seed and rng.random() < 0.3:
                steps += [{"tool_calls": calls[:1]}, {"tool_calls": calls[1:]}]
            elif calls:
                steps.append({"tool_calls": calls})
            steps.append({"text": "Done."})
        out[fx["id"]] = steps
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project", type=Path)
    parser.add_argument("--seed", type=int, action="append", default=[])
    args = parser.parse_args(argv)
    fixtures = [json.loads(p.read_text(encoding="utf-8"))
                for p in sorted((args.project / ".replio" / "eval").rglob("bfcl-multi_turn_*.json"))]
    if not fixtures:
        sys.exit(f"bfcl_multi_turn_probe: no BFCL multi-turn fixture under {args.project}/.replio/eval; import some")
    replio = str(Path(sys.executable).with_name("replio"))
    for seed in args.seed or [0]:
        path = args.project / f"probe-{seed}.script.json"
        path.write_text(json.dumps(script(fixtures, seed)), encoding="utf-8")
        config = {"provider": "mock", "providers": {"mock": {"script": str(path.resolve())}}, "max_calls": 1000,
                  "bundled": False}
        (args.project / ".replio" / "config.json").write_text(json.dumps(config), encoding="utf-8")
        done = subprocess.run([replio, "eval", "--path", str(args.project), "run", "--no-cassettes", "--output",
                               "json"], capture_output=True, text=True)
        if not done.stdout.strip():
            sys.exit(f"bfcl_multi_turn_probe: the run gave no result (exit {done.returncode}): {done.stderr[-2000:]}")
        (args.project / f"probe-{seed}.json").write_text(done.stdout, encoding="utf-8")
        print(f"seed {seed}: {args.project / f'probe-{seed}.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
