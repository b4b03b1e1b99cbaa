"""The HTML report, rendered from results built in memory, and from the CLI (`run --html`, `report`)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from replio_replay.judge.metrics import combine_trials, summarize
from replio_replay.judge.results import (
    FixtureResult,
    JudgeVerdict,
    RunResult,
    StateCheck,
    Status,
    TraceCall,
    saved_runs,
)
from replio_replay.report.html import PLOT, STATE_CAP, TOP, build_report, render_html
from tests.helpers import call, turn, write_json
from tests.support.environments import shop_decl, write_module
from tests.support.report_project import (
    HOSTILE,
    TODO_LINE,
    drifted_report,
    replio,
    replio_process,
    run_fixtures,
    write_report_project,
)

GOLDEN_DRIFT = [{"path": "turns[0][0].arguments.pattern", "kind": "argument_changed", "old": "TODO", "new": "TODO:"}]
REQUEST_DRIFT = [{"path": "messages[1].content", "kind": "value_changed", "old": "a", "new": "b"}]


def fx(fid: str, passed: bool = True, **data: Any) -> FixtureResult:
    """A fixture result that has a golden (no drift) unless `drift` says otherwise."""
    return FixtureResult(id=fid, passed=passed, task=f"Task of {fid}.", **{"drift": [], **data})


def run(model: str, *results: FixtureResult, tools: str = "default") -> RunResult:
    return RunResult(provider="mock", model=model, tools=tools, fixtures=list(results), summary=summarize(results))


def trials(fid: str, *passed: bool) -> list[FixtureResult]:
    return [fx(fid, p, trial=k, calls=k, tokens=10 * k) for k, p in enumerate(passed, start=1)]


def fixture_order(html: str) -> list[str]:
    return re.findall(r'<tr class="group-\w+" data-fixture="([^"]+)"', html)


# the order and the groups --------------------------------------------------------------------------


def test_fixtures_whose_verdicts_differ_come_first_then_drifted_then_failed() -> None:
    a = run("a", fx("stable"), fx("failing", False), fx("drifting"), fx("differing"), fx("missing-in-b"))
    b = run("b", fx("stable"), fx("failing", False), fx("drifting", drift=GOLDEN_DRIFT), fx("differing", False))
    report = build_report([a, b])
    assert [(r.id, r.group) for r in report.rows] == [
        ("differing", "differ"), ("missing-in-b", "differ"), ("drifting", "drifted"), ("failing", "failed"),
        ("stable", "stable"),
    ]
    assert report.counts == {"fixtures": 5, "differ": 2, "drifted": 1, "golden_drift": 1, "request_drift": 0,
                             "failed": 2}
    html = render_html([a, b])
    assert fixture_order(html) == ["differing", "missing-in-b", "drifting", "failing", "stable"]
    assert "not run" in html


def test_request_drift_counts_as_drift_and_says_how_to_re_record() -> None:
    html = render_html([run("a", fx("req", request_drift=REQUEST_DRIFT), tools="terse")])
    assert fixture_order(html) == ["req"]
    assert 'data-drifted="1"' in html
    assert "request drift: 1 change; re-record with --record-mode all --fixture req --tools terse" in html
    assert "messages[1].content value_changed: &#34;a&#34; -&gt; &#34;b&#34;" in html


def test_the_header_and_the_summary_count_golden_and_request_drift_alike() -> None:
    runs = [run("a", fx("golden", drift=GOLDEN_DRIFT), fx("requests", request_drift=REQUEST_DRIFT), fx("both",
            drift=GOLDEN_DRIFT, request_drift=REQUEST_DRIFT), fx("steady"))]
    report = build_report(runs)
    summary = dict(report.summary)
    assert (summary["golden drift"], summary["request drift"]) == (["2"], ["2"])
    assert "drifted" not in summary
    html = render_html(runs)
    header = html[html.index("<header>"):html.index("</header>")]
    assert re.findall(r">(\d+) (golden drift|request drift)</span>", header) == [("2", "golden drift"),
                                                                               ("2", "request drift")]
    assert "<tr><th>golden drift</th><td>2</td></tr>" in html and "<tr><th>request drift</th><td>2</td></tr>" in html


def test_golden_drift_is_listed_with_its_sign() -> None:
    html = render_html([run("a", fx("d", drift=GOLDEN_DRIFT)), run("b", fx("d"))])
    assert '<div class="changes golden"><h4>drift from golden: 1 change</h4>' in html
    assert ('<li class="sign-change"><span class="sign">~</span> turns[0][0].arguments.pattern argument_changed: '
            "&#34;TODO&#34; -&gt; &#34;TODO:&#34;</li>") in html
    assert 'title="changes from the golden">drift 1</span>' in html


def test_each_trial_is_a_column_and_a_flaky_fixture_differs() -> None:
    results = combine_trials([*trials("flaky", True, False), *trials("solid", True, True)])
    html = render_html([run("a", *results)])
    assert html.count('<th class="trial">trial 1</th>') == 1
    assert html.count('<th class="trial">trial 2</th>') == 1
    assert '<th colspan="2">mock:a</th>' in html
    assert fixture_order(html) == ["flaky", "solid"]
    report = build_report([run("a", *results)])
    assert [len(cells) for cells in report.rows[0].cells] == [2]
    assert [s[0] for s in report.series] == ["mock:a trial 1", "mock:a trial 2"]
    pass_rate = report.panels[0]
    assert [b.value for b in pass_rate.bars] == ["1.00", "0.50"]
    assert [b.value for b in report.panels[2].bars] == ["2", "4"]  # calls of trial 1, of trial 2


# the conversation ----------------------------------------------------------------------------------


def test_the_detail_shows_task_calls_results_answer_and_reasons_per_run_side_by_side() -> None:
    trace = [TraceCall(name="grep", arguments={"pattern": "TODO"}, result=TODO_LINE),
             TraceCall(name="file_read", arguments="{not json", result="Error: bad arguments")]
    a = run("a", fx("d", trace=trace, answer="src/app.py:2", calls=2))
    b = run("b", fx("d", passed=False, reasons=["answer: expected 3"], status=Status.TRUNCATED))
    html = render_html([a, b])
    detail = html[html.index('<details class="fixture'):]
    assert detail.count('<div class="side">') == 2
    assert '<pre>Task of d.</pre>' in detail
    assert '<pre class="args">{&#34;pattern&#34;: &#34;TODO&#34;}</pre>' in detail
    assert f'<pre class="result">{TODO_LINE}</pre>' in detail
    assert '<pre class="args">{not json</pre>' in detail
    assert '<pre class="result err">Error: bad arguments</pre>' in detail
    assert "<pre>src/app.py:2</pre>" in detail
    assert "<li>answer: expected 3</li>" in detail
    assert '<p class="none">No tool calls.</p>' in detail


def test_tasks_that_differ_between_runs_are_shown_per_run() -> None:
    a = run("a", FixtureResult(id="d", task="First wording."))
    b = run("b", FixtureResult(id="d", task="Second wording."))
    report = build_report([a, b])
    assert report.rows[0].task is None
    assert [s.task for s in report.rows[0].sides] == ["First wording.", "Second wording."]


def test_long_arguments_are_indented() -> None:
    long = {"path": "x" * 80, "offset": 1}
    html = render_html([run("a", fx("d", trace=[TraceCall(name="file_read", arguments=long)]))])
    assert '<pre class="args">{\n  &#34;path&#34;' in html


# untrusted text ------------------------------------------------------------------------------------


def test_everything_a_model_tool_or_file_produced_is_escaped() -> None:
    hostile = fx(f"x{HOSTILE}", passed=False, answer=HOSTILE, reasons=[HOSTILE], error=HOSTILE,
                 trace=[TraceCall(name=HOSTILE, arguments={HOSTILE: HOSTILE}, result=HOSTILE)],
                 drift=[{"path": HOSTILE, "kind": "answer_changed", "old": HOSTILE, "new": "x"}])
    hostile_run = RunResult(provider=HOSTILE, model=HOSTILE, tools=HOSTILE, fixtures=[hostile],
                            summary=summarize([hostile]))
    html = render_html([hostile_run], problems=[(HOSTILE, HOSTILE)])
    assert html.count("<script") == 1  # the report's own
    assert "</textarea>" not in html and "<b>" not in html
    assert "&lt;script&gt;window.__pwned = 1; document.title = &#34;pwned&#34;&lt;/script&gt;" in html


def test_only_the_report_s_own_script_may_run_and_nothing_is_loaded() -> None:
    html = render_html([run("a", fx("d"))])
    script = html[html.index("<script>") + len("<script>"):html.index("</script>")]
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert csp and csp.group(1) == f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-{digest}'"
    assert not re.search(r"\b(src|href)=\"(?!#)", html)  # no resource, no link out: anchors only
    assert "http:" not in html and "https:" not in html and "@import" not in html and "url(" not in html


# the summary and the picture -----------------------------------------------------------------------


def test_the_summary_and_the_bars_side_by_side() -> None:
    a = run("a", fx("x", calls=5, tokens=95_210, accuracy=1.0), fx("y", False, calls=0, tokens=790))
    b = run("b", fx("x", calls=8, tokens=1_000, accuracy=0.0), fx("y", calls=2, tokens=10))
    report = build_report([a, b])
    assert dict(report.summary)["pass rate"] == ["0.50 [0.09, 0.91]", "1.00 [0.34, 1.00]"]  # with its 95 % interval
    assert dict(report.summary)["tokens"] == ["96000", "1010"]
    assert [p.title for p in report.panels] == ["pass rate", "accuracy", "calls", "tokens"]
    rate, accuracy, calls, tokens = report.panels
    assert [(b.value, b.height, b.y) for b in rate.bars] == [("0.50", PLOT / 2, TOP + PLOT / 2), ("1.00", PLOT, TOP)]
    assert [b.value for b in accuracy.bars] == ["1.00", "0.00"]
    assert [(b.value, b.height) for b in calls.bars] == [("5", PLOT / 2), ("10", PLOT)]
    assert [b.value for b in tokens.bars] == ["96k", "1k"]
    assert len({b.colour for b in rate.bars}) == 2
    html = render_html([a, b])
    assert html.count("<svg width=") == 4 + 2  # a panel per metric, a swatch per run in the legend


def test_runs_of_the_same_provider_model_and_tools_are_told_apart() -> None:
    runs = [run("a", fx("x")), run("a", fx("x"))]
    assert [c.label for c in build_report(runs, origins=["before.json", "after.json"]).columns] == [
        "mock:a (before.json)", "mock:a (after.json)"]
    assert [c.label for c in build_report(runs).columns] == ["mock:a #1", "mock:a #2"]


# saved results -------------------------------------------------------------------------------------


def test_saved_results_read_back_one_run_or_compared_runs() -> None:
    a, b = run("a", fx("x", trace=[TraceCall(name="grep", arguments={"p": 1}, result="r")])), run("b", fx("x"))
    one = saved_runs({**a.to_json(), "problems": [{"file": "f.json", "message": "broken"}]})
    assert one.runs == [a] and [(p.file, p.message) for p in one.problems] == [("f.json", "broken")]
    both = saved_runs(json.loads(json.dumps({"runs": [a.to_json(), b.to_json()], "problems": []})))
    assert both.runs == [a, b] and both.problems == []


# the CLI -------------------------------------------------------------------------------------------


def test_report_builds_one_page_from_two_saved_results(tmp_path: Path) -> None:
    project = write_report_project(tmp_path / "proj")
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    run_fixtures(project, "--output-file", first)
    run_fixtures(project, "--compare", "mock:m1,mock:m2", "--output", "json", "--output-file", second)
    out = tmp_path / "out" / "report.html"
    done = replio("eval", "report", first, second, "-o", out)
    assert done.stdout == "" and done.stderr == ""
    html = out.read_text(encoding="utf-8")
    headers = re.findall(r'<th colspan="1">([^<]+)</th>', html)
    assert headers == ["mock:scripted", "mock:m1", "mock:m2"]
    assert sorted(fixture_order(html)) == ["drifty", "hostile", "steady"]
    assert "<pre>What does notes.txt say?</pre>" in html
    assert [p.name for p in out.parent.iterdir()] == ["report.html"]  # written atomically: no temp left


def test_report_names_a_file_that_is_not_a_result_and_exits_2(tmp_path: Path) -> None:
    golden_like = tmp_path / "golden.json"
    golden_like.write_text('{"id": "x", "turns": []}')
    out = tmp_path / "report.html"
    done = replio_process("eval", "report", golden_like, "-o", out, ok=(2,))
    assert done.stderr.startswith(f"replio: error: {golden_like}: not a replio result: provider: required key is "
                                  "missing;")
    assert done.stderr.rstrip().endswith("give a file that replio eval run --output json or --output-file wrote")
    (tmp_path / "text.json").write_text("not json")
    done = replio("eval", "report", tmp_path / "text.json", "-o", out, ok=(2,))
    assert done.stderr.startswith(f"replio: error: {tmp_path / 'text.json'}: not valid JSON")
    assert not out.exists()


@pytest.mark.parametrize("compare", [("--compare", "mock:m1,mock:m2"), ()])
def test_run_html_writes_the_report_of_the_run(tmp_path: Path, compare: tuple[str, ...]) -> None:
    html = drifted_report(tmp_path / "proj", tmp_path / "report.html", *compare).read_text(encoding="utf-8")
    labels = re.findall(r'<th colspan="1">([^<]+)</th>', html)
    assert labels == (["mock:m1", "mock:m2"] if compare else ["mock:scripted"])
    assert fixture_order(html) == ["drifty", "hostile", "steady"]
    assert html.count("drift from golden: 1 change") == len(labels)
    assert TODO_LINE in html
    assert HOSTILE not in html


def test_the_judges_raw_answer_is_under_each_verdict_open_for_an_error_and_absent_in_an_older_result() -> None:
    verdicts = [JudgeVerdict(rubric="a", verdict="no", reason="missing", passed=False, raw='{"verdict": "no"} <i>x'),
                JudgeVerdict(rubric="b", verdict="error", reason="unread", passed=False, raw="```json\n{"),
                JudgeVerdict(rubric="c", verdict="yes", reason="older result", passed=True)]
    html = render_html([run("m", fx("judged", judge=verdicts))])
    items = html.split('<div class="judge">', 1)[1].split("</ul></div>", 1)[0].split("<li ")[1:]
    assert ('<details class="raw"><summary>the judge\'s answer</summary><pre>{&#34;verdict&#34;: &#34;no&#34;} '
            "&lt;i&gt;x</pre></details>") in items[0]
    assert '<details class="raw" open><summary>' in items[1] and "```json\n{</pre>" in items[1]
    assert "details" not in items[2]


def test_the_simulated_users_own_calls_are_shown_apart_from_the_agents() -> None:
    result = fx("dual", trace=[TraceCall(name="update_task_status", arguments={"task_id": "t1"}, result="ok")],
                user_trace=[TraceCall(name="dismiss_notification", arguments={"notification_id": "n1"},
                                      result="Notification n1 dismissed")],
                conversation=[{"role": "user", "content": "Done it."}, {"role": "assistant", "content": "Noted."}])
    html = render_html([run("m", result)])
    section = html.split("the simulated user's own calls", 1)[1].split("</ol>", 1)[0]
    assert "dismiss_notification" in section and "Notification n1 dismissed" in section
    assert "update_task_status" not in section
    plain = render_html([run("m", fx("alone", trace=[TraceCall(name="a", arguments={}, result="r")]))])
    assert "own calls" not in plain


class _EndStates(HTMLParser):
    """Each end-state <details> of a page: whether it is open, its summary, its check rows, its state text."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[dict[str, Any]] = []
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        if tag == "details" and "end-state" in classes:
            self.found.append({"open": "open" in dict(attrs), "summary": "", "rows": [], "state": None})
        elif self.found and tag == "summary" and not self.found[-1]["summary"]:
            self._in = "summary"
        elif self.found and tag == "tr" and self._in != "state":
            self.found[-1]["rows"].append([])
        elif self.found and tag == "td":
            self.found[-1]["rows"][-1].append("")
            self._in = "td"
        elif self.found and tag == "pre" and "state" in classes:
            self.found[-1]["state"] = ""
            self._in = "state"

    def handle_endtag(self, tag: str) -> None:
        if tag in ("summary", "td", "pre", "details"):
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "summary":
            self.found[-1]["summary"] += data
        elif self._in == "td":
            self.found[-1]["rows"][-1][-1] += data
        elif self._in == "state":
            self.found[-1]["state"] += data


def end_states(html: str) -> list[dict[str, Any]]:
    parser = _EndStates()
    parser.feed(html)
    for found in parser.found:
        found["rows"] = [row for row in found["rows"] if row]  # the header row has no <td>
    return parser.found


def test_the_end_state_is_shown_collapsed_beside_each_state_checks_verdict() -> None:
    state = {"shop": {"note": HOSTILE, "orders": {"A-1042": {"status": "cancelled"}}, "log": ["x"]}}
    checks = [StateCheck(check="state.shop.orders.A-1042.status", expected="cancelled", passed=True),
              StateCheck(check="state_from_calls", turn=2, passed=False)]
    html = render_html([run("m", fx("env", False, state=state, state_checks=checks), fx("plain"))])
    (shown,) = end_states(html)  # the fixture without an environment shows none
    assert not shown["open"]
    assert " ".join(shown["summary"].split()) == "end state · 1/2 state checks held"
    assert [[cell.strip() for cell in row] for row in shown["rows"]] == [
        ["pass", "", "state.shop.orders.A-1042.status", '"cancelled"'], ["FAIL", "turn 2", "state_from_calls", ""]]
    assert shown["state"] == json.dumps(state, indent=2, sort_keys=True, ensure_ascii=False)
    assert HOSTILE not in html  # escaped, as everything a run produced

    big = {"env": {"blob": "x" * (STATE_CAP + 10)}}
    (cut,) = end_states(render_html([run("m", fx("big", state=big))]))
    assert cut["rows"] == [] and len(cut["state"]) < STATE_CAP + 100
    assert cut["state"].endswith(f"[... cut: {len(json.dumps(big, indent=2)) - STATE_CAP} more characters; "
                                 "the JSON result holds all]")


def test_run_html_shows_the_end_state_the_json_holds_with_the_verdicts(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    write_module(project / ".replio" / "envs" / "shop.py")
    write_json(project / ".replio" / "config.json", {"provider": "mock", "bundled": False,
                                                     "providers": {"mock": {"script": "script.json"}}})
    write_json(project / ".replio" / "tools.json", {"environments": {"shop": shop_decl()}})
    write_json(project / "script.json", {"*": [turn(call("cancel_order", order_id="A-1042")), turn(text="Done.")]})
    write_json(project / ".replio" / "eval" / "cancel.json", {
        "task": "Cancel order A-1042.",
        "verifier": {"state": {"shop.orders.A-1042.status": "cancelled", "shop.currency": "USD"},
                     "state_from_calls": [{"name": "cancel_order", "arguments": {"order_id": "A-1042"}}]}})
    out = tmp_path / "report.html"
    done = replio_process("eval", "--path", project, "run", "--no-cassettes", "--output", "json", "--html", out)
    (result,) = json.loads(done.stdout)["fixtures"]
    assert result["state_checks"] == [
        {"check": "state.shop.orders.A-1042.status", "turn": None, "expected": "cancelled", "pass": True},
        {"check": "state.shop.currency", "turn": None, "expected": "USD", "pass": False},
        {"check": "state_from_calls", "turn": None, "expected": None, "pass": True}]
    (shown,) = end_states(out.read_text(encoding="utf-8"))
    assert [row[0].strip() for row in shown["rows"]] == ["pass", "FAIL", "pass"]
    assert json.loads(shown["state"]) == result["state"]
    saved = tmp_path / "saved.json"
    saved.write_text(done.stdout)
    replio("eval", "report", saved, "-o", tmp_path / "again.html")  # a saved result shows them too
    assert end_states((tmp_path / "again.html").read_text(encoding="utf-8")) == [shown]
