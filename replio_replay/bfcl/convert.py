"""One BFCL case as a fixture, pure: the question, its functions as stub tools, the verdict from its answer.

The fixture is judged on the model's first response (`single_response`), with no system
message unless the case has one (BFCL sends none to function-calling models), offered the
case's functions only (`tools_offered`: no built-in tool), each titled with BFCL's name where
its tool name differs (`names`), so reports show `math.factorial`. Its calls must match the possible
answer (`verifier.match_expected`): in order for one call (`simple_*`, `multiple`), in any order
for several (the `parallel` categories), none at all for `irrelevance`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import BenchmarkError
from ..fixtures.model import id_problem
from ..tools.schema import schema_problem
from .answers import BadAnswer, expected_calls
from .names import encode_name, name_problem
from .schema import UnknownType, tool_parameters

__all__ = ["BFCL_CATEGORIES", "NOT_RUN_RESULT", "fixture_id", "to_fixture"]

#: The single-turn categories this importer reads, and how each is judged.
BFCL_CATEGORIES: dict[str, str] = {
    "simple_python": "strict",
    "multiple": "strict",
    "parallel": "unordered",
    "parallel_multiple": "unordered",
    "irrelevance": "none",
    "live_simple": "strict",
    "live_multiple": "strict",
    "live_parallel": "unordered",
    "live_parallel_multiple": "unordered",
    "live_irrelevance": "none",
}

#: What a BFCL stub answers; a single-response fixture never runs it, but a stub needs an answer.
NOT_RUN_RESULT = "This is a BFCL function: it is judged from the call, not run."


def fixture_id(case_id: str) -> str:
    """The fixture id of BFCL case `case_id`."""
    return f"bfcl-{case_id}"


def to_fixture(case: Mapping[str, Any], answer: Mapping[str, Any] | None, category: str) -> dict[str, Any]:
    """The fixture (as JSON data) of one BFCL case and its possible answer (None for irrelevance);
    BenchmarkError naming the case when it cannot be converted."""
    case_id = str(case.get("id", "?"))
    problem = id_problem(fixture_id(case_id))
    if problem:
        raise BenchmarkError(ascii(case_id[:80]), f"its id cannot be a fixture id (a file name): {problem}; "
                             "fix the id in the data or leave the case out")
    try:
        return _fixture(case, answer, category, case_id)
    except (BadAnswer, UnknownType, KeyError, TypeError, AttributeError) as exc:
        why = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
        raise BenchmarkError(case_id, why) from None


def _fixture(case: Mapping[str, Any], answer: Mapping[str, Any] | None, category: str, case_id: str) -> dict[str, Any]:
    system, task = _messages(case["question"])
    tools = {}
    for function in case["function"]:
        name = function["name"]
        problem = name_problem(name)
        if problem:
            raise BadAnswer(problem)
        tools[encode_name(name)] = _tool(function)
    mode = BFCL_CATEGORIES[category]
    if mode == "none":
        expected: list[Any] = []
        mode = "strict"
    else:
        if answer is None:
            raise BadAnswer("no possible answer has this id")
        expected = expected_calls(answer["ground_truth"], case["function"])
    return {
        "id": fixture_id(case_id),
        "description": f"BFCL {category} case {case_id}: " + ", ".join(f["name"] for f in case["function"]),
        "tags": ["bfcl", category],
        "task": task,
        "system_prompt": system,
        "single_response": True,
        "tools": tools,
        "tools_offered": list(tools),
        "expected": expected,
        "match": mode,
        "verifier": {"match_expected": True},
    }


def _messages(question: Any) -> tuple[str, str]:
    """(system prompt, user message) of a single-turn question: one user message, after one system one at most."""
    if not isinstance(question, list) or len(question) != 1 or not isinstance(question[0], list):
        raise BadAnswer("the question has more than one turn; only single-turn cases are imported")
    messages = question[0]
    roles = [m.get("role") for m in messages]
    if roles not in (["user"], ["system", "user"]):
        raise BadAnswer(f"the question's messages are {roles}; a fixture takes one user message, after a "
                        "system message at most")
    task = messages[-1].get("content")
    system = messages[0].get("content") if len(messages) == 2 else ""
    if not isinstance(task, str) or not task.strip() or not isinstance(system, str):
        raise BadAnswer("the question's message is empty or not text")
    return system, task


def _tool(function: Mapping[str, Any]) -> dict[str, Any]:
    """A BFCL function as a stub tool; its `title` is BFCL's name where the tool name differs."""
    parameters = tool_parameters(function["parameters"])
    problem = schema_problem(parameters)
    if problem:
        raise BadAnswer(f"function {function['name']!r}: {problem}")
    name = function["name"]
    title = {"title": name} if encode_name(name) != name else {}
    return {**title, "description": function.get("description") or name, "parameters": parameters,
            "result": NOT_RUN_RESULT}
