"""The `replio` command (click): parses, calls the library, maps errors to exit codes.

Exit codes: 0 every fixture ran, 1 a fixture ended in `error` or drifted from its golden
(with --strict also request drift or no golden) or a score gate failed, 2 usage or
configuration errors, 130 interrupted. Heavy modules are imported inside the commands that need them.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, redirect_stdout
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from ._runtime.interrupts import Interrupts
from ._runtime.wording import plural
from .errors import ConfigError, GoldenError, ReplioError, UsageError
from .recording.modes import RecordMode

if TYPE_CHECKING:
    from collections import Counter

    import pluggy

    from .config import ProjectConfig
    from .fixtures.plugins import Plugins

__all__ = ["entry", "main"]

OUTPUTS = click.Choice(["table", "json"])
RUN_OUTPUTS = click.Choice(["table", "json", "junit"])
MODES = click.Choice([m.value for m in RecordMode])


class _Dollars(click.FloatRange):
    """USD from 0 to 1,000,000; NaN, which every comparison lets through (so no limit at all), refused."""

    def __init__(self) -> None:
        super().__init__(min=0, max=1_000_000)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        usd = super().convert(value, param, ctx)
        if usd != usd:
            self.fail(f"{value} is not in the range 0<=x<=1000000.", param, ctx)
        return usd


INTERRUPTED = "interrupted: fixtures in flight were cancelled; the report above is partial."


def _exit(code: int, why: str | None) -> NoReturn:
    """End with `code`; a failing one says why on stderr, in one line."""
    if code and why:
        click.echo(f"replio: exit {code}: {why}", err=True)
    sys.exit(code)


def _write_output(path: Path, text: str) -> None:
    """Write an output file the user named, atomically; exit 2 naming it when it cannot be written."""
    from ._runtime.atomic import atomic_write

    try:
        atomic_write(path, text)
    except OSError as exc:
        _fail(UsageError(f"{path}: cannot be written ({exc.strerror or exc}); give a file in a folder you can write to"))


def _fail(exc: ReplioError) -> NoReturn:
    from ._runtime.env import Env
    from ._runtime.redact import Redactor
    from ._runtime.terminal import printable

    click.echo(f"replio: error: {printable(Redactor.from_environment(Env.current().values).text(str(exc)))}",
               err=True)
    sys.exit(2)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="replio-replay", prog_name="replio")
def main() -> None:
    """Measure how well an LLM uses an agent's tools, reproducibly."""


def entry() -> NoReturn:
    """The `replio` program: `main`, after which no interrupt can change how the process exits
    (an interrupt during Python's shutdown would otherwise end it by signal, not with 130)."""
    # httpx's __init__ imports its command-line client (`httpx._main`, with rich and pygments)
    # whenever click and rich are installed, as they are here: about a seventh of a replay.
    # Upstream: https://github.com/encode/httpx/discussions/3523, whose fix (import it in
    # `__main__`, https://github.com/encode/httpx/pull/3547) is unmerged; httpx2 imports it lazily
    # (https://github.com/pydantic/httpx2/pull/947). This process's only httpx client is
    # replio's, so it marks that module absent and httpx falls back to its stub `main`.
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    try:
        main()  # click's standalone mode: always ends in SystemExit
        code: str | int | None = 0
    except SystemExit as exc:
        code = exc.code
    finally:
        _ignore_interrupts()
    if code == 1 and type(sys.stdout).__name__.endswith("PacifyFlushWrapper"):  # click names it _PacifyFlushWrapper
        # click's answer to a reader that stopped (`| head`) is a silent exit 1; say nothing, and end
        # as a program SIGPIPE ended does (128 + 13), not with an exit 1 that explains nothing
        sys.exit(141)
    sys.exit(code)


@main.group("eval")
@click.option(
    "--path", "project", type=click.Path(file_okay=False, path_type=Path), default=".",
    show_default=True, help="The project: its .replio/ folder holds fixtures and config.",
)
@click.pass_context
def eval_group(ctx: click.Context, project: Path) -> None:
    """Evaluate tool use over fixtures."""
    if not project.is_dir() and ctx.invoked_subcommand is not None:
        from .plan.settings import not_a_project

        _fail(not_a_project(project, "--path"))
    ctx.obj = project


def selection_options() -> list[Callable[[Callable[..., Any]], Callable[..., Any]]]:
    """The options every command shares that choose fixtures: ids or globs, tags, the bundled catalog."""
    return [
        click.option("--fixture", "fixture_ids", multiple=True, metavar="ID|GLOB",
                     help="Only fixtures whose id is this or matches this glob, e.g. 'find-*' (repeatable)."),
        click.option("--tag", "tags", multiple=True, metavar="TAG",
                     help="Only fixtures with this tag (repeatable); with --fixture, both must hold."),
        click.option("--no-bundled", is_flag=True,
                     help="Leave the bundled catalog out (config: \"bundled\": false)."),
    ]


def _options(options: list[Callable[[Callable[..., Any]], Callable[..., Any]]]) -> Callable[..., Any]:
    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            fn = option(fn)
        return fn

    return decorate


@eval_group.command("list")
@_options(selection_options())
@click.option("--output", type=OUTPUTS, default="table", show_default=True)
@click.pass_obj
def list_cmd(project: Path, output: str, fixture_ids: tuple[str, ...], tags: tuple[str, ...],
             no_bundled: bool) -> None:
    """List the fixtures, where each comes from, and any broken files."""
    from ._runtime.env import Env
    from .config import load_project_config
    from .plan.listing import listing

    try:
        plugins, pm = _plugins(load_project_config(project))
        with _report_owns_stdout():
            found = listing(project, Env.current().global_fixture_dir, pm,
                            patterns=fixture_ids, tags=tags, no_bundled=no_bundled)
    except (UsageError, ConfigError) as exc:
        _fail(exc)
    if output == "json":
        from .report.jsonout import dumps

        click.echo(dumps({**found, "plugins": plugins.to_json()}), nl=False)
    else:
        from .report.text import skipped_line, write_fixture_list, write_problems

        problems = [(p["file"], p["message"]) for p in found["problems"]]
        write_fixture_list(found["fixtures"], sys.stdout, rich=sys.stdout.isatty())
        if problems:
            click.echo(skipped_line(problems))
        _write_plugins(plugins)
        write_problems(problems, sys.stderr)
    if found["problems"]:
        _exit(1, f"{plural(len(found['problems']), 'problem')} in the fixtures: those named were skipped")


def _plugins(config: ProjectConfig) -> tuple[Plugins, pluggy.PluginManager]:
    """The installed plugins the project's config chose, and a manager holding them; when it chose
    none while some are installed, one line on stderr says how to."""
    from .fixtures.plugins import choose_plugins, plugin_manager

    plugins = choose_plugins(config.plugins)
    notice = plugins.notice()
    if notice:
        click.echo(f"replio: {notice}", err=True)
    return plugins, plugin_manager(plugins.active)


def _write_plugins(plugins: Plugins) -> None:
    summary = plugins.summary()
    if summary:
        click.echo(summary)


def run_options() -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The options `run` and `diff` share: what to run, against what, with which cassettes."""
    options = [
        *selection_options(),
        click.option("--last-failed", is_flag=True,
                     help="Only the fixtures that did not pass in the previous run (all, if none failed)."),
        click.option("--shard", metavar="I/N", callback=_shard,
                     help="Only shard I of N of what is selected, split by a hash of each fixture's id."),
        click.option("--provider", "provider_spec", metavar="NAME[:MODEL]", help="e.g. ollama:qwen2.5."),
        click.option("--model", help="The model; overrides the one in the provider spec."),
        click.option("--base-url", help="The provider's base URL; overrides environment and config."),
        click.option("--compare", metavar="P1,P2,...", help="Run once per provider spec, side by side."),
        click.option("--agent", metavar="COMMAND",
                     help="Run your own agent, e.g. 'python agent.py' (split as a shell would; paths relative to "
                          "the current folder), instead of the project's agent or replio's loop."),
        click.option("--tools", "tools", metavar="NAME[,NAME...]",
                     help="Tool set(s): a name under .replio/tools/, 'default', or a file; several run side by side."),
        click.option("--jobs", type=click.IntRange(min=1), help="Fixtures run at once (default 4)."),
        click.option("--trials", type=click.IntRange(min=1, max=100),
                     help="Run each fixture N times; reports pass^k and pass@k (config: trials)."),
        click.option(
            "--record-mode", type=MODES,
            help="none = replay only; once = replay, record what is missing (default; none when CI is "
            "set); new_episodes = also record requests beyond a cassette; all = record everything again; "
            "stale = record again what changed since it was recorded (see status), and what is missing.",
        ),
        click.option("--no-cassettes", is_flag=True, help="A plain live run: no cassettes read or written."),
        click.option("--cassettes", type=click.Path(file_okay=False, path_type=Path),
                     help="Cassette folder (default: <path>/cassettes)."),
        click.option("--golden", type=click.Path(file_okay=False, path_type=Path),
                     help="Golden folder (default: <path>/golden)."),
        click.option("--strict", is_flag=True,
                     help="Request drift and fixtures without a golden fail too (exit 1)."),
        click.option("-v", "--verbose", is_flag=True,
                     help="Where no live progress shows (CI, a pipe): a line per finished fixture on stderr."),
        click.option("--mcp", "mcp", type=click.Choice(["cassette", "live"]), default=None,
                     help="How a replay serves MCP servers: from the cassette (default), or live, started and "
                     "compared with the recording (request drift)."),
    ]
    return _options(options)


def gate_options() -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The options `run` and `merge` share: a baseline to compare with, and the score gates."""
    return _options([
        click.option("--baseline", type=click.Path(dir_okay=False, path_type=Path),
                     help="Compare with this saved result (run --output-file); config: baseline. Lists the "
                     "fixtures that passed there and fail now first."),
        click.option("--fail-under", multiple=True, metavar="METRIC=X",
                     help="Exit 1 when pass_rate, accuracy or pass^K is below X (repeatable)."),
        click.option("--fail-over", multiple=True, metavar="METRIC=X",
                     help="Exit 1 when errors, tokens or cost (USD) is above X (repeatable)."),
        click.option("--max-drop", multiple=True, metavar="METRIC=X",
                     help="Exit 1 when a metric is worse than the baseline's by more than X: a fall of "
                     "pass_rate, accuracy or pass^K, a rise of errors, tokens or cost (repeatable)."),
        click.option("--fail-if-worse", is_flag=True,
                     help="Exit 1 when a paired comparison finds the pass rate worse (p < 0.05): the run against "
                     "its baseline, or a column against the first; unlike --max-drop, never on noise."),
    ])


def _gates(flags: dict[str, Any]) -> list[Any]:
    """The gate flags popped from `flags`, parsed; exit 2 naming a bad one."""
    given = {flag: flags.pop(flag) for flag in ("fail_under", "fail_over", "max_drop")}
    worse = flags.pop("fail_if_worse", False)
    if not any(given.values()) and not worse:
        return []  # the gates' module (with the comparisons behind it) is imported only when one is given
    from .judge.baseline import FAIL_IF_WORSE, Gate, parse_gates

    try:
        gates = [gate for flag, values in given.items()
                 for gate in parse_gates(f"--{flag.replace('_', '-')}", values)]
    except UsageError as exc:
        _fail(exc)
    return gates + ([Gate(FAIL_IF_WORSE, "pass_rate", 0.0)] if worse else [])


def _baseline(path: Path | None, gates: list[Any]) -> Any:
    """The saved baseline at `path` (None: none given), read as any saved result; exit 2 when
    it cannot be, or when a --max-drop gate has none to measure from."""
    if path is None:
        if any(g.needs_baseline for g in gates):
            _fail(UsageError("--max-drop measures from a baseline: give --baseline RESULT.json (a file that run "
                             '--output-file wrote), or "baseline" in .replio/config.json'))
        return None
    return _saved(path)


def _check(outcome: Any, gates: list[Any], baseline: Any, path: Path | None) -> None:
    """Hold the outcome's runs to `gates` and compare them with `baseline`, when either is given."""
    if gates or baseline is not None or len(outcome.runs) > 1:
        from .judge.baseline import check_runs

        outcome.checked = check_runs(outcome.runs, gates, None if baseline is None else baseline.runs,
                                     str(path) if path is not None else "")


def _shard(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    from .plan.shards import Shard

    try:
        return None if value is None else Shard.parse(value)
    except UsageError as exc:
        raise click.UsageError(str(exc), ctx) from None


def _execute(project: Path, flags: dict[str, Any], interrupts: Interrupts, *, update_golden: bool = False,
             output: str = "table", gates: list[Any] | None = None) -> Any:
    from .config import load_project_config
    from .report.progress import choose
    from .run.suite import RunRequest, announce, execute, prepare, remember

    compare = flags.pop("compare")
    if compare is not None and flags.get("model"):
        raise click.UsageError("--model does not go with --compare; name each model in its spec: "
                               "--compare openai:gpt-4o,openai:gpt-4o-mini")
    verbose = flags.pop("verbose")
    request = RunRequest(
        project=project,
        provider_specs=_specs(flags.pop("provider_spec"), compare),
        tools=_names(flags.pop("tools"), "--tools"),
        mcp_live=flags.pop("mcp") == "live",
        update_golden=update_golden,
        **flags,
    )
    stdout = sys.stdout
    try:
        with _interrupt_ends("while starting; nothing was run"), _report_owns_stdout():
            _, pm = _plugins(load_project_config(project))
            plan = prepare(request, pm)
        with plan, _report_owns_stdout():
            baseline = _baseline(plan.settings.baseline, gates or [])
            budget_note = plan.check_cost()
            if budget_note:
                click.echo(f"replio: {budget_note}", err=True)
            for line in announce(plan):
                click.echo(f"replio: {line}", err=True)
            progress = choose([(r.key.label, len(r.cases)) for r in plan.runs], output=output, verbose=verbose,
                              env=plan.settings.env.values, stdout=stdout, stderr=sys.stderr)
            with _interrupt_ends("while finishing the run; no golden was changed"):
                if progress is None:
                    outcome = execute(plan, hurry=interrupts.hurry)
                else:
                    with progress:
                        outcome = execute(plan, observer=progress, hurry=interrupts.hurry)
                remember(plan, outcome)
                if not outcome.interrupted:
                    _check(outcome, gates or [], baseline, plan.settings.baseline)
                return outcome
    except (UsageError, ConfigError, GoldenError) as exc:
        _fail(exc)


@contextmanager
def _report_owns_stdout() -> Iterator[None]:
    """The project's Python (environments, Python and plugin tools, their modules) runs in this process:
    what it prints goes to stderr, so stdout holds the report alone (`--output json` stays JSON)."""
    with redirect_stdout(sys.stderr):
        yield


@contextmanager
def _interrupt_ends(when: str) -> Iterator[None]:
    """Ctrl-C (or SIGTERM) here ends the command at once: one line saying when, exit status 130."""
    try:
        yield
    except KeyboardInterrupt:
        click.echo(f"replio: interrupted {when}.", err=True)
        sys.exit(130)


def _ignore_interrupts() -> None:
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


@eval_group.command("run")
@run_options()
@click.option("--update-golden", is_flag=True, help="Approve this run: write its goldens.")
@click.option("--output", type=RUN_OUTPUTS, default="table", show_default=True)
@click.option("--output-file", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the result to this file, in the --output format (JSON for the table).")
@click.option("--junit-xml", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write JUnit XML to this file.")
@click.option("--html", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the HTML report of this run to this file.")
@click.option("--markdown", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the review as GitHub-flavoured Markdown to this file (a step summary, a PR comment).")
@click.option("--markdown-max-chars", type=click.IntRange(min=1000), metavar="N",
              help="Keep the Markdown under N characters (a pull-request comment takes 65536).")
@click.option("--timing", is_flag=True, help="Add wall-clock seconds under a volatile `timing` key.")
@click.option("--rejudge", is_flag=True,
              help="Ask the LLM judges again, live, over the recorded runs (replayed), and record their new "
              "answers in the cassettes; fixtures without a judge replay.")
@click.option("--max-cost", type=_Dollars(), metavar="USD",
              help="Refuse to start recording when the estimate (the last recordings' tokens x price) is more; "
                   "stop starting fixtures that record once this much is spent, or once an answer's cost cannot "
                   "be counted.")
@gate_options()
@click.pass_obj
def run_cmd(project: Path, update_golden: bool, output: str, output_file: Path | None,
            junit_xml: Path | None, html: Path | None, markdown: Path | None, markdown_max_chars: int | None,
            **flags: Any) -> None:
    """Run fixtures against a provider and report trace, metrics, verdicts and drift."""
    compared = flags["compare"] is not None or len(_names(flags["tools"], "--tools")) > 1
    gates = _gates(flags)
    with Interrupts().installed() as interrupts:
        outcome = _execute(project, flags, interrupts, update_golden=update_golden, output=output, gates=gates)
        with _interrupt_ends("while writing the report"):
            _emit(outcome, output, compared)
            _write_files(outcome, output, compared, output_file, junit_xml)
            if html is not None:
                _write_output(html, _html(outcome))
            if markdown is not None:
                _write_output(markdown, _markdown(outcome, markdown_max_chars, gates))
    _exit(outcome.exit_code, outcome.why())


def _markdown(outcome: Any, max_chars: int | None, gates: Sequence[Any] = ()) -> str:
    """The review: the comparisons' verdicts, whether CI passes and why not (`gates` as given), then the rest."""
    from .judge.baseline import FAIL_IF_WORSE
    from .report.markdown import Checks, render_markdown

    checked = outcome.checked
    given = tuple(g.flag if g.flag == FAIL_IF_WORSE else f"{g.flag} {g.metric}={g.limit:g}" for g in gates)
    checks = Checks(strict=outcome.strict, require_pass=outcome.require_pass, gates=given,
                    failed=tuple(checked.failures) if checked else (), problems=len(outcome.problems))
    return render_markdown(outcome.runs, checked.paired if checked else (), checked.comparisons if checked else (),
                           checks=checks, max_chars=max_chars)


def _write_files(outcome: Any, output: str, compared: bool, output_file: Path | None, junit_xml: Path | None) -> None:
    """--output-file in the --output format (JSON for the table), and --junit-xml; each written atomically."""
    from .report.jsonout import dumps

    if output_file is not None:
        _write_output(output_file, _junit(outcome) if output == "junit" else dumps(_json(outcome, compared)))
    if junit_xml is not None:
        _write_output(junit_xml, _junit(outcome))


def _json(outcome: Any, compared: bool) -> Any:
    """The result's JSON: a run, or compared runs; with a baseline, each run's comparison under
    `baseline`, and with gates, the lines of those that failed under `gates`."""
    runs = [r.to_json() for r in outcome.runs]
    checked = outcome.checked
    for run, data, comparison in zip(outcome.runs, runs, checked.comparisons if checked else []):
        if comparison is not None:
            data["baseline"] = comparison.to_json(run.summary)
    problems = [{"file": file, "message": message} for file, message in outcome.problems]
    extra = {"gates": {"failed": checked.failures, **({"notes": checked.notes} if checked.notes else {})}} \
        if checked and checked.gated else {}
    if checked and checked.paired:
        extra["comparisons"] = checked.paired
    return {"runs": runs, "problems": problems, **extra} if compared else {**runs[0], "problems": problems, **extra}


def _html(outcome: Any) -> str:
    from .report.html import render_html

    return render_html(outcome.runs, problems=outcome.problems,
                       comparisons=outcome.checked.comparisons if outcome.checked else None)


def _junit(outcome: Any) -> str:
    from .report.junit import junit_xml

    return junit_xml(outcome.runs, strict=outcome.strict, require_pass=outcome.require_pass,
                     problems=outcome.problems, gates=outcome.checked.failures if outcome.checked else ())


@eval_group.command("diff")
@run_options()
@click.option("--markdown", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the review as GitHub-flavoured Markdown to this file.")
@click.option("--markdown-max-chars", type=click.IntRange(min=1000), metavar="N",
              help="Keep the Markdown under N characters (a pull-request comment takes 65536).")
@click.pass_obj
def diff_cmd(project: Path, markdown: Path | None, markdown_max_chars: int | None, **flags: Any) -> None:
    """Print the full drift report of a run (a replay by default), for review before approving."""
    from .report.text import write_drift_report

    # A replay unless a record mode is given: diff shows what a replay shows, whatever the config says.
    flags["record_mode"] = flags["record_mode"] or RecordMode.NONE.value
    with Interrupts().installed() as interrupts:
        outcome = _execute(project, {**flags, "timing": False}, interrupts)
    for run in outcome.runs:
        write_drift_report(run, sys.stdout, full=True)
    if markdown is not None:
        _write_output(markdown, _markdown(outcome, markdown_max_chars))
    if outcome.interrupted:
        click.echo(INTERRUPTED, err=True)
    _exit(outcome.exit_code, outcome.why())


@eval_group.command("status")
@_options(selection_options())
@click.option("--cassettes", type=click.Path(file_okay=False, path_type=Path))
@click.option("--golden", type=click.Path(file_okay=False, path_type=Path))
@click.option("--prune", is_flag=True, help="Delete the orphaned cassettes and goldens listed.")
@click.option("--output", type=OUTPUTS, default="table", show_default=True)
@click.pass_obj
def status_cmd(project: Path, cassettes: Path | None, golden: Path | None, prune: bool, output: str,
               fixture_ids: tuple[str, ...], tags: tuple[str, ...], no_bundled: bool) -> None:
    """Show, per fixture and provider, whether a cassette and a golden exist, and list orphans."""
    from .fixtures.discovery import choose, discover
    from .plan.settings import Flags, resolve_settings
    from .report.inventory import inventory, prune_orphans
    from .report.text import write_inventory

    try:
        settings = resolve_settings(project, Flags(cassettes=cassettes, golden=golden, no_bundled=no_bundled))
        plugins, pm = _plugins(settings.config)
        catalog = choose(discover(project, settings.env.global_fixture_dir, pm, bundled=settings.bundled), fixture_ids, tags,
                         bundled=settings.bundled)
        inv = inventory(settings, catalog, pm)
    except (UsageError, ConfigError) as exc:
        _fail(exc)
    if output == "json":
        from .report.jsonout import dumps

        click.echo(dumps({**inv.to_json(), "plugins": plugins.to_json()}), nl=False)
    else:
        write_inventory(inv, sys.stdout, rich=sys.stdout.isatty())
        _write_plugins(plugins)
    if prune:
        try:
            removed = prune_orphans(inv, catalog)
        except UsageError as exc:
            _fail(exc)
        for path in removed:
            click.echo(f"removed {path}", err=True)


def _names(value: str | None, flag: str) -> list[str]:
    """The comma-separated entries of `flag`; an empty one (`a,,b`, a trailing comma) is refused, named."""
    if value is None:
        return []
    names = [n.strip() for n in value.split(",")]
    empty = [str(i) for i, name in enumerate(names, 1) if not name]
    if empty:
        which = f"entry {empty[0]} is" if len(empty) == 1 else f"entries {', '.join(empty)} are"
        raise click.UsageError(f"{flag} {value!r}: {which} empty; separate the names by single commas, "
                               f"e.g. {flag} a,b")
    return names


def _specs(provider: str | None, compare: str | None) -> list[str | None]:
    if compare is not None and provider is not None:
        raise click.UsageError("give either --provider or --compare, not both")
    if compare is not None:
        return list(_names(compare, "--compare"))
    return [provider]


def _emit(outcome: Any, output: str, compared: bool) -> None:
    from .report.text import skipped_line, write_approvals, write_problems

    checked = outcome.checked
    for line in checked.regression_lines(outcome.runs) if checked else []:
        click.echo(f"replio: {line}", err=True)
    for note in outcome.notes:
        click.echo(f"replio: note: {note}", err=True)
    for label in checked.unmatched if checked else []:
        click.echo(f"replio: note: the baseline has no run of {label}: it is not compared", err=True)
    for note in checked.notes if checked else []:
        click.echo(f"replio: note: {note}", err=True)
    write_problems(outcome.problems, sys.stderr)
    if output == "json":
        from .report.jsonout import dumps

        click.echo(dumps(_json(outcome, compared)), nl=False)
    elif output == "junit":
        click.echo(_junit(outcome), nl=False)
    else:
        from ._runtime.env import Env
        from .report.table import output_width
        from .report.text import write_compare, write_run

        rich = sys.stdout.isatty()
        comparisons = checked.comparisons if checked else [None] * len(outcome.runs)
        if compared:
            write_compare(outcome.runs, sys.stdout, rich=rich, comparisons=comparisons,
                          paired=checked.paired if checked else ())
        else:
            write_run(outcome.runs[0], sys.stdout, rich=rich, width=output_width(rich, Env.current().values),
                      comparison=comparisons[0], paired=checked.paired if checked else ())
        if outcome.problems:
            click.echo(skipped_line(outcome.problems))
    write_approvals(outcome.approvals, sys.stdout if output == "table" else sys.stderr)
    for line in checked.failures if checked else []:
        click.echo(f"replio: gate failed: {line}", err=True)
    if outcome.interrupted:
        click.echo(INTERRUPTED, err=True)


@eval_group.group("import")
def import_group() -> None:
    """Import a public benchmark's cases, or production traces, as fixtures."""


@import_group.command("bfcl")
@click.argument("source", type=click.Path(path_type=Path))
@click.option("--category", "categories", multiple=True, metavar="C",
              help="Only this category (repeatable), e.g. simple_python or multi_turn_base; default: every one the "
              "importer takes.")
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N cases of each category.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Where the fixture files go (default: <path>/.replio/eval/bfcl).")
@click.pass_obj
def import_bfcl_cmd(project: Path, source: Path, categories: tuple[str, ...], limit: int | None,
                    out: Path | None) -> None:
    """Write BFCL's cases (from a bfcl-eval wheel, package or data folder) as fixtures, one file per case."""
    from ._runtime.terminal import printable
    from .fixtures.bfcl import DEFAULT_OUT, import_bfcl

    try:
        report = import_bfcl(source, out or project / DEFAULT_OUT, categories, limit)
    except UsageError as exc:
        _fail(exc)
    for category, written in report.written.items():
        click.echo(f"{category}: {written} written, {report.unchanged[category]} unchanged")
    if report.environments:
        click.echo(f"BFCL's environment classes: {report.environments} files written (see environments/NOTICE.md)")
    for problem in report.problems:
        click.echo(printable(f"replio: skipped BFCL {problem}"), err=True)
    sys.exit(1 if report.problems else 0)


@import_group.command("tau2")
@click.argument("source", type=click.Path(path_type=Path))
@click.option("--domain", required=True, type=click.Choice(["mock", "retail", "airline", "telecom"]),
              help="The τ² domain to import.")
@click.option("--split", default="base", show_default=True, metavar="NAME",
              help="The task split of the domain's split_tasks.json (base: every task).")
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N tasks of the split.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Where the fixture files go (default: <path>/.replio/eval/tau2/<domain>).")
@click.pass_obj
def import_tau2_cmd(project: Path, source: Path, domain: str, split: str, limit: int | None, out: Path | None) -> None:
    """Write a τ²-bench domain's tasks (from a local tau2-bench checkout) as fixtures, one file per task, with
    the domain's code and databases as their environment."""
    from ._runtime.terminal import printable
    from .fixtures.tau2 import DEFAULT_OUT, import_tau2

    try:
        report = import_tau2(source, domain, out or project / DEFAULT_OUT / domain, split, limit)
    except UsageError as exc:
        _fail(exc)
    click.echo(f"{domain} ({split}): {report.written} written, {report.unchanged} unchanged")
    if report.environments:
        click.echo(f"τ²'s {domain} code and data: {report.environments} files written (see environments/NOTICE.md)")
    for problem in report.problems:
        click.echo(printable(f"replio: skipped τ² {domain} {problem}"), err=True)
    sys.exit(1 if report.problems else 0)


@import_group.command("otel")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Where the fixture files go (default: <path>/.replio/eval/otel).")
@click.option("--service", "services", multiple=True, metavar="NAME",
              help="Only conversations of this service (its service.name; repeatable).")
@click.option("--trace-id", "trace_ids", multiple=True, metavar="ID", help="Only this trace (hex; repeatable).")
@click.option("--since", metavar="ISO", help="Only conversations that started at or after this time "
              "(ISO 8601, e.g. 2026-12-01T00:00:00Z; UTC when no offset is given).")
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N conversations.")
@click.option("--redact-file", type=click.Path(dir_okay=False, path_type=Path),
              help='Scrub with these rules too: JSON {"rules": [{"pattern", "replacement", "name"}]}, patterns '
              "in RE2 syntax (as $regex).")
@click.option("--tools", "tools_file", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="A tool-set file whose tools the trace's calls are answered for: each is offered as the file "
              "describes it (replay with run --tools FILE), its stub holding the recorded results only.")
@click.option("--expect", type=click.Choice(["none", "observed"]), default="none", show_default=True,
              help="none: no verifier yet (reported unjudged); observed: the trace's calls, names and arguments, "
              "are the verifier.")
@click.option("--no-cassettes", is_flag=True, help="Write the fixtures only: no cassette or golden is synthesized.")
@click.option("--jobs", type=click.IntRange(min=1), help="Processes making fixtures (and synthesizing their cassettes) "
              "at once (default: one a core this process may use).")
@click.pass_obj
def import_otel_cmd(project: Path, paths: tuple[Path, ...], out: Path | None, services: tuple[str, ...],
                    trace_ids: tuple[str, ...], since: str | None, limit: int | None, redact_file: Path | None,
                    tools_file: Path | None, expect: str, no_cassettes: bool, jobs: int | None) -> None:
    """Write production conversations from OpenTelemetry traces (OTLP/JSON, OTLP protobuf) or Langfuse traces
    as fixtures, one per conversation, each with a cassette and golden synthesized by replaying the trace
    through replio's loop."""
    from ._runtime.env import Env
    from ._runtime.processes import default_jobs
    from ._runtime.redact import Redactor
    from .fixtures.otel import DEFAULT_OUT, Options, import_otel, tool_definitions
    from .fixtures.otel.scrubbing import Scrubber, read_rules

    try:
        options = Options(services=frozenset(services), trace_ids=frozenset(t.lower() for t in trace_ids),
                          since=_since(since), limit=limit, expect=expect,
                          tools=tool_definitions(tools_file) if tools_file is not None else None)
        rules = read_rules(redact_file) if redact_file is not None else []
        scrubber = Scrubber(Redactor.from_environment(Env.current().values), rules)
        synthesizer = None if no_cassettes else _synthesizer(project, tools_file)
        whole = "whole" if no_cassettes else "whole, with its cassette and golden"
        with Interrupts().installed(), _interrupt_ends(f"while importing; each fixture written is {whole}, and "
                                                       "the batch still being made was not written"):
            report = import_otel(list(paths), out or project / DEFAULT_OUT, scrubber, options, synthesizer,
                                 jobs or default_jobs())
    except UsageError as exc:
        _fail(exc)
    click.echo(f"otel: {report.written} written, {report.unchanged} unchanged")
    if not no_cassettes:
        click.echo(f"cassettes synthesized: {report.cassettes}, without a cassette: {len(report.without_cassette)}")
    for fixture_id, why in report.without_cassette:
        click.echo(f"replio: {fixture_id}: written without a cassette: {why}", err=True)
    names = [rule.name or rule.pattern for rule in rules]
    for name in dict.fromkeys([*names, *report.redactions]):
        click.echo(f"redacted {name}: {report.redactions.get(name, 0)}")
    for problem in report.problems:
        click.echo(f"replio: skipped {problem.case_id}: {problem.message}", err=True)
    if not (report.written or report.unchanged or report.problems):
        click.echo(f"replio: {_nothing_chosen(paths, report.services, services, since, trace_ids)}", err=True)
    sys.exit(1 if report.problems else 0)


def _nothing_chosen(paths: tuple[Path, ...], found: Counter[str], services: tuple[str, ...],
                    since: str | None, trace_ids: tuple[str, ...]) -> str:
    """Why an import made no fixture: the input holds no conversation, or the filters let none through."""
    where = ", ".join(map(str, paths))
    if not found and trace_ids:
        return f"{where} holds no conversation in the traces --trace-id names ({', '.join(trace_ids)})"
    if not found:
        return (f"{where} holds no conversation (no span of a model call in a dialect replio reads); "
                "see docs/how-to/production-traces.md for what each instrumentation must record")
    held = ", ".join(f"{name or '(no service.name)'}: {plural(count, 'conversation')}"
                     for name, count in sorted(found.items()))
    chosen = " and ".join([*(f"--service {name}" for name in services), *([f"--since {since}"] if since else [])])
    return f"no conversation of {where} matched {chosen or 'the filters'}; it holds {held}"


def _synthesizer(project: Path, tools_file: Path | None) -> Any:
    """The project's synthesizer of cassettes and goldens, recording with the tool set `tools_file` (else
    the default); UsageError when its config or the tool set is broken."""
    from .run.synthesis import Synthesizer

    try:
        return Synthesizer.for_project(project, "default" if tools_file is None else str(tools_file))
    except ReplioError as exc:
        raise UsageError(f"{project}: {exc}; fix the project's config, or import with --no-cassettes") from None


def _since(value: str | None) -> Any:
    """--since as an aware datetime (UTC when it names no offset); UsageError for one that is not ISO 8601."""
    import datetime

    if value is None:
        return None
    try:
        moment = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"--since {value!r} is not an ISO 8601 time; give e.g. 2026-12-01T00:00:00Z") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=datetime.timezone.utc)


@eval_group.command("report")
@click.argument("results", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("-o", "--output-file", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The HTML file to write.")
def report_cmd(results: tuple[Path, ...], output_file: Path) -> None:
    """Build one HTML report from saved results (run --output json or --output-file), all their runs."""
    from .report.html import render_html

    saved = [(path, _saved(path)) for path in results]
    runs = [(path, run) for path, s in saved for run in s.runs]
    problems = [(p.file, p.message) for _, s in saved for p in s.problems]
    _write_output(output_file, render_html([run for _, run in runs], problems=problems,
                                          origins=[path.name for path, _ in runs]))


@eval_group.command("merge")
@click.argument("results", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--output", type=RUN_OUTPUTS, default="table", show_default=True)
@click.option("-o", "--output-file", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the merged result to this file, in the --output format (JSON for the table).")
@click.option("--junit-xml", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write JUnit XML to this file.")
@click.option("--strict", is_flag=True, help="Judge as run --strict does: request drift and no golden fail too.")
@click.option("--html", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the HTML report of the merged result to this file.")
@click.option("--markdown", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the review of the merged result as GitHub-flavoured Markdown to this file.")
@click.option("--markdown-max-chars", type=click.IntRange(min=1000), metavar="N",
              help="Keep the Markdown under N characters (a pull-request comment takes 65536).")
@gate_options()
@click.pass_obj
def merge_cmd(project: Path, results: tuple[Path, ...], output: str, output_file: Path | None,
              junit_xml: Path | None, strict: bool, html: Path | None, markdown: Path | None,
              markdown_max_chars: int | None, **flags: Any) -> None:
    """Merge saved results (the shards of a run, or runs of the same providers) into one, judged as run
    judges, and compared with a baseline and held to gates as run does."""
    from .config import load_project_config
    from .plan.settings import baseline_file
    from .report.merging import merge
    from .run.suite import Outcome

    gates = _gates(flags)
    try:
        merged = merge([(str(path), _saved(path)) for path in results])
        config = load_project_config(project)
    except (UsageError, ConfigError) as exc:
        _fail(exc)
    path = baseline_file(project, flags["baseline"], config)
    baseline = _baseline(path, gates)
    outcome = Outcome(runs=merged.runs, problems=[(p.file, p.message) for p in merged.problems],
                      strict=strict, require_pass=frozenset(config.require_pass))
    _check(outcome, gates, baseline, path)
    compared = len(outcome.runs) != 1
    with _interrupt_ends("while writing the merged result"):
        _emit(outcome, output, compared)
        _write_files(outcome, output, compared, output_file, junit_xml)
        if html is not None:
            _write_output(html, _html(outcome))
        if markdown is not None:
            _write_output(markdown, _markdown(outcome, markdown_max_chars, gates))
    _exit(outcome.exit_code, outcome.why())


def _saved(path: Path) -> Any:
    """A result file read back, validated like any input; exit 2 with a message naming it and
    the field when it is not one."""
    from .report.saved import read_saved

    try:
        return read_saved(path)
    except UsageError as exc:
        _fail(exc)
