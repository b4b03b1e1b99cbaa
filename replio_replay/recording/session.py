"""The per-fixture glue between a run and its cassette: open, bind a transport and MCP servers, finish, write.

`CassetteSessions` is the runner's session factory when cassettes are on. A cassette is
written once, at the end of its fixture, atomically, when something new was recorded and
every request got an answer (a provider's final error response included): an interrupted
recording, or one whose last request got no answer or whose MCP server failed, leaves the
old cassette (or none).

Under `--rejudge` a judged fixture's cassette is loaded, its judge requests dropped: the
conversation replays from it (its MCP servers too) while the judge's requests are sent and
recorded again; the file is rewritten with the conversation's part as it was.

MCP servers follow the HTTP: where the cassette replays (record mode `none`, or `once` with a
cassette), they are served from its ``mcp:`` section and none is started, unless the server
says ``"replay": "live"`` (or the run `mcp_live`): then it runs and is compared with it.
Where the cassette records, they run live and what they said is written beside the HTTP.
"""

from __future__ import annotations

import datetime
import functools
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .._runtime.redact import MIN_SECRET, without_credentials
from ..errors import CassetteError
from ..fixtures.cases import Case
from ..fixtures.layout import CASSETTE, RunKey
from ..judge.results import Status
from ..providers.base import Provider
from .base import FixtureSession, Watch, unwatched
from .cassette import BODY_MATCHER, open_cassette
from .modes import RecordMode, record_flags
from .persister import AtomicPersister
from .requests import volatile_pattern
from .roles import AGENT, JUDGE
from .serializer import ReadableSerializer
from .staleness import case_mode
from .transport import CassetteTransport

if TYPE_CHECKING:
    import httpx

    from ..tools.mcp.config import McpServer
    from ..tools.mcp.source import McpTools, Mode

__all__ = ["CassetteSession", "CassetteSessions"]


@functools.cache
def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("replio-replay")
    except PackageNotFoundError:
        return "unknown"


@dataclass(frozen=True)
class CassetteSessions:
    """Session factory: one cassette per fixture, provider and model under `directory`."""

    directory: Path
    mode: RecordMode
    secrets: tuple[str, ...] = ()
    mcp_live: bool = False  # replays start every MCP server and compare it with its recording
    rejudge: bool = False  # only the judges' requests are sent (and recorded again); the rest replays
    #: Where a cassette recorded is kept by its path instead of being written (`AtomicPersister.kept`).
    kept: dict[Path, str] | None = field(default=None, compare=False)

    def __call__(self, case: Case, provider: Provider, cancel: threading.Event | None = None,
                 watch: Watch = unwatched) -> FixtureSession:
        if not provider.speaks_http:  # the mock has nothing to record
            return FixtureSession(provider.transport(cancel), cancel, watch)
        key = RunKey(provider.settings.name, provider.model, case.toolset.name)
        return CassetteSession(self, case, provider, key.path(self.directory, case.stem, CASSETTE), cancel, watch)


class CassetteSession(FixtureSession):
    """One fixture's cassette, bound to its own transport."""

    def __init__(self, owner: CassetteSessions, case: Case, provider: Provider, path: Path,
                 cancel: threading.Event | None = None, watch: Watch = unwatched) -> None:
        fixture = case.fixture
        self.path = path
        exists = path.is_file()
        #: Under --rejudge, a judged fixture's recorded judge requests are dropped and sent again.
        self.rejudging = owner.rejudge and fixture.judge_hash() is not None
        if owner.rejudge:  # new requests (the judge's) recorded beside those replayed; a fixture without one replays
            self.mode = RecordMode.NEW_EPISODES if self.rejudging else RecordMode.NONE
        else:
            self.mode = case_mode(owner.mode, path, case)
        if self.rejudging and not exists:
            raise CassetteError(f"fixture {fixture.id!r}: no cassette at {path} to re-judge; record the run first "
                                f"with {record_flags(RecordMode.ONCE, fixture.id, case.toolset.name)}")
        if self.mode is RecordMode.NONE and not exists:
            raise CassetteError(
                f"fixture {fixture.id!r}: no cassette at {path}; record it with "
                f"{record_flags(RecordMode.ONCE, fixture.id, case.toolset.name)} (this needs the provider to be reachable)"
            )
        self.case = case
        self.provider = provider
        self.serializer = ReadableSerializer(source=str(path))
        key = provider.settings.api_key
        secrets = tuple(s for s in (*owner.secrets, key) if s and len(s) >= MIN_SECRET)  # not placeholders
        load = exists and self.mode is not RecordMode.ALL
        self.mcp_live = owner.mcp_live
        cassette, config = open_cassette(path, self.mode, self.serializer, AtomicPersister(secrets, owner.kept),
                                        load=load)
        inner = None if self.mode is RecordMode.NONE else watch(provider, provider.transport(cancel))
        self.cassette_transport = CassetteTransport(
            cassette, inner, body_matcher=config.matchers[BODY_MATCHER], fixture_id=fixture.id,
            tools=case.toolset.name, volatile=volatile_pattern(agent.volatile) if (agent := case.offered.agent) else None,
        )
        if self.rejudging:
            self.cassette_transport.forget(JUDGE, frozenset({JUDGE}))
        super().__init__(self.cassette_transport, cancel, watch)
        #: The providers of the other roles (a simulated user's, a judge's), named in the header.
        self.roles: dict[str, Provider] = {}
        #: Set by `discard`: what was recorded is not whole, so the cassette is not written.
        self.discarded = False

    def transport_for(self, role: str, provider: Provider) -> httpx.BaseTransport | None:
        """The fixture's cassette, for every role: the requests of `role` are recorded in it and
        replayed from it in order beside the agent's; a provider that is not the agent's records
        through its own connection."""
        self.roles[role] = provider
        if provider is not self.provider and self.mode is not RecordMode.NONE:
            self.cassette_transport.inners[role] = self.watch(provider, provider.transport(self.cancel))
        return self.cassette_transport

    def discard(self) -> None:
        self.discarded = True

    def request_changes(self) -> list[str]:
        return [f"request ({role}): {change.path} {change.kind}" for role, change in self.cassette_transport.request_drift]

    def mcp_modes(self, servers: Mapping[str, McpServer]) -> dict[str, Mode]:
        """Replayed from the cassette where it replays (`live` ones, or all with --mcp live, also
        started to compare), else started live and recorded."""
        if not self.replaying:
            return dict.fromkeys(servers, "live")
        return {name: "compare" if self.mcp_live or server.replay == "live" else "replay"
                for name, server in servers.items()}

    def mcp_tools(self, servers: Mapping[str, McpServer], *, root: Path, env: Mapping[str, str],
                  project: Path | None = None) -> McpTools:
        """Replay the servers from the cassette where it replays (comparing the `live` ones), else record them."""
        from ..tools.mcp.recording import parse_records
        from ..tools.mcp.source import McpTools

        modes = self.mcp_modes(servers)
        recorded = parse_records(self.serializer.loaded_mcp, str(self.path)) if self.replaying else {}
        again = record_flags(RecordMode.ALL, self.case.fixture.id, self.case.toolset.name)
        self.mcp = McpTools(servers, modes, root=root, env=env, recorded=recorded, cassette=str(self.path),
                            again=again, project=project)
        return self.mcp

    @property
    def replaying(self) -> bool:
        """Whether the conversation (agent, simulated user, MCP servers) replays from the cassette."""
        return self.cassette_transport.protected or self.rejudging

    def _provenance(self) -> dict[str, Any]:
        """The cassette's header: what was recorded, against what, by which version, when."""
        base = without_credentials(self.provider.settings.base_url) or ""
        return {
            "provider": self.provider.settings.name,
            "model": self.provider.model,
            "base_url_host": urlsplit(base).netloc or base,
            "fixture_hash": self.case.fixture.inputs_hash(),
            **({"judge_hash": judged} if (judged := self.case.fixture.judge_hash()) else {}),
            "tools": self.case.toolset.name,
            "toolset_hash": self.case.toolset.digest,
            **self._offered(),
            **({"trial": self.case.trial} if self.case.trial != 1 else {}),
            **{role: {"provider": p.settings.name, "model": p.model} for role, p in self.roles.items()},
            **({"synthesized": dict(self.provider.synthesized)} if self.provider.synthesized else {}),
            "replio_version": _version(),
            "recorded": datetime.date.today().isoformat(),
        }

    def _offered(self) -> dict[str, Any]:
        """What the model was offered: the tools' and prompt's hashes, or the user's agent, whose own
        code offers them (its requests hold them)."""
        offered = self.offered or self.case.offered
        if offered.agent is not None:
            return {"agent": offered.agent.shown, "agent_files": dict(offered.agent.files)}
        return {"tool_schema_hash": offered.schema_hash, "system_prompt_hash": offered.prompt_hash}

    def recorded_agent(self) -> tuple[str | None] | None:
        """Who made the conversation this fixture replays, as its cassette's header says: (the user's
        agent as declared,), (None,) for replio's own loop; None when nothing replays, or the header
        does not say."""
        header = self.serializer.loaded_header
        if not self.replaying or not header:
            return None
        if "agent" in header:
            return (str(header["agent"]),)
        return (None,) if "tool_schema_hash" in header else None

    def finish(self, status: Status) -> None:
        """Write the cassette if something new was recorded and the fixture ran to its end.

        An interrupted fixture writes nothing. A fixture that ended in `error` writes its
        cassette when every request it sent was answered (the error was the provider's final
        answer, say a 400, which a replay then reproduces), but not when a request got no
        answer at all (refused, timed out): a replay could not reproduce that.
        """
        t = self.cassette_transport
        mcp = self.mcp
        drift = list(t.request_drift)
        if mcp is not None:
            mcp.finish()
            drift += [(AGENT, change) for change in mcp.drift]
        if t.loaded_count or drift:
            self.extras["request_drift"] = [{**c.to_json(), "role": role} for role, c in drift]
        made_from = self.provider.synthesized if t.recorded else \
            self.serializer.loaded_header.get("synthesized") if t.loaded_count else None
        if isinstance(made_from, dict):  # a cassette synthesized from a trace, not a live recording
            self.extras["synthesized"] = {str(k): str(v) for k, v in made_from.items()}
        self.mcp_failed()  # a server that failed mid-run: nothing a replay could reproduce is written
        recorded_mcp = mcp is not None and mcp.recording and bool(mcp.records)
        if not (t.recorded or recorded_mcp) or status is Status.CANCELLED or t.unanswered or self.discarded:
            return
        if self.rejudging:  # the conversation's recording stays as it was; only the judge's parts are new
            header = self._provenance()
            self.serializer.header = {**self.serializer.loaded_header, JUDGE: header[JUDGE],
                                      "judge_hash": header["judge_hash"]}
            self.serializer.mcp = self.serializer.loaded_mcp
        else:
            self.serializer.header = self._provenance()
        if mcp is not None and mcp.recording:
            from ..tools.mcp.recording import records_json

            self.serializer.mcp = records_json(mcp.records)
        t.cassette._save(force=True)  # what vcrpy's `use_cassette` calls on exit: persists through the persister
