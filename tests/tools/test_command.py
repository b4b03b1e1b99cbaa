"""Command tools: a declared program run in the worktree, arguments on stdin, bounded, keyless."""

from __future__ import annotations

import json
import os
import stat
import sys
import textwrap
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from replio_replay._runtime.confine import CAP, Level
from replio_replay.tools.base import Tool, ToolContext
from replio_replay.tools.command import OUTPUT_CAP
from replio_replay.tools.declared import DEFAULT_COMMAND_TIMEOUT, ToolDecl, declared_tool
from replio_replay.tools.permissions import Category, Permission, Permissions
from replio_replay.tools.sandbox import Sandbox
from replio_replay.tools.toolbox import Toolbox
from replio_replay.tools.toolset import ToolSet
from tests.tools.test_confinement import ends_soon, pid_in, require_bwrap

BASH_ALLOWED = Permissions.for_fixture({Category.BASH: Permission.ALLOW})
CUT_NOTE = f"\n(output cut at {OUTPUT_CAP} characters)"


@dataclass
class Bench:
    """`scripts/` (the declaring file's folder, where `./x` points) and the worktree `root`."""

    scripts: Path
    root: Path

    def script(self, name: str, body: str, *, executable: bool = False) -> Path:
        """Write a Python script into `scripts/`, with a shebang for the test's interpreter."""
        path = self.scripts / name
        path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(body), encoding="utf-8")
        if executable:
            path.chmod(path.stat().st_mode | stat.S_IXUSR)
        return path

    def tool(self, name: str = "cmd", **decl: Any) -> Tool:
        decl.setdefault("description", "a command tool under test")
        return declared_tool(name, ToolDecl.model_validate(decl), source="test",
                             base_dir=self.scripts)

    def call(self, tool: Tool, arguments: Any = None,
             permissions: Permissions = BASH_ALLOWED, **ctx: Any) -> str:
        toolbox = Toolbox(ToolContext(Sandbox(self.root), **ctx), permissions,
                          ToolSet("t", (tool,)))
        try:
            result = toolbox.call(tool.name, {} if arguments is None else arguments)
        finally:
            toolbox.close()
        assert isinstance(result, str)
        return result


@pytest.fixture
def bench(tmp_path: Path) -> Bench:
    scripts = tmp_path / "scripts"
    root = tmp_path / "worktree"
    scripts.mkdir()
    root.mkdir()
    (root / "data.txt").write_text("worktree data\n", encoding="utf-8")
    return Bench(Path(os.path.realpath(scripts)), Path(os.path.realpath(root)))


ECHO_STDIN = """
    import sys
    sys.stdout.write(sys.stdin.read())
"""


# stdin, stdout, cwd -------------------------------------------------------------------------------


def test_arguments_arrive_as_json_on_stdin_with_sorted_keys(bench: Bench) -> None:
    bench.script("echo.py", ECHO_STDIN)
    tool = bench.tool(command=[sys.executable, "./echo.py"])
    arguments = {"zeta": [1, 2], "alpha": "é ü", "mid": {"y": None, "x": True}}
    out = bench.call(tool, arguments)
    assert json.loads(out) == arguments
    assert list(json.loads(out)) == ["alpha", "mid", "zeta"]
    assert out.index('"alpha"') < out.index('"mid"') < out.index('"zeta"')
    assert out.index('"x"') < out.index('"y"')
    assert "é ü" in out


def test_stdout_is_the_result_as_is(bench: Bench) -> None:
    bench.script("say.py", """
        import sys
        sys.stdout.write("first line\\n  second, indented\\n\\n")
        sys.stderr.write("noise on stderr\\n")
    """)
    out = bench.call(bench.tool(command=[sys.executable, "./say.py"]))
    assert out == "first line\n  second, indented\n\n"


def test_empty_stdout_is_an_empty_result(bench: Bench) -> None:
    bench.script("quiet.py", "pass\n")
    assert bench.call(bench.tool(command=[sys.executable, "./quiet.py"])) == ""


def test_runs_with_the_worktree_as_cwd(bench: Bench) -> None:
    bench.script("where.py", """
        import os
        print(os.path.samefile(os.getcwd(), os.environ["HOME"]))
        print(open("data.txt").read().strip())
        open("made.txt", "w").write("made by the tool")
    """)
    out = bench.call(bench.tool(command=[sys.executable, "./where.py"]))
    assert out == "True\nworktree data\n"
    assert (bench.root / "made.txt").read_text() == "made by the tool"
    assert not (bench.scripts / "made.txt").exists()


def test_the_worktree_path_is_shown_as_dot(bench: Bench) -> None:
    bench.script("pwd.py", "import os\nprint(os.getcwd())\nprint(os.path.abspath('data.txt'))\n")
    out = bench.call(bench.tool(command=[sys.executable, "./pwd.py"]))
    assert out == ".\n./data.txt\n"
    assert str(bench.root) not in out


# failures -----------------------------------------------------------------------------------------


def test_non_zero_exit_is_an_error_with_the_tail_of_stderr(bench: Bench) -> None:
    bench.script("fail.py", """
        import sys
        print("some stdout that is not the answer")
        sys.stderr.write("HEAD-OF-STDERR\\n" + "x" * 3000 + "\\nthe real reason\\n")
        sys.exit(3)
    """)
    out = bench.call(bench.tool("failing", command=[sys.executable, "./fail.py"]))
    assert out.startswith("Error: failing exited with status 3: ")
    assert out.endswith("x\nthe real reason")
    assert "HEAD-OF-STDERR" not in out
    assert "some stdout" not in out
    assert len(out) < len("Error: failing exited with status 3: ") + 1000


def test_non_zero_exit_without_stderr_names_only_the_status(bench: Bench) -> None:
    bench.script("fail.py", "import sys\nsys.exit(7)\n")
    out = bench.call(bench.tool("failing", command=[sys.executable, "./fail.py"]))
    assert out == "Error: failing exited with status 7"


def test_stderr_of_a_failure_shows_the_worktree_as_dot(bench: Bench) -> None:
    bench.script("fail.py", "import os, sys\nsys.stderr.write(os.getcwd() + '/x missing')\n"
                            "sys.exit(1)\n")
    out = bench.call(bench.tool("failing", command=[sys.executable, "./fail.py"]))
    assert out == "Error: failing exited with status 1: ./x missing"


def test_non_zero_exit_with_long_stdout_is_still_an_error(bench: Bench) -> None:
    # The module's contract: "a non-zero exit is an Error: result". The exit status is known
    # here (the program ended on its own), so a long stdout must not hide the failure.
    bench.script("fail.py", f"""
        import sys
        sys.stdout.write("a" * {OUTPUT_CAP + 4000})
        sys.stderr.write("it broke")
        sys.exit(3)
    """)
    out = bench.call(bench.tool("failing", command=[sys.executable, "./fail.py"]))
    assert out.startswith("Error: failing exited with status 3")
    assert out.endswith("it broke")


def test_a_program_that_does_not_exist_could_not_be_started(bench: Bench, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-program"
    out = bench.call(bench.tool("ghost", command=[str(missing), "--help"]))
    assert out.startswith("Error: ghost could not be started: ")
    assert "No such file" in out


def test_a_missing_script_beside_the_declaration_could_not_be_started(bench: Bench) -> None:
    out = bench.call(bench.tool("ghost", command=["./not-written.py"]))
    assert out.startswith("Error: ghost could not be started: ")


def test_arguments_outside_the_schema_are_refused_and_the_program_never_runs(bench: Bench) -> None:
    bench.script("mark.py", "open('ran.txt', 'w').write('ran')\nprint('ran')\n")
    tool = bench.tool("typed", command=[sys.executable, "./mark.py"], parameters={
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
        "additionalProperties": False,
    })
    for bad in ({"n": "three"}, {}, {"n": 1, "extra": True}):
        out = bench.call(tool, bad)
        assert out.startswith("Error: invalid arguments for typed: "), out
    assert not (bench.root / "ran.txt").exists()
    assert bench.call(tool, {"n": 3}) == "ran\n"
    assert (bench.root / "ran.txt").exists()


# bounds: time, spawned processes, output ----------------------------------------------------------


def test_a_command_over_its_timeout_is_stopped_promptly(bench: Bench) -> None:
    bench.script("slow.py", """
        import os, time
        open("slow.pid", "w").write(str(os.getpid()))
        time.sleep(30)
        print("finished")
    """)
    tool = bench.tool("slow", command=[sys.executable, "./slow.py"], timeout=0.5)
    started = time.monotonic()
    out = bench.call(tool)
    elapsed = time.monotonic() - started
    assert out == "Error: slow took longer than 0.5 s"
    assert elapsed < 5
    assert ends_soon(bench.root, pid_in(bench.root / "slow.pid"))


def test_the_runs_call_limit_cuts_a_longer_declared_timeout(bench: Bench) -> None:
    bench.script("slow.py", "import time\ntime.sleep(30)\n")
    tool = bench.tool("slow", command=[sys.executable, "./slow.py"], timeout=60)
    started = time.monotonic()
    assert bench.call(tool, timeout=0.4) == "Error: slow took longer than 0.4 s"
    assert time.monotonic() - started < 5


def test_a_cancelled_run_stops_a_command_tool_at_once(bench: Bench) -> None:
    bench.script("slow.py", """
        import os, time
        open("slow.pid", "w").write(str(os.getpid()))
        time.sleep(30)
    """)
    tool = bench.tool("slow", command=[sys.executable, "./slow.py"], timeout=60)
    cancel = threading.Event()
    cancelled: list[float] = []

    def cancel_once_started() -> None:
        pid_in(bench.root / "slow.pid", within=30)  # a loaded machine may take a while to start it
        cancelled.append(time.monotonic())
        cancel.set()

    threading.Thread(target=cancel_once_started, daemon=True).start()
    out = bench.call(tool, cancel=cancel)
    assert out.startswith("Error: ") and "interrupted" in out
    assert time.monotonic() - cancelled[0] < 3
    assert ends_soon(bench.root, pid_in(bench.root / "slow.pid"))


def test_the_timeout_holds_when_large_arguments_are_left_unread(bench: Bench) -> None:
    # Arguments larger than a pipe holds, and a program that never reads its stdin.
    bench.script("nap.py", "import time\ntime.sleep(1.5)\nprint('woke')\n")
    tool = bench.tool("napper", command=[sys.executable, "./nap.py"], timeout=0.3)
    started = time.monotonic()
    out = bench.call(tool, {"blob": "x" * 500_000})
    assert out == "Error: napper took longer than 0.3 s"
    assert time.monotonic() - started < 1.2


def test_a_background_child_does_not_outlive_the_call(bench: Bench) -> None:
    bench.script("spawn.py", """
        import subprocess
        child = subprocess.Popen(["sleep", "30"], stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        open("child.pid", "w").write(str(child.pid))
        print("spawned")
    """)
    out = bench.call(bench.tool("spawner", command=[sys.executable, "./spawn.py"]))
    assert out == "spawned\n"
    pid = pid_in(bench.root / "child.pid")
    assert ends_soon(bench.root, pid), f"the background `sleep 30` (pid {pid}) outlived the call"


def test_a_background_child_holding_stdout_does_not_hold_up_the_call(bench: Bench) -> None:
    bench.script("spawn.py", """
        import subprocess, sys
        child = subprocess.Popen(["sleep", "30"])  # inherits stdout and stderr
        open("child.pid", "w").write(str(child.pid))
        print("spawned", flush=True)
    """)
    started = time.monotonic()
    out = bench.call(bench.tool("spawner", command=[sys.executable, "./spawn.py"], timeout=20))
    assert time.monotonic() - started < 5
    assert out == "spawned\n"
    assert ends_soon(bench.root, pid_in(bench.root / "child.pid"))


DAEMON = """
    import os
    read, write = os.pipe()
    first = os.fork()
    if first == 0:  # a daemon: forked twice, in a session of its own, its stdio on /dev/null
        os.setsid()
        if os.fork() == 0:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.write(write, str(os.getpid()).encode())
            os.execvp("sleep", ["sleep", "300"])
        os._exit(0)
    os.close(write)
    pid = os.read(read, 32).decode()
    os.waitpid(first, 0)
    open("daemon.pid", "w").write(pid)
    print("daemon started")
"""


@pytest.mark.parametrize("confine", [True, False], ids=["confined", "unconfined"])
def test_a_daemon_in_a_session_of_its_own_does_not_outlive_the_call(
        bench: Bench, confine: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if confine:
        require_bwrap()
    else:  # as where bubblewrap and unshare are missing
        monkeypatch.setenv(CAP, Level.NONE.value)
    bench.script("daemon.py", DAEMON)
    out = bench.call(bench.tool("daemonize", command=[sys.executable, "./daemon.py"]))
    assert out == "daemon started\n"
    pid = pid_in(bench.root / "daemon.pid")
    assert ends_soon(bench.root, pid), f"the daemon `sleep 300` (pid {pid}) outlived the call"


@pytest.mark.parametrize("confine", [True, False], ids=["confined", "unconfined"])
def test_a_detached_child_holding_stdout_neither_delays_nor_empties_the_output(
        bench: Bench, confine: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if confine:
        require_bwrap()
    else:
        monkeypatch.setenv(CAP, Level.NONE.value)
    script = ("echo hello; (setsid sh -c 'echo $$ > child.pid; exec sleep 30' &); "
              "while [ ! -s child.pid ]; do sleep 0.01; done; exit 0")
    started = time.monotonic()
    out = bench.call(bench.tool("detach", command=["sh", "-c", script], timeout=20))
    assert out == "hello\n"
    assert time.monotonic() - started < 1.5
    assert ends_soon(bench.root, pid_in(bench.root / "child.pid"))


def test_output_beyond_the_cap_is_cut_with_a_note(bench: Bench) -> None:
    bench.script("long.py", f"import sys\nsys.stdout.write('a' * {OUTPUT_CAP + 5000})\n")
    out = bench.call(bench.tool(command=[sys.executable, "./long.py"]))
    assert out == "a" * OUTPUT_CAP + CUT_NOTE


def test_output_at_the_cap_is_not_cut(bench: Bench) -> None:
    bench.script("exact.py", f"import sys\nsys.stdout.write('b' * {OUTPUT_CAP})\n")
    assert bench.call(bench.tool(command=[sys.executable, "./exact.py"])) == "b" * OUTPUT_CAP


def test_endless_output_is_cut_and_the_call_returns_promptly(bench: Bench) -> None:
    bench.script("flood.py", """
        import sys
        while True:
            sys.stdout.write("y" * 4096)
    """)
    started = time.monotonic()
    out = bench.call(bench.tool("flood", command=[sys.executable, "./flood.py"], timeout=20))
    assert time.monotonic() - started < 5
    assert out == "y" * OUTPUT_CAP + CUT_NOTE


# argv and environment -----------------------------------------------------------------------------


def test_dot_slash_arguments_resolve_beside_the_declaration_others_pass_as_is(
    bench: Bench,
) -> None:
    bench.script("argv.py", "import json, sys\nprint(json.dumps(sys.argv))\n")
    (bench.scripts.parent / "shared.txt").write_text("")
    tool = bench.tool(command=[sys.executable, "./argv.py", "data.txt", "--flag=./x",
                               "../shared.txt", "sub/./y", "-"])
    argv = json.loads(bench.call(tool))
    assert argv == [str(bench.scripts / "argv.py"), "data.txt", "--flag=./x",
                    str((bench.scripts.parent / "shared.txt").resolve()), "sub/./y", "-"]


def test_an_executable_script_can_be_the_program_itself(bench: Bench) -> None:
    bench.script("direct.py", "import sys\nprint('direct', sys.stdin.read())\n", executable=True)
    out = bench.call(bench.tool(command=["./direct.py"]), {"k": 1})
    assert out == 'direct {"k": 1}\n'


def test_the_environment_holds_no_parent_variables_or_keys(
    bench: Bench, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("REPLIO_PARENT_ONLY", "parent-value")
    bench.script("env.py", "import json, os\nprint(json.dumps(dict(os.environ)))\n")
    out = bench.call(bench.tool(command=[sys.executable, "./env.py"]))
    assert "sk-secret" not in out
    assert "parent-value" not in out
    env = json.loads(out)
    assert "OPENAI_API_KEY" not in env
    assert env["HOME"] == "."
    assert env["PATH"] == os.environ["PATH"]


# declaration defaults -----------------------------------------------------------------------------


def test_a_command_tool_is_bash_and_denied_by_default(bench: Bench) -> None:
    bench.script("mark.py", "open('ran.txt', 'w').write('ran')\n")
    tool = bench.tool("runner", command=[sys.executable, "./mark.py"])
    assert tool.category is Category.BASH
    out = bench.call(tool, permissions=Permissions.for_fixture({}))
    assert out.startswith("Error: permission denied")
    assert "runner" in out
    assert not (bench.root / "ran.txt").exists()


def test_a_declared_category_replaces_bash(bench: Bench) -> None:
    bench.script("hello.py", "print('hello')\n")
    tool = bench.tool("reader", command=[sys.executable, "./hello.py"], category="read")
    assert tool.category is Category.READ
    assert bench.call(tool, permissions=Permissions.for_fixture({})) == "hello\n"


def test_the_default_timeout_is_used_when_none_is_declared(bench: Bench) -> None:
    tool = bench.tool(command=[sys.executable, "./x.py"])
    assert tool.fingerprint["timeout"] == DEFAULT_COMMAND_TIMEOUT
    assert tool.checks_schema is True
    assert bench.tool(command=["x"], timeout=2).fingerprint["timeout"] == 2
