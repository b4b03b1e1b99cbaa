"""A suite run: cases × one provider, each in its own worktree, concurrently, in stable order.

Recording plugs in through a `SessionFactory` (`recording.base`): per fixture it yields the
HTTP transport the provider and the tools send through, and extra result keys (request
drift) afterwards. Judging the transcript is `judging`'s; this module owns the concurrency.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

from .cases import Case
from .engine import Limits, Transcript, run_loop
from .errors import ReplioError
from .judging import cancelled_result, judge_transcript
from .metrics import summarize
from .providers.base import ChatRequest, ChatResponse, Exchange, Provider
from .recording.base import SessionFactory, live_session
from .results import FixtureResult, RunResult, Status
from .tools.base import ToolContext
from .tools.permissions import Permissions
from .tools.sandbox import Sandbox
from .tools.toolbox import Toolbox
from .tools.toolset import ToolSet
from .worktree import worktree

__all__ = ["InterruptedRun", "RunOptions", "run_fixture", "run_suite"]


@dataclass
class RunOptions:
    """How to run a suite."""

    limits: Limits = Limits()
    jobs: int = 1
    session: SessionFactory = live_session
    timing: bool = False
    on_result: Callable[[FixtureResult], None] | None = None


def run_fixture(
    case: Case, provider: Provider, options: RunOptions, cancel: threading.Event | None = None
) -> FixtureResult:
    """One fixture, start to end; every failure becomes this fixture's `error`, never an exception."""
    started = time.perf_counter()
    fixture = case.fixture
    permissions = Permissions.for_fixture(fixture.tool_permission, fixture.tools_deny)
    limits = Limits(fixture.max_turns or options.limits.max_turns, options.limits.max_calls)
    settings = {
        "provider": provider.settings.name,
        "model": provider.model,
        "base_url": provider.settings.base_url,
        "tools": case.toolset.name,
        **permissions.to_json(),
    }
    try:
        session = options.session(case, provider)
        with worktree(fixture, settings) as root:
            toolbox = Toolbox(ToolContext(Sandbox(root), session.transport), permissions, case.offered)
            exchange = Exchange(fixture.id, session.transport)

            def generate(request: ChatRequest) -> ChatResponse:
                return provider.generate(request, exchange)

            try:
                transcript = run_loop(fixture.task, generate, toolbox, limits=limits, cancel=cancel)
            finally:
                toolbox.close()
        try:
            session.finish(transcript.status)
        except ReplioError as exc:
            transcript.status, transcript.error = Status.ERROR, str(exc)
        result = judge_transcript(fixture, transcript, session.extras)
    except ReplioError as exc:
        result = judge_transcript(fixture, Transcript(status=Status.ERROR, error=str(exc)))
    except Exception as exc:  # a harness bug ends this fixture, never the suite
        error = f"internal error: {type(exc).__name__}: {exc}"
        result = judge_transcript(fixture, Transcript(status=Status.ERROR, error=error))
    if options.timing:
        result = result.model_copy(update={"timing": {"seconds": round(time.perf_counter() - started, 4)}})
    return result


def run_suite(
    cases: Sequence[Case],
    provider: Provider,
    toolset: ToolSet,
    options: RunOptions,
    cancel: threading.Event | None = None,
) -> RunResult:
    """Run `cases` (resolved from `toolset`) against `provider`, `options.jobs` at a time, in order.

    When `cancel` is set (by another thread), or on KeyboardInterrupt in this one, fixtures
    in flight end as `cancelled` and those not started are reported as `cancelled` too;
    KeyboardInterrupt then raises `InterruptedRun` carrying the partial result.
    """
    cancel = cancel or threading.Event()
    results: dict[int, FixtureResult] = {}
    interrupted = False
    finished: queue.SimpleQueue[Future[FixtureResult]] = queue.SimpleQueue()
    pool = ThreadPoolExecutor(max_workers=max(1, options.jobs), thread_name_prefix="replio")
    futures: dict[Future[FixtureResult], int] = {}
    for i, case in enumerate(cases):
        fut = pool.submit(run_fixture, case, provider, options, cancel)
        futures[fut] = i
        fut.add_done_callback(finished.put)
    pending = set(futures)

    def collect(fut: Future[FixtureResult]) -> None:
        pending.discard(fut)
        if fut.cancelled():
            return
        results[futures[fut]] = fut.result()
        if options.on_result is not None:
            options.on_result(results[futures[fut]])

    try:
        while pending:
            if cancel.is_set():
                for fut in list(pending):
                    fut.cancel()
            try:
                collect(finished.get(timeout=0.1))
            except queue.Empty:
                continue
    except KeyboardInterrupt:
        interrupted = True
        cancel.set()
        for fut in list(pending):
            fut.cancel()
        for fut in wait(pending).done:
            collect(fut)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    ordered = [results.get(i) or cancelled_result(case.fixture) for i, case in enumerate(cases)]
    run = RunResult(provider=provider.settings.name, model=provider.model, tools=toolset.name,
                    tools_hash=toolset.digest, fixtures=ordered, summary=summarize(ordered))
    if interrupted:
        raise InterruptedRun(run)
    return run


class InterruptedRun(KeyboardInterrupt):
    """Ctrl-C during a run; carries the partial result so it can still be reported."""

    def __init__(self, run: RunResult) -> None:
        super().__init__("the run was interrupted")
        self.run = run
