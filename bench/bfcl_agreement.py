"""Does replio judge BFCL cases as BFCL does? `python bench/bfcl_agreement.py` (a minute or two).

It takes the responses replio judged (a replay of the BFCL example project's cassettes, every
provider recorded there, or saved results given with `--results`), installs `bfcl-eval` in a
throwaway virtualenv (`--no-deps`, plus `filelock` and `mpmath`; see `bfcl_worker.py` for the
one module stood in for), has BFCL's own checkers judge the same responses (the AST checker for
single-turn cases; `multi_turn_checker`, unchanged, for the conversations of the multi-turn
categories, run on BFCL's own classes), and prints the agreement per run and category and
every disagreement: the case, both verdicts and why.

    python bench/bfcl_agreement.py                                  # bfcl-eval from PyPI
    python bench/bfcl_agreement.py --bfcl /tmp/bfcl/bfcl_eval-2026.3.23-py3-none-any.whl
    python bench/bfcl_agreement.py --results run.json --venv /tmp/bfcl-venv   # reuse a venv
    python bench/bfcl_agreement.py --project examples/bfcl-multi-turn          # the multi-turn example

The cases and possible answers come from the same wheel as the checker. The exit status is 1
when some category of some run agrees on less than `--min-agreement` (default 0.99).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from replio_replay import BFCL_CATEGORIES, MULTI_TURN_CATEGORIES, decode_name, open_bfcl  # noqa: E402

WORKER = Path(__file__).resolve().parent / "bfcl_worker.py"
PREFIX = "bfcl-"
#: What the checkers' imports need once `model_config` is stood in for (`mpmath`: BFCL's MathAPI).
CHECKER_PACKAGES = ("filelock", "mpmath")
#: Every category compared, in the order reported.
CATEGORIES = (*BFCL_CATEGORIES, *MULTI_TURN_CATEGORIES)


@dataclass(frozen=True)
class Case:
    """A BFCL case as the checker needs it."""

    category: str
    functions: list[Any]
    ground_truth: list[Any] | None
    #: A multi-turn case's id, initial_config and involved_classes (what `multi_turn_checker` reads).
    entry: dict[str, Any] | None = None


@dataclass
class Tally:
    """One run's agreement per category, and its disagreements."""

    label: str
    counts: dict[str, list[int]] = field(default_factory=dict)  # category -> [cases, agreed, replio, bfcl]
    disagreements: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def bfcl_output(result: Mapping[str, Any]) -> Any:
    """What BFCL's OpenAI-style handler keeps of the response a replio result judged: a list of
    ``{BFCL name: arguments as JSON}``, or the text when there was no call."""
    trace = result.get("trace") or []
    if not trace:
        return result.get("answer") or ""
    return [{decode_name(c["name"]): c["arguments"] if isinstance(c["arguments"], str)
             else json.dumps(c["arguments"])} for c in trace]


def bfcl_turns(result: Mapping[str, Any]) -> list[list[Any]]:
    """What BFCL's OpenAI-style handler keeps of a conversation: per user turn, per model response
    that made calls, its calls as ``{BFCL name: arguments as JSON}`` (a text answer decodes to no
    call, which BFCL's evaluation leaves out)."""
    turns: list[list[Any]] = []
    for message in result.get("conversation") or []:
        if message["role"] == "user":
            turns.append([])
        elif message["role"] == "assistant" and message.get("calls") and turns:
            turns[-1].append([{decode_name(c["name"]): c["arguments"] if isinstance(c["arguments"], str)
                               else json.dumps(c["arguments"])} for c in message["calls"]])
    return turns


def items(runs: Sequence[Mapping[str, Any]], cases: Mapping[str, Case]) -> tuple[list[dict[str, Any]], list[Tally]]:
    """The checker's input for every BFCL fixture of `runs` (ids made unique per run), and a tally per run
    holding what could not be compared."""
    out, tallies = [], []
    for index, run in enumerate(runs):
        tally = Tally(_label(run))
        for result in run.get("fixtures", []):
            fixture_id = str(result.get("id", ""))
            case_id = fixture_id.removeprefix(PREFIX)
            if not fixture_id.startswith(PREFIX) or case_id not in cases:
                tally.skipped.append(f"{fixture_id}: not a BFCL case of this source")
                continue
            if result.get("status") in ("error", "cancelled"):
                tally.skipped.append(f"{fixture_id}: the run ended in {result.get('status')}: {result.get('error')}")
                continue
            case = cases[case_id]
            output = bfcl_turns(result) if case.entry is not None else bfcl_output(result)
            out.append({"id": f"{index}/{case_id}", "category": case.category, "functions": case.functions,
                        "ground_truth": case.ground_truth, "output": output, "entry": case.entry,
                        "replio": bool(result.get("pass")), "reasons": result.get("reasons") or []})
        tallies.append(tally)
    return out, tallies


def tally(items_: Iterable[Mapping[str, Any]], verdicts: Mapping[str, Mapping[str, Any]],
          tallies: list[Tally]) -> list[Tally]:
    """`tallies` filled in from replio's verdicts (in `items_`) and BFCL's (`verdicts`, by item id)."""
    for item in items_:
        index, case_id = item["id"].split("/", 1)
        t = tallies[int(index)]
        theirs = verdicts[item["id"]]
        counts = t.counts.setdefault(item["category"], [0, 0, 0, 0])
        agreed = item["replio"] == theirs["valid"]
        counts[0] += 1
        counts[1] += agreed
        counts[2] += item["replio"]
        counts[3] += bool(theirs["valid"])
        if not agreed:
            t.disagreements.append(
                f"{case_id}: replio {'pass' if item['replio'] else 'FAIL'}"
                f"{' (' + '; '.join(item['reasons']) + ')' if item['reasons'] else ''}, "
                f"BFCL {'valid' if theirs['valid'] else 'invalid'}"
                f"{' (' + '; '.join(theirs['error']) + ')' if theirs['error'] else ''}; "
                f"output {json.dumps(item['output'])[:300]}")
    return tallies


def report(tallies: Sequence[Tally]) -> list[str]:
    """The lines printed: per run and category, the agreement and both pass rates; then the disagreements."""
    lines = []
    for t in tallies:
        lines.append(t.label)
        lines.append(f"  {'category':<24} {'cases':>5} {'agree':>7} {'replio pass':>11} {'BFCL pass':>9}")
        for category in sorted(t.counts, key=list(CATEGORIES).index):
            n, agreed, ours, theirs = t.counts[category]
            lines.append(f"  {category:<24} {n:>5} {agreed / n:>7.1%} {ours / n:>11.1%} {theirs / n:>9.1%}")
        lines += [f"  disagrees: {d}" for d in t.disagreements]
        lines += [f"  not compared: {s}" for s in t.skipped]
    return lines


def worst(tallies: Sequence[Tally]) -> float:
    """The lowest agreement of any category of any run (1.0 when nothing was compared)."""
    rates = [agreed / n for t in tallies for n, agreed, _, _ in t.counts.values() if n]
    return min(rates, default=1.0)


def _label(run: Mapping[str, Any]) -> str:
    return f"{run.get('provider')}:{run.get('model')}"


def read_cases(source: Path) -> dict[str, Case]:
    """Every case of the categories the importer takes, by id, with its functions (a multi-turn case:
    what `multi_turn_checker` reads of it) and possible answer."""
    data = open_bfcl(source)
    cases = {}
    for category in CATEGORIES:
        if category not in data.categories:
            continue
        read = data.read(category)
        for case in read.cases:
            answer = read.answers.get(str(case["id"]))
            truth = None if answer is None else answer["ground_truth"]
            if category in MULTI_TURN_CATEGORIES:
                entry = {k: case[k] for k in ("id", "initial_config", "involved_classes")}
                cases[str(case["id"])] = Case(category, [], truth, entry)
            else:
                cases[str(case["id"])] = Case(category, case["function"], truth)
    return cases


def replay(project: Path) -> list[dict[str, Any]]:
    """The runs of a replay of every provider recorded under `project`/cassettes."""
    root = project / "cassettes"
    providers = sorted(f"{p.parent.name}:{p.name}" for p in root.glob("*/*") if any(p.glob(f"{PREFIX}*.yaml")))
    if not providers:
        sys.exit(f"bfcl_agreement: no BFCL recordings under {root}; record them first (see docs/examples.md's BFCL section)")
    command = [str(Path(sys.executable).with_name("replio")), "eval", "--path", str(project), "run",
               "--record-mode", "none", "--output", "json", "--compare", ",".join(providers)]
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "CI": "1"})
    try:
        return list(json.loads(done.stdout)["runs"])
    except (ValueError, KeyError):
        sys.exit(f"bfcl_agreement: the replay gave no result (exit {done.returncode}): {done.stderr[-2000:]}")


def saved(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """The runs of saved results (`run --output json` or `--output-file`)."""
    runs = []
    for path in paths:
        data = json.loads(path.read_text(encoding="utf-8"))
        runs += data["runs"] if "runs" in data else [data]
    return runs


def checker_venv(venv: Path, wheel: Path) -> Path:
    """The python of a virtualenv at `venv` holding bfcl-eval (no dependencies) and what its checker needs."""
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    probe = subprocess.run([str(python), "-c", "import bfcl_eval, filelock, mpmath"], capture_output=True)
    if probe.returncode != 0:
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel), *CHECKER_PACKAGES],
                       check=True)
    return python


def bfcl_verdicts(python: Path, work: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """BFCL's verdict on each item, by id, from the worker in the checker's virtualenv."""
    done = subprocess.run([str(python), str(WORKER)], input=json.dumps(list(work)), capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"bfcl_agreement: BFCL's checker failed: {done.stderr[-3000:]}")
    return dict(json.loads(done.stdout))


def download(into: Path) -> Path:
    """bfcl-eval's wheel from PyPI (no dependencies)."""
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "bfcl-eval", "-d", str(into)],
                   check=True)
    return next(into.glob("bfcl_eval-*.whl"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", type=Path, default=REPO / "examples" / "bfcl")
    parser.add_argument("--bfcl", type=Path, help="a bfcl-eval wheel (default: the latest from PyPI)")
    parser.add_argument("--results", type=Path, action="append", default=[],
                        help="saved replio results to compare (default: a replay of --project)")
    parser.add_argument("--venv", type=Path, help="the checker's virtualenv, kept (default: a throwaway one)")
    parser.add_argument("--min-agreement", type=float, default=0.99)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bfcl-agreement-") as tmp:
        wheel = args.bfcl or download(Path(tmp) / "wheel")
        runs = saved(args.results) if args.results else replay(args.project)
        work, tallies = items(runs, read_cases(wheel))
        python = checker_venv(args.venv or Path(tmp) / "venv", wheel)
        verdicts = bfcl_verdicts(python, [{k: v for k, v in i.items() if k not in ("replio", "reasons")} for i in work])
    tallies = tally(work, verdicts, tallies)
    print("\n".join(report(tallies)))
    lowest = worst(tallies)
    print(f"lowest agreement of a category: {lowest:.1%} (target {args.min_agreement:.0%})")
    return 0 if lowest >= args.min_agreement else 1


if __name__ == "__main__":
    sys.exit(main())
