"""The `replio` command (click): parses, calls the library, maps errors to exit codes.

Exit codes: 0 every fixture ran, 1 a fixture ended in `error`, 2 usage or configuration
errors, 130 interrupted. Heavy modules are imported inside the commands that need them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from .errors import ReplioError, UsageError, ConfigError

__all__ = ["main"]

OUTPUTS = click.Choice(["table", "json"])


def _fail(exc: ReplioError) -> NoReturn:
    click.echo(f"replio: error: {exc}", err=True)
    sys.exit(2)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="replio-replay", prog_name="replio")
def main() -> None:
    """Measure how well an LLM uses an agent's tools, reproducibly."""


@main.group("eval")
@click.option(
    "--path", "project", type=click.Path(file_okay=False, path_type=Path), default=".",
    show_default=True, help="The project: its .replio/ folder holds fixtures and config.",
)
@click.pass_context
def eval_group(ctx: click.Context, project: Path) -> None:
    """Evaluate tool use over fixtures."""
    ctx.obj = project


def _catalog(project: Path) -> Any:
    from .config import global_fixture_dir
    from .fixtures.discovery import discover
    from .plugins import plugin_manager

    return discover(project, global_fixture_dir(), plugin_manager())


@eval_group.command("list")
@click.option("--output", type=OUTPUTS, default="table", show_default=True)
@click.pass_obj
def list_cmd(project: Path, output: str) -> None:
    """List the fixtures, where each comes from, and any broken files."""
    catalog = _catalog(project)
    problems = [{"file": p.file, "message": p.message} for p in catalog.problems]
    if output == "json":
        from .report.jsonout import dumps

        fixtures = [
            {"id": f.fixture.id, "source": f.source, "description": f.fixture.description}
            for f in catalog.sorted()
        ]
        click.echo(dumps({"fixtures": fixtures, "problems": problems}), nl=False)
        return
    from .report.text import write_fixture_list, write_problems

    write_fixture_list(catalog, sys.stdout, rich=sys.stdout.isatty())
    write_problems([(p["file"], p["message"]) for p in problems], sys.stderr)


@eval_group.command("run")
@click.option("--fixture", "fixture_ids", multiple=True, metavar="ID", help="Run only these (repeatable).")
@click.option("--provider", "provider_spec", metavar="NAME[:MODEL]", help="The provider, e.g. ollama:qwen2.5.")
@click.option("--model", help="The model; overrides the one in the provider spec.")
@click.option("--base-url", help="The provider's base URL; overrides environment and config.")
@click.option("--compare", metavar="P1,P2,...", help="Run once per provider spec and compare side by side.")
@click.option("--jobs", type=click.IntRange(min=1), help="Fixtures run at once.")
@click.option("--output", type=OUTPUTS, default="table", show_default=True)
@click.option("--timing", is_flag=True, help="Add wall-clock seconds under a volatile `timing` key.")
@click.pass_obj
def run_cmd(
    project: Path,
    fixture_ids: tuple[str, ...],
    provider_spec: str | None,
    model: str | None,
    base_url: str | None,
    compare: str | None,
    jobs: int | None,
    output: str,
    timing: bool,
) -> None:
    """Run fixtures against a provider and report trace, metrics and verdicts."""
    from .suite import RunRequest, execute

    request = RunRequest(
        project=project,
        fixture_ids=fixture_ids,
        provider_specs=_specs(provider_spec, compare),
        model=model,
        base_url=base_url,
        jobs=jobs,
        timing=timing,
    )
    try:
        outcome = execute(request, _catalog(project))
    except (UsageError, ConfigError) as exc:
        _fail(exc)
    _emit(outcome, output, compare is not None)
    sys.exit(outcome.exit_code)


def _specs(provider: str | None, compare: str | None) -> list[str | None]:
    if compare is not None and provider is not None:
        raise click.UsageError("give either --provider or --compare, not both")
    if compare is not None:
        specs = [s.strip() for s in compare.split(",") if s.strip()]
        if len(specs) < 1:
            raise click.UsageError("--compare needs provider specs separated by commas")
        return list(specs)
    return [provider]


def _emit(outcome: Any, output: str, compared: bool) -> None:
    from .report.text import write_problems

    write_problems(outcome.problems, sys.stderr)
    if output == "json":
        from .report.jsonout import dumps

        runs = [r.to_json() for r in outcome.runs]
        click.echo(dumps({"runs": runs} if compared else runs[0]), nl=False)
        return
    from .report.text import write_compare, write_run

    rich = sys.stdout.isatty()
    if compared:
        write_compare(outcome.runs, sys.stdout, rich=rich)
    else:
        write_run(outcome.runs[0], sys.stdout, rich=rich)
    if outcome.interrupted:
        click.echo("interrupted: fixtures in flight were cancelled; the report above is partial.", err=True)
