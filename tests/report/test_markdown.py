"""The Markdown review: the comparisons' verdicts first, then whether CI passes and why not; summary, differing
verdicts, drift in <details> (failing fixtures first, repeated request drift once); nothing a model wrote renders
as HTML, a link, a reference, an emoji, math or a cell break; cut between rows under a size in characters and bytes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from replio_replay.judge.baseline import check_runs, parse_gates
from replio_replay.judge.metrics import summarize
from replio_replay.judge.results import FixtureResult, RunResult, Status, TrialResult
from replio_replay.report.markdown import GITHUB_LIMIT, Checks, html_text, render_markdown, text

HOSTILE = ('<img src=x onerror=alert(1)> [click](https://evil.example) ![i](http://x/i.png) @octocat '
           '| cell | `code` **bold** www.evil.example <!-- c --> &amp; <script>x</script>')
#: What GitHub links, turns into an emoji or math, or reorders, in text a model or tool could write.
GITHUB_SPECIALS = ("see #12 and GH-3, owner/repo#4, commit 0123456789abcdef0123456789abcdef01234567 "
                   "(or deadbee), :white_check_mark: :+1: $$x^2$$ and $y$ then \u202eevil\u202c \u2066x\u2069 \x07")
REPO = Path(__file__).resolve().parents[2]
REPLIO = str(Path(sys.executable).with_name("replio"))


def run(model: str, passed: dict[str, bool], drift: list[dict[str, object]] | None = None,
        request: list[dict[str, object]] | None = None) -> RunResult:
    fixtures = [FixtureResult(id=fid, passed=p, drift=drift or [], request_drift=request, answer=HOSTILE)
                for fid, p in passed.items()]
    return RunResult(provider="mock", model=model, fixtures=fixtures, summary=summarize(fixtures))


def still_special(out: str) -> list[str]:
    """What in `out` GitHub would still render as a reference, a commit, an emoji, math or a bidi override."""
    found = []
    out = out.replace("&#36;", "")  # an entity is decoded into its character, never into a reference
    for name, pattern in [("issue", r"#\d"), ("GH-", r"(?i)\bGH-\d"), ("commit", r"(?i)(?<![0-9a-f])[0-9a-f]{7,}"),
                          ("emoji", r":[\w+\\-]+:"), ("math", r"\$"),
                          ("bidi", "[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\x00-\x08\x0e-\x1f\x7f]")]:
        if re.search(pattern, out):
            found.append(name)
    return found


@pytest.mark.parametrize("danger", ["<img", "<script", "](", "![", "https://", "http://", "@octocat", "www.evil",
                                    "<!--", "**"])
def test_nothing_a_model_wrote_renders(danger: str) -> None:
    assert danger not in text(HOSTILE)
    if danger not in ("](", "![", "**"):  # Markdown's own syntax is plain text in raw HTML
        assert danger not in html_text(HOSTILE)
    assert "\n" not in text("a\nb\r\nc") and "\n" not in html_text("a\nb\r\nc")
    assert re.search(r"(?<!\\)[|`\[]", text(HOSTILE)) is None  # every cell break, code span and link escaped


@pytest.mark.parametrize("escape", [text, html_text])
def test_references_commits_emoji_math_and_bidi_overrides_are_made_plain(escape: Any) -> None:
    out = escape(GITHUB_SPECIALS)
    assert still_special(out) == []
    assert still_special(GITHUB_SPECIALS) == ["issue", "GH-", "commit", "emoji", "math", "bidi"]  # the check sees them
    assert "⟨U+202E⟩evil⟨U+202C⟩" in out and "⟨U+0007⟩" in out  # shown, not obeyed
    assert out.replace("\u200b", "").replace("&#36;", "$").count("#12") == 1  # the words are all still there
    assert escape("llamacpp:qwen2.5-coder-1.5b-instruct") == "llamacpp:qwen2.5-coder-1.5b-instruct"


@pytest.mark.parametrize("escape", [text, html_text])
def test_characters_that_draw_nothing_are_shown_not_hidden(escape: Any) -> None:
    """A zero-width space, a word joiner, a byte-order mark, a soft hyphen or tag characters (text a person cannot
    see and a model reading the comment can) would make two different answers look the same in a drift line."""
    out = escape("a\u200bb c\u2060d e\ufefff g\xadh \U000e0041\U000e0042")
    assert out == "a⟨U+200B⟩b c⟨U+2060⟩d e⟨U+FEFF⟩f g⟨U+00AD⟩h ⟨U+E0041⟩⟨U+E0042⟩"
    assert escape("👩\u200d💻 \u0645\u200c\u0627") == "👩\u200d💻 \u0645\u200c\u0627"  # joiners that shape are kept


def test_the_whole_review_holds_nothing_github_would_render_from_what_a_model_fixture_or_tool_wrote() -> None:
    change = {"path": f"trace[0].arguments.{GITHUB_SPECIALS}", "kind": "value_changed", "old": GITHUB_SPECIALS,
              "new": HOSTILE}
    fixtures = [FixtureResult(id=f"fix {GITHUB_SPECIALS} {i}", passed=i == 0, drift=[change], request_drift=[change])
                for i in range(2)]
    a = RunResult(provider="mock", model=GITHUB_SPECIALS, fixtures=fixtures, summary=summarize(fixtures))
    b = RunResult(provider="mock", model="b:1", fixtures=fixtures[::-1], summary=summarize(fixtures))
    checked = check_runs([a, b], parse_gates("--fail-under", ["pass_rate=0.9"]), None)
    md = render_markdown([a, b], checked.paired, checked.comparisons, checks=Checks(failed=tuple(checked.failures)))
    assert md.count("fix ") > 6 and md.count("<details>") == 4
    assert still_special(md) == [] and "<img" not in md and "https://" not in md


def test_a_details_title_is_escaped_as_html_not_markdown() -> None:
    r = run("a", {"snake_case_<b>": False}, drift=[{"path": "x", "kind": "value_changed", "old": 1, "new": 2}])
    md = render_markdown([r])
    (summary,) = re.findall(r"<summary>(.*)</summary>", md)
    assert "snake_case_&lt;b&gt;" in summary and "\\" not in summary


def test_the_review_leads_with_each_verdict_then_whether_ci_passes() -> None:
    a = run("a", {f"f{i}": i < 15 for i in range(16)})
    b = run("b", {f"f{i}": i < 4 for i in range(16)})
    gates = parse_gates("--fail-under", ["pass_rate=0.5"])
    checked = check_runs([a, b], gates, None)
    md = render_markdown([a, b], checked.paired, checked.comparisons,
                         checks=Checks(gates=("--fail-under pass_rate=0.5",), failed=tuple(checked.failures)))
    lines = [line for line in md.splitlines() if line]
    assert lines[0] == "## replio eval"
    assert lines[1].startswith("- **worse**: pass rate -0.69 [") and "; mock:b vs mock:a (detects ±" in lines[1]
    assert lines[2] == "**CI: failed.** Gates: --fail-under pass\\_rate=0.5."
    assert lines[3] == "- gate failed: mock:\u200bb: pass\\_rate 0.25 &lt; 0.50 \\(--fail-under\\)"
    # (`:b:` is an emoji's shortcode: broken by a zero-width space)
    assert md.index("| run | fixtures |") > md.index("**CI: failed.**")
    assert "| f4 | pass | FAIL |" in md and "| f0 | pass | pass |" not in md


def test_ci_passes_or_names_each_fixture_that_fails_it() -> None:
    clean = run("a", {"f1": True})
    assert "**CI: passed.** No score gate was set." in render_markdown([clean])
    change = {"path": "trace[0].name", "kind": "value_changed", "old": "a", "new": "b"}
    drifted = run("a", {"f1": True, "f2": True}, drift=[change])
    md = render_markdown([drifted], checks=Checks(gates=("--fail-if-worse",)))
    assert "**CI: failed.** Gates: --fail-if-worse.\n\n- 2 fixtures drifted from the golden: f1, f2\n" in md
    request = [{"path": "tools[x].description", "kind": "value_changed", "old": "a", "new": "b"}]
    stale = run("a", {"f1": True}, request=request)
    assert "**CI: passed.**" in render_markdown([stale])
    assert "- 1 fixture with request drift \\(--strict\\): f1" in render_markdown([stale], checks=Checks(strict=True))


def trial(n: int, request: list[dict[str, object]], drift: list[dict[str, object]] | None = None) -> TrialResult:
    return TrialResult(trial=n, status=Status.OK, passed=True, drift=drift or [], request_drift=request)


def test_failing_fixtures_come_first_marked_and_repeated_request_drift_is_said_once() -> None:
    """One description changed: 13 fixtures × 4 trials drift the same way, said in one block of one line."""
    description = [{"path": "tools[lookup_order].description", "kind": "value_changed", "old": "Look up an order.",
                    "new": "Find an order."}]
    golden = [{"path": "trace[1].name", "kind": "value_changed", "old": "lookup_order", "new": "cancel_order"}]
    fixtures = [FixtureResult(id=f"order-{i:02}", passed=True, trials=[trial(t, description) for t in (1, 2, 3, 4)],
                              passes=4, n=4) for i in range(13)]
    fixtures.append(FixtureResult(id="zz-cancel", passed=False, passes=3, n=4, trials=[
        trial(t, description, golden if t == 2 else None) for t in (1, 2, 3, 4)]))
    r = RunResult(provider="mock", model="a", fixtures=fixtures, summary=summarize(fixtures))
    md = render_markdown([r])
    blocks = re.findall(r"<details><summary>(.*?)</summary>\n\n(.*?)\n\n</details>", md, re.S)
    assert [title for title, _ in blocks] == [
        "<b>fails CI</b>: zz-cancel: golden drift (1 change); request drift (1 change)",
        "request drift in 13 fixtures: the same 1 change"]
    first = blocks[0][1].splitlines()
    assert first[0] == "- ~ golden: trace\\[1\\].name value\\_changed: \"lookup\\_order\" -&gt; \"cancel\\_order\" " \
                       "(1 trial: 2)"
    assert first[1].startswith("- ~ request: tools\\[lookup\\_order\\].description") and "trial" not in first[1]
    assert first[2] == "- re-record with --record-mode all --fixture zz-cancel"
    grouped = blocks[1][1].splitlines()
    assert grouped[0] == "Fixtures: " + ", ".join(f"order-{i:02}" for i in range(13))
    assert len(grouped) == 4 and md.count("tools\\[lookup\\_order\\].description") == 2
    strict = render_markdown([r], checks=Checks(strict=True))  # request drift fails too: still said once
    assert re.findall(r"<summary>(.*?)</summary>", strict) == [
        "<b>fails CI</b>: zz-cancel: golden drift (1 change); request drift (1 change)",
        "<b>fails CI</b>: request drift in 13 fixtures: the same 1 change"]


def test_a_fixture_whose_verdict_changed_is_marked_among_the_first() -> None:
    request = [{"path": "tools[x].description", "kind": "value_changed", "old": "a", "new": "b"}]
    a, b = run("a", {"f1": True, "f2": True}, request=request), run("b", {"f1": True, "f2": False}, request=request)
    md = render_markdown([a, b])
    assert re.findall(r"<summary>(.*?)</summary>", md) == [
        "<b>!</b> f2 (mock:a): request drift (1 change); verdicts differ",
        "<b>!</b> f2 (mock:b): request drift (1 change); verdicts differ",
        "f1 (mock:a): request drift (1 change)", "f1 (mock:b): request drift (1 change)"]


def big_run(value: str, fixtures: int = 400, model: str = "a", odd: int = 0) -> RunResult:
    change = {"path": value, "kind": "value_changed", "old": "a", "new": "b"}  # a path is said whole
    return run(model, {f"f{i:03}": i % 2 == odd for i in range(fixtures)}, drift=[change])


def whole_rows(md: str) -> None:
    """Every table row is whole, every <details> closed, and the last line says what was left out."""
    body, tail = md.rstrip("\n").rsplit("\n", 1)
    assert tail.startswith("… left out to stay under ") and tail.endswith("; the HTML report has everything.")
    assert body.count("<details>") == body.count("</details>")
    assert all(line.endswith(" |") for line in body.splitlines() if line.startswith("| "))


@pytest.mark.parametrize("limit", [1000, 1001, 1500, 4096, 20_000, 65_536])
def test_the_review_is_cut_between_rows_under_the_characters_asked_naming_what_it_left_out(limit: int) -> None:
    a, b = big_run("x" * 300), big_run("x" * 300, model="b", odd=1)  # every verdict differs: a long table
    md = render_markdown([a, b], max_chars=limit)
    assert len(md) <= limit
    whole_rows(md)
    rows = len(re.findall(r"^\| f\d+ \|", md, re.M))
    said = f"{400 - rows:,} rows of the verdicts table, " if rows < 400 else ""
    assert f"left out to stay under {limit:,} characters: {said}" in md
    assert md.rstrip().endswith(f"{800 - md.count('<details>')} fixtures' drift; the HTML report has everything.")


def test_a_lone_surrogate_is_shown_in_the_review_and_read_as_u_fffd_from_a_saved_result(tmp_path: Path) -> None:
    """A tool listing a file whose name is not UTF-8 gives a lone surrogate (JSON writes it `\\udcff`): the review of
    the run shows its code point, and `merge` of the saved result writes every report instead of a traceback."""
    drift = [{"path": "trace[0].result", "kind": "value_changed", "old": "notes\udcff.txt", "new": "notes.txt"}]
    assert "notes⟨U+DCFF⟩.txt" in render_markdown([run("a", {"ls-\udcff": False}, drift=drift)])
    saved = tmp_path / "saved.json"
    saved.write_text(json.dumps(run("a", {"ls-\udcff": False}, drift=drift).to_json()), encoding="utf-8")
    assert "\\udcff" in saved.read_text()
    md, page = tmp_path / "review.md", tmp_path / "report.html"
    done = subprocess.run([REPLIO, "eval", "--path", str(tmp_path), "merge", str(saved), "--markdown", str(md),
                           "--html", str(page)], capture_output=True, text=True, timeout=120,
                          env={"CI": "1", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "ls-\ufffd" in md.read_text() and "notes\ufffd.txt" in md.read_text() and page.is_file()


def test_whether_ci_passes_is_kept_however_many_comparisons_come_before_it() -> None:
    a = run("a", {f"f{i}": True for i in range(3)})
    comparison = {"metric": "pass_rate", "diff": -0.5, "ci95": (-0.9, -0.1), "p_value": 0.01, "verdict": "worse",
                  "a": "x" * 100, "b": "y" * 100, "mde": 0.3}
    md = render_markdown([a], [comparison] * 6, checks=Checks(failed=("pass_rate 0.1 < 0.9",)), max_chars=1000)
    assert len(md) <= 1000 and md.count("- **worse**") == 2
    assert "\n\n**CI: failed.** No score gate was set.\n\n" in md  # after a blank line: not inside the last item
    assert md.endswith("\n… left out to stay under 1,000 characters: 4 comparisons, 1 line of CI failures, "
                       "1 row of the summary; the HTML report has everything.\n")
    passed = render_markdown([a], [comparison] * 6, max_chars=1000)
    assert len(passed) <= 1000 and "**CI: passed.**" in passed


def test_the_step_summary_is_kept_under_githubs_limit_in_bytes() -> None:
    cjk = big_run("漢字" * 600, fixtures=1000)  # 3 bytes a character: ~3.6 MB of drift
    md = render_markdown([cjk])
    assert len(md.encode()) <= GITHUB_LIMIT < len(md.encode()) + 4000
    whole_rows(md)
    assert "bytes: " in md.rstrip().rsplit("\n", 1)[1]


def test_a_review_that_fits_is_whole() -> None:
    md = render_markdown([big_run("a", fixtures=3)], max_chars=65_536)
    assert "left out" not in md and md.count("<details>") == 3


def test_run_writes_the_markdown_file(tmp_path: Path) -> None:
    out = tmp_path / "review.md"
    done = subprocess.run([REPLIO, "eval", "--path", str(REPO / "examples" / "tau2"), "run", "--tag", "tau2-mock",
                           "--markdown", str(out), "--markdown-max-chars", "4000", "--fail-under", "pass_rate=0.5"],
                          capture_output=True, text=True, env={"CI": "1", "PATH": "/usr/bin:/bin"}, timeout=120)
    assert done.returncode == 1, done.stderr
    md = out.read_text()
    assert md.startswith("## replio eval\n\n**CI: failed.** Gates: --fail-under pass\\_rate=0.5.\n\n"
                         "- gate failed: pass\\_rate 0.30 &lt; 0.50 \\(--fail-under\\)\n")
    assert "| llamacpp:qwen2.5-coder-1.5b-instruct | 10 | 0.30 [0.11, 0.60] |" in md


def test_the_ci_page_shows_the_markdown_the_trials_example_gives(tmp_path: Path) -> None:
    page = (REPO / "docs" / "how-to" / "ci.md").read_text()
    shown = page.split("```markdown\n", 1)[1].split("```", 1)[0]
    out = tmp_path / "review.md"
    models = "llamacpp:qwen2.5-coder-1.5b-instruct,llamacpp:qwen2.5-coder-0.5b-instruct"
    subprocess.run([REPLIO, "eval", "--path", str(REPO / "examples" / "trials"),
                    "run", "--compare", models, "--fixture", "read-*", "--fixture", "find-*", "--fixture", "edit-*",
                    "--markdown", str(out)], capture_output=True, text=True, timeout=300,
                   env={"CI": "1", "PATH": "/usr/bin:/bin", "LLAMACPP_BASE_URL": "http://127.0.0.1:9/v1"})
    assert out.read_text() == shown
