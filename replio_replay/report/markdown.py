"""The Markdown review, pure: a run as GitHub-flavoured Markdown for a pull request (`--markdown FILE`).

What it holds: each run's summary with its intervals, the paired comparisons with their
verdicts, the fixtures whose verdicts differ between runs or that passed in the baseline and
fail now, and, per drifted fixture, a collapsed ``<details>`` with its golden drift and request
drift as a reviewer reads them (a changed tool description names its field), and what to run to
record it again (`recording.again`).

Everything a model, a fixture or a tool wrote goes through `text`, so nothing renders as HTML, a
link, an image, a mention or a table cell break: ``&``, ``<`` and ``>`` become entities, Markdown's
punctuation that makes links, images, code, emphasis and cells is escaped with a backslash, and
``@``, ``://`` and ``www.`` get a zero-width space
so GitHub links no user and no address. The whole stays under `GITHUB_LIMIT` (the step summary's
1 MiB) and under `max_chars` when given (a pull-request comment takes 65,536): fixtures' details
are left out from the last, and a final line says how many.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..judge.baseline import Comparison
from ..judge.results import FixtureResult, RunResult
from ..recording.again import fixture_hint
from .text import comparison_line, describe_change, units

__all__ = ["GITHUB_LIMIT", "render_markdown", "text"]

#: GitHub's limit on a step summary (bytes); the review is kept under it with room to spare.
GITHUB_LIMIT = 1_000_000

_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()!|~])")
_ZWSP = "\u200b"


def text(value: object) -> str:
    """`value` as inert Markdown text: no HTML, link, image, mention or cell break; one line."""
    out = str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    out = _PUNCTUATION.sub(r"\\\1", out)
    out = out.replace("@", "@" + _ZWSP).replace("://", ":/" + _ZWSP + "/")
    out = re.sub(r"(?i)www\.", "www" + _ZWSP + ".", out)
    return " ".join(out.split())


def _rate(run: RunResult, metric: str, value: float | None) -> str:
    ci = (run.summary.ci95 or {}).get(metric)
    if value is None:
        return "-"
    return f"{value:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else f"{value:.2f}"


def _verdict(result: FixtureResult | None) -> str:
    return "-" if result is None else result.verdict


def render_markdown(runs: Sequence[RunResult], paired: Sequence[dict[str, Any]] = (),
                    baselines: Sequence[Comparison | None] = (), *, max_chars: int | None = None) -> str:
    """The review of `runs` (with their paired comparisons and baseline comparisons)."""
    head = ["## replio eval", "", "| run | fixtures | pass rate | accuracy | errors | tokens | golden drift |",
            "| --- | ---: | --- | --- | ---: | ---: | ---: |"]
    for run in runs:
        s = run.summary
        head.append(f"| {text(run.key.label)} | {s.fixtures} | {_rate(run, 'pass_rate', s.pass_rate)} | "
                    f"{_rate(run, 'accuracy', s.accuracy)} | {s.errors} | {s.tokens} | {s.drifted} |")
    if paired:
        head += ["", "### Comparisons", ""] + [f"- {text(comparison_line(c))}" for c in paired]
    by_id = [{f.id: f for f in r.fixtures} for r in runs]
    ids = list(dict.fromkeys(f.id for r in runs for f in r.fixtures))
    regressed = {c.id for cmp in baselines if cmp for c in cmp.regressed}
    differ = [i for i in ids if i in regressed or len({_verdict(m.get(i)) for m in by_id}) > 1]
    if differ:
        head += ["", "### Fixtures whose verdicts differ" + (" (! passed in the baseline, fail now)" if regressed
                                                             else ""), "",
                 "| fixture | " + " | ".join(text(r.key.label) for r in runs) + " |",
                 "| --- |" + " --- |" * len(runs)]
        head += [f"| {'! ' if i in regressed else ''}{text(i)} | " + " | ".join(_verdict(m.get(i)) for m in by_id)
                 + " |" for i in differ]
    details = [block for run in runs for r in run.fixtures if (block := _details(run, r, len(runs) > 1))]
    limit = min(GITHUB_LIMIT, max_chars) if max_chars else GITHUB_LIMIT
    out = "\n".join(head) + "\n"
    if details:
        out += "\n### Drift\n\n"
    for shown, block in enumerate(details):
        left = len(details) - shown
        tail = f"\n… {left} more fixture{'' if left == 1 else 's'}: see the HTML report\n"
        if len(out) + len(block) + len(tail) + 200 > limit:
            return (out + tail)[:limit]
        out += block
    return out[:limit]


def _details(run: RunResult, result: FixtureResult, name_run: bool) -> str:
    """One drifted fixture's collapsed drift, or '' when it has none."""
    lines = []
    for unit in units(result):
        trial = f" (trial {unit.trial})" if result.trials else ""
        for change in unit.drift or []:
            sign, said = describe_change(change)
            lines.append(f"- golden{trial}: {sign} {text(said)}")
        for change in unit.request_drift or []:
            sign, said = describe_change(change)
            lines.append(f"- request{trial}: {sign} {text(said)}")
        if unit.request_drift:
            lines.append(f"- {text(fixture_hint(unit.request_drift, result.id, run.tools))}")
    if not lines:
        return ""
    title = text(result.id) + (f" ({text(run.key.label)})" if name_run else "")
    return f"<details><summary>{title}: {len(lines)} change{'' if len(lines) == 1 else 's'}</summary>\n\n" \
        + "\n".join(lines) + "\n\n</details>\n\n"
