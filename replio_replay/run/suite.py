"""Run composition, the one way a run is put together, for the CLI, the pytest plugin and Python alike.

`prepare` resolves everything before anything runs (settings, the fixtures selected, providers,
tool sets, each fixture's case), so a bad flag or file fails fast; `execute` runs every provider
× tool set of the plan (or a part of it), attaches golden drift and approves when asked. The CLI
also has `announce` say what a run will do, and `remember` record what failed for `--last-failed`.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pluggy

from .._runtime.notices import first_time
from .._runtime.problems import Problem
from .._runtime.redact import MIN_SECRET, Redactor, placeholder_names
from .._runtime.wording import did_you_mean, plural
from .._runtime.workers import Workers
from ..agents.decl import agent_from_flag
from ..errors import ReplioError, ToolSetError, UnknownProviderError, UsageError
from ..fixtures.cases import Case
from ..fixtures.discovery import Found, choose, discover
from ..fixtures.layout import CASSETTE, RunKey, recorded_providers
from ..fixtures.plugins import BUILTIN_CATALOG, choose_plugins, plugin_manager
from ..fixtures.sources import LOCAL
from ..golden.review import Approval, approve, attach_drift
from ..golden.store import GoldenStore
from ..judge.metrics import combine_trials, summarize
from ..judge.results import RunResult
from ..plan import lastfailed
from ..plan.offer import name_problems, offered_to
from ..plan.settings import Flags, Settings, resolve_settings
from ..prices import Price, cost, dollars, price_for, price_table
from ..providers.base import Provider
from ..providers.http import HTTPProvider
from ..providers.registry import create_provider
from ..recording.modes import RecordMode
from ..recording.roles import AGENT, JUDGE
from ..recording.staleness import case_mode
from ..report.gate import Verdict, failure_line, judge
from ..tools.mcp.config import HttpServer, secret_names
from ..tools.sources import load_toolsets
from ..tools.toolset import ToolSet
from .budget import Budget, estimate, role_name
from .engine import Limits
from .runner import GRACE, InterruptedRun, Observer, RunOptions, run_suite
from .scoring import cancelled_result
from .simulator import USER
from .worktree import reap_stale_worktrees

if TYPE_CHECKING:
    from ..judge.baseline import Checked
    from ..plan.shards import Shard

__all__ = ["Outcome", "Plan", "PlannedRun", "RunRequest", "announce", "execute", "prepare", "remember"]


@dataclass(frozen=True)
class RunRequest:
    """What the user asked for, as flags (None: not given)."""

    project: Path
    fixture_ids: Sequence[str] = ()  # ids or glob patterns
    tags: Sequence[str] = ()
    no_bundled: bool = False
    last_failed: bool = False  # only the fixtures that did not pass last time (see `lastfailed`)
    shard: Shard | None = None  # only this shard's part of what is selected (see `shards`)
    provider_specs: Sequence[str | None] = (None,)
    model: str | None = None
    base_url: str | None = None
    jobs: int | None = None
    timing: bool = False
    record_mode: str | None = None
    no_cassettes: bool = False
    cassettes: Path | None = None
    strict: bool = False
    golden: Path | None = None
    update_golden: bool = False
    tools: Sequence[str] = ()
    trials: int | None = None
    fallback_mode: RecordMode | None = None
    mcp_live: bool = False  # a replay starts every MCP server and compares it with its recording
    rejudge: bool = False  # only the judges are sent (and recorded again); the recorded runs replay
    baseline: Path | None = None  # the saved result to compare with (else the config's)
    max_cost: float | None = None  # USD a live run may spend (`budget`)
    agent: str | None = None  # --agent: the user's agent command, split as a shell would (`agents.decl`)

    def flags(self) -> Flags:
        if self.rejudge and (self.record_mode or self.no_cassettes):
            given = "--no-cassettes" if self.no_cassettes else f"--record-mode {self.record_mode}"
            raise UsageError(f"--rejudge replays the recorded runs and records only their judges; it does not go "
                             f"with {given}: leave that out")
        # New requests (the judges') are recorded beside those replayed; `recording.session` keeps the rest.
        record_mode = RecordMode.NEW_EPISODES.value if self.rejudge else self.record_mode
        return Flags(record_mode=record_mode, no_cassettes=self.no_cassettes, cassettes=self.cassettes,
                     golden=self.golden, jobs=self.jobs, tools=tuple(self.tools), trials=self.trials,
                     no_bundled=self.no_bundled, baseline=self.baseline)


@dataclass
class PlannedRun:
    """One provider × tool set, and the cases it runs."""

    provider: Provider
    toolset: ToolSet
    cases: list[Case]

    @property
    def key(self) -> RunKey:
        return RunKey(self.provider.settings.name, self.provider.model, self.toolset.name)


@dataclass
class Plan:
    """Everything a run needs, resolved: settings, the runs, and the problems found on the way."""

    request: RunRequest
    settings: Settings
    runs: list[PlannedRun]
    problems: list[Problem] = field(default_factory=list)
    redactor: Redactor = field(default_factory=Redactor)
    notes: list[str] = field(default_factory=list)
    selection: list[str] = field(default_factory=list)  # what the selection did, said before the run
    #: The bundled catalog's fixtures selected, when the project has fixtures of its own.
    bundled_beside_local: frozenset[str] = frozenset()
    #: Simulated users' and judges' providers by their spec (`user.provider`, `verifier.judge.provider`,
    #: the config's `judge`), or why one could not be made.
    role_providers: dict[str, Provider | str] = field(default_factory=dict)

    def header(self) -> str | None:
        """One line saying what this run will send to providers, and how many fixtures at once;
        None when it sends nothing (a replay, or every cassette is already recorded)."""
        live = len(self.live_cases())
        if not live:
            return None
        local = sorted({r.provider.settings.name for r in self.runs if r.provider.local})
        why = (f" ({', '.join(local)} runs on this machine; --jobs N to change)"
               if local and self.settings.jobs == 1 else "")
        verb = "running" if self.settings.record_mode is None else "re-judging" if self.request.rejudge \
            else "recording"
        at_once = f", {min(self.settings.jobs, live)} at a time" if live > 1 else ""
        return f"{verb} {plural(live, 'fixture')}{at_once}{why}"

    def live_cases(self) -> list[Case]:
        """The cases this run sends to a provider (none in a replay, nor where a cassette will answer)."""
        return [c for r, c in self._live_pairs()]

    def _live_pairs(self, runs: Sequence[PlannedRun] | None = None) -> list[tuple[PlannedRun, Case]]:
        """The (run, case) pairs of `runs` (by default all the plan's) that send to a provider."""
        return [(r, c) for r in (self.runs if runs is None else runs) if r.provider.speaks_http
                for c in r.cases if self._live(r, c)]

    @functools.cached_property
    def prices(self) -> dict[str, Price]:
        """The price table: the dated defaults, then the config's `prices` (a tool set's files' own come first)."""
        return price_table(self.settings.config.prices)

    def price(self, run: PlannedRun, provider: Provider | None = None) -> Price | None:
        """The price of `provider`'s model (by default `run`'s) in `run`'s tool set, else the table's."""
        provider = provider or run.provider
        return price_for(provider.settings.name, provider.model, run.toolset.prices, self.prices)

    def budget(self) -> Budget | None:
        """What `--max-cost` allows the live cases to spend (None: no limit)."""
        if self.request.max_cost is None:
            return None
        return Budget(self.request.max_cost, {(r.key.label, c.id, c.trial) for r, c in self._live_pairs()})

    def check_cost(self) -> str | None:
        """With `--max-cost`, the note giving the live cases' estimated cost; UsageError when it is more
        than allowed, or when a model that will be sent something has no price to count its spending by."""
        limit = self.request.max_cost
        if limit is None:
            return None
        pairs = self._live_pairs()
        if not pairs:
            return None
        shown = dollars(limit)
        unpriced: dict[str, set[str]] = {}
        for run, case in pairs:
            for role, provider in self._sent(run, case).items():
                if self.price(run, provider) is None:
                    unpriced.setdefault(RunKey(provider.settings.name, provider.model).label, set()).add(role_name(role))
        if unpriced:
            named = ", ".join(f"{label} ({' and '.join(sorted(roles))})" for label, roles in sorted(unpriced.items()))
            first = min(unpriced)
            raise UsageError(f"--max-cost {shown}: no price known for {named}, so what it spends cannot be counted; "
                             f"add one under \"prices\" in .replio/config.json, e.g. "
                             f'"prices": {{"{first}": {{"input": 0.15, "output": 0.6}}}} (USD per million tokens)')
        guess = estimate([self._recorded_cost(r, c) for r, c in pairs])
        if guess.usd is not None and guess.usd > limit:
            raise UsageError(f"--max-cost {shown}: this run is estimated to cost {guess.describe()}, more than "
                             "it allows; raise --max-cost, or record fewer fixtures at once (--fixture, --tag, "
                             "--shard)")
        return f"--max-cost {shown}: {guess.describe()}; no new fixture is recorded once ${shown} is spent"

    def _recorded_cost(self, run: PlannedRun, case: Case) -> float | None:
        """What the requests `case` will send now cost when it was last recorded: the answers of each
        role that will be sent again (`_sent`) at the price of the model that will speak as it; None
        when there is no recording to go by (none, none of those roles' answers, or one whose usage
        cannot be counted)."""
        sent = self._sent(run, case)
        # It reads cassettes through vcrpy and PyYAML, which a live run without --max-cost never imports.
        from ..recording.usage import recorded_answers

        usd, priced = 0.0, False
        for answer in recorded_answers(run.key.path(self.settings.cassettes, case.stem, CASSETTE)) or []:
            provider = sent.get(answer.role)
            if not isinstance(provider, HTTPProvider) or (price := self.price(run, provider)) is None:
                continue  # not sent again (the agent's, under --rejudge)
            try:
                usage = provider.answer_usage(answer.url, answer.body, answer.content_type)
            except ReplioError:
                return None
            if not usage.counted:
                return None
            usd, priced = usd + cost(price, usage.prompt or 0, usage.completion or 0, usage.cached or 0), True
        return round(usd, 6) if priced else None

    def _sent(self, run: PlannedRun, case: Case) -> dict[str, Provider]:
        """Who will be sent requests of `case` in this run, by role, each that speaks HTTP: its judge
        alone under --rejudge (the rest replays), else the agent, its simulated user and its judge."""
        fixture = case.fixture
        roles = [JUDGE] if self.request.rejudge else [
            AGENT, *([USER] if fixture.user else []),
            *([JUDGE] if fixture.verifier is not None and fixture.verifier.judge is not None else [])]
        speakers = self._speakers(run, case)
        return {role: speakers[role] for role in roles if role in speakers and speakers[role].speaks_http}

    def _speakers(self, run: PlannedRun, case: Case) -> dict[str, Provider]:
        """Who speaks as each role of `case`: the run's provider, unless its `user.provider` or its
        judge's (else the config's `judge`) names another that could be made."""
        fixture, made = case.fixture, self.role_providers
        specs = {USER: fixture.user.provider if fixture.user else None,
                 JUDGE: (fixture.verifier.judge.provider or self.settings.config.judge)
                 if fixture.verifier and fixture.verifier.judge else None}
        speakers = {AGENT: run.provider}
        for role, spec in specs.items():
            chosen = made.get(spec, run.provider) if spec else run.provider
            if isinstance(chosen, Provider):
                speakers[role] = chosen
        return speakers

    def _live(self, run: PlannedRun, case: Case) -> bool:
        mode = self.settings.record_mode
        if mode is None:
            return True
        if self.request.rejudge:
            return case.fixture.judge_hash() is not None
        if mode is RecordMode.NONE:
            return False
        cassette = run.key.path(self.settings.cassettes, case.stem, CASSETTE)
        if case_mode(mode, cassette, case) is RecordMode.ONCE:
            return not cassette.is_file()
        return True

    def open(self, runs: Sequence[PlannedRun]) -> None:
        """Make the pooled connections of the providers `runs` will send requests to (`_sent`), before
        their fixtures start: else the first fixtures in flight make them, one while the others wait
        (the first pool imports httpcore), and then all connect at the same instant."""
        sent = {id(p): p for r, c in self._live_pairs(runs) for p in self._sent(r, c).values()}
        for provider in sent.values():
            provider.open()

    def close(self) -> None:
        """Release the providers' pooled connections."""
        users = [p for p in self.role_providers.values() if isinstance(p, Provider)]
        for provider in {id(p): p for p in [*(r.provider for r in self.runs), *users]}.values():
            provider.close()

    def __enter__(self) -> Plan:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


@dataclass
class Outcome:
    """The runs, the problems met, and how the process should exit."""

    runs: list[RunResult] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)
    interrupted: bool = False
    strict: bool = False
    require_pass: frozenset[str] = frozenset()
    approvals: list[Approval] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    checked: Checked | None = None  # the runs against a baseline and score gates (`judge.baseline`)

    @property
    def exit_code(self) -> int:
        """130 interrupted; 1 when a fixture could not be loaded (a problem), any fixture's
        verdict is not ok (see `verdict.judge`) or a score gate failed; else 0."""
        if self.interrupted:
            return 130
        gates = self.checked.failures if self.checked else []
        return 1 if self.problems or gates or not all(v.ok for _, _, v in self._verdicts()) else 0

    def why(self) -> str:
        """One line saying why the exit code is 1 ('' when it is not; an interrupt says so itself)."""
        if self.interrupted:
            return ""
        line = failure_line(self._verdicts(), len(self.problems))
        if self.checked and self.checked.failures:
            gates = f"{plural(len(self.checked.failures), 'score gate')} failed (named above)"
            line = f"{line}; {gates}" if line else gates
        return line

    def _verdicts(self) -> list[tuple[str, str, Verdict]]:
        return [(r.key.label, f.id, judge(f, strict=self.strict, require_pass=f.id in self.require_pass,
                                          tools=r.tools))
                for r in self.runs for f in r.fixtures]


def _cases(found: Sequence[Found], toolset: ToolSet, trials: int) -> tuple[list[Case], list[Problem]]:
    cases: list[Case] = []
    problems: list[Problem] = []
    for f in found:
        try:
            offered = offered_to(toolset, f.fixture, f.origin)
        except ToolSetError as exc:
            problems.append(Problem(f.origin, str(exc)))
            continue
        found_problems = name_problems(f.fixture, offered)
        if found_problems:
            problems.extend(Problem(f.origin, f"fixture {f.fixture.id!r}: {p}") for p in found_problems)
            continue
        cases.extend(Case(f.fixture, offered, toolset, trial) for trial in range(1, trials + 1))
    return cases, problems


def prepare(request: RunRequest, pm: pluggy.PluginManager | None = None) -> Plan:
    """Resolve settings, providers, tool sets and cases; a bad flag or file raises before anything runs.

    `pm` holds the plugins whose fixtures and tools the run may use; by default those the project's
    `.replio/config.json` names, and the plan's notes say which installed ones it leaves out (the CLI
    passes its own manager, having said so on stderr).
    """
    settings = resolve_settings(request.project, request.flags(), fallback_mode=request.fallback_mode)
    notes: list[str] = []
    if pm is None:
        plugins = choose_plugins(settings.config.plugins)
        pm = plugin_manager(plugins.active)
        notes += filter(None, [plugins.notice()])
    reap_stale_worktrees()  # those a killed run left behind
    catalog = discover(request.project, settings.env.global_fixture_dir, pm, bundled=settings.bundled)
    has_local = any(f.source == LOCAL for f in catalog.fixtures.values())
    catalog = choose(catalog, request.fixture_ids, request.tags, bundled=settings.bundled)
    found = catalog.sorted()
    selection = []
    if request.last_failed:
        ids, said = lastfailed.narrow([f.fixture.id for f in found], lastfailed.load(settings.env.cache_dir, request.project))
        found = [catalog.fixtures[i] for i in ids]
        selection.append(said)
    if request.shard is not None:  # last: the shards of one selection together make exactly it
        ids, said = request.shard.narrow([f.fixture.id for f in found])
        found = [catalog.fixtures[i] for i in ids]
        selection.append(said)
    bundled = frozenset(f.fixture.id for f in found if f.source == BUILTIN_CATALOG and has_local)
    toolsets, problems = load_toolsets(settings.project, settings.tools, settings.config.tools, pm,
                                       settings.config.mcp_servers, agent=settings.config.agent,
                                       agent_flag=agent_from_flag(request.agent) if request.agent else None)
    problems = [*catalog.problems, *problems]
    per_set = {}
    for toolset in toolsets:
        cases, found_problems = _cases(found, toolset, settings.trials)
        per_set[toolset.name] = cases
        problems.extend(p for p in found_problems if p not in problems)
    specs = list(request.provider_specs)
    if specs == [None] and not settings.config.provider and settings.record_mode is RecordMode.NONE:
        specs = [_recorded_provider(settings)]  # a replay of what was recorded, with no provider named
    providers = [
        create_provider(spec, config=settings.config, env=settings.env, model=request.model,
                        base_url=request.base_url)
        for spec in specs
    ]
    _check_agent_speaks(providers, toolsets)
    for provider in providers:
        if settings.record_mode is RecordMode.NONE:
            _check_recorded(provider, settings.cassettes)
        else:
            notes += filter(None, [_first_recording(provider, settings.cassettes)])
    if request.jobs is None and settings.config.jobs is None and settings.record_mode is not RecordMode.NONE \
            and any(p.local for p in providers):
        # A server on this machine shares its cores with the run: more at once only queue there.
        settings = dataclasses.replace(settings, jobs=1)
    runs = [PlannedRun(p, t, per_set[t.name]) for p in providers for t in toolsets]
    users = _role_providers([c for cases in per_set.values() for c in cases], settings)
    made = [p for p in users.values() if isinstance(p, Provider)]
    key_names = [p.settings.api_key_env for p in [*providers, *made] if p.settings.api_key_env]
    key_names += sorted({n for cases in per_set.values() for c in cases
                         for server in c.offered.mcp_servers.values() for n in secret_names(server)})
    redactor = Redactor.from_environment(settings.env.values, names=key_names,
                                         urls=[p.settings.base_url for p in [*providers, *made]])
    notes += [f"{name} holds fewer than {MIN_SECRET} characters: a placeholder, not treated as a secret"
              for name in placeholder_names(settings.env.values, key_names)]
    return Plan(request, settings, runs, problems, redactor, notes, selection, bundled, users)


def _role_providers(cases: Sequence[Case], settings: Settings) -> dict[str, Provider | str]:
    """The provider of each spec a simulated user (`user.provider`) or a judge (`verifier.judge.provider`,
    the config's `judge` when a fixture has a judge) names, resolved as --provider is, or why it cannot
    be (the fixtures using it end in error; the others run)."""
    specs = {c.fixture.user.provider for c in cases if c.fixture.user}
    specs |= {c.fixture.verifier.judge.provider or settings.config.judge
              for c in cases if c.fixture.verifier and c.fixture.verifier.judge}
    made: dict[str, Provider | str] = {}
    for spec in sorted(s for s in specs if s):
        try:
            made[spec] = create_provider(spec, config=settings.config, env=settings.env)
        except ReplioError as exc:
            made[spec] = str(exc)
    return made


#: Said once per project, on its first run that sends bundled fixtures to a provider.
BUNDLED_NOTE = ("note: the bundled catalog's fixtures run along with this project's own; leave them out with "
                "--no-bundled, or \"bundled\": false in .replio/config.json (said once per project)")


def announce(plan: Plan) -> list[str]:
    """The lines to say before the run: what the selection did, what will be sent to providers, that
    a scripted provider (the mock) records nothing when a recording was asked for (`--record-mode`
    or the config's `record_mode`, not the default), and, on a project's first run that sends
    bundled fixtures beside its own, how to leave them out."""
    lines = [*plan.selection, *filter(None, [plan.header()])]
    asked = plan.request.record_mode or plan.settings.config.record_mode
    if asked and plan.settings.record_mode not in (None, RecordMode.NONE):
        scripted = dict.fromkeys(f"{r.provider.settings.name}:{r.provider.model}" for r in plan.runs
                                 if not r.provider.speaks_http)
        lines += [f"note: {label} plays its script and records nothing: no cassette is read or written for it "
                  "(status shows its cassettes as `scripted`)" for label in scripted]
    if plan.bundled_beside_local and any(c.id in plan.bundled_beside_local for c in plan.live_cases()) \
            and first_time(plan.settings.env.cache_dir, plan.request.project, "bundled"):
        lines.append(BUNDLED_NOTE)
    return lines


def remember(plan: Plan, outcome: Outcome) -> None:
    """Record, for the next `--last-failed`, which fixtures of this run did not pass."""
    cache, project = plan.settings.env.cache_dir, plan.request.project
    lastfailed.save(cache, project, lastfailed.updated(lastfailed.load(cache, project), outcome.runs))


def _recorded_provider(settings: Settings) -> str:
    """The one provider the cassettes were recorded with; else an error listing what there is."""
    found = recorded_providers(settings.cassettes)
    if len(found) == 1:
        return found[0]
    if not found:
        raise UnknownProviderError(f"no provider named, and no cassettes under {settings.cassettes}/ to replay; "
                                   'name one with --provider NAME[:MODEL] or set "provider" in .replio/config.json')
    raise UsageError(f"no provider named, and the cassettes under {settings.cassettes}/ hold several: "
                     f"{', '.join(found)}; choose one with --provider (or --compare {','.join(found)})")


def _check_agent_speaks(providers: Sequence[Provider], toolsets: Sequence[ToolSet]) -> None:
    """The user's own agent speaks HTTP to its model through the relay: a provider that does not
    (the scripted mock) cannot answer it, which is one error before anything runs, not one per fixture."""
    agent = next((t.agent for t in toolsets if t.agent is not None), None)
    mute = next((p for p in providers if not p.speaks_http), None)
    if agent is not None and mute is not None:
        raise UsageError(f"the provider {mute.settings.name}:{mute.model} plays a script and speaks no HTTP, so it "
                         f"cannot answer your agent {agent.shown!r}, whose model requests go over HTTP; run it with a "
                         "provider that serves a model (--provider NAME[:MODEL]), or without the agent")


def _check_recorded(provider: Provider, cassettes: Path) -> None:
    """A replay of a provider/model with no cassette folder at all (a typo in the model, say) is
    one error suggesting the nearest recorded one, not a "no cassette" error per fixture."""
    if not provider.speaks_http:
        return
    key = RunKey(provider.settings.name, provider.model)
    if key.folder(cassettes).is_dir():
        return
    recorded = recorded_providers(cassettes)
    raise UsageError(
        f"no cassettes for {key.label}: {key.folder(cassettes)}/ does not exist; "
        f"{did_you_mean(key.label, recorded)}recorded: {', '.join(recorded) or 'none yet'}; a replay needs them: "
        "record with --record-mode once (this needs the provider to be reachable)")


def _first_recording(provider: Provider, cassettes: Path) -> str | None:
    """A note when a provider/model with no cassette folder yet is a near miss of a recorded one
    (a typo in the model name would otherwise record under the typo)."""
    key = RunKey(provider.settings.name, provider.model)
    if not provider.speaks_http or key.folder(cassettes).is_dir():
        return None
    prefix = f"{provider.settings.name}:"
    models = [label.removeprefix(prefix) for label in recorded_providers(cassettes) if label.startswith(prefix)]
    hint = did_you_mean(provider.model, models, cutoff=0.8)
    return f"nothing recorded yet for {key.label}: {hint}this run records it as a new model" if hint else None


def execute(plan: Plan, *, only: Callable[[PlannedRun, Case], bool] | None = None,
            observer: Observer | None = None, hurry: threading.Event | None = None) -> Outcome:
    """Run the plan (the cases `only` keeps, if given): every run at once, `--jobs` fixtures in flight
    among them all, reported in plan order and, as fixtures start and end, to `observer`. After an interrupt, setting `hurry` ends the
    grace of the fixtures in flight at once (`interrupts`)."""
    settings = plan.settings
    options = RunOptions(
        limits=Limits(settings.max_turns, settings.max_calls), jobs=settings.jobs, timing=plan.request.timing,
        tool_timeout=settings.config.tool_timeout, web_allow=tuple(settings.config.web_allow),
        env=settings.env.values, project=settings.project.resolve(), hurry=hurry or threading.Event(),
        redactor=plan.redactor, role_providers=plan.role_providers, judge=settings.config.judge,
        prices=plan.prices, budget=plan.budget(), slots=threading.Semaphore(settings.jobs),
    )
    sessions = None
    if settings.record_mode is not None:
        from ..recording.session import CassetteSessions

        sessions = CassetteSessions(settings.cassettes, settings.record_mode, plan.redactor.secrets,
                                    mcp_live=plan.request.mcp_live, rejudge=plan.request.rejudge)
        options.session = sessions
    outcome = Outcome(
        problems=[(p.file, p.message) for p in plan.problems],
        strict=plan.request.strict,
        require_pass=settings.require_pass,
    )
    runs = [PlannedRun(r.provider, r.toolset, [c for c in r.cases if only is None or only(r, c)])
            for r in plan.runs]
    from ..recording.network import network_blocked
    from ..tools.mcp.logs import routed

    try:
        if _opened(plan, runs, outcome):
            with network_blocked(_live_mcp_urls(runs, plan.request.mcp_live)) \
                    if settings.record_mode is RecordMode.NONE else nullcontext(), routed(plan.redactor):
                _run_all(runs, options, outcome, observer)
        recorded_again = []
        if sessions is not None and sessions.mode is RecordMode.STALE:
            recording = dataclasses.replace(options, session=dataclasses.replace(sessions, mode=RecordMode.ALL))
            recorded_again = _record_drifted(runs, recording, outcome)
    finally:
        for server in {id(r.toolset.python): r.toolset.python for r in plan.runs}.values():
            server.close()  # the project's Python ends with the run (a later run starts it again)
    # The one redaction step: everything reported or approved from here on is free of secrets.
    outcome.runs = [plan.redactor.model(run) for run in outcome.runs]
    outcome.problems = [(f, plan.redactor.text(m)) for f, m in outcome.problems]
    outcome.notes = list(plan.notes)
    if recorded_again:
        outcome.notes.append(f"recorded again, as their replay showed request drift: {', '.join(recorded_again)}")
    store = GoldenStore(settings.golden)
    tolerance = settings.config.tokens_tolerance
    outcome.runs = [attach_drift(run, store, tokens_tolerance=tolerance) for run in outcome.runs]
    if plan.request.update_golden and not outcome.interrupted:
        outcome.approvals = approve(outcome.runs, store)
        # Judge the approved state: what was just approved no longer counts as drift.
        outcome.runs = [attach_drift(run, store, tokens_tolerance=tolerance) for run in outcome.runs]
    if settings.trials > 1:  # each fixture's trials as one result, with pass^k in the summary
        outcome.runs = [_combined(run) for run in outcome.runs]
    return outcome


def _opened(plan: Plan, runs: list[PlannedRun], outcome: Outcome) -> bool:
    """Make the pooled connections `runs` will send through (`Plan.open`); False when Ctrl-C came
    meanwhile, every fixture then ending cancelled as in a run interrupted before any started."""
    try:
        plan.open(runs)
    except KeyboardInterrupt:
        outcome.runs.extend(_cancelled_run(run) for run in runs)
        outcome.interrupted = True
        return False
    return True


def _record_drifted(runs: list[PlannedRun], recording: RunOptions, outcome: Outcome) -> list[str]:
    """`--record-mode stale`, second part: the cases whose replay showed request drift (a change the
    cassette's header does not see, a provider setting say) are recorded again with `recording`,
    and their results replace the replay's. Returns their names."""
    if outcome.interrupted:
        return []
    drifted = [{(f.id, f.trial) for f in result.fixtures if f.request_drift} for result in outcome.runs]
    again = [(i, PlannedRun(r.provider, r.toolset, [c for c in r.cases if (c.id, c.trial) in drifted[i]]))
             for i, r in enumerate(runs)]
    again = [(i, r) for i, r in again if r.cases]
    if not again:
        return []
    if recording.budget is not None:  # recorded now: they count against --max-cost too
        recording.budget.count_live((r.key.label, c.id, c.trial) for _, r in again for c in r.cases)
    second = Outcome()
    _run_all([r for _, r in again], recording, second, None)
    for (i, _), result in zip(again, second.runs):
        fresh = {(f.id, f.trial): f for f in result.fixtures}
        fixtures = [fresh.get((f.id, f.trial), f) for f in outcome.runs[i].fixtures]
        outcome.runs[i] = outcome.runs[i].model_copy(update={"fixtures": fixtures, "summary": summarize(fixtures)})
    outcome.interrupted = second.interrupted
    return [f"{r.key.label} {c.stem}" if len(runs) > 1 else c.stem for _, r in again for c in r.cases]


def _live_mcp_urls(runs: Sequence[PlannedRun], everything: bool) -> list[str]:
    """The URLs of the HTTP MCP servers a replay starts (`"replay": "live"`, or all with `--mcp live`)."""
    return sorted({server.url for r in runs for c in r.cases for server in c.offered.mcp_servers.values()
                   if isinstance(server, HttpServer) and (everything or server.replay == "live")})


def _run_all(runs: list[PlannedRun], options: RunOptions, outcome: Outcome, observer: Observer | None) -> None:
    """One suite run per planned run; several (--compare, --tools A,B) run at once, each in a
    daemon thread, so an interrupt ends them all within the grace whatever they are doing."""
    if len(runs) == 1:
        run = runs[0]
        try:
            outcome.runs.append(run_suite(run.cases, run.provider, run.toolset,
                                          options.observed(observer, run.key.label)))
        except InterruptedRun as stop:
            outcome.runs.append(stop.run)
            outcome.interrupted = True
        return
    cancel = threading.Event()
    results: list[RunResult | None] = [None] * len(runs)

    def one(i: int) -> None:
        run = runs[i]
        results[i] = run_suite(run.cases, run.provider, run.toolset, options.observed(observer, run.key.label),
                               cancel)

    workers = Workers((f"replio-{r.key.label}", functools.partial(one, i)) for i, r in enumerate(runs))
    if workers.wait(workers.join, cancel):
        outcome.interrupted = True
        workers.grace(workers.join, GRACE + 0.5, options.hurry)  # each run gives its fixtures GRACE; then it returns
    outcome.runs.extend(r if r is not None else _cancelled_run(plan_run)
                        for r, plan_run in zip(results, runs))


def _combined(run: RunResult) -> RunResult:
    fixtures = combine_trials(run.fixtures)
    return run.model_copy(update={"fixtures": fixtures, "summary": summarize(fixtures)})


def _cancelled_run(run: PlannedRun) -> RunResult:
    fixtures = [cancelled_result(c.fixture, c.trial) for c in run.cases]
    return RunResult(provider=run.provider.settings.name, model=run.provider.model, tools=run.toolset.name,
                     tools_hash=run.toolset.digest, fixtures=fixtures, summary=summarize(fixtures))
