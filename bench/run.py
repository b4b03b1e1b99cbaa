"""The replio-replay benchmark: `python bench/run.py` (four to five minutes on 2 cores).

It measures, side by side in one run, the budgets of issue 27 (vcrpy in the loop, nothing kept
between runs), each a ratio of whole-process timings or a ceiling:

1. the bundled catalog's replay (`replio eval --path . run` in the repo, CI set) vs the
   yardstick `python -c "import click, pydantic, httpx, yaml"` (budget <= 2.5x);
2. a one-fixture live run against a loopback server at zero latency vs the same yardstick
   (budget <= 2.0x);
3. replay per fixture of the BFCL example (`examples/bfcl`, 400 cases x 2 models = 800
   fixtures, copied to a temporary folder) vs a bare vcrpy + httpx loop over the same
   cassettes (`bench/floor.py`) (budget <= 1.3x). Per fixture is the marginal cost: each side
   runs the whole example and a half of it (the first 50 cases of each category, 400
   fixtures), and the time per fixture is the difference over the 400 fixtures between them,
   so the start-up each process pays once falls out (the ratio is of the two medians: a
   difference of timings is too noisy to pair); the whole-process ratio is printed too;
4. `--jobs 8` vs `--jobs 1`, 24 fixtures x 2 requests at 100 ms latency, start-up included
   (budget <= 0.2x; ideal 0.125x);
5. a replay of 10,000 fixtures (generated with their cassettes in a temporary folder): peak RSS
   of the process (`wait4`'s rusage, budget < 300 MB) and its open file descriptors
   (`/proc/<pid>/fd`, sampled every 0.1 s: the most seen in the run's second half may exceed
   the most seen in its first by no more than a fixture in flight holds, 2).

Timings are wall-clock medians. The two sides of a ratio run in turn and the ratio is the median
of the paired ratios, so a slow spell on the machine falls on both sides of a pair. They are
figures for this machine, not tests. The package is byte-compiled first, as an install compiles
it: where PYTHONDONTWRITEBYTECODE is set, every run would otherwise compile its modules again
and the start-up figures would time the compiler.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from server import BenchServer  # noqa: E402

REPLIO = str(Path(sys.executable).with_name("replio"))
BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
BFCL = ROOT / "examples" / "bfcl"
#: The BFCL example's two recorded models, replayed side by side as its README shows.
BFCL_MODELS = "llamacpp:qwen2.5-coder-1.5b-instruct,llamacpp:qwen2.5-coder-0.5b-instruct"
#: The yardstick of start-up: the libraries every run needs, imported and nothing done.
IMPORTS = [sys.executable, "-c", "import click, pydantic, httpx, yaml"]
YARDSTICK = "`python -c 'import click, pydantic, httpx, yaml'`"


def make_project(root: Path, n: int, numbered: bool = True) -> Path:
    """`n` fixtures of the loopback server's plan; `numbered`: each task names its number, else
    they are alike but for their id (and so are their requests)."""
    fixtures = root / ".replio" / "eval"
    fixtures.mkdir(parents=True)
    for i in range(n):
        (fixtures / f"bench-{i:05d}.json").write_text(json.dumps({
            "task": f"BENCH {i if numbered else 'n'}: find the needle in notes.txt.",
            "files": {"notes.txt": "hay\nneedle\nhay\n", "src/a.py": "x = 1\n"},
            "expected": ["file_read", "grep"],
            "verifier": {"must_include": ["file_read"]},
        }))
    (root / ".replio" / "config.json").write_text(json.dumps({"provider": "openai:bench"}))
    return root


def replio(project: Path, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> float:
    """Run the CLI; return its wall-clock seconds. Exit 1 (a fixture failed) is a result, not a failure."""
    started = time.perf_counter()
    done = subprocess.run([REPLIO, "eval", "--path", str(project), *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, cwd=cwd)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"replio {' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return elapsed


def timed(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True)
    return time.perf_counter() - started


def side_by_side(first: Callable[[], float], second: Callable[[], float], repeat: int) -> tuple[float, float, float]:
    """Time `first` and `second` in turn, `repeat` times each.

    Returns the median of each and the median of the paired ratios first/second: a slow spell
    on the machine lands on both halves of a pair, so the paired ratio holds still where
    either median alone drifts.
    """
    a: list[float] = []
    b: list[float] = []
    for _ in range(repeat):
        a.append(first())
        b.append(second())
    ratio = statistics.median(x / y for x, y in zip(a, b))
    return statistics.median(a), statistics.median(b), ratio


def verdict(met: bool) -> str:
    return "met" if met else "NOT met"


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def ratio_line(number: int, what: str, ours: str, other: str, ratio: float, budget: float,
               against: str = YARDSTICK) -> str:
    return f"{number}. {what} vs {against}: {ours} vs {other} -> {ratio:.2f}x (budget <= {budget}x): {verdict(ratio <= budget)}"


def start_up_line(number: int, what: str, timing: tuple[float, float, float], budget: float) -> str:
    ours, yardstick, ratio = timing
    return ratio_line(number, what, ms(ours), ms(yardstick), ratio, budget)


def bench_bundled(repeat: int) -> tuple[float, float, float]:
    """The bundled catalog's replay in the repo with CI set vs the yardstick."""
    return side_by_side(lambda: replio(Path("."), "run", env={"CI": "1"}, cwd=ROOT), lambda: timed(IMPORTS), repeat)


def bench_live(tmp: Path, repeat: int) -> tuple[float, float, float]:
    """A one-fixture live run against the loopback server at zero latency vs the yardstick."""
    server = BenchServer(0.0)
    project = make_project(tmp / "one", 1)
    try:
        return side_by_side(
            lambda: replio(project, "run", "--base-url", server.url, "--no-cassettes", "--no-bundled"),
            lambda: timed(IMPORTS), repeat,
        )
    finally:
        server.close()


def bfcl_copy(dest: Path, cases_per_category: int | None) -> Path:
    """The BFCL example copied to `dest` (a replay writes into its project), optionally cut to the
    first `cases_per_category` cases of each category, with their cassettes and goldens."""
    shutil.copytree(BFCL, dest)
    if cases_per_category is None:
        return dest
    for path in [*dest.glob(".replio/eval/**/*.json"), *dest.glob("cassettes/**/*.yaml"), *dest.glob("golden/**/*.json")]:
        if path.name == "config.json":
            continue
        if int(path.stem.rsplit("_", 1)[1]) >= cases_per_category:
            path.unlink()
    return dest


def bench_bfcl(tmp: Path, repeat: int) -> tuple[float, float, float, float]:
    """Per fixture, the BFCL example's replay vs bare vcrpy + httpx over the same cassettes.

    Returns replio's and the floor's marginal seconds per fixture, their paired ratio, and the
    paired ratio of the whole processes over all 800 fixtures."""
    whole, half = bfcl_copy(tmp / "bfcl", None), bfcl_copy(tmp / "bfcl-half", 50)
    fixtures = {p: 2 * len(list(p.glob(".replio/eval/**/bfcl-*.json"))) for p in (whole, half)}
    extra = fixtures[whole] - fixtures[half]

    def ours(project: Path) -> float:
        return replio(project, "run", "--compare", BFCL_MODELS, "--output", "json")

    def floor(project: Path) -> float:
        return timed([sys.executable, str(BENCH / "floor.py"), str(project / "cassettes")])

    rows = []
    for _ in range(repeat):
        rows.append((ours(whole), ours(half), floor(whole), floor(half)))
    per_ours = [(a - b) / extra for a, b, _, _ in rows]
    per_floor = [(c - d) / extra for _, _, c, d in rows]
    # a difference of two timings is noisier than either: the ratio is of the medians
    ours_median, floor_median = statistics.median(per_ours), statistics.median(per_floor)
    whole_ratio = statistics.median(a / c for a, _, c, _ in rows)
    return ours_median, floor_median, ours_median / floor_median, whole_ratio


def bench_jobs(tmp: Path, n: int, repeat: int) -> tuple[float, float, float]:
    """--jobs 8 vs --jobs 1 over `n` fixtures of two requests at 100 ms: whole runs, start-up included."""
    server = BenchServer(0.1, requests=2)
    project = make_project(tmp / "jobs", n)
    args = ["run", "--base-url", server.url, "--no-cassettes", "--no-bundled", "--output", "json"]
    try:
        return side_by_side(lambda: replio(project, *args, "--jobs", "8"),
                            lambda: replio(project, *args, "--jobs", "1"), repeat)
    finally:
        server.close()


def scale_project(tmp: Path, n: int) -> Path:
    """`n` fixtures alike but for their id, each with its cassette: one fixture recorded against the
    loopback server, its cassette copied for the others (the requests hold no fixture id)."""
    project = make_project(tmp / f"scale-{n}", n, numbered=False)
    server = BenchServer(0.0)
    try:
        replio(project, "run", "--fixture", "bench-00000", "--base-url", server.url, "--record-mode", "once",
               "--no-bundled", "--output", "json")
    finally:
        server.close()
    folder = project / "cassettes" / "openai" / "bench"
    recorded = folder / "bench-00000.yaml"
    for i in range(1, n):
        shutil.copyfile(recorded, folder / f"bench-{i:05d}.yaml")
    return project


def bench_scale(tmp: Path, n: int) -> tuple[float, int, list[int], str]:
    """One replay of `n` fixtures: seconds, peak RSS in kB, the open fds sampled, and the summary line."""
    project = scale_project(tmp, n)
    argv = [REPLIO, "eval", "--path", str(project), "run", "--record-mode", "none", "--no-bundled"]
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        child = subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL)
        fds: list[int] = []
        while True:
            # wait4 reaps the child with its own rusage: the peak RSS of this process alone
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            try:
                fds.append(len(os.listdir(f"/proc/{child.pid}/fd")))
            except OSError:  # it ended between wait4 and listdir
                pass
            time.sleep(0.1)
        elapsed = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        lines = out.read().decode(errors="replace").strip().splitlines()
    if child.returncode != 0:
        raise SystemExit(f"the {n:,}-fixture replay exited {child.returncode}: {lines[-3:]}")
    return elapsed, usage.ru_maxrss, fds, lines[-1] if lines else ""


def compile_package() -> None:
    """Byte-compile the replio_replay the CLI imports, as installing it would."""
    import compileall

    import replio_replay

    compileall.compile_dir(str(Path(replio_replay.__file__).parent), quiet=1)


#: Files a fixture in flight may hold open (its cassette, a worktree file): no growth is no more
#: than this above the first half's most. A leak of one per fixture would show thousands.
FD_SLACK = 2


def fd_growth(fds: list[int]) -> tuple[int, int]:
    """The most fds open in the first and in the second half of the samples."""
    half = len(fds) // 2
    return max(fds[:half] or [0]), max(fds[half:] or [0])


#: The budgets by the name `--only` takes, in the order a full run measures them.
BUDGETS = ("bundled", "live", "bfcl", "jobs", "scale")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs of each side per timing (median)")
    parser.add_argument("--quick", action="store_true", help="fewer runs and 1,000 fixtures at scale, a smoke test")
    parser.add_argument("--only", choices=BUDGETS, action="append",
                        help="measure only this budget (its line keeps its number); may be given again")
    args = parser.parse_args()
    only = set(args.only or BUDGETS)
    repeat = 2 if args.quick else args.repeat
    n_scale = 1000 if args.quick else 10_000
    compile_package()
    print(f"replio-replay benchmark on {os.cpu_count()} cores, Python {sys.version.split()[0]}", flush=True)
    with tempfile.TemporaryDirectory(prefix="replio-bench-") as name:
        tmp = Path(name)
        if "bundled" in only:
            print(start_up_line(1, "the bundled catalog's replay (CI set)", bench_bundled(repeat * 2), 2.5), flush=True)
        if "live" in only:
            print(start_up_line(2, "a one-fixture live run, 0 ms latency", bench_live(tmp, repeat * 2), 2.0), flush=True)
        if "bfcl" in only:
            ours, floor, ratio, whole = bench_bfcl(tmp, repeat)
            line = ratio_line(3, "the BFCL example's replay (800 fixtures), per fixture", f"{ours * 1000:.2f} ms",
                              f"{floor * 1000:.2f} ms", ratio, 1.3, against="bare vcrpy + httpx over its cassettes")
            print(f"{line} (whole processes: {whole:.2f}x)", flush=True)
        if "jobs" in only:
            eight, one, ratio = bench_jobs(tmp, 24, 1 if args.quick else 3)
            print(f"4. --jobs 8 vs --jobs 1, 24 fixtures x 2 requests, 100 ms latency, start-up included: "
                  f"{eight:.2f} s vs {one:.2f} s -> {ratio:.3f}x (budget <= 0.2x, ideal 0.125x): "
                  f"{verdict(ratio <= 0.2)}", flush=True)
        if "scale" in only:
            elapsed, peak, fds, summary = bench_scale(tmp, n_scale)
            first, second = fd_growth(fds)
            print(f"5. {n_scale:,}-fixture replay in {elapsed:.1f} s ({summary.strip()}): peak RSS {peak / 1024:.0f} MB "
                  f"(budget < 300 MB): {verdict(peak < 300 * 1024)}; open fds at most {first} in the first half, "
                  f"{second} in the second ({len(fds)} samples, budget: no growth, {FD_SLACK} in flight): "
                  f"{verdict(second <= first + FD_SLACK)}")

if __name__ == "__main__":
    main()
