"""The Markdown review, pure: a run as GitHub-flavoured Markdown for a pull request (`--markdown FILE`).

What a reviewer reads first: the verdict of each paired comparison (better, worse or no
detectable difference, with its sign and size), then whether the run passes CI and, when it does
not, which gates failed and which fixtures. Then each run's summary with its intervals, the
fixtures whose verdicts differ between runs (those that passed in the baseline and fail now
first), and the drift: the fixtures that fail (golden drift, a verdict that changed) first and
marked, each in a collapsed ``<details>``, then the request drift that the same change made in
many fixtures, once per change with the fixtures it touched.

Everything a model, a fixture or a tool wrote goes through `text` (Markdown) or `html_text` (the
``<summary>`` of a ``<details>``, which GitHub reads as raw HTML, where a backslash escape would
show). Both make it inert as GitHub renders comments and step summaries: no HTML, link, image,
table cell break or line break; no mention (``@`` gets a zero-width space after it); no autolinked
reference (``#12``, ``GH-3``, ``owner/repo#4``: a zero-width space after the ``#`` or ``GH-``),
commit (a run of 7 or more hexadecimal digits gets a zero-width space every 6, as GitHub links
7 to 40), address (``://``, ``www.``) or ``:emoji:`` shortcode (a zero-width space after the
``:``); no math (``$`` is written ``&#36;``: an entity is text to GitHub's Markdown, never a
delimiter); and bidirectional overrides, control characters and characters that draw nothing
(zero-width spaces, tag characters) are shown by their code point (``⟨U+202E⟩``) instead of reordering
or hiding what follows.

Size: the whole stays under `GITHUB_LIMIT` bytes (a step summary takes 1 MiB) and under
`max_chars` characters when given (a pull-request comment takes 65,536). It is cut between
rows and between fixtures' drift, never inside one, and its last line then says what was left out; the
heading and whether CI passes are kept however many comparisons come before them.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._runtime.wording import plural
from ..judge.baseline import Comparison
from ..judge.paired import detects_text, p_text
from ..judge.results import FixtureResult, RunResult
from ..recording.again import fixture_hint, judge_alone, run_hint
from .gate import judge
from .text import describe_change, units, whose

__all__ = ["GITHUB_LIMIT", "Checks", "html_text", "render_markdown", "text"]

#: GitHub's limit on a step summary is 1 MiB (1,048,576 bytes); the review keeps under this many.
GITHUB_LIMIT = 1_000_000

_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()!|~])")
_ZWSP = "\u200b"
# Bidirectional overrides, isolates and marks, the control characters `str.split` keeps, and what draws
# nothing: zero-width spaces and joiners of words, the byte-order mark, the soft hyphen, and the tag
# characters (text a reader cannot see but a model reading the comment can); and a lone surrogate (a file
# name that is not UTF-8, as JSON escapes it), which no UTF-8 file can hold. Joiners that shape a script or an
# emoji (U+200C, U+200D) are left alone.
_INVISIBLE = re.compile("[\x00-\x08\x0e-\x1b\x7f-\x9f\xad\u061c\u180e\u200b\u200e\u200f\u202a-\u202e"
                        "\u2060-\u2064\u2066-\u2069\ud800-\udfff\ufeff\U000e0000-\U000e007f]")
_HEX_RUN = re.compile(r"(?i)(?<![0-9a-f])[0-9a-f]{7,}(?![0-9a-f])")


def _inert(escaped: str) -> str:
    """What GitHub would turn into a reference, link, emoji or math in already-escaped text, made plain."""
    out = _INVISIBLE.sub(lambda m: f"⟨U+{ord(m[0]):04X}⟩", escaped)
    out = re.sub(r"(?i)\bGH-(?=\d)", lambda m: m[0] + _ZWSP, out.replace("#", "#" + _ZWSP))
    out = _HEX_RUN.sub(lambda m: _ZWSP.join(m[0][i:i + 6] for i in range(0, len(m[0]), 6)), out)
    out = re.sub(r":(?=[\w+\\-]+:)", ":" + _ZWSP, out).replace("@", "@" + _ZWSP)
    out = re.sub(r"(?i)www\.", "www" + _ZWSP + ".", out.replace("://", ":/" + _ZWSP + "/"))
    return " ".join(out.replace("$", "&#36;").split())


def text(value: object) -> str:
    """`value` as inert Markdown text, on one line (see the module's docstring)."""
    out = str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _inert(_PUNCTUATION.sub(r"\\\1", out))


def html_text(value: object) -> str:
    """`value` as inert text inside raw HTML (a ``<summary>``), on one line: entities, no backslashes."""
    return _inert(html.escape(str(value), quote=False))


@dataclass(frozen=True)
class Checks:
    """How CI holds the run: `--strict`, the fixtures `require_pass` lists, the score gates given
    (as their flags say them), the line of each that failed, and the fixture files skipped."""

    strict: bool = False
    require_pass: frozenset[str] = frozenset()
    gates: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    problems: int = 0


#: Each way a fixture fails CI (`report.gate.KINDS`), as the review says it after a count of fixtures.
_FAILS = {
    "error": "ended in error",
    "drift": "drifted from the golden",
    "request drift": "with request drift (--strict)",
    "judge drift": "whose judge's requests changed (--strict)",
    "no golden": "without a golden (--strict)",
    "verifier": "failed a verifier that require_pass lists",
}


#: What a piece left out is counted as in the last line: one, and many.
_MANY = {"comparison": "comparisons", "line of CI failures": "lines of CI failures",
         "row of the summary": "rows of the summary", "row of the verdicts table": "rows of the verdicts table",
         "fixture's drift": "fixtures' drift"}


@dataclass(frozen=True)
class _Piece:
    """A part of the review that is kept or left out whole; `what` counts it in the last line."""

    text: str
    what: str = ""
    count: int = 1
    #: Kept whatever is cut before it (whether CI passes): its room is set aside first.
    keep: bool = False


def render_markdown(runs: Sequence[RunResult], paired: Sequence[dict[str, Any]] = (),
                    baselines: Sequence[Comparison | None] = (), *, checks: Checks | None = None,
                    max_chars: int | None = None) -> str:
    """The review of `runs` (with their paired comparisons and baseline comparisons), held to `checks`."""
    checks = checks or Checks()
    regressed = {(run.key.label, c.id) for run, cmp in zip(runs, baselines) if cmp for c in cmp.regressed}
    by_id = [{f.id: f for f in r.fixtures} for r in runs]
    ids = list(dict.fromkeys(f.id for r in runs for f in r.fixtures))
    differ = [i for i in ids if any((r.key.label, i) in regressed for r in runs)
              or len({m[i].verdict if i in m else "-" for m in by_id}) > 1]
    pieces = [_Piece("## replio eval\n\n", keep=True)]
    pieces += [_Piece(f"- {_comparison(c)}\n", "comparison") for c in paired]
    pieces += [_Piece("\n" if paired else "", keep=True), *_ci(runs, checks), *_summary(runs)]
    if differ:
        marked = {i for _, i in regressed}
        pieces.append(_Piece("\n### Fixtures whose verdicts differ" + (" (! passed in the baseline, fail now)"
                                                                       if marked else "") + "\n\n"
                             "| fixture | " + " | ".join(text(r.key.label) for r in runs) + " |\n"
                             "| --- |" + " --- |" * len(runs) + "\n"))
        pieces += [_Piece(f"| {'! ' if i in marked else ''}{text(i)} | "
                          + " | ".join(m[i].verdict if i in m else "-" for m in by_id) + " |\n", "row of the verdicts table")
                   for i in sorted(differ, key=lambda i: i not in marked)]
    drift = _drift(runs, checks, regressed, set(differ))
    if drift:
        pieces += [_Piece("\n### Drift\n\n"), *drift]
    return _fit(pieces, max_chars)


def _comparison(c: dict[str, Any]) -> str:
    """A paired comparison, its verdict first: `**worse**: pass rate -0.24 [-0.42, -0.07], p = 0.006 (B vs A)`."""
    low, high = c["ci95"]
    said = f"{c['metric'].replace('_', ' ')} {c['diff']:+.2f} [{low:+.2f}, {high:+.2f}], {p_text(c)}"
    if c.get("resamples"):
        said += f" (Monte Carlo, {c['resamples']} sign flips)"
    verdict = f"verdict withheld: {c['withheld']}" if c["verdict"] == "withheld" else c["verdict"]
    detects = detects_text(c)
    return f"**{text(verdict)}**: {said}; {text(c['b'])} vs {text(c['a'])} ({detects})"


def _gate_fails(runs: Sequence[RunResult], checks: Checks) -> list[str]:
    """One line per way fixtures fail CI, naming them."""
    verdicts = [(r.key.label, f.id, judge(f, strict=checks.strict, require_pass=f.id in checks.require_pass,
                                          tools=r.tools)) for r in runs for f in r.fixtures]
    lines = []
    for kind, says in _FAILS.items():
        which = list(dict.fromkeys(f"{fid} ({label})" if len(runs) > 1 else fid
                                   for label, fid, v in verdicts if kind in v.kinds))
        if which:
            shown = ", ".join(which[:10]) + (f" and {len(which) - 10} more" if len(which) > 10 else "")
            lines.append(f"{plural(len(which), 'fixture')} {says}: {shown}")
    return lines


def _ci(runs: Sequence[RunResult], checks: Checks) -> list[_Piece]:
    """Whether the run passes CI: the gates given, and each gate and fixture that fails it."""
    fails = [f"gate failed: {line}" for line in checks.failed] + _gate_fails(runs, checks)
    if checks.problems:
        fails.insert(0, f"{plural(checks.problems, 'fixture file')} could not be read (skipped)")
    gates = f"Gates: {text('; '.join(checks.gates))}." if checks.gates else "No score gate was set."
    if not fails:
        return [_Piece(f"**CI: passed.** {gates}\n", keep=True)]
    return [_Piece(f"**CI: failed.** {gates}\n\n", keep=True), *(_Piece(f"- {text(line)}\n", "line of CI failures")
                                                     for line in fails)]


def _summary(runs: Sequence[RunResult]) -> list[_Piece]:
    def rate(run: RunResult, metric: str, value: float | None) -> str:
        ci = (run.summary.ci95 or {}).get(metric)
        if value is None:
            return "-"
        return f"{value:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else f"{value:.2f}"

    rows = [_Piece(f"| {text(r.key.label)} | {r.summary.fixtures} | {rate(r, 'pass_rate', r.summary.pass_rate)} | "
                   f"{rate(r, 'accuracy', r.summary.accuracy)} | {r.summary.errors} | {r.summary.tokens} | "
                   f"{r.summary.drifted} |\n", "row of the summary") for r in runs]
    return [_Piece("\n| run | fixtures | pass rate | accuracy | errors | tokens | golden drift |\n"
                   "| --- | ---: | --- | --- | ---: | ---: | ---: |\n"), *rows]


def _lines(result: FixtureResult, kind: str) -> list[tuple[str, list[int]]]:
    """Each distinct change of one kind (`drift`, `request_drift`) as a line, with the trials it
    was seen in: a change every trial made is said once."""
    seen: dict[str, list[int]] = {}
    for unit in units(result):
        for change in getattr(unit, kind) or []:
            sign, said = describe_change(change)
            line = f"{sign} golden: {text(result.shown_text(said))}" if kind == "drift" else \
                f"{sign} request{whose(change)}: {text(said)}"
            trials = seen.setdefault(line, [])
            trial = getattr(unit, "trial", 1)
            if trial not in trials:
                trials.append(trial)
    return list(seen.items())


def _said(lines: list[tuple[str, list[int]]], trials: int) -> list[str]:
    return [f"- {line}" + ("" if len(seen) == trials or trials == 0 else
                           f" ({plural(len(seen), 'trial')}: {', '.join(map(str, seen))})") for line, seen in lines]


def _drift(runs: Sequence[RunResult], checks: Checks, regressed: set[tuple[str, str]],
           differ: set[str]) -> list[_Piece]:
    """Per drifted fixture a ``<details>``, except request drift alone, which is grouped by the change:
    one block per change (and run) however many fixtures and trials made it. What fails CI comes first,
    then what a verdict that changed marks (`!`), then the rest."""
    failing: list[_Piece] = []
    marked: list[_Piece] = []
    groups: dict[tuple[str, bool, tuple[str, ...]], list[tuple[RunResult, FixtureResult]]] = {}
    for run in runs:
        name = f" ({html_text(run.key.label)})" if len(runs) > 1 else ""
        for r in run.fixtures:
            golden, request = _lines(r, "drift"), _lines(r, "request_drift")
            if not golden and not request:
                continue
            ok = judge(r, strict=checks.strict, require_pass=r.id in checks.require_pass, tools=run.tools).ok
            changed = (run.key.label, r.id) in regressed or r.id in differ
            if not golden and not changed:
                groups.setdefault((run.key.label, ok, tuple(line for line, _ in request)), []).append((run, r))
                continue
            why = [f"golden drift ({plural(len(golden), 'change')})"] if golden else []
            why += [f"request drift ({plural(len(request), 'change')})"] if request else []
            why += ["passed in the baseline, fails now" if (run.key.label, r.id) in regressed else
                    "verdicts differ" if changed else ""]
            body = _said(golden, len(r.trials or [])) + _said(request, len(r.trials or []))
            if request:
                body.append(f"- {text(fixture_hint(_first(r), r.id, run.tools))}")
            title = f"{_FAILS_CI if not ok else '<b>!</b> '}{html_text(r.id)}{name}: {'; '.join(w for w in why if w)}"
            (marked if ok else failing).append(_Piece(_details(title, body), "fixture's drift"))
    grouped = [(key[1], _group(fixtures, len(runs) > 1, failing=not key[1])) for key, fixtures in groups.items()]
    return failing + [p for ok, p in grouped if not ok] + marked + [p for ok, p in grouped if ok]


#: How the title of a fixture's (or a group's) drift says that it fails CI.
_FAILS_CI = "<b>fails CI</b>: "


def _first(result: FixtureResult) -> list[dict[str, Any]]:
    """The request drift of the first trial that has some."""
    return next((u.request_drift for u in units(result) if u.request_drift), [])


def _group(fixtures: list[tuple[RunResult, FixtureResult]], name_run: bool, *, failing: bool) -> _Piece:
    """Request drift alone, the same in each of `fixtures` (of one run; each `failing` CI or none): one block."""
    run, first = fixtures[0]
    lines = _lines(first, "request_drift")
    name = f" ({html_text(run.key.label)})" if name_run else ""
    mark = _FAILS_CI if failing else ""
    if len(fixtures) == 1:
        title = f"{mark}{html_text(first.id)}{name}: request drift ({plural(len(lines), 'change')})"
        hint = fixture_hint(_first(first), first.id, run.tools)
        return _Piece(_details(title, [*_said(lines, len(first.trials or [])), f"- {text(hint)}"]), "fixture's drift")
    hint = run_hint(judge_alone(_first(first))) + ("" if run.tools == "default" else f" --tools {run.tools}")
    title = f"{mark}request drift in {plural(len(fixtures), 'fixture')}{name}: the same {plural(len(lines), 'change')}"
    body = [f"Fixtures: {text(', '.join(r.id for _, r in fixtures))}", "", *(f"- {line}" for line, _ in lines),
            f"- {text(hint)} (one at a time: {text(fixture_hint(_first(first), first.id, run.tools))})"]
    return _Piece(_details(title, body), "fixture's drift", len(fixtures))


def _details(title: str, body: list[str]) -> str:
    return f"<details><summary>{title}</summary>\n\n" + "\n".join(body) + "\n\n</details>\n\n"


def _fit(pieces: list[_Piece], max_chars: int | None) -> str:
    """The pieces that fit under both limits, whole and in order, and those to `keep` whatever is cut;
    when some do not fit, a last line naming what was left out (itself counted within the limits)."""
    tails = [""] * (len(pieces) + 1)
    # the room the pieces kept whatever is cut take after each piece, in characters and bytes
    kept_chars, kept_bytes = [0] * (len(pieces) + 1), [0] * (len(pieces) + 1)
    left: dict[str, int] = {}
    for i in range(len(pieces) - 1, -1, -1):
        if pieces[i].what:
            left[pieces[i].what] = left.get(pieces[i].what, 0) + pieces[i].count
        tails[i] = _tail(left, max_chars)
        keep = pieces[i].keep
        kept_chars[i] = kept_chars[i + 1] + (len(pieces[i].text) if keep else 0)
        kept_bytes[i] = kept_bytes[i + 1] + (len(pieces[i].text.encode()) if keep else 0)
    chars = size = 0
    kept: list[str] = []
    for i, piece in enumerate(pieces):
        more, more_bytes = len(piece.text), len(piece.text.encode())
        after = tails[i + 1]
        if not piece.keep and ((max_chars is not None and chars + more + kept_chars[i + 1] + len(after) > max_chars)
                               or size + more_bytes + kept_bytes[i + 1] + len(after.encode()) > GITHUB_LIMIT):
            return "".join(kept + [p.text for p in pieces[i:] if p.keep]) + tails[i]
        kept.append(piece.text)
        chars, size = chars + more, size + more_bytes
    return "".join(kept)


def _tail(left: dict[str, int], max_chars: int | None) -> str:
    if not left:
        return ""
    under = f"{max_chars:,} characters" if max_chars is not None else f"{GITHUB_LIMIT:,} bytes"
    shown = ", ".join(plural(n, what, _MANY[what]) for what, n in reversed(left.items()))
    return f"\n… left out to stay under {under}: {shown}; the HTML report has everything.\n"
