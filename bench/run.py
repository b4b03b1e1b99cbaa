"""The replio-replay benchmark: `python bench/run.py` (seven to ten minutes on 2 cores).

It measures, side by side in one run, the budgets of issue 27 (vcrpy in the loop, nothing kept
between runs) and those of issue 37 (the user's own agent, 6 and 7), each a ratio of whole-process
timings or a ceiling:

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
   the most seen in its first by no more than a fixture in flight holds, 2);
6. a replay through an agent command vs the same agent alone, per fixture (budget <= 1.3x): the
   your-agent example (`examples/your-agent`, its openai-SDK agent and its one-task fixtures, the
   conversation left out), copied to a temporary folder and recorded there against a scripted
   loopback model (`bench/agent_servers.py`: `--provider openai:bench --base-url ... --record-mode
   once`, so no local model is needed). One side is `replio eval run --record-mode none`; the other
   runs the same command once per fixture, as replio would (a fresh folder with the fixture's
   files, `REPLIO_TASK` and standard input, replio's variables), its `OPENAI_BASE_URL` a bare
   `http.server` in this process answering with the fixture's recorded response bodies in order.
   The answers of both must be the same. Per fixture is the marginal cost: each side runs the
   copy (the fixtures and the first of them again) and the first again alone, and the difference
   is over the fixtures, each once, so replio's start-up falls out; the base run being one fixture,
   the difference is almost a whole run and is paired. The ratio of the whole runs is printed too;
7. `--jobs 8` vs `--jobs 1` over budget 4's 24 fixtures run by an agent command (`bench/tiny_agent.py`:
   two requests each, live, `--no-cassettes`, 100 ms latency), whole processes, start-up
   included (budget <= 0.25x; ideal 0.125x). The agent uses only the standard library, so this
   times replio, not an SDK's import; the same ratio with the agent on the openai SDK is printed
   after it, as information (one pair; not in `--quick`).

Timings are wall-clock medians. The two sides of a ratio run in turn and the ratio is the median
of the paired ratios, so a slow spell on the machine falls on both sides of a pair. They are
figures for this machine, not tests. The package is byte-compiled first, as an install compiles
it: where PYTHONDONTWRITEBYTECODE is set, every run would otherwise compile its modules again
and the start-up figures would time the compiler. `--quick` (a smoke run) runs each side twice (the
start-up ratios four times, the `--jobs` ones once) and the scale at 1,000 fixtures.
`--replio VENV` runs replio (and the yardstick's interpreter) as a user's `pip install` leaves it:
this checkout installed as a wheel into VENV (`bench/peers.py`'s `install_replio`, with the openai
SDK the agents of budgets 6 and 7 use beside it), not from a
development environment whose other installed HTTP clients vcrpy's patcher module and httpcore
import too.
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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_servers import Playback, ShopUpstream, recorded_bodies  # noqa: E402
from server import BenchServer  # noqa: E402

REPLIO = str(Path(sys.executable).with_name("replio"))
BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
BFCL = ROOT / "examples" / "bfcl"
#: The BFCL example's two recorded models, replayed side by side as docs/how-to/bfcl.md shows.
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


def replio_run(project: Path, *args: str, env: dict[str, str] | None = None,
               cwd: Path | None = None) -> tuple[float, str]:
    """Run the CLI; return its wall-clock seconds and its standard output. Exit 1 (a fixture failed)
    is a result, not a failure."""
    started = time.perf_counter()
    done = subprocess.run([REPLIO, "eval", "--path", str(project), *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, cwd=cwd)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"replio {' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return elapsed, done.stdout


def replio(project: Path, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> float:
    """Run the CLI; return its wall-clock seconds (see `replio_run`)."""
    return replio_run(project, *args, env=env, cwd=cwd)[0]


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


#: The your-agent example: an openai-SDK agent declared as a command, and its fixtures.
YOUR_AGENT = ROOT / "examples" / "your-agent"
#: What the run's provider sends as its key: the relay forwards it to a loopback server only.
BENCH_KEY = {"OPENAI_API_KEY": "bench"}
#: The interpreter a command's `python` means: replio's.
PYTHONS = ("python", "python3")


#: The id of the fixture a base run holds alone: the first one-task fixture again, under this suffix.
AGAIN = "-again"


def agent_copy(dest: Path) -> Path:
    """The your-agent example copied to `dest` with its one-task fixtures and the first of them
    again (its id ending in `AGAIN`), without its conversation fixtures (`turns`, `user`),
    recordings or other tool sets: its agent declared as in the example, the provider `openai:bench`."""
    shutil.copytree(YOUR_AGENT, dest, ignore=shutil.ignore_patterns("cassettes", "golden", "tools", "__pycache__"))
    config = json.loads((dest / ".replio" / "config.json").read_text(encoding="utf-8"))
    config = {"provider": "openai:bench", "agent": config["agent"], "bundled": False}
    (dest / ".replio" / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    kept = []
    for path in sorted((dest / ".replio" / "eval").glob("*.json")):
        fixture = json.loads(path.read_text(encoding="utf-8"))
        if fixture.get("turns") or fixture.get("user"):
            path.unlink()
        else:
            kept.append(fixture)
    again = {**kept[0], "id": kept[0]["id"] + AGAIN}
    (dest / ".replio" / "eval" / f"{again['id']}.json").write_text(json.dumps(again, indent=2), encoding="utf-8")
    return dest


def agent_fixtures(project: Path) -> list[dict[str, Any]]:
    """The project's fixtures, by id (a fixture without one is named by its file)."""
    return sorted(({"id": p.stem, **json.loads(p.read_text(encoding="utf-8"))}
                   for p in (project / ".replio" / "eval").glob("*.json")), key=lambda fixture: fixture["id"])


def agent_argv(project: Path) -> list[str]:
    """The project's agent command as replio starts it: `python` is this interpreter, the files it
    names are the project's."""
    command = json.loads((project / ".replio" / "config.json").read_text(encoding="utf-8"))["agent"]["command"]
    return [sys.executable if i == 0 and arg in PYTHONS else str(project / arg) if (project / arg).exists() else arg
            for i, arg in enumerate(command)]


def answers(output: str, fixtures: int, what: str) -> dict[str, str]:
    """Each fixture's answer in a run's JSON; SystemExit unless all `fixtures` passed without error."""
    result = json.loads(output)
    summary = result["summary"]
    if summary["fixtures"] != fixtures or summary["errors"] or summary["pass_rate"] != 1.0:
        failed = [(f["id"], f["status"], f.get("error")) for f in result["fixtures"] if not f["pass"]]
        raise SystemExit(f"{what}: {summary} {failed[:3]}")
    return {f["id"]: f["answer"] for f in result["fixtures"]}


def agent_projects(tmp: Path) -> tuple[Path, Path]:
    """The example's copy (`agent_copy`) recorded against the scripted upstream, and its base: the
    same project with only the fixture named `AGAIN`, and its recording."""
    whole = agent_copy(tmp / "agent")
    upstream = ShopUpstream()
    try:
        _, output = replio_run(whole, "run", "--provider", "openai:bench", "--base-url", upstream.url,
                               "--record-mode", "once", "--output", "json", env=BENCH_KEY)
    finally:
        upstream.close()
    answers(output, len(agent_fixtures(whole)), "recording the your-agent example")
    base = tmp / "agent-base"
    shutil.copytree(whole, base)
    for fixture in agent_fixtures(base):
        if not fixture["id"].endswith(AGAIN):
            (base / ".replio" / "eval" / f"{fixture['id']}.json").unlink()
            for cassette in (base / "cassettes").rglob(f"{fixture['id']}.yaml"):
                cassette.unlink()
    return whole, base


def direct_env(base_url: str, task: str, home: Path) -> dict[str, str]:
    """What replio sets in a one-task agent's environment (`agents.process.agent_env`) that this
    agent reads or its interpreter heeds, with `base_url` for the model."""
    env = {"PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"), "HOME": str(home),
           "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    env.update({name: os.environ[name] for name in ("LANG", "LC_ALL", "TZ", "VIRTUAL_ENV", "SSL_CERT_FILE",
                                                    "SSL_CERT_DIR") if name in os.environ})
    return {**env, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "replio", "NO_PROXY": "127.0.0.1,localhost",
            "REPLIO_TASK": task}


def run_direct(project: Path, playback: Playback, tmp: Path) -> tuple[float, dict[str, str]]:
    """The project's agent run once per fixture, one after the other, without replio: in a fresh
    folder holding the fixture's files, the task in `REPLIO_TASK` and on standard input, the model
    `playback`. Its seconds, the folders' making and removal included, and each fixture's answer."""
    argv = agent_argv(project)
    fixtures = agent_fixtures(project)
    got: dict[str, str] = {}
    playback.rewind()
    started = time.perf_counter()
    for fixture in fixtures:
        folder, home = Path(tempfile.mkdtemp(dir=tmp)), Path(tempfile.mkdtemp(dir=tmp))
        for name, text in fixture.get("files", {}).items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text, encoding="utf-8")
        done = subprocess.run(argv, input=fixture["task"].encode(), capture_output=True, cwd=folder,
                              env=direct_env(playback.base_url(fixture["id"]), fixture["task"], home))
        shutil.rmtree(folder)
        shutil.rmtree(home)
        if done.returncode != 0:
            raise SystemExit(f"the agent alone failed on {fixture['id']}: {done.stderr.decode()[-2000:]}")
        got[fixture["id"]] = done.stdout.decode().strip()
    elapsed = time.perf_counter() - started
    unplayed = [f["id"] for f in fixtures if playback.next.get(f["id"]) != len(playback.bodies[f["id"]])]
    if unplayed:
        raise SystemExit(f"the agent alone did not ask for every recorded response: {unplayed}")
    return elapsed, got


def bench_agent(tmp: Path, repeat: int) -> tuple[float, float, float, float, int]:
    """Per fixture, a replay through the your-agent example's agent command vs the same agent run
    alone against a bare server playing the same recorded responses.

    Per fixture is the marginal cost: each side runs the whole project (`agent_copy`: the example's
    one-task fixtures and the first of them again) and its base (that one fixture again alone), and
    the difference is over the example's fixtures, each once: replio's start-up, and whatever its
    first fixture alone pays, fall out. The base being one fixture, the difference is nearly a whole
    run, not a small difference of two large timings, so it is paired as the other ratios are.

    Returns replio's and the bare runs' medians per fixture, the median of their paired ratios,
    the paired ratio of the whole runs, and the fixtures the difference is over."""
    whole, base = agent_projects(tmp)
    extra = len(agent_fixtures(whole)) - len(agent_fixtures(base))
    bodies = {f["id"]: recorded_bodies(next((whole / "cassettes").rglob(f"{f['id']}.yaml")))
              for f in agent_fixtures(whole)}
    playback = Playback(bodies)
    direct_answers: dict[Path, dict[str, str]] = {}

    def ours(project: Path) -> float:
        elapsed, output = replio_run(project, "run", "--record-mode", "none", "--provider", "openai:bench",
                                     "--output", "json", env=BENCH_KEY)
        mine = answers(output, len(agent_fixtures(project)), "the replay")
        if mine != direct_answers[project]:
            raise SystemExit(f"the replay and the agent alone answered differently: {mine} vs "
                             f"{direct_answers[project]}")
        return elapsed

    def direct(project: Path) -> float:
        elapsed, direct_answers[project] = run_direct(project, playback, tmp)
        return elapsed

    rows = []
    try:
        for _ in range(repeat):
            # each side's whole run beside its base run; the bare side first, whose answers the replay's must equal
            c, d = direct(whole), direct(base)
            a, b = ours(whole), ours(base)
            rows.append((a, b, c, d))
    finally:
        playback.close()
    per_ours = [(a - b) / extra for a, b, _, _ in rows]
    per_direct = [(c - d) / extra for _, _, c, d in rows]
    ratio = statistics.median(x / y for x, y in zip(per_ours, per_direct))
    whole_ratio = statistics.median(a / c for a, _, c, _ in rows)
    return statistics.median(per_ours), statistics.median(per_direct), ratio, whole_ratio, extra


def agent_jobs_project(root: Path, n: int, sdk: bool) -> Path:
    """Budget 4's `n` fixtures, run by `bench/tiny_agent.py` (with `--sdk`: through the openai SDK)."""
    project = make_project(root, n)
    shutil.copyfile(BENCH / "tiny_agent.py", project / "tiny_agent.py")
    command = ["python", "tiny_agent.py", *(["--sdk"] if sdk else [])]
    (project / ".replio" / "config.json").write_text(json.dumps(
        {"provider": "openai:bench", "agent": {"command": command}, "bundled": False}))
    return project


def bench_agent_jobs(tmp: Path, n: int, repeat: int, sdk: bool = False) -> tuple[float, float, float]:
    """--jobs 8 vs --jobs 1 over `n` agent fixtures of two requests at 100 ms: whole runs, start-up included."""
    server = BenchServer(0.1, requests=2)
    project = agent_jobs_project(tmp / ("agent-jobs-sdk" if sdk else "agent-jobs"), n, sdk)
    args = ["run", "--base-url", server.url, "--no-cassettes", "--output", "json"]

    def timed_run(jobs: str) -> float:
        elapsed, output = replio_run(project, *args, "--jobs", jobs, env=BENCH_KEY)
        summary = json.loads(output)["summary"]
        if summary["fixtures"] != n or summary["errors"]:
            raise SystemExit(f"the agent fixtures at --jobs {jobs}: {summary}")
        return elapsed

    try:
        return side_by_side(lambda: timed_run("8"), lambda: timed_run("1"), repeat)
    finally:
        server.close()


def use_install(venv: Path) -> None:
    """Time replio, and the yardstick, from `venv` with this checkout installed there as a wheel, and the
    openai SDK beside it: an agent command's `python` is replio's own interpreter, and the agents of
    budgets 6 and 7's second figure are on that SDK, as a user's would be installed where they run."""
    global REPLIO, IMPORTS
    from peers import install_replio

    REPLIO = str(install_replio(venv))
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "openai"], check=True)
    IMPORTS = [str(venv / "bin" / "python"), *IMPORTS[1:]]


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
BUDGETS = ("bundled", "live", "bfcl", "jobs", "scale", "agent", "agent-jobs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs of each side per timing (median)")
    parser.add_argument("--quick", action="store_true",
                        help="fewer runs, 1,000 fixtures at scale and no openai-SDK --jobs figure: a smoke test")
    parser.add_argument("--only", choices=BUDGETS, action="append",
                        help="measure only this budget (its line keeps its number); may be given again")
    parser.add_argument("--replio", type=Path, metavar="VENV",
                        help="run replio installed into VENV from this checkout, as a user installs it "
                             "(made with replio's dependencies when it holds no replio)")
    args = parser.parse_args()
    if args.replio is not None:
        use_install(args.replio)
    else:
        compile_package()
    only = set(args.only or BUDGETS)
    repeat = 2 if args.quick else args.repeat
    n_scale = 1000 if args.quick else 10_000
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
                  f"{verdict(second <= first + FD_SLACK)}", flush=True)
        if "agent" in only:
            ours, direct, ratio, whole, n = bench_agent(tmp, repeat)
            line = ratio_line(6, f"a replay through the your-agent example's agent command (openai SDK, its {n} "
                                 "one-task fixtures), per fixture", ms(ours), ms(direct), ratio, 1.3,
                              against="the same agent alone against a bare loopback server")
            print(f"{line} (whole runs: {whole:.2f}x)", flush=True)
        if "agent-jobs" in only:
            eight, one, ratio = bench_agent_jobs(tmp, 24, 1 if args.quick else 3)
            print(f"7. --jobs 8 vs --jobs 1, 24 agent fixtures (a standard-library agent) x 2 requests, 100 ms "
                  f"latency, start-up included: {eight:.2f} s vs {one:.2f} s -> {ratio:.3f}x (budget <= 0.25x, "
                  f"ideal 0.125x): {verdict(ratio <= 0.25)}", flush=True)
            if not args.quick:
                # one pair: 48 runs of the SDK's import, most of a minute of CPU on 2 cores
                eight, one, ratio = bench_agent_jobs(tmp, 24, 1, sdk=True)
                print(f"   the same with the agent on the openai SDK (information, no budget; one pair): {eight:.2f} s "
                      f"vs {one:.2f} s -> {ratio:.3f}x", flush=True)

if __name__ == "__main__":
    main()
