"""Where the bundled replay's time goes: `python bench/breakdown.py [--repeat N]`.

Each step is a whole process that imports one more layer than the step before, timed in turn
with the others in rounds (the median of each over `--repeat` rounds, of its wall-clock time and
of its CPU time, which a busy machine stretches less), so the differences say
what each layer adds: Python's start, the yardstick's libraries, pydantic's model machinery and
its plugin lookup (which the first model build does), vcrpy, replio's own modules, and last the
bundled replay itself (`replio eval --path . run`, CI set). PyYAML's own load of the bundled
cassettes (libyaml's parser, PyYAML's constructor) is timed apart, in one process, as it is part
of the run. Figures for this machine, not tests.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from run import IMPORTS, compile_package

ROOT = Path(__file__).resolve().parent.parent
REPLIO = str(Path(sys.executable).with_name("replio"))

#: bench/run.py's yardstick: the libraries every run needs, imported and nothing done.
IMPORTS_CODE = IMPORTS[-1]
#: httpx's command-line client left out as `replio` leaves it out (see `replio_replay.cli.entry`).
AS_REPLIO = "import sys; sys.modules.setdefault('httpx._main', None); "
#: (what a layer is, the code it adds): each step's process runs its layer's code after all before it.
LAYERS = [
    ("the same as replio imports them (httpx._main absent)", IMPORTS_CODE),
    ("pydantic's model machinery (BaseModel, TypeAdapter)", "from pydantic import BaseModel, TypeAdapter"),
    ("pydantic's plugin lookup (every installed distribution's entry points)",
     "from importlib.metadata import distributions; [d.entry_points for d in distributions()]"),
    ("vcrpy (`import vcr`: its config, patchers and stubs)", "import vcr"),
    ("replio's own modules a replay imports",
     "import replio_replay.cli, replio_replay.config, replio_replay.run.suite, replio_replay.recording.session, "
     "replio_replay.recording.yamlcodec, replio_replay.providers.openai, replio_replay.report.text"),
]
#: (what the step adds, the code its process runs), in order.
STEPS = [("Python's start (`python -c pass`)", "pass"), (f"the yardstick `{IMPORTS_CODE}`", IMPORTS_CODE)] + [
    (what, AS_REPLIO + "; ".join(code for _, code in LAYERS[:i + 1])) for i, (what, _) in enumerate(LAYERS)]

_YAML_LOAD = """
import statistics, sys, time, yaml
texts = [p.read_text() for p in sorted(__import__('pathlib').Path(sys.argv[1]).glob('*.yaml'))]
rounds = []
for _ in range(5):
    started = time.perf_counter()
    for text in texts:
        yaml.load(text, Loader=getattr(yaml, 'CSafeLoader', yaml.SafeLoader))
    rounds.append(time.perf_counter() - started)
print(len(texts), statistics.median(rounds))
"""


def timed(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall-clock and CPU (user + system, the child's own rusage) seconds of one process."""
    started = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT,
                             env={**os.environ, **(env or {})})
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in (0, 1):  # 1: a fixture failed, a result
        raise SystemExit(f"{argv[:3]} exited {child.returncode}")
    return elapsed, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=11, help="rounds (median)")
    args = parser.parse_args()
    compile_package()
    runs: list[tuple[str, list[str], dict[str, str] | None]] = [
        (what, [sys.executable, "-c", code], None) for what, code in STEPS]
    runs.append(("the bundled replay (`replio eval --path . run`, CI set)", [REPLIO, "eval", "--path", ".", "run"],
                 {"CI": "1"}))
    times: list[list[tuple[float, float]]] = [[] for _ in runs]
    for _ in range(args.repeat):
        for i, (_, argv, env) in enumerate(runs):
            times[i].append(timed(argv, env))
    walls = [statistics.median(wall for wall, _ in t) for t in times]
    cpus = [statistics.median(cpu for _, cpu in t) for t in times]
    print(f"{'step':<76} {'wall':>8} {'adds':>8} {'cpu':>8} {'adds':>8}")
    for i, (what, _, _) in enumerate(runs):
        wall_before, cpu_before = (walls[i - 1], cpus[i - 1]) if i else (0.0, 0.0)
        print(f"{what:<76} {walls[i] * 1000:5.0f} ms {(walls[i] - wall_before) * 1000:+5.0f} ms "
              f"{cpus[i] * 1000:5.0f} ms {(cpus[i] - cpu_before) * 1000:+5.0f} ms")
    cassettes = ROOT / "cassettes" / "llamacpp" / "qwen2.5-coder-1.5b-instruct"
    done = subprocess.run([sys.executable, "-c", _YAML_LOAD, str(cassettes)], check=True, capture_output=True,
                          text=True)
    count, seconds = done.stdout.split()
    print(f"of the replay: PyYAML's own load of its {count} cassettes, in one process: {float(seconds) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
