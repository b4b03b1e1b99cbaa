"""JUnit XML: one testcase per fixture × provider, failures carrying the report, metrics as properties."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Collection, Sequence

from ..judge.results import RunResult
from ..prices import dollars
from .gate import judge

__all__ = ["junit_xml"]

_PROPERTIES = ("status", "pass", "accuracy", "calls", "redundant", "errors", "tokens")


def junit_xml(runs: Sequence[RunResult], *, strict: bool = False, require_pass: Collection[str] = (),
              problems: Sequence[tuple[str, str]] = (), gates: Sequence[str] = ()) -> str:
    """The runs as a JUnit XML document (testsuites > testsuite per run > testcase per fixture).

    Fixture files that could not be loaded are error testcases of a `replio.problems` suite, so
    a broken fixture can never leave CI's report silently; each score gate that failed (its line,
    `gates`) is a failing testcase of a `replio.gates` suite, for the same reason.
    """
    root = ET.Element("testsuites", name="replio")
    totals = {"tests": 0, "failures": 0, "errors": 0}
    if problems:
        suite = ET.SubElement(root, "testsuite", name="replio.problems", tests=str(len(problems)),
                              failures="0", errors=str(len(problems)), skipped="0")
        for file, message in problems:
            case = ET.SubElement(suite, "testcase", name=file, classname="replio.problems", time="0.000")
            ET.SubElement(case, "error", message=message.splitlines()[0] if message else "broken").text = message
        totals["tests"] += len(problems)
        totals["errors"] += len(problems)
    for run in runs:
        suite = ET.SubElement(root, "testsuite", name=run.key.label)
        counts = {"tests": 0, "failures": 0, "errors": 0}
        skipped = 0
        for result in run.fixtures:
            verdict = judge(result, strict=strict, require_pass=result.id in require_pass, tools=run.tools)
            case = ET.SubElement(suite, "testcase", name=result.id, classname=".".join(["replio", run.provider, run.model, *([f"tools={run.tools}"] if run.tools != "default" else [])]),
                                 time=f"{result.seconds or (result.timing or {}).get('seconds', 0.0):.3f}")
            props = ET.SubElement(case, "properties")
            data = result.model_dump(mode="json", by_alias=True)
            for key in _PROPERTIES:
                value = data[key]
                text = "" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
                ET.SubElement(props, "property", name=key, value=text)
            if result.cost is not None:  # only where a price is known: never a made-up 0
                ET.SubElement(props, "property", name="cost", value=dollars(result.cost))
                for role, usd in (result.cost_by_role or {}).items():
                    ET.SubElement(props, "property", name=f"cost.{role}", value=dollars(usd))
            if result.cost_unknown:  # a price, but answers without token counts
                ET.SubElement(props, "property", name="cost.unknown", value=",".join(result.cost_unknown))
            ET.SubElement(props, "property", name="names", value=" > ".join(map(result.shown, result.names)))
            for i, v in enumerate(result.verdicts, 1):  # the judge's verdict and reason, passed or not
                name = "judge" if len(result.verdicts) == 1 else f"judge[{i}]"
                ET.SubElement(props, "property", name=name, value=f"{v.verdict}: {v.reason}")
            counts["tests"] += 1
            if verdict.outcome == "error":
                counts["errors"] += 1
                ET.SubElement(case, "error", message=verdict.text.splitlines()[0]).text = verdict.text
            elif verdict.outcome == "failed":
                counts["failures"] += 1
                ET.SubElement(case, "failure", message=verdict.text.splitlines()[0]).text = verdict.text
            elif result.unjudged:  # no verifier yet: neither passed nor failed
                skipped += 1
                ET.SubElement(case, "skipped", message="unjudged: the fixture has no verifier yet")
            if result.reasons:  # why the verifier failed, whether or not that fails the test
                ET.SubElement(case, "system-out").text = "".join(f"{r}\n" for r in result.shown_reasons)
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
        suite.set("skipped", str(skipped))
        if skipped:
            totals["skipped"] = totals.get("skipped", 0) + skipped
    if gates:
        suite = ET.SubElement(root, "testsuite", name="replio.gates", tests=str(len(gates)),
                              failures=str(len(gates)), errors="0", skipped="0")
        for line in gates:
            case = ET.SubElement(suite, "testcase", name=line, classname="replio.gates", time="0.000")
            ET.SubElement(case, "failure", message=line).text = line
        totals["tests"] += len(gates)
        totals["failures"] += len(gates)
    for key, value in totals.items():
        root.set(key, str(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
