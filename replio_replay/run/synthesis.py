"""A cassette and golden for an imported trace's conversation, made by running replio's own loop against the trace.

`Synthesizer` resolves the project once (its settings, its default tool set, the secrets of
its environment); `synthesize` runs one fixture as `run` would (`run_fixture`, replio's loop,
its stubs answering with production's results) against `PlaybackProvider`, recording through
the same cassette sessions and persister a live recording uses, which hand the cassette's text
back (`CassetteSessions.kept`) instead of writing it. Only when the run
followed the trace (the same calls with the same arguments, the same final answer, no error)
are the cassette (marked ``synthesized`` in its header) and its golden (approved from that
run) handed back, to be written into the project with the fixture; else the reason names the turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._runtime.jsoncanon import canonical
from .._runtime.redact import Redactor
from ..errors import ReplioError
from ..fixtures.cases import Case
from ..fixtures.layout import CASSETTE, GOLDEN, RunKey
from ..fixtures.model import Fixture
from ..fixtures.otel.builder import Built
from ..fixtures.otel.playback import PlaybackProvider
from ..golden.canonical import canonical_result
from ..golden.store import GoldenStore
from ..judge.results import FixtureResult, Status
from ..plan.offer import for_fixture
from ..plan.settings import Flags, Settings, resolve_settings
from ..providers.base import ProviderSettings
from ..providers.registry import create_provider
from ..recording.modes import RecordMode
from ..recording.session import CassetteSessions
from ..tools.toolset import ToolSet
from .engine import Limits
from .runner import RunOptions, run_fixture

__all__ = ["Synthesizer"]


@dataclass
class Synthesizer:
    """The project's settings and default tool set, resolved once for every fixture of an import."""

    settings: Settings
    toolset: ToolSet
    redactor: Redactor
    #: The `openai` provider's settings for each model a trace named, made once for every conversation of it.
    _providers: dict[str, ProviderSettings] = field(default_factory=dict, init=False, repr=False)

    @classmethod
    def for_project(cls, project: Path, tools: str = "default") -> Synthesizer:
        """The synthesizer of `project`, recording with its tool set `tools` (a name or a file, as
        `--tools` takes it); ReplioError when its config or that tool set cannot be read."""
        from ..fixtures.plugins import choose_plugins, plugin_manager
        from ..tools.sources import load_toolsets

        settings = resolve_settings(project, Flags(record_mode=RecordMode.ALL.value))
        pm = plugin_manager(choose_plugins(settings.config.plugins).active)
        toolsets, problems = load_toolsets(settings.project, (tools,), settings.config.tools, pm,
                                           settings.config.mcp_servers, agent=settings.config.agent)
        if problems or not toolsets:
            raise ReplioError(f"the tool set {tools!r} cannot be loaded: "
                              f"{problems[0].message if problems else 'none'}")
        redactor = Redactor.from_environment(settings.env.values, names=["OPENAI_API_KEY"])
        return cls(settings, toolsets[0], redactor)

    def paths(self, fixture_id: str, model: str) -> tuple[Path, Path]:
        """Where the cassette and the golden of fixture `fixture_id` replayed as ``openai:<model>`` go."""
        key = RunKey("openai", model, self.toolset.name)
        return key.path(self.settings.cassettes, fixture_id, CASSETTE), key.path(self.settings.golden, fixture_id, GOLDEN)

    def synthesize(self, built: Built, fixture: Fixture, origin: str) -> tuple[list[tuple[Path, str]], str | None]:
        """The cassette and golden of `built` (`fixture` as its file `origin` loads), as (path, text) to
        write; or none, and why, naming the turn, when replio's loop does not follow the trace."""
        why = built.divergence or self._run(built, fixture, origin)
        return ([], why) if isinstance(why, str) else (why, None)

    def _run(self, built: Built, fixture: Fixture, origin: str) -> list[tuple[Path, str]] | str:
        try:
            case = Case(fixture, for_fixture(self.toolset, fixture, origin), self.toolset)
            base = self._providers.get(built.model)
            if base is None:
                base = self._providers[built.model] = create_provider(
                    f"openai:{built.model}", config=self.settings.config, env=self.settings.env).settings
        except ReplioError as exc:
            return f"replio cannot run it: {exc}"
        source = fixture.source
        marker = {"from": "otel", "file": source.file, "trace_id": source.trace_id, "dialect": source.dialect} \
            if source is not None else {"from": "otel"}
        provider = PlaybackProvider(base, built.turns, marker)
        kept: dict[Path, str] = {}  # the cassette's text, written by the import with the fixture's other files
        options = RunOptions(
            limits=Limits(self.settings.max_turns, self.settings.max_calls),
            session=CassetteSessions(self.settings.cassettes, RecordMode.ALL, self.redactor.secrets, kept=kept),
            tool_timeout=self.settings.config.tool_timeout, env=self.settings.env.values,
            project=self.settings.project.resolve(), redactor=self.redactor)
        result = self.redactor.model(run_fixture(case, provider, options))
        why = _diverged(result, built)
        if why is not None:
            return why
        key = RunKey(provider.settings.name, provider.model, self.toolset.name)
        cassette_path = key.path(self.settings.cassettes, case.stem, CASSETTE)
        if cassette_path not in kept:
            return "replio's loop recorded nothing"
        golden_path, golden_text, _ = GoldenStore(self.settings.golden).render(key, case.stem, canonical_result(result))
        return [(cassette_path, kept[cassette_path]), (golden_path, golden_text)]


def _diverged(result: FixtureResult, built: Built) -> str | None:
    """Why the run did not follow the trace: an error, other calls, another answer; None when it did."""
    if result.status is not Status.OK:
        return f"replio's loop ended in {result.status.value}: {result.error or 'a limit stopped it'}"
    made = [{"name": c.name, "arguments": c.arguments} for c in result.trace]
    wanted = [{"name": c["name"], "arguments": c.get("arguments", {})} for c in built.observed]
    for turn, (got, want) in enumerate(zip(made, wanted), 1):
        if canonical(got) != canonical(want):
            return f"call {turn}: replio's loop called {_shown(got)} where the trace called {_shown(want)}"
    if len(made) != len(wanted):
        return f"replio's loop made {len(made)} tool calls where the trace made {len(wanted)}"
    answer = built.turns[-1].text if built.turns else ""
    if result.answer.strip() != answer.strip():
        return "replio's final answer is not the trace's (the loop ended at another turn)"
    unmatched = [c for c in result.trace if (c.result or "").startswith("Error: no stubbed result")]
    if unmatched:
        return f"the stub of {unmatched[0].name} answered {unmatched[0].result!r}"
    return None


def _shown(call: dict[str, Any]) -> str:
    return f"{call['name']} with {canonical(call['arguments'])}"
