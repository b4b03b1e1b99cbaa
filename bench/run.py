"""The replio-replay benchmark: `python bench/run.py` (about two minutes on 2 cores).

It builds synthetic suites (its own fixtures, a loopback provider with a settable latency)
and prints, measured side by side in one run:

1. replay vs live at zero latency, 200 fixtures × 3 requests (target: replay <= 1.0x live);
2. --jobs 8 vs --jobs 1, 24 fixtures × 2 requests at 100 ms latency, each a whole process, start-up
   included (target <= 0.2x; ideal 0.125x);
3. `replio eval list` vs `python -c "import click, pydantic"` (target <= 2x);
4. peak RSS of a 1,000-fixture replay (target < 200 MB) and its time vs 100 fixtures (target <= 11x);
5. replay per fixture vs the floor: the same cassettes replayed by bare vcrpy + httpx, no engine;
6. start-up: the bundled catalog's replay (`replio eval --path . run` in the repo with CI set),
   and a one-fixture live run against the loopback server at zero latency, each vs
   `python -c "import click, pydantic, httpx, yaml"` (target <= 1.5x).
7. a 400-fixture replay as 4 shards one after another vs one run plus 3 start-ups, a start-up
   being a run whose shard holds none of its selection (target <= 1.1x).

Timings are wall-clock medians of several runs. The two sides of a ratio are run in turn and
the ratio is the median of the paired ratios, so a slow spell on the machine falls on both
sides of a pair. They are figures for this machine, not tests. The package is byte-compiled
first, as an install compiles it: where PYTHONDONTWRITEBYTECODE is set, every run would
otherwise compile its modules again and the start-up figures would time the compiler.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from server import BenchServer  # noqa: E402

REPLIO = str(Path(sys.executable).with_name("replio"))
ROOT = Path(__file__).resolve().parent.parent
#: The yardstick of start-up: the libraries every run needs, imported and nothing done.
IMPORTS = [sys.executable, "-c", "import click, pydantic, httpx, yaml"]


def make_project(root: Path, n: int) -> Path:
    fixtures = root / ".replio" / "eval"
    fixtures.mkdir(parents=True)
    for i in range(n):
        (fixtures / f"bench-{i:04d}.json").write_text(json.dumps({
            "task": f"BENCH {i}: find the needle in notes.txt.",
            "files": {"notes.txt": "hay\nneedle\nhay\n", "src/a.py": "x = 1\n"},
            "expected": ["file_read", "grep"],
            "verifier": {"must_include": ["file_read"]},
        }))
    (root / ".replio" / "config.json").write_text(json.dumps({"provider": "openai:bench"}))
    return root


def replio(project: Path, *args: str, env: dict[str, str] | None = None,
           cwd: Path | None = None) -> tuple[float, int]:
    """Run the CLI; return (seconds, peak RSS of the child in kB)."""
    started = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    done = subprocess.run([REPLIO, "eval", "--path", str(project), *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, cwd=cwd)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1) or "error" in done.stdout.split("fixtures")[-1][:0]:
        raise SystemExit(f"replio failed ({done.returncode}): {done.stderr[-2000:]}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return elapsed, max(peak, before)


def side_by_side(first, second, repeat: int) -> tuple[float, float, float]:
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


def bench_replay_vs_live(tmp: Path, n: int, repeat: int) -> tuple[float, float, float, Path]:
    server = BenchServer(0.0)
    project = make_project(tmp / f"suite-{n}", n)
    url = ["--base-url", server.url, "--output", "json"]
    replio(project, "run", *url, "--record-mode", "once")  # record the cassettes
    replay, live, ratio = side_by_side(
        lambda: replio(project, "run", *url, "--record-mode", "none")[0],  # sockets blocked
        lambda: replio(project, "run", *url, "--no-cassettes")[0],
        repeat,
    )
    server.close()
    return replay, live, ratio, project


def bench_jobs(tmp: Path, n: int, repeat: int) -> tuple[float, float, float]:
    """--jobs 8 vs --jobs 1 over `n` fixtures of two requests at 100 ms: whole runs, start-up included."""
    server = BenchServer(0.1, requests=2)
    project = make_project(tmp / "jobs", n)
    args = ["run", "--base-url", server.url, "--no-cassettes", "--no-bundled", "--output", "json"]
    eight, one, ratio = side_by_side(lambda: replio(project, *args, "--jobs", "8")[0],
                                     lambda: replio(project, *args, "--jobs", "1")[0], repeat)
    server.close()
    return eight, one, ratio


def timed(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True)
    return time.perf_counter() - started


def bench_listing(tmp: Path, repeat: int) -> tuple[float, float, float]:
    project = tmp / "empty"
    project.mkdir()
    return side_by_side(lambda: replio(project, "list")[0],
                        lambda: timed([sys.executable, "-c", "import click, pydantic"]), repeat)


def bench_startup(tmp: Path, repeat: int) -> dict[str, tuple[float, float, float]]:
    """The bundled catalog's replay in the repo with CI set, and a one-fixture live run at zero
    latency, each vs importing the libraries every run needs."""
    replay = side_by_side(lambda: replio(Path("."), "run", env={"CI": "1"}, cwd=ROOT)[0],
                          lambda: timed(IMPORTS), repeat)
    server = BenchServer(0.0)
    project = make_project(tmp / "one", 1)
    live = side_by_side(
        lambda: replio(project, "run", "--base-url", server.url, "--no-cassettes", "--no-bundled")[0],
        lambda: timed(IMPORTS), repeat,
    )
    server.close()
    return {"the bundled catalog's replay (CI set)": replay,
            "a one-fixture live run, 0 ms latency": live}


def compile_package() -> None:
    """Byte-compile the replio_replay the CLI imports, as installing it would."""
    import compileall

    import replio_replay

    compileall.compile_dir(str(Path(replio_replay.__file__).parent), quiet=1)


def bench_scale(tmp: Path) -> tuple[float, float, int]:
    server = BenchServer(0.0)
    times = {}
    peak = 0
    for n in (100, 1000):
        project = make_project(tmp / f"scale-{n}", n)
        replio(project, "run", "--base-url", server.url, "--record-mode", "once", "--output", "json")
        times[n], _ = replio(project, "run", "--record-mode", "none", "--output", "json")
        if n == 1000:
            peak = peak_rss(project)
    server.close()
    return times[100], times[1000], peak


def peak_rss(project: Path) -> int:
    """Peak RSS in kB of one replay, measured by GNU time's child accounting in a fresh process."""
    code = (
        "import resource, subprocess, sys;"
        f"subprocess.run([{REPLIO!r}, 'eval', '--path', {str(project)!r}, 'run', '--record-mode', 'none',"
        " '--output', 'json'], capture_output=True);"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    return int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)


def bench_floor(project: Path, n: int, repeat: int) -> tuple[float, float, float]:
    """Per fixture: replio's in-process replay through the public API, planned from scratch as a run plans
    (fixture discovery included), vs bare vcrpy + httpx over the same cassettes."""
    import httpx
    import vcr

    from replio_replay import ReadableSerializer, RunRequest, execute, prepare

    ids = sorted(path.stem for path in (project / ".replio" / "eval").glob("bench-*.json"))[:n]
    request = RunRequest(project=project, fixture_ids=ids, record_mode="none", jobs=1)

    def ours() -> float:
        started = time.perf_counter()
        with prepare(request) as plan:
            execute(plan)
        return (time.perf_counter() - started) / len(ids)

    folder = project / "cassettes" / "openai" / "bench"
    my_vcr = vcr.VCR(record_mode="none", match_on=["method", "path"])
    my_vcr.register_serializer("replio", ReadableSerializer())
    body = {"model": "bench", "messages": [{"role": "user", "content": "x"}]}

    def floor() -> float:
        started = time.perf_counter()
        with httpx.Client() as client:
            for fid in ids:
                with my_vcr.use_cassette(str(folder / f"{fid}.yaml"), serializer="replio"):
                    for _ in range(3):
                        client.post("http://127.0.0.1:9/v1/chat/completions", json=body).json()
        return (time.perf_counter() - started) / len(ids)

    return side_by_side(ours, floor, repeat)


def bench_shards(tmp: Path, n: int, repeat: int) -> tuple[float, float, float]:
    """4 shards in turn vs the whole run plus the 3 extra start-ups sharding costs. A start-up is
    what a shard costs beyond its fixtures: a run of the same suite (imports, discovery of every
    fixture, the plan) whose shard holds none of what it selects."""
    from replio_replay import Shard

    server = BenchServer(0.0)
    project = make_project(tmp / f"shards-{n}", n)
    replio(project, "run", "--base-url", server.url, "--record-mode", "once", "--output", "json")
    server.close()
    replay = ("run", "--record-mode", "none", "--output", "json")
    other = next(shard for shard in (Shard(i, 4) for i in range(1, 5)) if not shard.holds("bench-0000"))
    empty = ("--fixture", "bench-0000", "--shard", str(other))

    def shards() -> float:
        return sum(replio(project, *replay, "--shard", f"{i}/4")[0] for i in range(1, 5))

    def whole() -> float:
        return replio(project, *replay)[0] + sum(replio(project, *replay, *empty)[0] for _ in range(3))

    return side_by_side(shards, whole, repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs of each side per timing (median)")
    parser.add_argument("--quick", action="store_true", help="smaller suites, for a smoke test")
    args = parser.parse_args()
    n_live = 40 if args.quick else 200
    compile_package()
    print(f"replio-replay benchmark on {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory(prefix="replio-bench-") as name:
        tmp = Path(name)
        replay, live, ratio, project = bench_replay_vs_live(tmp, n_live, args.repeat)
        print(f"1. replay vs live, {n_live} fixtures x 3 requests, 0 ms latency: "
              f"replay {replay:.2f} s, live {live:.2f} s -> {ratio:.2f}x (target <= 1.0x)")
        eight, one, ratio = bench_jobs(tmp, 24, 1 if args.quick else 3)
        print(f"2. --jobs 8 vs --jobs 1, 24 fixtures x 2 requests, 100 ms latency, start-up included: "
              f"{eight:.2f} s vs {one:.2f} s -> {ratio:.3f}x (target <= 0.2x, ideal 0.125x)")
        listing, imports, ratio = bench_listing(tmp, args.repeat * 2)
        print(f"3. `replio eval list` vs `python -c 'import click, pydantic'`: "
              f"{listing * 1000:.0f} ms vs {imports * 1000:.0f} ms -> {ratio:.2f}x (target <= 2x)")
        if not args.quick:
            t100, t1000, peak = bench_scale(tmp)
            print(f"4. 1,000-fixture replay: peak RSS {peak / 1024:.0f} MB (target < 200 MB); "
                  f"{t1000:.2f} s vs {t100:.2f} s for 100 -> {t1000 / t100:.2f}x (target <= 11x)")
        ours, floor, ratio = bench_floor(project, min(n_live, 100), args.repeat)
        print(f"5. replay per fixture vs bare vcrpy + httpx: {ours * 1000:.2f} ms vs {floor * 1000:.2f} ms "
              f"-> {ratio:.2f}x")
        for what, (ours, yardstick, ratio) in bench_startup(tmp, args.repeat * 2).items():
            print(f"6. {what} vs `python -c 'import click, pydantic, httpx, yaml'`: {ours * 1000:.0f} ms vs "
                  f"{yardstick * 1000:.0f} ms -> {ratio:.2f}x (target <= 1.5x)")
        n_shards = 100 if args.quick else 400
        sharded, whole, ratio = bench_shards(tmp, n_shards, args.repeat)
        print(f"7. {n_shards}-fixture replay as 4 shards in turn vs one run + 3 start-ups: "
              f"{sharded:.2f} s vs {whole:.2f} s -> {ratio:.2f}x (target <= 1.1x)")


if __name__ == "__main__":
    main()
