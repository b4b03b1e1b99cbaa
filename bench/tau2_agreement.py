"""Does replio judge τ²-bench tasks as τ² does? `python bench/tau2_agreement.py --tau2 CHECKOUT` (a few minutes).

It takes the conversations replio recorded (a replay of the τ² example project, or saved
results given with `--results`), installs tau2-bench from the checkout into a throwaway
virtualenv (kept with `--venv`; τ² needs Python 3.12 or 3.13, `--python`), converts each
conversation to τ²'s simulation format (its greeting, the messages, the agent's calls and
results, the simulated user's own calls, the termination reason) and has τ²'s own evaluator
(`evaluate_simulation`, run by `tau2_worker.py`) judge it. It prints, per domain, how often the
two agree on the reward over the components τ² computes without an LLM (DB, ENV_ASSERTION,
ACTION, COMMUNICATE: replio's verdict without its judge), then every disagreement with both
verdicts and why; and, on a line of its own, the agreement on the NL assertions when
`--nl-model` gives τ² a model to judge them with (both sides judge by an LLM: not tuned to).

    python bench/tau2_agreement.py --tau2 ~/src/tau2-bench
    python bench/tau2_agreement.py --tau2 ~/src/tau2-bench --venv /tmp/tau2-venv     # reuse a venv
    python bench/tau2_agreement.py --tau2 ~/src/tau2-bench --nl-model openai/qwen2.5-coder-1.5b-instruct \\
        --nl-base-url http://127.0.0.1:8080/v1

The exit status is 1 when some domain agrees on less than `--min-agreement` (default 0.99).

The simulated user's own calls are placed where they happened among the agent's turns (each
`user_trace` entry's `at`; a saved result older than that field has them after the
conversation). τ²'s evaluator replays each conversation with `strict_replay=True` (every tool's
result compared with the recorded one), but one of whose tool results replio cut for the trace
(4,000 characters kept), which is replayed with `strict_replay=False`. A case on which τ²'s
evaluator raises is counted as such, apart from the agreement, and named with its exception.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from replio_replay import OPENING, tau2_fixture_id  # noqa: E402

WORKER = Path(__file__).resolve().parent / "tau2_worker.py"
#: replio's end of a fixture -> τ²'s termination reason.
TERMINATION = {"ok": "user_stop", "truncated": "max_steps", "error": "agent_error", "cancelled": "agent_error"}


def tau2_messages(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A result's conversation in τ²'s message format (see the module's docstring): the simulated
    user's own calls in their places (`at`), those of a result that gives none after the rest."""
    out: list[dict[str, Any]] = [{"role": "assistant", "content": OPENING}]
    pending: list[str] = []
    n = 0
    conversation = result.get("conversation") or []
    own = result.get("user_trace") or []

    def user_calls(place: int | None) -> None:
        nonlocal n
        for c in own:
            at = c.get("at")
            placed = isinstance(at, int) and 0 <= at < len(conversation)
            if (placed and at == place) or (place is None and not placed):
                n += 1
                args = c["arguments"] if isinstance(c["arguments"], dict) else {}
                out.append({"role": "user", "content": None, "tool_calls": [
                    {"id": f"call_{n}", "name": c["name"], "arguments": args, "requestor": "user"}]})
                out.append({"role": "tool", "id": f"call_{n}", "content": c.get("result"), "requestor": "user"})

    for i, m in enumerate(conversation):
        user_calls(i)
        if m["role"] == "assistant":
            calls = []
            for c in m.get("calls") or []:
                n += 1
                args = c["arguments"] if isinstance(c["arguments"], dict) else {}
                calls.append({"id": f"call_{n}", "name": c["name"], "arguments": args, "requestor": "assistant"})
            pending = [c["id"] for c in calls]
            out.append({"role": "assistant", "content": m.get("content") or None, "tool_calls": calls or None})
        elif m["role"] == "tool":
            out.append({"role": "tool", "id": pending.pop(0) if pending else f"call_{n}", "content": m["content"],
                        "requestor": "assistant"})
        else:
            out.append({"role": "user", "content": m.get("content")})
    user_calls(None)
    return out


#: What replio writes where it cut a tool's result for the trace (`run.scoring`).
CUT = "\n[... cut: "


def strict_replay(messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether τ²'s evaluator can replay `messages` strictly (each tool's result compared with the
    recorded one): not when replio cut one of them for the trace."""
    return not any(m["role"] == "tool" and CUT in (m.get("content") or "") for m in messages)


def replio_verdicts(result: Mapping[str, Any]) -> tuple[bool, bool | None]:
    """replio's verdict without its judge, and its judge's (None: no judge)."""
    reasons = [r for r in result.get("reasons") or [] if not r.startswith("judge")]
    judged = result.get("judge")
    verdicts = judged if isinstance(judged, list) else [judged] if judged else []
    nl = all(bool(v.get("passed")) for v in verdicts) if verdicts else None
    return result.get("status") in ("ok", "truncated") and not reasons, nl


def tasks(checkout: Path, domains: set[str]) -> dict[str, tuple[str, dict[str, Any]]]:
    """fixture id -> (domain, the τ² task) for each task of each domain."""
    out = {}
    for domain in sorted(domains):
        for task in json.loads((checkout / "data" / "tau2" / "domains" / domain / "tasks.json").read_text()):
            out[tau2_fixture_id(domain, str(task["id"]))] = (domain, task)
    return out


def replay(project: Path) -> list[dict[str, Any]]:
    """The fixtures' results of an offline replay of `project` (each run's, with `--compare`)."""
    command = [shutil.which("replio") or str(Path(sys.executable).with_name("replio")), "eval", "--path", str(project),
               "run", "--record-mode", "none", "--output", "json"]
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "CI": "1"})
    try:
        return _fixtures([json.loads(done.stdout)], ["replay"])
    except (ValueError, KeyError):
        sys.exit(f"tau2_agreement: the replay gave no result (exit {done.returncode}): {done.stderr[-2000:]}")


def saved(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """The fixtures' results of saved results (`run --output json` or `--output-file`)."""
    return _fixtures([json.loads(p.read_text(encoding="utf-8")) for p in paths], [p.name for p in paths])


def _fixtures(data: Sequence[dict[str, Any]], labels: Sequence[str]) -> list[dict[str, Any]]:
    """Every fixture result of every run, each with `key`: its id, after its file and run when there
    are several (so one task judged in two runs counts twice)."""
    runs = [(label, i, run) for label, d in zip(labels, data) for i, run in enumerate(d.get("runs") or [d])]
    several = len(runs) > 1
    return [{**f, "key": f"{label}#{i}:{f['id']}" if several else f["id"]} for label, i, run in runs
            for f in run["fixtures"]]


def tau2_venv(venv: Path, checkout: Path, python: str) -> Path:
    """The python of a virtualenv at `venv` holding tau2-bench from `checkout`."""
    bin_python = venv / "bin" / "python"
    if not bin_python.exists():
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
    if subprocess.run([str(bin_python), "-c", "import tau2.evaluator.evaluator"], capture_output=True,
                      env={**os.environ, "TAU2_DATA_DIR": str(checkout / "data")}).returncode != 0:
        subprocess.run([str(bin_python), "-m", "pip", "install", "-q", str(checkout)], check=True)
    return bin_python


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tau2", type=Path, required=True, help="a tau2-bench checkout")
    parser.add_argument("--project", type=Path, default=REPO / "examples" / "tau2")
    parser.add_argument("--results", type=Path, action="append", default=[],
                        help="saved replio results to compare (default: a replay of --project)")
    parser.add_argument("--venv", type=Path, help="tau2-bench's virtualenv, kept (default: a throwaway one)")
    parser.add_argument("--python", default=shutil.which("python3.12") or shutil.which("python3.13") or "python3",
                        help="the Python (3.12 or 3.13) that tau2-bench's virtualenv is made with")
    parser.add_argument("--nl-model", help="a LiteLLM model for τ²'s NL-assertion judge, e.g. openai/NAME")
    parser.add_argument("--nl-base-url", help="its base URL, e.g. http://127.0.0.1:8080/v1")
    parser.add_argument("--min-agreement", type=float, default=0.99)
    args = parser.parse_args(argv)
    results = [r for r in (saved(args.results) if args.results else replay(args.project))
               if r["id"].startswith("tau2-")]
    known = tasks(args.tau2, {r["id"].split("-")[1] for r in results})
    work, ours = [], {}
    for r in results:
        if r["id"] not in known:
            print(f"  {r['key']}: no task of the checkout has this id; left out")
            continue
        domain, task = known[r["id"]]
        messages = tau2_messages(r)
        work.append({"id": r["key"], "domain": domain, "task": task, "messages": messages,
                     "strict": strict_replay(messages), "termination": TERMINATION.get(r["status"], "agent_error")})
        ours[r["key"]] = (domain, *replio_verdicts(r), r)
    worker = [str(WORKER)] + (["--nl-model", args.nl_model, "--nl-base-url", args.nl_base_url or ""]
                              if args.nl_model else [])
    with tempfile.TemporaryDirectory(prefix="tau2-agreement-") as tmp:
        python = tau2_venv(args.venv or Path(tmp) / "venv", args.tau2, args.python)
        done = subprocess.run([str(python), *worker], input=json.dumps(work), capture_output=True, text=True,
                              env={**os.environ, "TAU2_DATA_DIR": str(args.tau2 / "data")})
    if done.returncode != 0:
        sys.exit(f"tau2_agreement: τ²'s evaluator failed: {done.stderr[-3000:]}")
    theirs = json.loads(done.stdout)
    lowest = 1.0
    for domain in sorted({d for d, *_ in ours.values()}):
        every = [i for i, (d, *_) in ours.items() if d == domain]
        raised = [i for i in every if theirs[i].get("raised")]
        ids = [i for i in every if i not in raised]
        agree = [i for i in ids if ours[i][1] == (theirs[i]["reward"] == 1.0)]
        share = len(agree) / len(every)  # a case τ² could not judge is no agreement
        lowest = min(lowest, share)
        passed = sum(theirs[i]["reward"] == 1.0 for i in ids)
        print(f"{domain:<8} {len(every)} cases  {share:.1%} agreement  (τ² rewards {passed}, replio passes "
              f"{sum(ours[i][1] for i in every)}, without NL assertions"
              + (f"; τ²'s evaluator raised on {len(raised)}" if raised else "") + ")")
        for i in raised:
            print(f"  {i}: τ²'s evaluator raised: {theirs[i]['raised']}")
        for i in sorted(set(ids) - set(agree)):
            parts = ", ".join(f"{k} {v:g}" for k, v in theirs[i]["parts"].items())
            why = "; ".join(r for r in ours[i][3].get("reasons") or [] if not r.startswith("judge")) or "no reason"
            print(f"  {i}: replio {'pass' if ours[i][1] else 'FAIL'} ({why}); τ² reward {theirs[i]['reward']:g} "
                  f"({parts}; basis {', '.join(theirs[i]['basis'])})")
    nl = [i for i in ours if ours[i][2] is not None and "nl" in theirs[i]]
    if nl:
        same = sum(ours[i][2] == (theirs[i]["nl"] == 1.0) for i in nl)
        print(f"NL_ASSERTION {len(nl)} cases  {same / len(nl):.1%} agreement (each side's LLM judge; not tuned to)")
    else:
        judged = sum(ours[i][2] is not None for i in ours)
        print(f"NL_ASSERTION {judged} cases judged by replio; τ²'s judge not run (give --nl-model)")
    print(f"lowest agreement of a domain: {lowest:.1%} (target {args.min_agreement:.0%})")
    return 0 if lowest >= args.min_agreement else 1


if __name__ == "__main__":
    sys.exit(main())
