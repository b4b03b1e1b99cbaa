"""A suite run: cases × one provider, each in its own worktree, concurrently, in stable order.

Recording plugs in through a `SessionFactory` (`recording.base`): per fixture it yields the
HTTP transport the provider and the tools send through, and extra result keys (request
drift) afterwards. Scoring the transcript is `scoring`'s, asking an LLM judge `judging`'s; this
module owns the concurrency.
"""

from __future__ import annotations

import contextlib
import dataclasses
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from .._runtime.deadline import Interrupted
from .._runtime.env import Env
from .._runtime.redact import NO_SECRETS, Redactor, shown_url
from .._runtime.workers import Workers
from ..agents.decl import AgentSpec
from ..errors import ReplioError, ToolSetError, UserCodeError
from ..fixtures.cases import Case
from ..fixtures.layout import RunKey
from ..judge.metrics import summarize
from ..judge.results import FixtureResult, RunResult, Status
from ..judge.turns import TurnReference
from ..plan.offer import name_problems
from ..prices import Price, Prices, price_for
from ..providers.base import Exchange, Provider, Usage
from ..recording.base import FixtureSession, SessionFactory, live_session, unwatched
from ..recording.modes import RecordMode, record_flags
from ..tools.base import DEFAULT_TOOL_TIMEOUT, Tool, ToolContext
from ..tools.child import Child
from ..tools.environment import build, play, reference_states, states
from ..tools.permissions import Category, Permissions
from ..tools.resolve import with_mcp_tools
from ..tools.sandbox import Sandbox
from ..tools.toolbox import Toolbox
from ..tools.toolset import ToolSet
from .budget import Budget, Meter
from .engine import Limits, Steps, Transcript, history_messages, run_loop
from .judging import ask_judge
from .scoring import cancelled_result, judge_transcript
from .sending import sender
from .simulator import Simulator, speaker
from .worktree import NO_WORKTREE, Removals, remove_active_worktrees, snapshot, worktree

__all__ = ["GRACE", "InterruptedRun", "Observer", "RunOptions", "run_fixture", "run_suite"]


class Observer(Protocol):
    """Follows runs as they go (a progress display): told when each fixture starts and ends."""

    def started(self, label: str) -> None:
        """A fixture of the run `label` began."""

    def finished(self, label: str, result: FixtureResult) -> None:
        """A fixture of the run `label` ended with `result`."""


@dataclass
class RunOptions:
    """How to run a suite."""

    limits: Limits = Limits()
    jobs: int = 1
    session: SessionFactory = live_session
    timing: bool = False
    on_start: Callable[[Case], None] | None = None  # a fixture begins (in its worker thread)
    on_result: Callable[[FixtureResult], None] | None = None  # a fixture ended (in the run's thread)
    tool_timeout: float = DEFAULT_TOOL_TIMEOUT
    web_allow: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=lambda: Env.current().values)  # what MCP servers' `from_env` read
    project: Path | None = None  # what `{project}` stands for in an MCP server's command
    hurry: threading.Event = field(default_factory=threading.Event)  # set: the grace ends now
    redactor: Redactor = NO_SECRETS  # the secrets nothing cut short during the run may show a part of
    #: Simulated users' and judges' providers by their spec, or why one could not be made.
    role_providers: Mapping[str, Provider | str] = field(default_factory=dict)
    judge: str | None = None  # the config's judge provider spec: judges naming none use it
    prices: Prices = field(default_factory=dict)  # `PROVIDER:MODEL` -> price: a fixture's `cost`
    budget: Budget | None = None  # --max-cost: what live answers cost is charged to it (`Meter`)
    #: The fixtures in flight across every suite of one run (`--jobs` bounds the whole run, not
    #: each tool set or provider); None: `jobs` at a time for this suite alone.
    slots: threading.Semaphore | None = None

    def observed(self, observer: Observer | None, label: str) -> RunOptions:
        """These options, reporting each fixture's start and end to `observer` as the run `label`;
        the results it sees are redacted (a progress line quotes a fixture's error)."""
        if observer is None:
            return self
        return dataclasses.replace(self, on_start=lambda case: observer.started(label),
                                   on_result=lambda result: observer.finished(label, self.redactor.model(result)))


def run_fixture(
    case: Case, provider: Provider, options: RunOptions, cancel: threading.Event | None = None,
    *, remove: Callable[[Path], None] | None = None,
) -> FixtureResult:
    """One fixture, start to end; every failure becomes this fixture's `error`, never an exception.

    Its worktree, when it gets one (`_worktree_seen`), is removed before it returns, or handed to
    `remove` (see `worktree`).
    """
    started = time.perf_counter()
    fixture = case.fixture
    permissions = Permissions.for_fixture(fixture.tool_permission, fixture.tools_deny)
    # A fixture bounded by its steps (τ²'s) has as many calls as steps allow, not the run's fewer.
    max_calls = max(options.limits.max_calls, fixture.max_steps or 0)
    limits = Limits(fixture.max_turns or options.limits.max_turns, max_calls, single_response=fixture.single_response,
                    max_steps=fixture.max_steps, max_tool_errors=fixture.max_tool_errors)
    settings = {
        "provider": provider.settings.name,
        "model": provider.model,
        "base_url": provider.settings.base_url and shown_url(provider.settings.base_url),
        "tools": case.toolset.name,
        **permissions.to_json(),
    }
    timeout = min(options.tool_timeout, fixture.tool_timeout or options.tool_timeout)
    ctx_limits = {
        "timeout": timeout,
        "cancel": cancel,
        "network": permissions.allows("web_fetch", Category.WEB),
        "web_allow": options.web_allow,
    }
    meter = _meter(case, options)
    try:
        session = options.session(case, provider, cancel, unwatched if meter is None else meter.watch)
        seen = _worktree_seen(case, session.mcp_modes(case.offered.mcp_servers))
        other = _another_agent(case, session)
        with worktree(fixture, settings, remove) if seen and other is None \
                else contextlib.nullcontext(NO_WORKTREE) as root:
            if other is not None:
                transcript = Transcript(status=Status.ERROR, error=other)
            elif case.offered.agent is not None:
                transcript = _agent_transcript(case, case.offered.agent, provider, session, options, root, cancel,
                                               permissions, ctx_limits)
            else:
                transcript = _loop_transcript(case, provider, session, options, root, cancel, limits, permissions,
                                              ctx_limits)
        if cancel is None or not cancel.is_set():
            ask_judge(case, transcript, provider, session, options.role_providers, options.judge, options.redactor)
        if cancel is not None and cancel.is_set():  # in flight when interrupted: nothing is written
            transcript.status, transcript.error = Status.CANCELLED, "the run was interrupted"
        elif meter is not None and meter.refused is not None:  # stopped by --max-cost: nothing is written
            transcript.status, transcript.error = Status.CANCELLED, meter.refused
            transcript.uncounted |= meter.uncounted
        try:
            session.finish(transcript.status)
        except ReplioError as exc:
            transcript.status, transcript.error = Status.ERROR, str(exc)
        spoken_by = {"agent": (provider.settings.name, provider.model), **transcript.spoken_by}
        prices = {role: price for role, (name, model) in spoken_by.items()
                  if (price := _price(case, options, name, model)) is not None}
        result = judge_transcript(fixture, transcript, session.extras, options.redactor, prices)
    except Interrupted:  # while its environments were built, their states read or reference calls made
        result = judge_transcript(fixture, Transcript(status=Status.CANCELLED, error="the run was interrupted"),
                                  redactor=options.redactor)
    except ReplioError as exc:
        result = judge_transcript(fixture, Transcript(status=Status.ERROR, error=str(exc)), redactor=options.redactor)
    except Exception as exc:  # a harness bug ends this fixture, never the suite
        error = f"internal error: {type(exc).__name__}: {exc}"
        result = judge_transcript(fixture, Transcript(status=Status.ERROR, error=error), redactor=options.redactor)
    if case.trial != 1:
        result = result.model_copy(update={"trial": case.trial})
    if case.offered.titles:
        result = result.model_copy(update={"titles": case.offered.titles})
    seconds = round(time.perf_counter() - started, 4)
    result = result.model_copy(update={"seconds": seconds})
    if options.timing:
        result = result.model_copy(update={"timing": {"seconds": seconds}})
    return result


def _price(case: Case, options: RunOptions, provider: str, model: str) -> Price | None:
    """The price of `provider:model` in `case`'s tool set, else the run's table."""
    return price_for(provider, model, case.toolset.prices, options.prices)


def _meter(case: Case, options: RunOptions) -> Meter | None:
    """Under --max-cost, what charges the answers `case` gets from providers now (`budget.Meter`)."""
    if options.budget is None:
        return None
    return Meter(options.budget, case.id, lambda p: _price(case, options, p.settings.name, p.model))


def _loop_transcript(case: Case, provider: Provider, session: FixtureSession, options: RunOptions, root: Path,
                     cancel: threading.Event | None, limits: Limits, permissions: Permissions,
                     ctx_limits: dict[str, Any]) -> Transcript:
    """The fixture's conversation through replio's own loop, over the tools it is offered."""
    fixture = case.fixture
    timeout = ctx_limits["timeout"]
    child = _child(case, root, ctx_limits)
    try:
        build(case.offered.environments, child, timeout)
        ctx = ToolContext(Sandbox(root), session.transport, child=child, **ctx_limits)  # type: ignore[arg-type]
        mcp = session.mcp_tools(case.offered.mcp_servers, root=root, env=options.env,
                                project=options.project) if case.offered.mcp_servers else None
        try:
            offered = case.offered if mcp is None else _with_mcp(case, mcp.open())
            session.offered = offered
            toolbox = Toolbox(ctx, permissions, offered)
            user_box = Toolbox(ctx, permissions, offered.for_user()) if offered.user_tools else None
            generate = sender(case, provider, Exchange(fixture.id, session.transport, options.redactor))
            steps = Steps.of(limits)
            try:
                user = speaker(case, provider, session, options.role_providers, options.redactor, user_box, steps)
                transcript = run_loop(user, generate, toolbox, limits=limits, cancel=cancel,
                                      offered_from=fixture.offered_from, turn_states=_turn_states(case),
                                      history=history_messages(fixture.history), steps=steps)
                _count_user(transcript, user)
            finally:
                toolbox.close()
        finally:
            if mcp is not None:  # its servers end with the fixture, whatever happened
                mcp.close(interrupted=cancel is not None and cancel.is_set())
        if case.offered.environments:
            transcript.state, transcript.reference_state, transcript.reference_results = _states(case, child, ctx)
            if transcript.state is not None:
                transcript.turn_references = _turn_references(case, child.view("turns"), timeout)
    finally:
        child.close()  # it ends with the fixture, and all it started
    if fixture.verifier is not None and fixture.verifier.files:  # before the worktree goes
        transcript.files = snapshot(ctx.sandbox, fixture.verifier.files)
    return transcript


def _another_agent(case: Case, session: FixtureSession) -> str | None:
    """Why `case` cannot replay its cassette: it was recorded with another agent than the one that
    would run now (or with replio's own loop, or that with an agent), whose requests its answers
    were not made for; None when they are the same, or nothing replays."""
    recorded = session.recorded_agent()
    agent = case.offered.agent
    if recorded is None or recorded[0] == (agent.shown if agent is not None else None):
        return None
    made = f"the agent {recorded[0]!r}" if recorded[0] is not None else "replio's own loop (no agent)"
    now = f"the agent {agent.shown!r}" if agent is not None else "replio's own loop"
    fix = ("replay it with that agent (--agent, or the \"agent\" the project declares)" if recorded[0] is not None
           else "replay it without an agent")
    again = record_flags(RecordMode.ALL, case.fixture.id, case.toolset.name)
    return (f"fixture {case.fixture.id!r}: its cassette was recorded with {made}, and this replay would run "
            f"{now}, which the recorded answers were not made for; {fix}, or re-record it with {again}")


def _agent_transcript(case: Case, agent: AgentSpec, provider: Provider, session: FixtureSession,
                      options: RunOptions, root: Path, cancel: threading.Event | None, permissions: Permissions,
                      ctx_limits: dict[str, Any]) -> Transcript:
    """The fixture's conversation through the user's own agent (`run.agent`); what it wrote on
    standard error goes into the result. The set's environments are built for a simulated user's
    own tools (`user.tools`), whose state is judged as usual; the agent's tools are its own, and the
    fixture's are served to it through the relay (`agents.tools`), for an agent that calls them."""
    fixture = case.fixture
    if fixture.history:
        return Transcript(status=Status.ERROR, error=f"fixture {fixture.id!r}: its history cannot be given to your "
                          "own agent, which keeps its conversation itself; run it without --agent, or leave history out")
    # the relay and the agent's process are imported by the runs that have an agent, not by every replay
    from ..providers.relay import Relay
    from .agent import run_agent

    child = _child(case, root, ctx_limits)
    try:
        build(case.offered.environments, child, ctx_limits["timeout"])
        ctx = ToolContext(Sandbox(root), session.transport, child=child, **ctx_limits)  # type: ignore[arg-type]
        user_box = Toolbox(ctx, permissions, case.offered.for_user())
        relay = Relay(provider, session.transport, redactor=options.redactor,
                      tools=Toolbox(ctx, permissions, case.offered))  # closed with the user's: one context
        try:
            user = speaker(case, provider, session, options.role_providers, options.redactor,
                           user_box if case.offered.user_tools else None)
            ran = run_agent(agent, user, relay, root=root, redactor=options.redactor, cancel=cancel)
        finally:
            user_box.close()
        transcript = ran.transcript
        if not ran.complete:
            session.discard()
        changed = session.request_changes()
        if transcript.status is Status.ERROR and changed:  # why a replay ran out of recorded answers, most likely
            transcript.error = f"{transcript.error} (the agent's requests changed since the recording: {'; '.join(changed[:3])})"
        _count_user(transcript, user)
        session.extras["agent_stderr"] = ran.stderr or None
        if case.offered.environments:
            transcript.state, transcript.reference_state, transcript.reference_results = _states(case, child, ctx)
    finally:
        child.close()
    if fixture.verifier is not None and fixture.verifier.files:
        transcript.files = snapshot(ctx.sandbox, fixture.verifier.files)
    return transcript


def _child(case: Case, root: Path, ctx_limits: dict[str, Any]) -> Child:
    """The fixture's child process for its environments and Python tools (forked on first use)."""
    return case.offered.python.child(root, ctx_limits["timeout"], cancel=ctx_limits["cancel"],
                                     network=ctx_limits["network"], web_allow=ctx_limits["web_allow"])


def _count_user(transcript: Transcript, user: object) -> None:
    """A simulated user's tokens, who spoke as it, and the calls it made with its own tools."""
    if isinstance(user, Simulator):
        transcript.user_records = user.records
        for usage in user.usage or [Usage(0, 0)]:  # a user that never answered spent nothing
            transcript.count("user", usage)
        if user.provider is not None:
            transcript.spoken_by["user"] = (user.provider.settings.name, user.provider.model)


def _worktree_seen(case: Case, mcp_modes: Mapping[str, str]) -> bool:
    """Whether anything in the fixture can look at a worktree, so it needs one: the user's agent
    (it runs in it), an offered tool
    that works on files or runs a program (`Tool.touches_worktree`: a built-in, a command, a
    Python tool taking the `ToolContext`) in a fixture that runs its calls (not
    `single_response`), an MCP server started on it (live, or to compare), or a `files` check
    (read back before the worktree goes).

    Where nothing can (stubs, Python tools without the context, MCP tools replayed from the
    cassette, a single response's calls: every BFCL fixture), the fixture gets no worktree
    (`NO_WORKTREE`): none of its files, `.replio/config.json` or `"git"` repository is written
    and removed, which would cost a replayed fixture more than its replay, for nothing to see.
    """
    fixture = case.fixture
    return (case.offered.agent is not None
            or (not fixture.single_response and any(tool.touches_worktree for tool in case.offered.tools))
            or any(mode != "replay" for mode in mcp_modes.values())
            or bool(fixture.verifier is not None and fixture.verifier.files))


def _states(case: Case, child: Child,
            ctx: ToolContext) -> tuple[dict[str, Any] | None, dict[str, Any] | str | None, list[str] | None]:
    """The environments' end states, and the states and results the verifier's `state_from_calls`
    reach (None: it has none); all None when the child was stopped (its state is not judged)."""
    state = states(case.offered.environments, child, ctx.timeout)
    verifier = case.fixture.verifier
    if state is None or verifier is None or verifier.state_from_calls is None:
        return state, None, None
    calls = [(c.name, c.arguments) for c in verifier.state_from_calls]
    return (state, *reference_states(case.offered.environments, calls, ctx.timeout, child.view("reference")))


def _turn_states(case: Case) -> bool:
    """Whether a turn's verifier reads the environments' state, so each turn's end keeps it."""
    return bool(case.offered.environments) and any(
        t.verifier is not None and (t.verifier.state or t.verifier.state_from_calls is not None)
        for t in case.fixture.scripted_turns)


def _turn_references(case: Case, child: Child, timeout: float) -> dict[int, TurnReference]:
    """Per turn whose verifier has `state_from_calls`: the state and results its calls reach, each
    turn's calls made after the earlier turns' on the same fresh environments (built in `child`, a
    view apart from the fixture's own instances)."""
    turns = {n: t.verifier.state_from_calls for n, t in enumerate(case.fixture.scripted_turns, 1)
             if t.verifier is not None and t.verifier.state_from_calls is not None}
    if not turns:
        return {}
    environments = case.offered.environments
    try:
        build(environments, child, timeout)
    except (ToolSetError, UserCodeError) as exc:
        return {n: TurnReference(str(exc)) for n in turns}
    out: dict[int, TurnReference] = {}
    failed: int | None = None
    for n, calls in turns.items():
        if failed is not None:
            out[n] = TurnReference(f"state_from_calls: turn {failed}'s reference calls could not be made")
            continue
        results = play(environments, child, [(c.name, c.arguments) for c in calls], timeout)
        if isinstance(results, str):
            out[n], failed = TurnReference(results), n
            continue
        try:
            state = states(environments, child, timeout)
        except (ToolSetError, UserCodeError) as exc:
            out[n], failed = TurnReference(str(exc)), n
            continue
        assert state is not None  # a stopped child: `play` or `states` said so
        out[n] = TurnReference(state, results)
    return out


def _with_mcp(case: Case, tools: list[Tool]) -> ToolSet:
    """The fixture's offered tools with its MCP servers' (ToolSetError when a name clashes or is missing)."""
    offered = with_mcp_tools(case.offered, tools)
    problems = name_problems(case.fixture, offered)
    if problems:
        raise ToolSetError(f"fixture {case.id!r}: {'; '.join(problems)}")
    return offered


def run_suite(
    cases: Sequence[Case],
    provider: Provider,
    toolset: ToolSet,
    options: RunOptions,
    cancel: threading.Event | None = None,
) -> RunResult:
    """Run `cases` (resolved from `toolset`) against `provider`, `options.jobs` at a time (and no more
    than `options.slots` allows with the other suites of the run), reported in order.

    When `cancel` is set (by another thread), or on KeyboardInterrupt in this one, no new
    fixture starts, those in flight get `GRACE` seconds to end as `cancelled` (a second
    KeyboardInterrupt stops the wait), and whatever has not ended by then is reported
    `cancelled` and abandoned: workers are daemon threads, so nothing holds the process's exit.
    KeyboardInterrupt then raises `InterruptedRun` carrying the partial result.
    """
    cancel = cancel or threading.Event()
    results: dict[int, FixtureResult] = {}
    todo: queue.SimpleQueue[int] = queue.SimpleQueue()
    done: queue.SimpleQueue[tuple[int, FixtureResult]] = queue.SimpleQueue()
    for i in range(len(cases)):
        todo.put(i)
    removals = Removals(options.jobs)  # worktrees are removed behind the run, not between its fixtures
    label = RunKey(provider.settings.name, provider.model, toolset.name).label
    budget = options.budget

    slots = options.slots or threading.Semaphore(options.jobs)

    def work() -> None:
        while not cancel.is_set():
            if not slots.acquire(timeout=_SLOT_POLL):
                continue
            try:
                try:
                    i = todo.get_nowait()
                except queue.Empty:
                    return
                one(i)
            finally:
                slots.release()

    def one(i: int) -> None:
        case = cases[i]
        if budget is not None and budget.stops(label, case.id, case.trial):
            done.put((i, cancelled_result(case.fixture, case.trial, budget.reason())))
            return
        if options.on_start is not None:
            options.on_start(case)
        done.put((i, run_fixture(case, provider, options, cancel, remove=removals)))

    workers = Workers([("replio-worker", work)] * max(1, min(options.jobs, len(cases))))

    def collect(timeout: float) -> None:
        with contextlib.suppress(queue.Empty):
            i, result = done.get(timeout=timeout)
            results[i] = result
            if options.on_result is not None:
                options.on_result(result)

    def finished(timeout: float) -> bool:  # every result is in and its worktree removed, or cancelled
        if len(results) < len(cases) and not cancel.is_set():
            collect(timeout)
            return False
        removals.wait()
        return True

    def ended(timeout: float) -> bool:  # every result is in, or no worker is left to send one
        if len(results) == len(cases) or (not workers.alive() and done.empty()):
            return True
        collect(timeout)
        return False

    interrupted = workers.wait(finished, cancel)
    if cancel.is_set():
        workers.grace(ended, GRACE, options.hurry)
        remove_active_worktrees()  # of fixtures abandoned after the grace
    ordered = [results.get(i) or cancelled_result(case.fixture, case.trial) for i, case in enumerate(cases)]
    run = RunResult(provider=provider.settings.name, model=provider.model, tools=toolset.name,
                    tools_hash=toolset.digest, fixtures=ordered, summary=summarize(ordered))
    if interrupted:
        raise InterruptedRun(run)
    return run


#: Seconds fixtures in flight get to end after an interrupt, before they are abandoned.
GRACE = 1.5

#: Seconds a worker waits for a free slot before it looks again whether the run was cancelled.
_SLOT_POLL = 0.1


class InterruptedRun(KeyboardInterrupt):
    """Ctrl-C during a run; carries the partial result so it can still be reported."""

    def __init__(self, run: RunResult) -> None:
        super().__init__("the run was interrupted")
        self.run = run
