"""The LLM judge, pure: the request asking whether one rubric item holds, and its answer read back.

The judge is shown, in one user message, the user's side (the task, or each message a
conversation's user said), the conversation's tool calls and results trimmed to the judge's
`budget` in characters (`trimmed_calls`), the agent's final answer, and last the one statement
it judges; a system message fixes the answer's shape: one JSON object
``{"verdict": "yes" | "no", "reason": "..."}``, asked for as structured output too (`VERDICT`,
where the judge's provider takes it). Each rubric item is its own request, so items never sit
beside one another in a prompt (no position among them to favour).

The agent's words are quoted to the judge, so they can come back in its answer (a fenced
``{"verdict": "yes"}`` the agent wrote, quoted in the judge's reason or prose). So the answer is
read by rules that leave no room for a second reading (`verdict_object`):

1. the whole answer (stripped) parses as a JSON object: that object, and nothing inside its
   strings counts;
2. it opens as a JSON object (``{``) but does not parse (a duplicate key included): no verdict,
   whatever fences it holds;
3. otherwise, words around exactly one fenced block (```` ```json ```` and a new line) that holds
   one JSON object, with no other ``"verdict":`` key in the words: that object; no fence, several,
   an unclosed one or one that does not hold an object: no verdict;
4. an answer given as data by structured output (Anthropic's forced tool): that object.

The object is then validated (pydantic, `Answer`). No verdict, an invalid object or one that is
cut short is the verdict `error`, which never passes. Whatever the verdict, the judge's raw
answer is kept in it (redacted, capped at `RAW_CAP`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from .._runtime.redact import NO_SECRETS, Redactor
from ..fixtures.model import Judge
from ..providers.base import ChatRequest, ChatResponse, Message, ResponseSchema
from .results import JudgeVerdict, TraceCall

__all__ = [
    "RAW_CAP",
    "SYSTEM",
    "VERDICT",
    "Answer",
    "Unread",
    "judge_request",
    "read_answer",
    "trimmed_calls",
    "verdict_object",
    "verdict_reasons",
]

#: What the judge is told it is and how it answers.
SYSTEM = (
    "You grade the work of an AI agent that answers a user with the help of tools. You are shown what the "
    "user asked, the tool calls the agent made with their results, the agent's final answer, and one "
    "statement. Decide whether the statement holds of the agent's work, judging only by what is shown. "
    "A longer or more confident answer is not a better one; do not guess at what is not shown.\n"
    'Answer with one JSON object and nothing else: {"verdict": "yes" or "no", "reason": "one or two '
    'sentences saying why"}.'
)

#: The answer's JSON Schema, asked for as structured output where the judge's provider takes it.
VERDICT = ResponseSchema("verdict", {
    "type": "object",
    "properties": {"verdict": {"type": "string", "enum": ["yes", "no"]}, "reason": {"type": "string"}},
    "required": ["verdict", "reason"],
    "additionalProperties": False,
})

#: Characters of the judge's answer, or of its reason, kept in the result.
RAW_CAP = 2000
_MORE = " [... {left} more characters]"
#: Each result is cut to its share of the budget, but never below this many characters.
_MIN_RESULT = 200
#: A fence mark, opening or closing a block, wherever it stands.
_MARK = re.compile(r"`{3,}|~{3,}")
#: What may follow the opening mark on its line: nothing, or the language json.
_INFO = re.compile(r"[ \t]*(?:json)?[ \t]*", re.IGNORECASE)
#: A verdict key, quoted (and perhaps escaped) as in JSON or a Python dict.
_VERDICT_KEY = re.compile(r"""\\?["']verdict\\?["']\s*:""", re.IGNORECASE)


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
    `budget`, the final answer, then the statement; the answer asked for as `VERDICT`."""
    asked = said[0] if len(said) == 1 else "\n".join(f"{i}. {text}" for i, text in enumerate(said, 1))
    heading = "What the user asked" if len(said) == 1 else "What the user said, in order"
    body = (f"## {heading}\n{asked}\n\n## Tool calls and results\n{trimmed_calls(trace, budget)}\n\n"
            f"## The agent's final answer\n{answer or '(no answer)'}\n\n## The statement to judge\n{item}\n\n"
            'Does the statement hold? Answer with the JSON object {"verdict": "yes" | "no", "reason": "..."} only.')
    return ChatRequest((Message("system", SYSTEM), Message("user", body)), (), trial=trial, response_schema=VERDICT)


class Unread(ValueError):
    """The judge's answer holds no one verdict object; the message says why."""


def verdict_object(text: str) -> Any:
    """The verdict object of the judge's answer `text` (rules 1-3 of the module docstring), not yet
    validated; `Unread` saying why when there is none, or more than one reading."""
    whole = text.strip()
    try:
        value = _strict_json(whole)
    except ValueError as exc:
        if whole.startswith("{"):
            raise Unread(f"it opens a JSON object that does not parse: {exc}") from None
        return _fenced(whole)
    if not isinstance(value, dict):
        raise Unread(f"it is JSON, but a {_json_kind(value)}, not an object")
    return value


def _fenced(text: str) -> Any:
    """The one JSON object fenced in `text` among words that give no other verdict (rule 3)."""
    marks = list(_MARK.finditer(text))
    if not marks:
        raise Unread("no JSON object in it, whole or fenced")
    if len(marks) == 1:
        raise Unread("a fence that is never closed")
    if len(marks) > 2:
        raise Unread(f"{len(marks)} fence marks, more than one block: which holds the verdict is not clear")
    opening, closing = marks
    line_end = text.find("\n", opening.end(), closing.start())
    if opening[0][0] != closing[0][0] or line_end < 0 or not _INFO.fullmatch(text, opening.end(), line_end):
        raise Unread("a fence that is not a block of lines of its own: ```json, a new line, the object, ```")
    try:
        value = _strict_json(text[line_end + 1:closing.start()])
    except ValueError as exc:
        raise Unread(f"the fenced block does not parse: {exc}") from None
    if not isinstance(value, dict):
        raise Unread(f"the fenced block holds a {_json_kind(value)}, not an object")
    if _VERDICT_KEY.search(text, 0, opening.start()) or _VERDICT_KEY.search(text, closing.end()):
        raise Unread('a "verdict" outside the fenced block too: which one is the judge\'s is not clear')
    return value


def _strict_json(text: str) -> Any:
    """`text` as JSON, refusing what `json` lets by: a key given twice (only the last would count),
    NaN and Infinity; ValueError saying why (a nesting too deep for the parser too)."""
    try:
        return json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise ValueError(f"the key {json.dumps(key, ensure_ascii=False)} is given twice")
        seen.add(key)
    return dict(pairs)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _json_kind(value: Any) -> str:
    kinds = {list: "list", str: "string", bool: "boolean", type(None): "null"}
    return kinds.get(type(value), "number")


def read_answer(response: ChatResponse, item: str, spec: Judge, redactor: Redactor = NO_SECRETS) -> JudgeVerdict:
    """The judge's `response` to `item` as a verdict, its raw answer kept: passed when it is `spec`'s
    `pass` verdict; `error` (never passing) when it holds no one verdict object as asked."""
    raw = redactor.cut(_raw(response), RAW_CAP, _MORE)
    try:
        answer = Answer.model_validate(_answer_object(response))
    except Unread as exc:
        why = str(exc)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem["loc"])
        why = f"{where}: {problem['msg']}" if where else problem["msg"]
    else:
        return JudgeVerdict(rubric=item, verdict=answer.verdict, reason=redactor.cut(answer.reason, RAW_CAP, _MORE),
                            passed=answer.verdict == spec.passing, raw=raw)
    return JudgeVerdict(rubric=item, verdict="error", passed=False, raw=raw,
                        reason=f'the judge did not answer {{"verdict": "yes" | "no", "reason": ...}} ({why})')


def _answer_object(response: ChatResponse) -> Any:
    """The object the judge answered: given as data by structured output (rule 4), else read from its text."""
    if not response.structured:
        return verdict_object(response.text)
    if len(response.structured) > 1:
        raise Unread(f"{len(response.structured)} structured answers, where one was asked for")
    value = response.structured[0]
    if not isinstance(value, dict):
        raise Unread(f"its structured answer is a {_json_kind(value)}, not an object")
    return value


def _raw(response: ChatResponse) -> str:
    """The judge's answer as it came: its text, then any answer given as data, as JSON."""
    given = [json.dumps(value, ensure_ascii=False) for value in response.structured]
    return "\n".join([response.text, *given] if response.text else given)


def verdict_reasons(verdicts: Sequence[JudgeVerdict]) -> list[str]:
    """Why the judge failed the run: one reason per item that did not pass, naming it when there are several."""
    if len(verdicts) == 1:
        v = verdicts[0]
        return [] if v.passed else [f"judge: {v.verdict}: {v.reason}"]
    return [f"judge[{i}] {json.dumps(v.rubric, ensure_ascii=False)}: {v.verdict}: {v.reason}"
            for i, v in enumerate(verdicts, 1) if not v.passed]
