"""The project's Python in its own process, through the CLI: what it raises, how long it takes, how it
ends or forks, and what its import does can fail its call or its fixture, never the run (issue 40 §1).

The project's Python always runs in the children replio starts; replio itself is a real process where
its own process matters (signals, a call it stops at the tool timeout, what the children print to its
standard error), and otherwise runs in the test's process (tests.helpers.replio_in_process)."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import replio_command, replio_in_process, write_json
from tests.support.environments import write_module
from tests.support.processes import host_pid, said_ended

FAULTS = '''
import os
import sys
import time
from pathlib import Path


class Mine(BaseException):
    """An exception class of the project's own, beside Exception."""


class Faults:
    """Methods that misbehave in every way the harness must survive."""

    def __init__(self, pids: str = "") -> None:
        self.pids = pids
        self.counter = 0

    def fine(self) -> str:
        """Answer."""
        return "fine"

    def generator_exit(self) -> str:
        """Raise GeneratorExit."""
        raise GeneratorExit("closed")

    def own_base(self) -> str:
        """Raise a BaseException of the project's own."""
        raise Mine("mine")

    def spin(self) -> str:
        """Hold the GIL in one C call, for longer than any test runs."""
        self._tell(_me(os.getpid()))
        return str(sum(range(10 ** 13)))

    def count(self) -> str:
        """Count for ever."""
        while True:
            self.counter += 1
            time.sleep(0.01)

    def forge(self) -> str:
        """Write a line onto every socket the process holds: the one to replio among them."""
        import stat
        for fd in map(int, os.listdir("/proc/self/fd")):
            try:
                if stat.S_ISSOCK(os.fstat(fd).st_mode):
                    os.write(fd, b'{"status": 0}\\n')
            except OSError:
                pass
        return "forged"

    def leave(self) -> str:
        """End the process at once."""
        os._exit(3)

    def fork(self) -> str:
        """Leave a forked copy sleeping, and a daemon in a session of its own."""
        for own_session in (False, True):
            pid = os.fork()
            if pid == 0:
                if own_session:
                    os.setsid()
                time.sleep(120)
                os._exit(0)
            self._tell(_me(pid))
        # In a PID namespace of its own the child is its first process: its parent is not in it (0).
        for p in (os.getpid(), os.getppid()):
            if p:
                self._tell(_me(p))
        return "forked"

    def _tell(self, text: str) -> None:
        """Tell the test `text`, on standard error (replio's): it may write nowhere but its worktree."""
        if self.pids:
            print(f"PID {text}", file=sys.stderr, flush=True)


def _me(pid: int) -> str:
    """`pid` (of this PID namespace) as `tests.support.processes.host_pid` finds it."""
    return f"{os.readlink('/proc/self/ns/pid')} {pid}"
'''


def _said(lines: list[str]) -> list[str]:
    """What the methods told (`Faults._tell`), among replio's standard error's `lines`."""
    return [line.strip().split(" ", 1)[1] for line in lines if line.startswith("PID ")]


def _project(root: Path, fixtures: dict[str, dict[str, Any]], script: dict[str, list[Any]],
             tool_timeout: float = 30) -> Path:
    """A project whose fixtures each offer the `Faults` environment, played by the mock provider."""
    write_module(root / ".replio" / "envs" / "faults.py", FAULTS)
    write_json(root / ".replio" / "config.json", {"provider": "mock", "bundled": False, "tool_timeout": tool_timeout,
                                                  "providers": {"mock": {"script": ".replio/script.json"}}})
    write_json(root / ".replio" / "script.json", script)
    for name, more in fixtures.items():
        write_json(root / ".replio" / "eval" / f"{name}.json", {
            "task": f"Do {name}.", "environments": {"faults": {"python": "../envs/faults.py:Faults", **more}}})
    return root


def _calls(*names: str) -> list[Any]:
    return [*({"tool_calls": [{"name": name, "arguments": {}}]} for name in names), {"text": "Done."}]


def _replio(project: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([replio_command(), "eval", "--path", str(project), *args], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def _run(project: Path, *args: str, in_process: bool = False,
         ) -> tuple[subprocess.CompletedProcess[str], dict[str, dict[str, Any]]]:
    """`run` as a real replio process, or `in_process` through the command line in the test's process."""
    command = ("eval", "--path", project, "run", "--no-cassettes", "--output", "json", *args)
    done = replio_in_process(*command) if in_process else _replio(project, *command[3:])
    assert "Traceback" not in done.stderr, done.stderr
    return done, {f["id"]: f for f in json.loads(done.stdout)["fixtures"]}


def test_a_method_raising_any_base_exception_fails_its_call_and_the_run_goes_on(tmp_path: Path) -> None:
    project = _project(tmp_path, {"raises": {}, "after": {}},
                       {"raises": _calls("generator_exit", "own_base", "fine"), "after": _calls("fine")})
    started = time.monotonic()
    done, results = _run(project, in_process=True)
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 60
    assert [c["result"] for c in results["raises"]["trace"]] == [
        "Error: generator_exit failed: GeneratorExit: closed", "Error: own_base failed: Mine: mine", "fine"]
    assert results["raises"]["status"] == "ok" and results["after"]["status"] == "ok"


def test_a_gil_holding_c_call_ends_its_fixture_at_the_tool_timeout_naming_environment_and_method(
        tmp_path: Path) -> None:
    project = _project(tmp_path, {"spin": {}, "after": {}}, {"spin": _calls("fine", "spin", "fine"),
                                                             "after": _calls("fine")}, tool_timeout=1)
    started = time.monotonic()
    done, results = _run(project)
    assert time.monotonic() - started < 30  # not the 7.6 s per call, nor the sum's end
    assert done.returncode == 1, done.stderr
    spin = results["spin"]
    assert (spin["status"], spin["error"]) == ("error", "environment Faults: spin took longer than 1 s; stopped")
    assert [c["result"] for c in spin["trace"]] == ["fine"]  # the call that overran has no result to show
    assert "state" not in spin  # a stopped environment's state is neither read nor judged
    assert results["after"]["status"] == "ok" and results["after"]["state"] == {"faults": {"pids": "", "counter": 0}}


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
def test_a_signal_ends_the_run_within_5_s_while_the_child_spins_in_c(tmp_path: Path, sig: int) -> None:
    project = _project(tmp_path / "p", {"spin": {"initial": {"pids": "on"}}}, {"spin": _calls("spin")},
                       tool_timeout=600)
    proc = subprocess.Popen([replio_command(), "eval", "--path", str(project), "run", "--no-cassettes", "--output",
                             "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None and proc.stdout is not None
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)  # type: ignore[arg-type]
    reader.start()
    deadline = time.monotonic() + 60
    while not (said := _said(lines)):
        assert time.monotonic() < deadline and proc.poll() is None, "the method never started"
        time.sleep(0.05)
    time.sleep(0.3)  # well inside the C call
    spinner = host_pid(said[0])
    assert spinner is not None
    signalled = time.monotonic()
    proc.send_signal(sig)
    proc.wait(timeout=60)
    out = proc.stdout.read()
    reader.join(10)
    err = "".join(lines)
    assert time.monotonic() - signalled < 5, err
    assert proc.returncode == 130, err
    assert json.loads(out)["fixtures"][0]["status"] == "cancelled"
    assert said_ended(said[0])


IMPORTS = {
    "keyboard": "raise KeyboardInterrupt\n",
    "base": "class Mine(BaseException):\n    pass\n\n\nraise Mine('at import')\n",
    "exits": "import os\n\nos._exit(3)\n",
}


def test_any_exception_or_exit_at_import_is_its_fixtures_named_problem_and_the_others_list_and_run(
        tmp_path: Path) -> None:
    project = _project(tmp_path, {"good": {}}, {"good": _calls("fine")})
    for name, source in IMPORTS.items():
        write_module(project / ".replio" / "envs" / f"{name}.py", source)
        write_json(project / ".replio" / "eval" / f"{name}.json", {
            "task": "t", "environments": {"e": {"python": f"../envs/{name}.py:Env"}}})
    listed = replio_in_process("eval", "--path", project, "list", "--output", "json")
    assert listed.returncode == 1, listed.stderr
    data = json.loads(listed.stdout)
    assert [f["id"] for f in data["fixtures"]] == ["good"]
    problems = {Path(p["file"]).stem: p["message"] for p in data["problems"]}
    assert sorted(problems) == ["base", "exits", "keyboard"]
    field = "environments.e.python"
    assert problems["keyboard"].endswith(f"{field}: importing {project / '.replio' / 'envs' / 'keyboard.py'} "
                                         "failed: KeyboardInterrupt: ; fix the module")
    assert problems["base"].endswith("failed: Mine: at import; fix the module")
    assert problems["exits"].endswith(f"{field}: loading it ended its process (exit status 3); fix the module")
    ran, results = _run(project, in_process=True)
    assert ran.returncode == 1, ran.stderr  # the problems
    assert list(results) == ["good"] and results["good"]["status"] == "ok"


def test_a_timed_out_calls_state_is_not_judged_nor_approved_and_a_rerun_does_not_drift(tmp_path: Path) -> None:
    project = _project(tmp_path, {"count": {}, "steady": {}}, {"count": _calls("count"), "steady": _calls("fine")},
                       tool_timeout=1)
    for name in ("count", "steady"):
        path = project / ".replio" / "eval" / f"{name}.json"
        write_json(path, {**json.loads(path.read_text()), "verifier": {"state": {"faults.counter": {"$min": 0}}}})
    runs = []
    for _ in range(2):
        done, results = _run(project, "--update-golden", in_process=True)
        assert done.returncode == 1, done.stderr
        runs.append(results)
        count = results["count"]
        assert (count["status"], count["error"]) == ("error", "environment Faults: count took longer than 1 s; stopped")
        assert "state" not in count and count["drift"] is None
    assert runs[1]["steady"]["drift"] == [] and runs[1]["steady"]["state"] == {"faults": {"pids": "", "counter": 0}}
    goldens = sorted(p.stem for p in (project / "golden").rglob("*.json"))
    assert goldens == ["steady"]  # an error is never approved


def test_a_line_a_method_writes_to_replio_ends_its_fixture_named_and_the_others_run(tmp_path: Path) -> None:
    project = _project(tmp_path, {"forges": {}, "after": {}}, {"forges": _calls("forge", "fine"), "after": _calls("fine")})
    done, results = _run(project, in_process=True)
    assert results["forges"]["status"] == "error" and "internal error" not in results["forges"]["error"]
    assert results["forges"]["error"].startswith("environment Faults: forge: its process sent a line that is no "
                                                 "answer to a 'call' request: b'{\"status\": 0}'"), results["forges"]
    assert results["after"]["status"] == "ok" and results["after"]["trace"][0]["result"] == "fine"
    assert done.returncode == 1


def test_a_method_ending_its_process_ends_only_its_fixture_and_the_others_results_are_kept(tmp_path: Path) -> None:
    project = _project(tmp_path, {"before": {}, "leave": {}, "after": {}},
                       {"before": _calls("fine"), "leave": _calls("fine", "leave"), "after": _calls("fine")})
    done, results = _run(project, in_process=True)
    assert done.returncode == 1, done.stderr  # not the 3 of os._exit
    leave = results["leave"]
    assert (leave["status"], leave["error"]) == ("error", "environment Faults: leave ended its process (exit status 3)")
    assert [c["result"] for c in leave["trace"]] == ["fine"]
    assert results["before"]["status"] == results["after"]["status"] == "ok"


def test_nothing_a_method_forks_outlives_the_run(tmp_path: Path) -> None:
    project = _project(tmp_path / "p", {"fork": {"initial": {"pids": "on"}}}, {"fork": _calls("fork", "fine")})
    done, results = _run(project)
    assert done.returncode == 0, done.stderr
    assert [c["result"] for c in results["fork"]["trace"]] == ["forked", "fine"]
    forked = _said(done.stderr.splitlines())
    # The copy, the daemon, the child itself and the fork server it came from (unless the child is
    # the first process of a PID namespace of its own: its parent is not in it).
    assert len(forked) in (3, 4)
    assert [said for said in forked if not said_ended(said)] == []


def test_a_signal_ends_a_run_within_5_s_while_a_module_spins_in_c_at_import(tmp_path: Path) -> None:
    started = tmp_path / "started"
    project = _project(tmp_path / "p", {"good": {}}, {"good": _calls("fine")})
    write_module(project / ".replio" / "envs" / "spin.py", f"from pathlib import Path\n\nPath({str(started)!r})"
                 ".write_text('1')\nsum(range(10 ** 13))\n")
    write_json(project / ".replio" / "eval" / "spin.json", {
        "task": "t", "environments": {"s": {"python": "../envs/spin.py:Spin"}}})
    proc = subprocess.Popen([replio_command(), "eval", "--path", str(project), "run", "--no-cassettes"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not started.exists():
        assert time.monotonic() < deadline and proc.poll() is None, "the import never started"
        time.sleep(0.05)
    signalled = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert time.monotonic() - signalled < 5, err
    assert proc.returncode == 130 and "interrupted while starting" in err, err
