"""The Markdown review: summary with intervals, comparisons, differing verdicts, drift in <details>;
nothing a model wrote renders as HTML, a link, an image, a mention or a cell break; kept under a size."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from replio_replay.judge.baseline import check_runs
from replio_replay.judge.metrics import summarize
from replio_replay.judge.results import FixtureResult, RunResult
from replio_replay.report.markdown import GITHUB_LIMIT, render_markdown, text

HOSTILE = ('<img src=x onerror=alert(1)> [click](https://evil.example) ![i](http://x/i.png) @octocat '
           '| cell | `code` **bold** www.evil.example <!-- c --> &amp; <script>x</script>')


def run(model: str, passed: dict[str, bool], drift: list[dict[str, object]] | None = None) -> RunResult:
    fixtures = [FixtureResult(id=fid, passed=p, drift=drift or [], answer=HOSTILE) for fid, p in passed.items()]
    return RunResult(provider="mock", model=model, fixtures=fixtures, summary=summarize(fixtures))


@pytest.mark.parametrize("danger", ["<img", "<script", "](", "![", "https://", "http://", "@octocat", "www.evil",
                                    "<!--", "**"])
def test_nothing_a_model_wrote_renders(danger: str) -> None:
    assert danger not in text(HOSTILE)
    assert "\n" not in text("a\nb\r\nc")
    assert re.search(r"(?<!\\)[|`\[]", text(HOSTILE)) is None  # every cell break, code span and link escaped


def test_the_review_holds_the_summary_comparisons_differing_verdicts_and_drift() -> None:
    change = {"path": f"fixtures[0].answer {HOSTILE}", "kind": "value_changed", "old": HOSTILE, "new": "x"}
    a = run("a", {f"f{i}": i < 4 for i in range(16)})
    b = run("b", {f"f{i}": i < 15 for i in range(16)}, drift=[change])
    checked = check_runs([a, b], [], None)
    md = render_markdown([a, b], checked.paired, checked.comparisons)
    assert "| mock:a | 16 | 0.25 [0.10, 0.49] |" in md
    assert "- mock:b vs mock:a: pass rate +0.69 \\[" in md and "better" in md
    assert "| f4 | FAIL | pass |" in md and "| f0 | pass | pass |" not in md
    assert md.count("<details>") == 16 and "<img" not in md and "https://" not in md


def test_the_review_stays_under_the_size_asked_naming_what_it_left_out() -> None:
    change = {"path": "x", "kind": "value_changed", "old": "a" * 3000, "new": "b"}
    big = run("a", {f"f{i:03}": True for i in range(400)}, drift=[change])
    md = render_markdown([big], max_chars=65_536)
    assert len(md) <= 65_536 and md.rstrip().endswith("more fixtures: see the HTML report")
    assert len(render_markdown([big]).encode()) <= GITHUB_LIMIT


def test_run_writes_the_markdown_file(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[2]
    out = tmp_path / "review.md"
    done = subprocess.run([str(Path(sys.executable).with_name("replio")), "eval", "--path", str(repo / "examples" /
                           "tau2"), "run", "--tag", "tau2-mock", "--markdown", str(out), "--markdown-max-chars", "4000"],
                          capture_output=True, text=True, env={"CI": "1", "PATH": "/usr/bin:/bin"}, timeout=120)
    assert done.returncode == 0, done.stderr
    md = out.read_text()
    assert md.startswith("## replio eval\n") and "| llamacpp:qwen2.5-coder-1.5b-instruct | 10 | 0.30 [0.11, 0.60] |" in md


def test_the_ci_page_shows_the_markdown_the_trials_example_gives(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[2]
    page = (repo / "docs" / "how-to" / "ci.md").read_text()
    shown = page.split("```markdown\n", 1)[1].split("```", 1)[0]
    out = tmp_path / "review.md"
    models = "llamacpp:qwen2.5-coder-1.5b-instruct,llamacpp:qwen2.5-coder-0.5b-instruct"
    subprocess.run([str(Path(sys.executable).with_name("replio")), "eval", "--path", str(repo / "examples" / "trials"),
                    "run", "--compare", models, "--fixture", "read-*", "--fixture", "find-*", "--fixture", "edit-*",
                    "--markdown", str(out)], capture_output=True, text=True, timeout=300,
                   env={"CI": "1", "PATH": "/usr/bin:/bin", "LLAMACPP_BASE_URL": "http://127.0.0.1:9/v1"})
    assert out.read_text() == shown
