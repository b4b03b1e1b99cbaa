"""The HTML report of a real run, opened in Chromium: order, details, filters, no network, no injection,
conversations with their user messages.

Chromium (Debian's `chromium`) and playwright (the test extra) are required: CI installs both
(.ci/run), so a missing one fails this test with the way to install it, instead of skipping.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import call, turn, write_json
from tests.support.report_project import (
    HOSTILE,
    TODO_LINE,
    drifted_report,
    replio,
    run_fixtures,
    write_report_project,
)

# One xdist worker runs the module (--dist loadgroup): its Chromium, made once for the module,
# is made once, not once by each worker that runs one of its tests.
pytestmark = pytest.mark.xdist_group("html-browser")

#: Flags for a headless Chromium that contacts nothing on its own (no updates, sync, field trials).
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync"]


def _chromium() -> str:
    found = shutil.which("chromium") or ("/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None)
    if found is None:
        pytest.fail("Chromium is not installed; install it with `apt-get install -y chromium` (.ci/run does)")
    return found


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Chromium driven by playwright (which never downloads a browser here)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("playwright is not installed; install the test extra: pip install -e '.[test]'")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=_chromium(), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where screenshots go: $REPLIO_ARTIFACTS when set (CI uploads it), else a temporary folder."""
    folder = Path(os.environ.get("REPLIO_ARTIFACTS") or tmp_path_factory.mktemp("artifacts"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_the_report_of_a_drifted_run_in_chromium(tmp_path: Path, browser: Any, artifacts: Path) -> None:
    report = drifted_report(tmp_path / "proj", tmp_path / "report.html")
    url = report.resolve().as_uri()
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.set_default_timeout(30_000)
    others: list[str] = []

    def only_the_page(route: Any) -> None:
        if route.request.url == url:
            route.continue_()
        else:
            others.append(route.request.url)
            route.abort()

    page.route("**/*", only_the_page)
    page.goto(url)

    rows = page.locator("tr[data-fixture]")
    assert [rows.nth(i).get_attribute("data-fixture") for i in range(rows.count())] == ["drifty", "hostile", "steady"]

    drifty = page.locator("#fx-drifty")
    assert not drifty.evaluate("d => d.open")
    page.click("a[data-open='fx-drifty']")
    assert drifty.evaluate("d => d.open")
    assert TODO_LINE in drifty.locator("pre.result").inner_text()
    assert "turns[0][0].arguments.pattern argument_changed" in drifty.locator(".changes.golden").inner_text()

    hostile = page.locator("#fx-hostile")
    hostile.locator("summary").click()
    assert HOSTILE in hostile.locator("pre.result").inner_text()
    assert f"The page holds {HOSTILE}" in hostile.locator(".answer pre").inner_text()
    assert page.evaluate("window.__pwned") is None
    assert page.title() != "pwned"

    page.check("input[data-filter='failed']")
    assert [r.get_attribute("data-fixture") for r in rows.all() if r.is_visible()] == ["hostile"]
    assert not page.locator("#fx-steady").is_visible()
    assert page.inner_text("#shown") == "1 of 3 fixtures shown"
    page.check("input[data-filter='drifted']")
    assert not any(r.is_visible() for r in rows.all())
    page.uncheck("input[data-filter='failed']")
    assert [r.get_attribute("data-fixture") for r in rows.all() if r.is_visible()] == ["drifty"]
    page.uncheck("input[data-filter='drifted']")
    assert all(r.is_visible() for r in rows.all())

    headings = page.locator("h4")
    assert headings.count() > 0
    assert {h.evaluate("h => getComputedStyle(h).textTransform") for h in headings.all()} == {"none"}
    assert drifty.locator(".changes.golden h4").inner_text() == "drift from golden: 1 change"

    shot = artifacts / "html-report.png"
    page.screenshot(path=str(shot), full_page=True)
    print(f"screenshot of the HTML report: {shot}")
    assert others == [], "the report made network requests"
    page.close()


def test_open_all_in_the_url_opens_every_conversation(tmp_path: Path, browser: Any, artifacts: Path) -> None:
    from playwright.sync_api import expect

    report = drifted_report(tmp_path / "proj", tmp_path / "report.html")
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.set_default_timeout(30_000)
    details = page.locator("details[data-fixture]")
    page.goto(report.resolve().as_uri() + "#open=all")
    assert details.count() == 3
    assert [d.evaluate("d => d.open") for d in details.all()] == [True, True, True]
    page.click("#collapse")
    assert not any(d.evaluate("d => d.open") for d in details.all())
    page.evaluate("location.hash = 'fx-steady'")  # changes of the fragment, without reloading
    expect(page.locator("#fx-steady")).to_have_js_property("open", True)
    assert not page.locator("#fx-drifty").evaluate("d => d.open")
    page.evaluate("location.hash = 'open=all'")
    for d in details.all():
        expect(d).to_have_js_property("open", True)
    shot = artifacts / "html-report-open-all.png"
    page.screenshot(path=str(shot), full_page=True)
    print(f"screenshot of the HTML report, every conversation open: {shot}")
    page.close()


# a conversation ------------------------------------------------------------------------------------

CONVERSATION_SCRIPT = {
    "scripted": [turn(call("file_read", path="notes.txt")), turn(text="It says hello."),
                 turn(text="Goodbye.")],
    "sim": [turn(text="Which order?"), turn(call("file_read", path="notes.txt")), turn(text="Order 42 is cancelled."),
            turn(text="You are welcome; order 42 stays cancelled.")],
    "user:sim": [turn(text="Cancel my order, please."), turn(text=f"Order 42. {HOSTILE}"),
                 turn(text="Thank you! ###STOP###")],
}


def conversation_project(root: Path) -> Path:
    write_json(root / ".replio" / "config.json", {"provider": "mock", "providers": {"mock": {"script": "script.json"}}})
    write_json(root / "script.json", CONVERSATION_SCRIPT)
    fixtures = root / ".replio" / "eval"
    write_json(fixtures / "scripted.json", {
        "task": "What does notes.txt say?", "files": {"notes.txt": "hello\n"},
        "turns": [{"user": "Thanks, bye.", "verifier": {"answer": "Goodbye."}}],
        "verifier": {"must_include": ["file_read"]}})
    write_json(fixtures / "sim.json", {
        "files": {"notes.txt": "orders\n"},
        "user": {"instructions": "You want order 42 cancelled. Say ###STOP### when it is done."},
        "verifier": {"answer": {"$contains": "cancelled"}}})
    return root


def test_a_multi_turn_run_in_a_subprocess_and_its_report_in_chromium(tmp_path: Path, browser: Any) -> None:
    root = conversation_project(tmp_path / "proj")
    html = tmp_path / "report.html"
    done = replio("eval", "--path", root, "run", "--fixture", "scripted", "--fixture", "sim", "--output", "json",
                  "--html", html)
    scripted, sim = json.loads(done.stdout)["fixtures"]
    assert scripted["pass"] and sim["pass"], (scripted["reasons"], sim["reasons"])
    assert [m["content"] for m in scripted["conversation"] if m["role"] == "user"] == [
        "What does notes.txt say?", "Thanks, bye."]
    assert [m["content"] for m in sim["conversation"] if m["role"] == "user"] == [
        "Cancel my order, please.", f"Order 42. {HOSTILE}", "Thank you!"]  # the stop marker is not sent
    assert sim["tokens_by_role"]["user"] == {"prompt": 30, "completion": 15}

    url = html.resolve().as_uri()
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.set_default_timeout(30_000)
    others: list[str] = []
    page.route("**/*", lambda route: route.continue_() if route.request.url == url
               else (others.append(route.request.url), route.abort()))
    page.goto(url + "#open=all")
    conversation = page.locator("#fx-sim ol.said > li")
    assert [li.get_attribute("class") for li in conversation.all()] == [
        "msg user", "msg assistant", "msg user", "msg assistant", "msg tool", "msg assistant", "msg user",
        "msg assistant"]
    assert page.locator("#fx-sim li.msg.user pre.text").all_inner_texts() == [
        "Cancel my order, please.", f"Order 42. {HOSTILE}", "Thank you!"]
    assert page.locator("#fx-sim li.msg.tool").inner_text().startswith("tool result")
    assert "user's tokens 45" in page.locator("#fx-sim p.metrics").inner_text()
    assert page.locator("#fx-scripted li.msg.user pre.text").all_inner_texts() == [
        "What does notes.txt say?", "Thanks, bye."]
    assert page.evaluate("window.__pwned") is None and page.title() != "pwned"
    assert others == []
    page.close()


# a judged run --------------------------------------------------------------------------------------

def test_a_judged_run_shows_each_verdict_and_reason_in_the_table_and_in_chromium(tmp_path: Path, browser: Any) -> None:
    root = tmp_path / "proj"
    write_json(root / ".replio" / "config.json", {"provider": "mock", "providers": {"mock": {"script": "script.json"}}})
    write_json(root / "script.json", {
        "judged": [turn(call("file_read", path="notes.txt")), turn(text="It says hello.")],
        "judge:judged": [turn(text='```json\n{"verdict": "yes", "reason": "It quotes the file."}\n```')],
        "judged2": [turn(text="No idea.")],
        "judge:judged2": [turn(text=json.dumps({"verdict": "no", "reason": f"It never read it. {HOSTILE}"}))],
    })
    for name in ("judged", "judged2"):
        write_json(root / ".replio" / "eval" / f"{name}.json", {
            "task": "What does notes.txt say?", "files": {"notes.txt": "hello\n"},
            "verifier": {"judge": {"rubric": "The answer says what notes.txt holds."}}})
    html = tmp_path / "report.html"
    done = replio("eval", "--path", root, "run", "--fixture", "judged", "--fixture", "judged2", "--html", html)
    assert f"judged2: judge: no: It never read it. {HOSTILE}" in done.stdout  # the table's reasons

    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.set_default_timeout(30_000)
    page.goto(html.resolve().as_uri() + "#open=all")
    verdict = page.locator("#fx-judged .judge li")
    assert verdict.inner_text().splitlines() == ["yes The answer says what notes.txt holds.: It quotes the file.",
                                                 "the judge's answer"]  # the raw answer, collapsed
    raw = verdict.locator("details.raw pre")
    assert not raw.is_visible()
    verdict.locator("details.raw summary").click()
    assert raw.inner_text() == '```json\n{"verdict": "yes", "reason": "It quotes the file."}\n```'
    assert "</script></textarea><b>bold?</b>" in page.locator("#fx-judged2 .judge details.raw pre").text_content()
    assert page.locator("#fx-judged2 .judge li.verdict-no .judged").inner_text() == "no"
    assert HOSTILE in page.locator("#fx-judged2 .judge li").inner_text()
    assert page.locator("#fx-judged2 .reasons li").all_inner_texts() == [f"judge: no: It never read it. {HOSTILE}"]
    assert "judge's tokens 15" in page.locator("#fx-judged p.metrics").inner_text()
    assert page.evaluate("window.__pwned") is None and page.title() != "pwned"
def test_the_baseline_section_and_the_regressed_fixture_first_in_chromium(tmp_path: Path, browser: Any) -> None:
    project = write_report_project(tmp_path / "proj")
    base = tmp_path / "base.json"
    run_fixtures(project, "--output-file", base)  # steady passes, hostile fails its verifier
    steady = project / ".replio" / "eval" / "steady.json"
    steady.write_text(json.dumps({**json.loads(steady.read_text()), "verifier": {"answer": {"$contains": "bye"}}}))
    report = tmp_path / "report.html"
    run_fixtures(project, "--baseline", base, "--html", report)
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.set_default_timeout(30_000)
    page.goto(report.resolve().as_uri())

    rows = page.locator("tr[data-fixture]")
    assert rows.nth(0).get_attribute("data-fixture") == "steady"
    assert rows.nth(0).locator(".tag.regressed").is_visible()
    section = page.locator("#baseline")
    assert section.is_visible()
    cells = section.locator("tr").filter(has_text="pass_rate").locator("td")
    assert [cells.nth(i).inner_text() for i in range(cells.count())] == ["0.67", "0.33", "-0.33"]
    assert not page.locator("#fx-steady").evaluate("d => d.open")
    section.locator("a[data-open='fx-steady']").click()
    assert page.locator("#fx-steady").evaluate("d => d.open")
    page.close()
