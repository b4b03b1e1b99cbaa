"""The HTML report of a real run, opened in Chromium: order, details, filters, no network, no injection.

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

from tests.support.report_project import (
    HOSTILE,
    TODO_LINE,
    drifted_report,
    run_fixtures,
    write_report_project,
)

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
