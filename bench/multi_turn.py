"""An example's replay, this checkout against another: `python bench/multi_turn.py [--example NAME] [--against REF]`.

Issue 40 moved the project's Python (environments, Python tools, BFCL's classes) out of replio's
process into a fork server and a child per fixture; its budget is a replay of
`examples/bfcl-multi-turn` at most 1.5x what the code before cost. Issue 47 confined all the
user's code (the agent, the fork server and its children) in namespaces of their own; its budget
is a replay of `examples/your-agent`, `examples/bfcl-multi-turn` and `examples/tau2` at most 1.3x
what the code before cost (`--budget`). This times that replay (`replio eval --path COPY run
--provider llamacpp:MODEL --strict --output json`, `CI` set, nothing sent anywhere) with this
checkout's `replio_replay` and with the one of `--against` (a git ref, checked out into a
temporary worktree; default `main`), side by side:

- the example is copied to a temporary folder (a replay writes into its project) and, like both
  packages, byte-compiled first, as an install compiles them;
- the two sides run in turn, `--repeat` times each (default 7), each a whole process (Python's
  start included), with `PYTHONPATH` naming its checkout; its wall-clock seconds are timed and its
  CPU seconds are the operating system's (`wait4`: the process and every child it waited for, so
  the fork server and the children it reaped too);
- the ratio is the median of the paired ratios (this side over the other), so a slow spell of a
  shared machine falls on both sides of a pair; the medians of each side are printed with it;
- the two sides must judge every fixture alike (status, pass, drift, end state), or it stops.

    python bench/multi_turn.py                       # BFCL multi-turn against main, the first model
    python bench/multi_turn.py --example tau2 --repeat 5
    python bench/multi_turn.py --against eb23e60 --repeat 11 --model qwen2.5-coder-0.5b-instruct
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
#: The examples it replays.
EXAMPLES = ("bfcl-multi-turn", "your-agent", "tau2")
#: The budget of issue 47 (issue 40's was 1.5): this side's replay over the other's.
BUDGET = 1.3


def checkout(ref: str, dest: Path) -> Path:
    """A detached worktree of `ref` at `dest` (removed by `drop`)."""
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(dest), ref], check=True)
    return dest


def drop(worktree: Path) -> None:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(worktree)], check=False,
                   capture_output=True)


def recorded(project: Path, model: str) -> list[str]:
    """The fixtures recorded for `model` (the example is recorded case by case)."""
    return sorted(path.stem for path in project.glob(f"cassettes/llamacpp/{model}/*.yaml"))


def replay(package: Path, project: Path, model: str, tmp: Path) -> tuple[float, float, str]:
    """One replay of the fixtures recorded for `model` with the `replio_replay` of `package` (a
    checkout): its wall and CPU seconds, and its JSON."""
    env = {**os.environ, "PYTHONPATH": str(package), "CI": "1", "XDG_CONFIG_HOME": str(tmp), "TMPDIR": str(tmp),
           "LLAMACPP_BASE_URL": "http://127.0.0.1:9/v1"}  # anything not answered from a cassette fails
    argv = [sys.executable, "-c", "from replio_replay.cli import entry; entry()", "eval", "--path", str(project),
            "run", "--provider", f"llamacpp:{model}", "--strict", "--output", "json",
            *[arg for fixture in recorded(project, model) for arg in ("--fixture", fixture)]]
    out = tmp / "out.json"
    started = time.perf_counter()
    with out.open("wb") as sink:
        proc = subprocess.Popen(argv, stdout=sink, stderr=subprocess.DEVNULL, env=env, cwd=tmp)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"the replay with {package} exited {proc.returncode}")
    return wall, usage.ru_utime + usage.ru_stime, out.read_text()


def judged(output: str) -> list[Any]:
    """What each fixture's verdict rests on, to check that both sides did the same work."""
    return [(f["id"], f["status"], f["pass"], f["drift"], f["request_drift"], f.get("state"))
            for f in json.loads(output)["fixtures"]]


def paired(ours: list[float], theirs: list[float]) -> tuple[float, float, float]:
    """The median of each side and the median of the paired ratios ours/theirs."""
    return statistics.median(ours), statistics.median(theirs), statistics.median(a / b for a, b in zip(ours, theirs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", default="main", help="the git ref of the code to compare with (default main)")
    parser.add_argument("--repeat", type=int, default=7, help="replays of each side (default 7)")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b-instruct", help="the recorded model to replay")
    parser.add_argument("--example", default=EXAMPLES[0], choices=EXAMPLES, help="the example to replay")
    parser.add_argument("--budget", type=float, default=BUDGET, help=f"the ratio not to exceed (default {BUDGET})")
    args = parser.parse_args()
    example = ROOT / "examples" / args.example
    with tempfile.TemporaryDirectory(prefix="replio-bench-mt-") as name:
        tmp = Path(name)
        other = checkout(args.against, tmp / "other")
        try:
            project = tmp / "example"
            shutil.copytree(example, project)
            for folder in (ROOT / "replio_replay", other / "replio_replay", project):
                compileall.compile_dir(str(folder), quiet=1)
            (tmp / "ours").mkdir()
            (tmp / "theirs").mkdir()
            walls: tuple[list[float], list[float]] = ([], [])
            cpus: tuple[list[float], list[float]] = ([], [])
            for _ in range(args.repeat):
                for side, package, scratch in ((0, ROOT, tmp / "ours"), (1, other, tmp / "theirs")):
                    wall, cpu, output = replay(package, project, args.model, scratch)
                    walls[side].append(wall)
                    cpus[side].append(cpu)
                    (scratch / "judged.json").write_text(json.dumps(judged(output)))
                if (tmp / "ours" / "judged.json").read_text() != (tmp / "theirs" / "judged.json").read_text():
                    raise SystemExit("the two sides judged the fixtures differently: not the same work")
        finally:
            drop(other)
    wall = paired(*walls)
    cpu = paired(*cpus)
    print(f"examples/{args.example}'s replay ({len(recorded(example, args.model))} fixtures, {args.model}), this checkout "
          f"vs {args.against}, {args.repeat} pairs: wall {wall[0]:.2f} s vs {wall[1]:.2f} s -> {wall[2]:.2f}x, "
          f"CPU {cpu[0]:.2f} s vs {cpu[1]:.2f} s -> {cpu[2]:.2f}x (budget <= {args.budget}x): "
          f"{'met' if wall[2] <= args.budget else 'NOT met'}")


if __name__ == "__main__":
    main()
