"""A suite run: fixtures × one provider, each in its own worktree, concurrently, in stable order.

Recording plugs in through `SessionFactory`: per fixture it yields the HTTP transport the
provider and `web_fetch` send through, and extra result keys (request drift) afterwards.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .engine import Limits, Transcript, run_loop
from .errors import ReplioError
from .fixtures.model import Fixture
from .metrics import accuracy, redundant, summarize
from .providers.base import ChatRequest, ChatResponse, Exchange, Provider
from .results import FixtureResult, RunResult, Status, TraceCall
from .tools.base import ToolContext
from .tools.permissions import Permissions
from .tools.registry import Toolbox, tool_schemas
from .tools.sandbox import Sandbox
from .verifier import verify
from .worktree import worktree

if TYPE_CHECKING:
    import httpx

__all__ = ["FixtureSession", "RunOptions", "SessionFactory", "run_fixture", "run_suite"]


class FixtureSession:
    """One fixture's HTTP: the transport to send through, and result keys it adds when done.

    The plain session sends straight through the provider's shared, pooled transport;
    recording subclasses it (see `replio_replay.recording.session`).
    """

    def __init__(self, transport: httpx.BaseTransport | None) -> None:
        self.transport = transport
        self.extras: dict[str, Any] = {}

    def finish(self, status: Status) -> None:
        """Called once the loop ended; may raise ReplioError to turn the fixture into an error."""


SessionFactory = Callable[[Fixture, Provider], FixtureSession]


def live_session(fixture: Fixture, provider: Provider) -> FixtureSession:
    """No recording: send straight through the provider's shared, pooled transport."""
    return FixtureSession(provider.transport())


@dataclass
class RunOptions:
    """How to run a suite."""

    limits: Limits = Limits()
    jobs: int = 1
    session: SessionFactory = live_session
    timing: bool = False
    on_result: Callable[[FixtureResult], None] | None = None


def run_fixture(
    fixture: Fixture, provider: Provider, options: RunOptions, cancel: threading.Event | None = None
) -> FixtureResult:
    """One fixture, start to end; every failure becomes this fixture's `error`, never an exception."""
    started = time.perf_counter()
    permissions = Permissions.for_fixture(fixture.tool_permission, fixture.tools_deny)
    limits = Limits(fixture.max_turns or options.limits.max_turns, options.limits.max_calls)
    settings = {
        "provider": provider.settings.name,
        "model": provider.model,
        "base_url": provider.settings.base_url,
        **permissions.to_json(),
    }
    try:
        session = options.session(fixture, provider)
        with worktree(fixture, settings) as root:
            ctx = ToolContext(Sandbox(root), session.transport)
            exchange = Exchange(fixture.id, session.transport)

            def generate(request: ChatRequest) -> ChatResponse:
                return provider.generate(request, exchange)

            transcript = run_loop(
                fixture.task, generate, Toolbox(ctx, permissions), tool_schemas(),
                limits=limits, cancel=cancel,
            )
        try:
            session.finish(transcript.status)
        except ReplioError as exc:
            transcript.status, transcript.error = Status.ERROR, str(exc)
        result = build_result(fixture, transcript, session.extras)
    except ReplioError as exc:
        result = build_result(fixture, Transcript(status=Status.ERROR, error=str(exc)))
    except Exception as exc:  # a harness bug ends this fixture, never the suite
        error = f"internal error: {type(exc).__name__}: {exc}"
        result = build_result(fixture, Transcript(status=Status.ERROR, error=error))
    if options.timing:
        result = result.model_copy(update={"timing": {"seconds": round(time.perf_counter() - started, 4)}})
    return result


def build_result(fixture: Fixture, t: Transcript, extras: dict[str, Any] | None = None) -> FixtureResult:
    """A transcript judged: trace, metrics and the verifier's verdict."""
    trace = [TraceCall(name=r.call.name, arguments=r.call.arguments) for r in t.records]
    names = [c.name for c in trace]
    passed, reasons = verify(fixture, trace)
    if t.status in (Status.ERROR, Status.CANCELLED):
        passed, reasons = False, [f"the run ended in {t.status.value}"]
    extra = {k: v for k, v in (extras or {}).items() if k in FixtureResult.model_fields}
    return FixtureResult(
        id=fixture.id,
        trace=trace,
        names=names,
        accuracy=accuracy(names, fixture.expected),
        passed=passed,
        calls=len(trace),
        redundant=redundant([(c.name, c.arguments) for c in trace]),
        errors=sum(r.is_error for r in t.records) + (t.status is Status.ERROR),
        tokens=t.tokens,
        status=t.status,
        error=t.error,
        reasons=reasons,
        answer=t.answer,
        turns=[r.turn for r in t.records],
        **extra,
    )


def _cancelled(fixture: Fixture) -> FixtureResult:
    return FixtureResult(
        id=fixture.id, status=Status.CANCELLED, error="not run: the run was interrupted",
        reasons=["the run ended in cancelled"],
    )


def run_suite(
    fixtures: Sequence[Fixture], provider: Provider, options: RunOptions, cancel: threading.Event | None = None
) -> RunResult:
    """Run `fixtures` against `provider`, `options.jobs` at a time, results in the given order.

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
    for i, fx in enumerate(fixtures):
        fut = pool.submit(run_fixture, fx, provider, options, cancel)
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
    ordered = [results.get(i) or _cancelled(fx) for i, fx in enumerate(fixtures)]
    run = RunResult(provider=provider.settings.name, model=provider.model, fixtures=ordered,
                    summary=summarize(ordered))
    if interrupted:
        raise InterruptedRun(run)
    return run


class InterruptedRun(KeyboardInterrupt):
    """Ctrl-C during a run; carries the partial result so it can still be reported."""

    def __init__(self, run: RunResult) -> None:
        super().__init__("the run was interrupted")
        self.run = run
