"""replio's cached replay against inspect_ai's cached run: `python bench/peers.py --inspect VENV`.

Both tools get the same suites of 200 and 800 tool-use tasks (`replio_suite`, `inspect_suite`):
each task asks for the status of one order, offers two stub tools (`lookup_order`,
`cancel_order`), expects one call of `lookup_order` and a final answer naming the status, and
checks that answer. Both record their suites once against one loopback fake (`bench/server.py`
answering with `reply`: an OpenAI-compatible model that calls the tool first, then answers),
which is then stopped; the timings are of the runs that follow, with a refused port in its place:
replio's replay of its cassettes (`--record-mode none`) and inspect_ai's run answered from its
generate cache (`generate(cache=CachePolicy(expiry=None))`, the cache in the suite's folder). Each
timing is a whole process, the two in turn, `--repeat` pairs (default 5); the figures are the
medians of each side's wall-clock and CPU time (user + system, from `wait4`) and of the paired
ratios, and each side's median peak memory. inspect_ai lives in a virtual environment of its own
(`--inspect`, e.g. `/tmp/bench-inspect` with `pip install inspect-ai==0.3.285 openai`), never a
dependency of replio. replio runs as a user's `pip install` leaves it when `--replio VENV` is given
(the bench installs this checkout there, not editable, before it records: into a new virtual
environment with replio's dependencies if VENV holds no replio yet, else replio alone again), and
from the running environment otherwise, where every HTTP client a developer has installed is
imported by vcrpy's patcher module too. Budget (issue 49): replio <= 0.10x inspect_ai at 800 tasks.

Each pair has three more runs beside them, the floor of a replay with vcrpy at its core, used as
replio uses it (`bench/floor.py --transport`, in replio's Python: each cassette a vcrpy `Cassette`
answering an httpx transport, nothing patched, every request of the recordings sent again): with
no fixture, tool, verdict, golden or report, over the same recordings in replio's readable format,
and written by `floor.py --convert` in vcrpy's own YAML (its default) and JSON. Their ratios to
inspect_ai are printed too: what the format costs, and what is left for everything else.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from server import BenchServer  # noqa: E402

CHECKOUT = Path(__file__).resolve().parent.parent
#: What pyproject.toml packs into replio's wheel: the install is made from a copy of these alone, so
#: nothing else of the working tree (a stale `build/` folder) reaches it.
SOURCE = ("pyproject.toml", "README.md", "LICENSE", "replio_replay")
#: The virtual environment `--replio` names, made by hand as the bench makes it.
REPLIO_VENV = f"python -m venv /tmp/bench-replio && /tmp/bench-replio/bin/pip install {CHECKOUT}"
INSPECT_VENV = "python -m venv /tmp/bench-inspect && /tmp/bench-inspect/bin/pip install inspect-ai==0.3.285 openai"
MODEL = "peer-fake"
STATUSES = ("shipped", "delivered", "pending", "returned")

LOOKUP = {
    "description": "Look an order up by its id and return its status.",
    "parameters": {"type": "object", "properties": {"order_id": {"type": "string", "description": "The order's id."}},
                   "required": ["order_id"], "additionalProperties": False},
}
CANCEL = {
    "description": "Cancel an order by its id.",
    "parameters": {"type": "object", "properties": {"order_id": {"type": "string", "description": "The order's id."}},
                   "required": ["order_id"], "additionalProperties": False},
}


def status(i: int) -> str:
    """The status task `i`'s stub tool returns (and its answer must name)."""
    return STATUSES[i % len(STATUSES)]


def task(i: int) -> str:
    return f"What is the status of order A-{i}? Look it up, then answer in one sentence."


def reply(body: dict[str, Any]) -> dict[str, Any]:
    """The fake model: a call of `lookup_order` for the order the task names, then, once the tool's
    result is in the conversation, an answer repeating that result."""
    messages = body["messages"]
    order = re.search(r"order (A-\d+)", json.dumps(messages)).group(1)  # type: ignore[union-attr]
    tool_results = [m for m in messages if m.get("role") == "tool"]
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if tool_results:
        result = tool_results[-1]["content"]
        if isinstance(result, list):
            result = "".join(part.get("text", "") for part in result)
        message["content"] = f"Order {order} is {result.strip()}."
        finish = "stop"
    else:
        message["tool_calls"] = [{"id": f"call_{order}", "type": "function", "function": {
            "name": "lookup_order", "arguments": json.dumps({"order_id": order})}}]
        finish = "tool_calls"
    return {"id": f"chatcmpl-{order}-{len(tool_results)}", "object": "chat.completion", "created": 0,
            "model": MODEL, "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 12, "total_tokens": 132}}


def replio_suite(root: Path, n: int) -> Path:
    """`n` replio fixtures: the task, the two stub tools (lookup's result this task's status) and
    only those offered, as inspect_ai offers them, the expected call, and the answer check."""
    fixtures = root / ".replio" / "eval"
    fixtures.mkdir(parents=True)
    for i in range(n):
        (fixtures / f"order-{i:04d}.json").write_text(json.dumps({
            "task": task(i),
            "tools": {"lookup_order": {**LOOKUP, "result": status(i)}, "cancel_order": {**CANCEL, "result": "cancelled"}},
            "tools_offered": ["lookup_order", "cancel_order"],
            "expected": ["lookup_order"],
            "verifier": {"answer": {"$contains": status(i)}},
        }))
    (root / ".replio" / "config.json").write_text(json.dumps({"provider": f"openai:{MODEL}", "bundled": False}))
    return root


INSPECT_TASK = '''"""{n} tool-use tasks for inspect_ai: two stub tools, one call, a final answer, an answer check."""
import json
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import CachePolicy, GenerateConfig
from inspect_ai.scorer import includes
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import tool

CASES = json.loads((Path(__file__).parent / "cases.json").read_text())


@tool
def lookup_order():
    async def execute(order_id: str) -> str:
        """Look an order up by its id and return its status.

        Args:
            order_id: The order's id.
        """
        return CASES[order_id]

    return execute


@tool
def cancel_order():
    async def execute(order_id: str) -> str:
        """Cancel an order by its id.

        Args:
            order_id: The order's id.
        """
        return "cancelled"

    return execute


@task
def orders():
    return Task(
        dataset=[Sample(input=case["task"], target=case["status"], id=order) for order, case in CASES.items()],
        solver=[use_tools(lookup_order(), cancel_order()), generate(cache=CachePolicy(expiry=None))],
        scorer=includes(),
        config=GenerateConfig(max_connections=1),
    )
'''


def inspect_suite(root: Path, n: int) -> Path:
    """The same `n` tasks as an inspect_ai task file, its cases beside it."""
    root.mkdir(parents=True)
    cases = {f"A-{i}": {"task": task(i), "status": status(i)} for i in range(n)}
    (root / "cases.json").write_text(json.dumps(cases))
    (root / "orders.py").write_text(INSPECT_TASK.format(n=n))
    return root


def inspect_env(root: Path, base_url: str) -> dict[str, str]:
    """inspect_ai's environment: its cache and logs in the suite's folder, the fake's address."""
    return {**os.environ, "INSPECT_CACHE_DIR": str(root / "cache"), "INSPECT_LOG_DIR": str(root / "logs"),
            "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "bench", "INSPECT_DISPLAY": "none",
            "INSPECT_EVAL_MODEL": f"openai/{MODEL}", "XDG_CACHE_HOME": str(root / "xdg")}


def inspect_argv(venv: Path, root: Path, n: int) -> list[str]:
    """inspect_ai's command, run in the suite's folder (it takes its task file's path relative)."""
    return [str(venv / "bin" / "inspect"), "eval", "orders.py", "--model", f"openai/{MODEL}",
            "-M", "responses_api=false",
            "--limit", str(n), "--max-connections", "1", "--display", "none", "--log-dir", str(root / "logs")]


def replio_source(into: Path) -> Path:
    """A copy of what replio's wheel is built from (`SOURCE`), in `into`."""
    for part in SOURCE:
        if (CHECKOUT / part).is_dir():
            shutil.copytree(CHECKOUT / part, into / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(CHECKOUT / part, into / part)
    return into


def install_replio(venv: Path) -> Path:
    """This checkout installed into `venv` as a user installs it (a wheel, not editable), from
    `replio_source`: `venv` and replio's dependencies are made first if it holds no replio yet, else
    replio alone is installed again, so that the replay timed is the checkout's code. Returns the
    `replio` command."""
    command = venv / "bin" / "replio"
    again = ["--force-reinstall", "--no-deps"] if command.exists() else []
    if not again:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    with tempfile.TemporaryDirectory(prefix="replio-source-") as tmp:
        subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
                        "--disable-pip-version-check", *again, str(replio_source(Path(tmp)))], check=True)
    return command


def replio_argv(replio: Path, root: Path, *extra: str) -> list[str]:
    return [str(replio), "eval", "--path", str(root), "run", "--no-bundled", "--output", "json", *extra]


@dataclass(frozen=True)
class Timed:
    """One whole process: wall seconds, CPU seconds (user + system, its waited-for children's too)
    and peak RSS in MB (wait4: the largest of its processes), and what it printed."""

    wall: float
    cpu: float
    peak: float
    text: str


def whole_process(argv: list[str], env: dict[str, str], cwd: Path | None = None) -> Timed:
    """Run `argv` to its end; SystemExit with its stderr when it fails."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        child = subprocess.Popen(argv, stdout=out, stderr=err, env=env, cwd=cwd, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        text, errors = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"{' '.join(argv[:3])} ... exited {code}: {errors[-3000:]}")
    return Timed(elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, text)


def check_replio(text: str, n: int) -> None:
    """Every fixture passed."""
    summary = json.loads(text)["summary"]
    if summary["fixtures"] != n or summary["pass_rate"] != 1.0:
        raise SystemExit(f"replio's run did not pass its {n} fixtures: {summary}")


#: Reads an inspect_ai log's sample count and accuracy, in its own interpreter.
CHECK = """import json, sys
from inspect_ai.log import read_eval_log
log = read_eval_log(sys.argv[1], header_only=True)
print(json.dumps([log.results.completed_samples, log.results.scores[0].metrics["accuracy"].value]))
"""


def check_inspect(venv: Path, root: Path, n: int, before: set[Path]) -> None:
    """The run's log (the one log new since `before`) scored every sample correct (`includes`: the
    answer names the status)."""
    logs = set((root / "logs").glob("*.eval")) - before
    if len(logs) != 1:
        raise SystemExit(f"inspect_ai wrote {len(logs)} logs in {root / 'logs'}, expected one")
    done = subprocess.run([str(venv / "bin" / "python"), "-c", CHECK, str(logs.pop())],
                          capture_output=True, text=True, check=True)
    samples, accuracy = json.loads(done.stdout)
    if samples != n or accuracy != 1.0:
        raise SystemExit(f"inspect_ai's run did not pass its {n} samples: {samples} samples, accuracy {accuracy}")


def record(root: Path, n: int, replio: Path, venv: Path) -> tuple[Path, Path]:
    """Both suites of `n` tasks, each recorded once against one fake, which is then stopped."""
    ours, theirs = replio_suite(root / f"replio-{n}", n), inspect_suite(root / f"inspect-{n}", n)
    fake = BenchServer(answer=reply)  # the one fake both tools record against
    try:
        check_replio(whole_process(replio_argv(replio, ours, "--base-url", fake.url, "--record-mode", "once"),
                                   dict(os.environ)).text, n)
        whole_process(inspect_argv(venv, theirs, n), inspect_env(theirs, fake.url), theirs)
        check_inspect(venv, theirs, n, set())
        if fake.served != 4 * n:
            raise SystemExit(f"the fake served {fake.served} requests for 2 x {n} tasks of two requests each")
    finally:
        fake.close()
    return ours, theirs


def floor_argv(replio: Path, *args: str) -> list[str]:
    """bench/floor.py run by the Python replio is installed in (the same vcrpy, httpx and PyYAML)."""
    return [str(replio.with_name("python")), str(Path(__file__).with_name("floor.py")), *args]


def compare(ours: Path, theirs: Path, n: int, replio: Path, venv: Path, repeat: int) -> str:
    """Time replio's replay against inspect_ai's cached run, in turn, `repeat` pairs, with the floor
    (`floor_argv`) beside each; the fake is gone (a refused port in its place), so a request either
    tool did not find recorded would fail the run."""
    dead = "http://127.0.0.1:9/v1"
    floors: dict[str, tuple[list[str], list[Timed]]] = {
        "replio's format": (["--serializer", "replio", str(ours / "cassettes")], []),
        "vcrpy's YAML": (["--serializer", "yaml", str(ours.parent / f"vcrpy-yaml-{n}")], []),
        "vcrpy's JSON": (["--serializer", "json", str(ours.parent / f"vcrpy-json-{n}")], []),
    }
    for kind in ("yaml", "json"):
        whole_process(floor_argv(replio, "--convert", str(ours / "cassettes"), str(ours.parent / f"vcrpy-{kind}-{n}"),
                                 "--serializer", kind), dict(os.environ))
    a: list[Timed] = []
    b: list[Timed] = []
    for _ in range(repeat):
        a.append(whole_process(replio_argv(replio, ours, "--record-mode", "none"), dict(os.environ)))
        check_replio(a[-1].text, n)
        for args, side in floors.values():
            side.append(whole_process(floor_argv(replio, "--transport", *args), dict(os.environ)))
            if side[-1].text.strip() != str(n):
                raise SystemExit(f"the floor replayed {side[-1].text.strip()} cassettes, not {n}")
        before = set((theirs / "logs").glob("*.eval"))
        b.append(whole_process(inspect_argv(venv, theirs, n), inspect_env(theirs, dead), theirs))
        check_inspect(venv, theirs, n, before)
    wall = statistics.median(x.wall / y.wall for x, y in zip(a, b))
    cpu = statistics.median(x.cpu / y.cpu for x, y in zip(a, b))

    def median(side: list[Timed], what: str) -> float:
        return statistics.median(getattr(t, what) for t in side)

    verdict = f" (budget <= 0.10x): {'met' if wall <= 0.10 else 'NOT met'}" if n >= 800 else ""
    return (f"{n} tasks, replio's replay vs inspect_ai's cached run, {repeat} pairs: wall {median(a, 'wall'):.2f} s "
            f"vs {median(b, 'wall'):.2f} s -> {wall:.3f}x{verdict}; CPU {median(a, 'cpu'):.2f} s vs "
            f"{median(b, 'cpu'):.2f} s -> {cpu:.3f}x; peak memory {median(a, 'peak'):.0f} MB vs "
            f"{median(b, 'peak'):.0f} MB; the floor, vcrpy's Cassette + httpx over the same recordings, in "
            + ", ".join(f"{kind}: wall {median(side, 'wall'):.2f} s -> "
                        f"{statistics.median(x.wall / y.wall for x, y in zip(side, b)):.3f}x" for kind, (_, side) in floors.items())
            + " of inspect_ai")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inspect", type=Path, required=True,
                        help=f"the virtual environment holding inspect_ai, made by: {INSPECT_VENV}")
    parser.add_argument("--replio", type=Path,
                        help="a virtual environment to install this checkout into and replay from, as a user's "
                             f"install runs (made by the bench if it holds no replio, or by hand: {REPLIO_VENV}); "
                             "without it, replio runs from the running environment")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--tasks", type=int, action="append", help="suite sizes (default 200 and 800)")
    args = parser.parse_args()
    replio = install_replio(args.replio.resolve()) if args.replio else Path(sys.executable).with_name("replio")
    with tempfile.TemporaryDirectory(prefix="replio-peers-") as tmp:
        for n in args.tasks or [200, 800]:
            ours, theirs = record(Path(tmp), n, replio, args.inspect)
            print(compare(ours, theirs, n, replio, args.inspect, args.repeat), flush=True)


if __name__ == "__main__":
    main()
