"""bench/tau2_agreement.py's own logic: the conversation handed to τ²'s evaluator with the simulated
user's calls in their places, strict replay where nothing was cut, and the worker's wiring (against
a stand-in `tau2`: the real one is installed by the script), an evaluator that raises counted apart."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import tau2_agreement as agreement  # noqa: E402

RESULT: dict[str, Any] = {
    "conversation": [
        {"role": "user", "content": "My phone has no data."},
        {"role": "assistant", "content": "Please toggle airplane mode.", "calls": None},
        {"role": "user", "content": "Done, still nothing."},
        {"role": "assistant", "content": "", "calls": [{"name": "check_line", "arguments": {"id": "L1"}}]},
        {"role": "tool", "name": "check_line", "content": "suspended"},
        {"role": "assistant", "content": "Your line is suspended."},
    ],
    "user_trace": [{"name": "toggle_airplane_mode", "arguments": {}, "result": "off", "at": 2},
                   {"name": "check_status_bar", "arguments": {}, "result": "no signal", "at": 6}],
}


def test_the_users_calls_are_handed_over_where_they_happened() -> None:
    messages = agreement.tau2_messages(RESULT)
    shape = [(m["role"], (m.get("tool_calls") or [{}])[0].get("name") if m["role"] != "tool" else m["requestor"])
             for m in messages]
    assert shape == [("assistant", None), ("user", None), ("assistant", None),
                     ("user", "toggle_airplane_mode"), ("tool", "user"),  # before the user said it was done
                     ("user", None), ("assistant", "check_line"), ("tool", "assistant"), ("assistant", None),
                     ("user", "check_status_bar"), ("tool", "user")]
    older = {**RESULT, "user_trace": [{k: v for k, v in c.items() if k != "at"} for c in RESULT["user_trace"]]}
    assert [m["role"] for m in agreement.tau2_messages(older)][-4:] == ["user", "tool", "user", "tool"]


def test_strict_replay_unless_a_result_was_cut_for_the_trace() -> None:
    messages = agreement.tau2_messages(RESULT)
    assert agreement.strict_replay(messages)
    cut = [*messages, {"role": "tool", "id": "x", "content": "abc\n[... cut: 12 more characters not shown]",
                       "requestor": "assistant"}]
    assert not agreement.strict_replay(cut)


STAND_IN = {
    "data_model/message.py": """
class _M:
    def __init__(self, **kw):
        self.__dict__.update(kw)
AssistantMessage = UserMessage = ToolMessage = ToolCall = _M
""",
    "data_model/simulation.py": """
class TerminationReason(str):
    pass
class SimulationRun:
    def __init__(self, **kw):
        self.__dict__.update(kw)
""",
    "data_model/tasks.py": """
import enum
class RewardType(str, enum.Enum):
    DB = "DB"; ENV_ASSERTION = "ENV_ASSERTION"; ACTION = "ACTION"; COMMUNICATE = "COMMUNICATE"
    NL_ASSERTION = "NL_ASSERTION"
class _Criteria:
    def __init__(self, basis):
        self.reward_basis = [RewardType(b) for b in basis]
        self.nl_assertions = None
class Task:
    @classmethod
    def model_validate(cls, data):
        task = cls()
        task.id = data["id"]
        task.evaluation_criteria = _Criteria(data["basis"])
        return task
""",
    "evaluator/evaluator_nl_assertions.py": "",
    "evaluator/evaluator.py": """
import enum, json, os
class EvaluationType(str, enum.Enum):
    ENV = "env"; ACTION = "action"; COMMUNICATE = "communicate"; NL_ASSERTIONS = "nl"
class _Reward:
    def __init__(self, reward):
        self.reward = reward
def evaluate_simulation(run, task, kind, solo_mode, domain, strict_replay):
    with open(os.environ["SEEN"], "a") as seen:
        seen.write(json.dumps([task.id, strict_replay]) + "\\n")
    if task.id == "raises":
        raise KeyError("no such order")
    return _Reward(1.0)
""",
}


def test_the_worker_replays_strictly_as_asked_and_reports_an_exception_as_such(tmp_path: Path) -> None:
    for name, text in STAND_IN.items():
        path = tmp_path / "tau2" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        (path.parent / "__init__.py").touch()
        path.write_text(text)
    (tmp_path / "tau2" / "__init__.py").touch()
    items = [{"id": i, "domain": "mock", "task": {"id": i, "basis": ["DB"]}, "messages": [], "strict": strict,
              "termination": "user_stop"} for i, strict in (("fine", True), ("cut", False), ("raises", True))]
    seen = tmp_path / "seen.jsonl"
    done = subprocess.run([sys.executable, str(REPO / "bench" / "tau2_worker.py")], input=json.dumps(items),
                          capture_output=True, text=True, timeout=60,
                          env={"PYTHONPATH": str(tmp_path), "SEEN": str(seen)})
    assert done.returncode == 0, done.stderr
    verdicts = json.loads(done.stdout)
    assert verdicts["fine"]["reward"] == verdicts["cut"]["reward"] == 1.0
    assert verdicts["raises"] == {"raised": "KeyError: 'no such order'", "basis": ["DB"]}
    strict = {task: s for task, s in map(json.loads, seen.read_text().splitlines())}
    assert strict == {"fine": True, "cut": False, "raises": True}
