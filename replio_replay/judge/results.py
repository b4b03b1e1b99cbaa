"""The result model: what one fixture's run produced and the suite summary (the JSON contract).

Keys are only ever added, never renamed. Everything here is pure data; `timing`, when
asked for, is the only volatile part and is left out of comparisons.
"""

from __future__ import annotations

import functools
import re
import threading
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..config import MAX_TRIALS

if TYPE_CHECKING:
    from ..fixtures.layout import RunKey

__all__ = ["MAX_NUMBER", "FixtureResult", "JudgeVerdict", "RunResult", "SavedRuns", "StateCheck", "Status", "Summary",
           "TraceCall", "TrialResult", "build_result_models", "saved_runs"]


class Status(str, Enum):
    """How a fixture's loop ended."""

    OK = "ok"  # the model answered without calling tools
    TRUNCATED = "truncated"  # a turn or call limit stopped it
    ERROR = "error"  # the provider or the harness failed
    CANCELLED = "cancelled"  # the run was interrupted


class _Model(BaseModel):
    # No NaN or Infinity anywhere: JSON has neither, and a saved result is read back as input.
    model_config = ConfigDict(populate_by_name=True, frozen=True, defer_build=True, allow_inf_nan=False)


#: The largest count or amount a result holds: 2**53 - 1, the largest integer every JSON reader keeps
#: exactly (RFC 8259, section 6). A saved result is read back as input, and its numbers are computed
#: with (rates, sums, a float's digits): none may be so large that doing so fails or means nothing.
MAX_NUMBER = 2**53 - 1

#: A fraction (accuracy, a pass rate, a standard error, an interval's end), in [0, 1].
_Fraction = Annotated[float, Field(ge=0, le=1)]
#: A count (calls, tokens, fixtures) that cannot be negative.
_Count = Annotated[int, Field(ge=0, le=MAX_NUMBER)]
#: A position counted from 1 (a user turn).
_Ordinal = Annotated[int, Field(ge=1, le=MAX_NUMBER)]
#: Trials of a fixture, or which trial: from 1 to `MAX_TRIALS`, as a run takes them.
_Trials = Annotated[int, Field(ge=1, le=MAX_TRIALS)]
#: USD (see `replio_replay.prices`); absent from the JSON when no price is known, never a made-up 0.
_Usd = Annotated[float, Field(ge=0, le=MAX_NUMBER)]
#: Wall-clock seconds.
_Seconds = Annotated[float, Field(ge=0, le=MAX_NUMBER)]


class TraceCall(_Model):
    """One tool call as the model made it; `arguments` is the raw string if it was not JSON."""

    name: str
    arguments: dict[str, Any] | str
    result: str | None = Field(None, description="What the model was told (capped; see RESULT_CAP).")
    at: _Count | None = Field(None, description="A simulated user's own call: how many messages of the result's "
                              "`conversation` came before it, its place among the agent's turns; absent in `trace`.")


class JudgeVerdict(_Model):
    """The LLM judge's verdict on one rubric item: `yes` or `no` as it answered, or `error` when its
    answer held no one verdict object as asked; `raw` keeps its answer, redacted and capped."""

    rubric: str
    verdict: Literal["yes", "no", "error"]
    reason: str
    passed: bool
    raw: str | None = Field(None, description="The judge's answer as it came (secrets redacted, at most 2000 "
                            "characters); a structured answer given as data, as JSON. Null in older results.")


class StateCheck(_Model):
    """One state check of a fixture's verifier (or of a turn's) and whether it held, as reports show
    it beside the end state; why one failed is among the fixture's `reasons`."""

    check: str = Field(description="`state.KEY` (a `state` key), `state_from_calls` or `results_from_calls`.")
    turn: _Ordinal | None = Field(None, description="The user turn (1-based) whose verifier holds it; null: the "
                                  "fixture's.")
    expected: Any = Field(None, description="What a `state` key must match, as written; null for the others.")
    passed: bool = Field(alias="pass")


class FixtureResult(_Model):
    """One fixture against one provider and model."""

    id: str
    task: str | None = Field(None, description="The fixture's task, the user message (null in older results).")
    group: str | None = Field(None, description="The fixture's group: its error bars are clustered on it.")
    trace: list[TraceCall] = Field(default_factory=list)
    names: list[str] = Field(default_factory=list)
    accuracy: _Fraction | None = None
    passed: bool = Field(False, alias="pass")
    unjudged: bool | None = Field(
        None, description="true: the fixture has no verifier yet (one imported from a trace, `source`), so it "
        "neither passes nor fails: `pass` is false, the verdict reads `unjudged`, and the pass rate, pass^k and "
        "pass@k leave it out. Absent for every other fixture, and for one whose run ended in error.")
    calls: _Count = 0
    redundant: _Count = 0
    errors: _Count = 0
    tokens: _Count = 0
    cost: _Usd | None = Field(None, description="USD its tokens cost (all trials), when a price is known.")
    cost_by_role: dict[str, _Usd] | None = Field(
        None, description="`cost` by who spent it: agent (the model under test), user (a simulated user), judge.")
    cost_unknown: list[str] | None = Field(
        None, description="The roles whose model has a price but an answer of which did not give its prompt and "
                          "completion tokens: what they spent is unknown, so `cost` is left out.")
    status: Status = Status.OK
    error: str | None = None
    reasons: list[str] = Field(default_factory=list, description="Why the verifier failed.")
    answer: str = Field("", description="The model's final text.")
    finish: list[str | None] | None = Field(
        None, description="Each model turn's finish reason, in order, as its provider said it (OpenAI's "
                          "finish_reason, Anthropic's stop_reason, Gemini's finishReason, the Responses API's status "
                          "or incomplete_details.reason, Ollama's done_reason; null for a turn it gave none); "
                          "absent when no turn had one (the mock).")
    state: dict[str, Any] | None = Field(
        None, description="Each environment's end state (absent when the fixture has no environment).")
    state_checks: list[StateCheck] | None = Field(
        None, description="Each state check of the verifiers and whether it held (absent when the fixture has "
                          "none, or its run ended in error or was cancelled).")
    #: The turn (0-based) of each trace call, so parallel calls can be told from sequential ones.
    turns: list[_Count] = Field(default_factory=list, exclude=True)
    request_drift: list[dict[str, Any]] | None = Field(
        None, description="Replayed request bodies vs recorded ones: null when nothing was replayed."
    )
    drift: list[dict[str, Any]] | None = Field(
        None, description="Changes from the approved golden: null when there is no golden yet, or when "
        "the fixture ended in error or was cancelled (not compared)."
    )
    drift_info: list[dict[str, Any]] | None = Field(
        None, description="Changes from the golden that do not fail it (token counts within tokens_tolerance)."
    )
    timing: dict[str, _Seconds] | None = Field(None, description="Volatile wall-clock figures.")
    #: Wall-clock seconds the fixture took (all its trials, once combined); JUnit's `time`.
    seconds: _Seconds = Field(0.0, exclude=True)
    #: Which trial this result is (1-based); the JSON shows it inside `trials`.
    trial: _Trials = Field(1, exclude=True)
    trials: list[TrialResult] | None = Field(None, description="Each trial's outcome, when the run has several.")
    passes: _Count | None = Field(None, description="Trials that passed (c), when the run has several.")
    n: _Trials | None = Field(None, description="Trials run (n), when the run has several.")
    conversation: list[dict[str, Any]] | None = Field(
        None, description="A conversation's messages in order (a fixture with `turns` or a simulated `user`): "
        "{role: user|assistant|tool, content}, an assistant's tool calls as `calls` [{name, arguments}], a "
        "tool result's `name`.")
    tokens_by_role: dict[str, dict[str, _Count]] | None = Field(
        None, description="Role (agent, user) -> {prompt, completion} tokens, when a role beside the agent "
        "sent requests (`tokens` stays the agent's).")
    judge: JudgeVerdict | list[JudgeVerdict] | None = Field(
        None, description="The LLM judge's verdict (a list: one per rubric item), passed or not; null when the "
        "fixture has no judge or its run ended before it was judged.")
    titles: dict[str, str] | None = Field(
        None, description="Tool name -> the name reports show (the tool's `title`), for the tools offered that "
                          "have one; `trace`, `names` and `reasons` keep the tool names.")
    user_trace: list[TraceCall] | None = Field(
        None, description="The calls a simulated user made with its own tools (`user.tools`), apart from the "
                          "agent's `trace`; absent when it made none.")
    synthesized: dict[str, str] | None = Field(
        None, description="What trace its cassette was synthesized from (`import otel`: `from`, `file`, "
        "`trace_id`, `dialect`), when it replayed (or was made) from such a cassette, not a live recording.")
    agent_stderr: str | None = Field(
        None, description="What the user's own agent wrote on standard error (its end, capped, redacted); absent "
                          "when it wrote nothing or replio's loop ran the fixture.")

    @property
    def verdicts(self) -> list[JudgeVerdict]:
        """The judge's verdicts as a list (empty: not judged)."""
        if self.judge is None:
            return []
        return self.judge if isinstance(self.judge, list) else [self.judge]

    @property
    def verdict(self) -> str:
        """`pass` or `FAIL`, or `unjudged` for a fixture with no verifier yet; with repeated trials, the
        trials that passed of those run (`2/3`)."""
        if self.unjudged:
            return "unjudged"
        return f"{self.passes}/{self.n}" if self.trials else "pass" if self.passed else "FAIL"

    def shown(self, name: str) -> str:
        """The name a person reads for tool `name`: its title, when it has one."""
        return (self.titles or {}).get(name, name)

    @property
    def shown_reasons(self) -> list[str]:
        """`reasons` as a person reads them (`shown_text`)."""
        return [self.shown_text(reason) for reason in self.reasons]

    def shown_text(self, text: str) -> str:
        """`text` (a reason, a line of golden drift) as a person reads it: each tool name that has a
        title written as its title."""
        if not self.titles:
            return text
        return _title_pattern(tuple(self.titles)).sub(lambda m: self.shown(m[0]), text)

    @model_validator(mode="after")
    def _passes_of_n(self) -> FixtureResult:
        if (self.passes is None) != (self.n is None):
            raise ValueError("passes and n come together: both or neither")
        if self.passes is not None and self.n is not None and self.passes > self.n:
            raise ValueError(f"passes ({self.passes}) cannot be more than n ({self.n}), the trials run")
        return self


@functools.lru_cache(maxsize=256)
def _title_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    """Any of `names` as a whole tool name: not part of a longer name (letters, digits, `_`, `-`, `.`)."""
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?<![\w.-])(?:{alternatives})(?![\w-]|\.\w)")


class TrialResult(_Model):
    """One trial of a fixture, in brief."""

    trial: _Trials
    status: Status
    passed: bool = Field(alias="pass")
    accuracy: _Fraction | None = None
    calls: _Count = 0
    redundant: _Count = 0
    errors: _Count = 0
    tokens: _Count = 0
    cost: _Usd | None = None
    cost_by_role: dict[str, _Usd] | None = None
    cost_unknown: list[str] | None = None
    error: str | None = None
    drift: list[dict[str, Any]] | None = None
    drift_info: list[dict[str, Any]] | None = None
    request_drift: list[dict[str, Any]] | None = None
    judge: JudgeVerdict | list[JudgeVerdict] | None = None


class Summary(_Model):
    """Suite totals; `accuracy` is the mean over fixtures that declare `expected`."""

    fixtures: _Count = 0
    accuracy: _Fraction | None = None
    pass_rate: _Fraction | None = None
    calls: _Count = 0
    redundant: _Count = 0
    errors: _Count = 0
    tokens: _Count = 0
    cost: _Usd | None = Field(None, description="USD of every fixture with a known price (see `cost`); left "
                              "out when a fixture's cost is unknown (`cost_unknown`), as the rest would understate it.")
    cost_by_role: dict[str, _Usd] | None = None
    cost_unknown: _Count | None = Field(
        None, description="How many fixtures (trials) have a cost that is unknown (their `cost_unknown`).")
    drifted: _Count = 0
    new: _Count = 0
    unjudged: _Count | None = Field(
        None, description="Fixtures with no verifier yet (`unjudged`), left out of the pass rate; absent when none.")
    trials: _Trials | None = Field(None, description="Trials per fixture, when more than one.")
    pass_hat_k: dict[str, _Fraction] | None = Field(
        None, description="k -> mean over fixtures of C(c,k)/C(n,k): the chance all of k trials pass."
    )
    pass_at_k: dict[str, _Fraction] | None = Field(
        None, description="k -> mean over fixtures of 1 - C(n-c,k)/C(n,k): the chance one of k trials passes."
    )
    pass_hat_k_fixtures: dict[str, _Count] | None = Field(
        None, description="k -> how many fixtures ran at least k trials, over which pass^k and pass@k are taken; "
        "present only when the fixtures ran different numbers of trials (merged shards).")
    flaky: list[str] | None = Field(None, description="Fixtures that passed some trials but not all.")
    se: dict[str, _Fraction] | None = Field(
        None, description="metric (`pass_rate`, `accuracy`, `pass^k`) -> its standard error over fixtures.")
    ci95: dict[str, tuple[_Fraction, _Fraction]] | None = Field(None, description="metric -> its 95 % interval.")
    ci_method: dict[str, str] | None = Field(
        None, description="metric -> how its error bar was made: `wilson`, `t` (over fixture means) or `t-clustered`.")


class RunResult(_Model):
    """One provider, model and tool set over the chosen fixtures."""

    provider: str
    model: str
    tools: str = "default"
    tools_hash: str | None = Field(None, description="The tool set's digest (tools, schemas, prompt).")
    fixtures: list[FixtureResult]
    summary: Summary

    @property
    def label(self) -> str:
        """The run's label (`key.label`), saying how many of its fixtures replayed cassettes synthesized
        from traces rather than live recordings."""
        synthesized = sum(1 for f in self.fixtures if f.synthesized)
        if not synthesized:
            return self.key.label
        return f"{self.key.label} ({synthesized} of {len(self.fixtures)} synthesized from traces)"

    @property
    def key(self) -> RunKey:
        """What the run is of: provider, model, tool set (its files' place on disk)."""
        from ..fixtures.layout import RunKey

        return RunKey(self.provider, self.model, self.tools)

    def to_json(self) -> dict[str, Any]:
        """The contract's dict: `pass` spelled as such, `timing` only where it was measured."""
        data = self.model_dump(mode="json", by_alias=True)
        for fx in data["fixtures"]:
            for key in ("timing", "trials", "passes", "n", "drift_info", "titles", "state", "state_checks",
                        "conversation", "finish", "tokens_by_role", "judge", "cost", "cost_by_role", "cost_unknown",
                        "agent_stderr", "user_trace", "group", "unjudged", "synthesized"):
                if fx.get(key) is None:
                    fx.pop(key, None)
            for call in [*fx["trace"], *(fx.get("user_trace") or ())]:
                if call.get("at", ...) is None:
                    call.pop("at")
            for verdict in fx["judge"] if isinstance(fx.get("judge"), list) else [fx.get("judge") or {}]:
                if verdict.get("raw", ...) is None:
                    verdict.pop("raw")
            for trial in fx.get("trials", ()):
                for key in ("drift_info", "judge", "cost", "cost_by_role", "cost_unknown"):
                    if trial.get(key) is None:
                        trial.pop(key)
        for key in ("trials", "pass_hat_k", "pass_at_k", "pass_hat_k_fixtures", "flaky", "cost", "cost_by_role",
                    "cost_unknown", "unjudged"):
            if data["summary"].get(key) is None:
                data["summary"].pop(key, None)
        return data


class SavedProblem(_Model):
    """A fixture file that could not be loaded, as a saved result lists it."""

    file: str
    message: str


class SavedRuns(_Model):
    """A saved result read back: what `run --output json` and `--output-file` write."""

    runs: list[RunResult]
    problems: list[SavedProblem] = Field(default_factory=list)


_building = threading.Lock()


def build_result_models() -> None:
    """Build the models a run's results are made of, once, under a lock; every maker of a result
    calls this first (it returns at once when they are built).

    Pydantic builds a deferred model on its first use, and that build is not thread-safe
    (pydantic#13419, fixed upstream by a lock in `model_rebuild` after 2.13.4): fixtures ending at
    once on several threads (`--jobs`) each built `FixtureResult`, at the same time.
    """
    with _building:
        for model in (TraceCall, JudgeVerdict, StateCheck, FixtureResult, Summary, RunResult):
            if not model.__pydantic_complete__:
                model.model_rebuild()


def saved_runs(data: Any) -> SavedRuns:
    """`data` as saved runs: one run (`{provider, model, ..., problems}`) or compared ones
    (`{"runs": [...], "problems": [...]}`); pydantic's ValidationError when it is neither."""
    if isinstance(data, dict) and "runs" not in data:
        return SavedRuns(runs=[RunResult.model_validate(data)], problems=data.get("problems", []))
    return SavedRuns.model_validate(data)
