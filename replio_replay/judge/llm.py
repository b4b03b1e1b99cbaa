"""The LLM judge, pure: the request asking whether one rubric item holds, and its answer read back.

The judge is shown, in one user message, the user's side (the task, or each message a
conversation's user said), the conversation's tool calls and results trimmed to the judge's
`budget` in characters (`trimmed_calls`), the agent's final answer, and last the one statement
it judges; a system message fixes the answer's shape: one JSON object
``{"verdict": "yes" | "no", "reason": "..."}``. Each rubric item is its own request, so items
never sit beside one another in a prompt (no position among them to favour).

An answer that does not parse, is cut short or holds another verdict is the verdict `error`, which
never passes, with the raw text kept (redacted, capped at `RAW_CAP`).

The answer is validated with pydantic (`Answer`); the first ```json fence in it, with or without
words around it, is read instead when there is one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from .._runtime.redact import NO_SECRETS, Redactor
from ..fixtures.model import Judge
from ..providers.base import ChatRequest, Message
from .results import JudgeVerdict, TraceCall

__all__ = ["RAW_CAP", "SYSTEM", "Answer", "judge_request", "read_answer", "trimmed_calls", "verdict_reasons"]

#: What the judge is told it is and how it answers.
SYSTEM = (
    "You grade the work of an AI agent that answers a user with the help of tools. You are shown what the "
    "user asked, the tool calls the agent made with their results, the agent's final answer, and one "
    "statement. Decide whether the statement holds of the agent's work, judging only by what is shown. "
    "A longer or more confident answer is not a better one; do not guess at what is not shown.\n"
    'Answer with one JSON object and nothing else: {"verdict": "yes" or "no", "reason": "one or two '
    'sentences saying why"}.'
)

#: Characters of an answer that did not parse, or of a reason, kept in the result.
RAW_CAP = 2000
_MORE = " [... {left} more characters]"
#: Each result is cut to its share of the budget, but never below this many characters.
_MIN_RESULT = 200
_FENCE = re.compile(r"```(?:json)?[ \t]*\n(.*?)\n?[ \t]*```", re.DOTALL | re.IGNORECASE)


class Answer(BaseModel):
    """The judge's answer, as it must be."""

    model_config = ConfigDict(extra="ignore", strict=True)

    verdict: Literal["yes", "no"]
    reason: str


def trimmed_calls(trace: Sequence[TraceCall], budget: int) -> str:
    """The calls and results as numbered lines within about `budget` characters: each result cut to
    an equal share of the budget (at least 200 characters, its start kept and the cut counted);
    when they still do not fit, calls from the middle are left out, the first and last kept."""
    if not trace:
        return "(no tool calls)"
    share = max(_MIN_RESULT, budget // len(trace))
    lines = [f"{i}. {c.name}({_arguments(c.arguments)}) -> {NO_SECRETS.cut(c.result or '', share, _MORE)}"
             for i, c in enumerate(trace, 1)]
    shown = list(enumerate(lines))
    while len(shown) > 2 and sum(len(line) for _, line in shown) > budget:
        shown.pop(len(shown) // 2)
    out = [line for _, line in shown]
    gap = next((k for k in range(1, len(shown)) if shown[k][0] != shown[k - 1][0] + 1), None)
    if gap is not None:
        out.insert(gap, f"[... {len(lines) - len(shown)} calls in between not shown]")
    return "\n".join(out)


def _arguments(arguments: dict[str, object] | str) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False, sort_keys=True)


def judge_request(item: str, said: Sequence[str], trace: Sequence[TraceCall], answer: str,
                  budget: int, trial: int = 1) -> ChatRequest:
    """The request judging `item`: the user's messages `said` (the task first), the calls within
    `budget`, the final answer, then the statement; JSON mode asked for."""
    asked = said[0] if len(said) == 1 else "\n".join(f"{i}. {text}" for i, text in enumerate(said, 1))
    heading = "What the user asked" if len(said) == 1 else "What the user said, in order"
    body = (f"## {heading}\n{asked}\n\n## Tool calls and results\n{trimmed_calls(trace, budget)}\n\n"
            f"## The agent's final answer\n{answer or '(no answer)'}\n\n## The statement to judge\n{item}\n\n"
            'Does the statement hold? Answer with the JSON object {"verdict": "yes" | "no", "reason": "..."} only.')
    return ChatRequest((Message("system", SYSTEM), Message("user", body)), (), trial=trial, json_mode=True)


def read_answer(text: str, item: str, spec: Judge, redactor: Redactor = NO_SECRETS) -> JudgeVerdict:
    """The judge's answer `text` to `item` as a verdict: passed when it is `spec`'s `pass` verdict;
    `error` (never passing, the raw text kept) when it is not the JSON object asked for."""
    fenced = _FENCE.search(text)
    try:
        answer = Answer.model_validate_json((fenced[1] if fenced else text).strip())
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem["loc"])
        why = f"{where}: {problem['msg']}" if where else problem["msg"]
        return JudgeVerdict(rubric=item, verdict="error", passed=False,
                            reason=f'the judge did not answer {{"verdict": "yes" | "no", "reason": ...}} ({why})',
                            raw=redactor.cut(text, RAW_CAP, _MORE))
    return JudgeVerdict(rubric=item, verdict=answer.verdict, reason=redactor.cut(answer.reason, RAW_CAP, _MORE),
                        passed=answer.verdict == spec.passing)


def verdict_reasons(verdicts: Sequence[JudgeVerdict]) -> list[str]:
    """Why the judge failed the run: one reason per item that did not pass, naming it when there are several."""
    if len(verdicts) == 1:
        v = verdicts[0]
        return [] if v.passed else [f"judge: {v.verdict}: {v.reason}"]
    return [f"judge[{i}] {json.dumps(v.rubric, ensure_ascii=False)}: {v.verdict}: {v.reason}"
            for i, v in enumerate(verdicts, 1) if not v.passed]
