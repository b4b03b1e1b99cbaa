"""τ²-bench's own evaluator on conversations replio recorded; run inside a virtualenv holding tau2-bench.

Reads a JSON list of items on stdin, each ``{"id", "domain", "task", "messages", "strict",
"termination"}`` (`messages` in τ²'s message format, built by `tau2_agreement.py`), and prints,
per id, τ²'s reward over the components it computes without an LLM (DB, ENV_ASSERTION, ACTION,
COMMUNICATE, those of the task's reward basis, combined as `evaluate_simulation` combines them),
each component's own reward, and, when `--nl-model` is given, its NL-assertion reward judged by
that model. Evaluated with ``strict_replay`` as the item says (False only where replio cut a
tool's result for the trace). When the evaluator raises, the item says so (``raised``: the
exception) instead of a reward: a case τ² could not judge is not a reward of 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from tau2.data_model.message import AssistantMessage, ToolCall, ToolMessage, UserMessage
from tau2.data_model.simulation import SimulationRun, TerminationReason
from tau2.data_model.tasks import RewardType, Task
from tau2.evaluator import evaluator_nl_assertions
from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation

_ENV = {RewardType.DB, RewardType.ENV_ASSERTION}


def messages(raw: list[dict[str, Any]]) -> list[Any]:
    out: list[Any] = []
    for m in raw:
        calls = [ToolCall(**c) for c in m.get("tool_calls") or []] or None
        if m["role"] == "assistant":
            out.append(AssistantMessage(role="assistant", content=m.get("content"), tool_calls=calls))
        elif m["role"] == "user":
            out.append(UserMessage(role="user", content=m.get("content"), tool_calls=calls))
        else:
            out.append(ToolMessage(role="tool", id=m["id"], content=m.get("content"), requestor=m["requestor"]))
    return out


def judge(item: dict[str, Any], nl: bool) -> dict[str, Any]:
    task = Task.model_validate(item["task"])
    run = SimulationRun(id=item["id"], task_id=task.id, timestamp="", start_time="", end_time="", duration=0.0,
                        termination_reason=TerminationReason(item["termination"]), messages=messages(item["messages"]))

    def reward(kind: EvaluationType) -> float:
        return evaluate_simulation(run, task, kind, solo_mode=False, domain=item["domain"],
                                   strict_replay=bool(item.get("strict", False))).reward

    basis = set(task.evaluation_criteria.reward_basis) if task.evaluation_criteria else set()
    try:
        parts = {"ENV": reward(EvaluationType.ENV), "ACTION": reward(EvaluationType.ACTION),
                 "COMMUNICATE": reward(EvaluationType.COMMUNICATE)}
    except Exception as exc:  # noqa: BLE001 - whatever τ² raises is reported as its own, never as a reward
        return {"raised": f"{type(exc).__name__}: {exc}"[:500], "basis": sorted(b.value for b in basis)}
    total = 1.0
    if basis & _ENV:
        total *= parts["ENV"]
    if RewardType.ACTION in basis:
        total *= parts["ACTION"]
    if RewardType.COMMUNICATE in basis:
        total *= parts["COMMUNICATE"]
    out = {"reward": total, "parts": parts, "basis": sorted(b.value for b in basis)}
    if nl and RewardType.NL_ASSERTION in basis and task.evaluation_criteria.nl_assertions:
        try:
            out["nl"] = reward(EvaluationType.NL_ASSERTIONS)
        except Exception as exc:  # noqa: BLE001 - as above: τ²'s judge failed, which is no verdict
            out["nl_raised"] = f"{type(exc).__name__}: {exc}"[:500]
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nl-model")
    parser.add_argument("--nl-base-url")
    args = parser.parse_args()
    if args.nl_model:
        evaluator_nl_assertions.DEFAULT_LLM_NL_ASSERTIONS = args.nl_model
        evaluator_nl_assertions.DEFAULT_LLM_NL_ASSERTIONS_ARGS = {"temperature": 0.0, "api_base": args.nl_base_url,
                                                                  "api_key": "none"}
    items = json.load(sys.stdin)
    json.dump({item["id"]: judge(item, bool(args.nl_model)) for item in items}, sys.stdout)


if __name__ == "__main__":
    main()
