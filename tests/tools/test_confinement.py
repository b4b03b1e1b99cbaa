"""Programs tools start are confined and ended: bubblewrap's walls, cancel, nothing outlives a call.

Tests marked `needs_bwrap` check the walls bubblewrap puts up (read-only filesystem but for
the worktree, own PID namespace, no network unless allowed); they skip, saying why, where
bubblewrap is missing or cannot start, and fail instead where ``REPLIO_REQUIRE_BWRAP=1`` (CI sets
it: there a confinement test never skips). The rest hold at every level of confinement
(``REPLIO_CONFINE``: bubblewrap, util-linux unshare, none), each run in turn by the `confine`
fixture.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from replio_replay._runtime import confine as confinement_module
from replio_replay._runtime.confine import CAP, Level, confinement
from replio_replay.tools import process
from replio_replay.tools.base import ToolContext
from replio_replay.tools.process import base_env, run_bounded
from replio_replay.tools.sandbox import Sandbox
from tests.tools._tree import SECRET, Run, Tree, make_runner

#: Set to 1 (`.ci/run` does) to make a missing or broken bubblewrap fail the tests that need it.
REQUIRE_BWRAP = "REPLIO_REQUIRE_BWRAP"


def require_level(level: Level = Level.BWRAP) -> None:
    """Skip the test where programs cannot be confined at `level` (bubblewrap, or unshare's PID
    namespace), or fail it where `REQUIRE_BWRAP` is 1 (CI, where both are there)."""
    found = confinement()
    if found.level is level or level is Level.NONE:
        return
    if level is Level.UNSHARE and found.level is Level.BWRAP:  # the best level here: ask for unshare's
        return
    why = f"confinement not available: {'; '.join(found.problems)}"
    if os.environ.get(REQUIRE_BWRAP) == "1":
        pytest.fail(f"{why} ({REQUIRE_BWRAP}=1: install bubblewrap, e.g. apt-get install bubblewrap)")
    pytest.skip(why)


def require_bwrap() -> None:
    """Skip the test where bubblewrap cannot confine, or fail it where `REQUIRE_BWRAP` is 1."""
    require_level(Level.BWRAP)


@pytest.fixture
def bwrap() -> None:
    """Bubblewrap that confines (see `require_bwrap`)."""
    require_bwrap()


needs_bwrap = pytest.mark.usefixtures("bwrap")

FAKE_KEY = "sk-test-confinement-7f3a9c0d1e2b"
PY = shlex.quote(sys.executable)
SCRATCH = "/tmp/replio-confinement-scratch.txt"
#: Files a confined command must fail to make; removed after the test should it not.
OUTSIDE = (Path("/etc/replio-confinement-test"), Path("/var/tmp/replio-confinement-test"))


def running_in(root: Path, pid: int) -> bool:
    """Whether the process that saw itself as `pid`, working in `root`, still runs.

    Confined, a program sees its PID namespace's numbers, not ours: a process is matched by
    the innermost of its pids (`NSpid`) and its working folder. A zombie counts as ended.
    """
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            cwd = os.readlink(entry / "cwd")
        except OSError:  # gone meanwhile, or a zombie (no working folder)
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        nspid = fields.get("NSpid", fields.get("Pid", "")).split()
        if nspid[-1:] != [str(pid)] or fields.get("State", "").strip().startswith("Z"):
            continue
        if cwd == str(root) or cwd.startswith(f"{root}/"):
            return True
    return False


def ends_soon(root: Path, pid: int, within: float = 2.0) -> bool:
    """Whether that process (see `running_in`) has ended, or ends within `within` seconds."""
    deadline = time.monotonic() + within
    while running_in(root, pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def pid_in(path: Path, within: float = 5.0) -> int:
    """The pid a program wrote to `path`, waiting for it to be written."""
    deadline = time.monotonic() + within
    while not (path.exists() and path.read_text().strip()):
        assert time.monotonic() < deadline, f"{path.name} was never written"
        time.sleep(0.02)
    return int(path.read_text().strip())


@pytest.fixture(params=list(Level), ids=[level.value for level in Level])
def confine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Level:
    """Each level a program can run at (`CAP` set to it), each only where it works."""
    level: Level = request.param
    require_level(level)
    monkeypatch.setenv(CAP, level.value)
    assert confinement().level is level
    return level


@pytest.fixture
def outside_files() -> Iterator[tuple[Path, ...]]:
    """`OUTSIDE`, absent before the test and removed after it (should confinement fail)."""
    assert not any(path.exists() for path in OUTSIDE)
    yield OUTSIDE
    for path in OUTSIDE:
        path.unlink(missing_ok=True)


@pytest.fixture
def fresh_probe() -> Iterator[None]:
    """Forget what the probes found, before and after (the test fakes bwrap)."""
    confinement_module._probe.cache_clear()
    yield
    confinement_module._probe.cache_clear()


def _runner(tree: Tree, confine: Level, monkeypatch: pytest.MonkeyPatch, **ctx: object) -> Run:
    return make_runner(tree, **ctx)  # type: ignore[arg-type]


# nothing outlives a call, however it ends --------------------------------------------------------


def test_a_nohup_background_sleeper_does_not_outlive_the_call(
    tree: Tree, confine: Level, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _runner(tree, confine, monkeypatch)
    started = time.monotonic()
    out = run("run_command", command="nohup sleep 300 >/dev/null 2>&1 & echo $! > sleeper.pid")
    assert out == "exit code 0"
    assert time.monotonic() - started < 5
    pid = pid_in(tree.root / "sleeper.pid")
    assert ends_soon(tree.root, pid), f"`nohup sleep 300 &` (pid {pid}) outlived its call"


def test_a_sleeper_started_by_a_timed_out_call_does_not_outlive_it(
    tree: Tree, confine: Level, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _runner(tree, confine, monkeypatch)
    out = run("run_command", command="nohup sleep 300 >/dev/null 2>&1 & echo $! > sleeper.pid; "
                                     "sleep 30", timeout=0.5)
    assert out == "Error: run_command took longer than 0.5 s"
    assert ends_soon(tree.root, pid_in(tree.root / "sleeper.pid"))


@pytest.mark.parametrize("detach", ["setsid", "double fork"])
def test_a_sleeper_in_its_own_session_does_not_outlive_the_call(
    tree: Tree, confine: Level, monkeypatch: pytest.MonkeyPatch, detach: str
) -> None:
    # `setsid` leaves the process group (and a double fork the parent too): the PID namespace
    # still ends with the call, and unconfined, the mark in its environment finds it.
    run = _runner(tree, confine, monkeypatch)
    sleeper = "setsid sh -c 'echo $$ > sleeper.pid; exec sleep 300' >/dev/null 2>&1 < /dev/null &"
    if detach == "double fork":
        sleeper = f"({sleeper});"
    out = run("run_command", command=f"{sleeper} while [ ! -s sleeper.pid ]; do sleep 0.01; done")
    assert out == "exit code 0"
    assert ends_soon(tree.root, pid_in(tree.root / "sleeper.pid"))


def test_the_output_is_what_the_program_wrote_though_a_detached_child_holds_stdout(
    tmp_path: Path, confine: Level
) -> None:
    started = time.monotonic()
    done = run_bounded("echo hello; setsid sh -c 'echo $$ > sleeper.pid; exec sleep 300' & "
                       "while [ ! -s sleeper.pid ]; do sleep 0.01; done",
                       shell=True, cwd=tmp_path, env=base_env(tmp_path), timeout=30, cap=100)
    assert (done.returncode, done.stdout) == (0, b"hello\n")
    assert time.monotonic() - started < 1.5
    assert ends_soon(tmp_path, pid_in(tmp_path / "sleeper.pid"))


def test_the_output_is_kept_though_a_child_with_an_emptied_environment_escapes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without namespaces, a child started with `env -i` carries no mark and outlives the call (a
    # documented limit, until the run ends); it still cannot keep the output from the caller.
    monkeypatch.setenv(CAP, Level.NONE.value)  # and so the pid it writes is ours to kill
    started = time.monotonic()
    done = run_bounded("echo hello; env -i /bin/sh -c 'echo $$ > sleeper.pid; exec setsid sleep 300' & "
                       "while [ ! -s sleeper.pid ]; do sleep 0.01; done",
                       shell=True, cwd=tmp_path, env=base_env(tmp_path), timeout=30, cap=100)
    escaped = pid_in(tmp_path / "sleeper.pid")
    try:
        assert (done.returncode, done.stdout) == (0, b"hello\n")
        assert time.monotonic() - started < 2.5  # the readers' second to see the end of the output
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(escaped, signal.SIGKILL)


def test_an_exception_in_the_caller_still_ends_the_program(
    tmp_path: Path, confine: Level, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_wait = process._wait

    def interrupted(*args: object, **kwargs: object) -> str | None:
        pid_in(tmp_path / "sleeper.pid")  # it runs; now the caller is interrupted
        raise KeyboardInterrupt

    monkeypatch.setattr(process, "_wait", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_bounded("echo $$ > sleeper.pid; exec sleep 300", shell=True, cwd=tmp_path,
                    env=base_env(tmp_path), timeout=30, cap=100)
    monkeypatch.setattr(process, "_wait", real_wait)
    assert ends_soon(tmp_path, pid_in(tmp_path / "sleeper.pid"))


# cancel -------------------------------------------------------------------------------------------


def test_cancel_from_another_thread_stops_a_sleeping_command_promptly(
    tree: Tree, confine: Level, monkeypatch: pytest.MonkeyPatch
) -> None:
    cancel = threading.Event()
    run = _runner(tree, confine, monkeypatch, cancel=cancel)
    threading.Timer(0.2, cancel.set).start()
    started = time.monotonic()
    out = run("run_command", command="echo $$ > sleeper.pid; exec sleep 30")
    assert time.monotonic() - started < 3
    # The toolbox stops waiting and says so, or the tool notices first: both say why.
    assert out.startswith("Error: ") and "interrupted" in out
    assert ends_soon(tree.root, pid_in(tree.root / "sleeper.pid"))


def test_cancel_reports_cancelled_and_no_exit_code(tmp_path: Path, confine: Level) -> None:
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    started = time.monotonic()
    done = run_bounded(["sh", "-c", "echo started; sleep 30"], cwd=tmp_path, env=base_env(tmp_path),
                       timeout=30, cap=100, cancel=cancel)
    assert time.monotonic() - started < 3
    assert done.cancelled
    assert not done.timed_out
    assert done.returncode is None
    assert done.stdout == b"started\n"
    assert done.level is confine


def test_a_cancelled_run_starts_no_program(tmp_path: Path) -> None:
    cancel = threading.Event()
    cancel.set()
    done = run_bounded(["sh", "-c", "echo ran > ran.txt"], cwd=tmp_path, env=base_env(tmp_path),
                       timeout=10, cap=100, cancel=cancel)
    assert done.cancelled
    assert done.returncode is None
    assert not (tmp_path / "ran.txt").exists()


def test_an_unset_cancel_event_changes_nothing(tmp_path: Path, confine: Level) -> None:
    done = run_bounded(["sh", "-c", "echo hi; exit 4"], cwd=tmp_path, env=base_env(tmp_path),
                       timeout=10, cap=100, cancel=threading.Event())
    assert (done.returncode, done.stdout, done.cancelled) == (4, b"hi\n", False)


# the filesystem -----------------------------------------------------------------------------------


@needs_bwrap
def test_writing_outside_the_worktree_fails(
    run: Run, tree: Tree, outside_files: tuple[Path, ...]
) -> None:
    etc, var_tmp = outside_files
    out = run("run_command", command=f"touch {etc}; echo etc=$?; touch {var_tmp}; echo var=$?; "
                                     "echo pwned > ../outside/secret.txt; echo outside=$?; "
                                     "echo pwned > leak.txt; echo link=$?; "
                                     "echo scratch > ../beside.txt; echo beside=$?")
    lines = out.splitlines()
    assert lines[0] == "exit code 0"
    for name in ("etc", "var", "outside", "link"):
        assert f"{name}=0" not in lines, out
    assert not etc.exists()
    assert not var_tmp.exists()
    assert (tree.outside / "secret.txt").read_text().startswith(SECRET)
    # The worktree's parent is in the fresh /tmp: writable scratch that never reaches ours.
    assert not (tree.tmp / "beside.txt").exists()


@needs_bwrap
def test_the_filesystem_outside_the_worktree_is_read_only_and_other_temp_folders_are_hidden(
    run: Run, tree: Tree
) -> None:
    out = run("run_command", command="cat ../outside/secret.txt; cat leak.txt; "
                                     "echo beside: $(ls -A .. | wc -l); head -c 5 /etc/passwd")
    assert SECRET not in out
    assert "beside: 1\n" in out  # the worktree alone, not `outside` nor other worktrees
    assert "\nroot:" in out  # the rest of the filesystem is there to read


@needs_bwrap
def test_writing_inside_the_worktree_works(run: Run, tree: Tree) -> None:
    out = run("run_command", command="echo made > made.txt && mkdir -p new/deep && "
                                     "echo deep > new/deep/f.txt && rm docs/guide.md && "
                                     f"echo scratch > {SCRATCH} && cat {SCRATCH}")
    assert out == "exit code 0\nscratch"
    assert (tree.root / "made.txt").read_text() == "made\n"
    assert (tree.root / "new" / "deep" / "f.txt").read_text() == "deep\n"
    assert not (tree.root / "docs" / "guide.md").exists()
    assert not Path(SCRATCH).exists()  # the fresh /tmp is the command's own


@needs_bwrap
def test_a_command_cannot_gain_write_access_back(
    run: Run, outside_files: tuple[Path, ...]
) -> None:
    # Run by root, bubblewrap would leave every capability: a remount would undo read-only.
    # And uid 0 without capabilities may still write sysctls (the same value here, harmless).
    etc = outside_files[0]
    out = run("run_command", command=f"mount -o remount,rw / 2>/dev/null; echo mount=$?; "
                                     f"touch {etc}; echo etc=$?; grep CapEff /proc/self/status; "
                                     "h=$(cat /proc/sys/kernel/hostname); "
                                     "echo \"$h\" > /proc/sys/kernel/hostname; echo sysctl=$?")
    assert "mount=0" not in out
    assert "etc=0" not in out
    assert "sysctl=0" not in out
    assert "CapEff:\t0000000000000000" in out
    assert not etc.exists()


# processes and the key ----------------------------------------------------------------------------


@needs_bwrap
def test_only_the_commands_own_processes_are_visible(run: Run) -> None:
    out = run("run_command", command="for p in /proc/[0-9]*; do cat $p/comm; done")
    names = set(out.splitlines()[1:])
    assert names <= {"bwrap", "sh", "cat"}, names
    assert "sh" in names


_LEAK_PROBE = """
import sys
from pathlib import Path
from replio_replay.tools.process import base_env, run_bounded
root = Path(sys.argv[1])
done = run_bounded(
    "cat /proc/$PPID/environ; for f in /proc/[0-9]*/environ; do cat $f; echo; done",
    shell=True, cwd=root, env=base_env(root), timeout=20, cap=1_000_000)
sys.stdout.buffer.write(done.stdout)
"""


@needs_bwrap
def test_the_parents_environment_with_a_key_is_not_readable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # /proc/PID/environ shows a process's environment as it started, so the key must be in the
    # starting environment of the process that runs the command: a fresh Python started with it.
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)

    def probe(level: Level) -> str:
        done = subprocess.run([sys.executable, "-c", _LEAK_PROBE, str(tmp_path)], capture_output=True, timeout=60,
                              check=True, cwd=Path.cwd(), env={**os.environ, CAP: level.value})
        return done.stdout.decode("utf-8", "replace")

    assert FAKE_KEY in probe(Level.NONE), "control: without namespaces, root reads the parent's key"
    assert FAKE_KEY not in probe(Level.UNSHARE)
    confined = probe(Level.BWRAP)
    assert FAKE_KEY not in confined
    assert "HOME=" in confined  # it did read an environment: the command's own, minimal one


@needs_bwrap
def test_run_command_cannot_read_a_key_from_any_environ(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    out = run("run_command", command="cat /proc/$PPID/environ | tr '\\0' '\\n'; "
                                     "cat /proc/[0-9]*/environ | tr '\\0' '\\n'")
    assert "sk-test" not in out
    assert "HOME=." in out


# the network --------------------------------------------------------------------------------------


@pytest.fixture
def listening_port() -> Iterator[int]:
    """A port on 127.0.0.1 that accepts connections (the kernel completes them)."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield server.getsockname()[1]


def _connect(port: int) -> str:
    return (f"{PY} -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5); "
            f"print('connected')\"")


@needs_bwrap
def test_without_web_the_network_is_unreachable(tree: Tree, listening_port: int) -> None:
    run = make_runner(tree, network=False)
    out = run("run_command", command=_connect(listening_port))
    assert "connected" not in out.splitlines()
    assert "exit code 0" not in out
    assert "Connection refused" in out or "unreachable" in out.lower()


def test_with_web_the_network_is_reachable(tree: Tree, listening_port: int) -> None:
    run = make_runner(tree, network=True)
    assert run("run_command", command=_connect(listening_port)) == "exit code 0\nconnected"


@needs_bwrap
def test_a_command_tool_follows_the_fixtures_network_setting(
    tmp_path: Path, listening_port: int
) -> None:
    from replio_replay.tools.declared import ToolDecl, declared_tool
    from replio_replay.tools.permissions import Category, Permission, Permissions
    from replio_replay.tools.toolbox import Toolbox
    from replio_replay.tools.toolset import ToolSet

    root = tmp_path / "worktree"
    root.mkdir()
    decl = ToolDecl.model_validate({"description": "connects", "command": [
        sys.executable, "-c",
        f"import socket; socket.create_connection(('127.0.0.1', {listening_port}), timeout=5); "
        "print('connected')"]})
    tool = declared_tool("connect", decl, source="test", base_dir=tmp_path)
    allowed = Permissions.for_fixture({Category.BASH: Permission.ALLOW})
    results = {}
    for network in (True, False):
        ctx = ToolContext(Sandbox(root), network=network)
        results[network] = Toolbox(ctx, allowed, ToolSet("t", (tool,))).call("connect", {})
    assert results[True] == "connected\n"
    assert str(results[False]).startswith("Error: connect exited with status 1")


# run_bounded confined: the same contract ----------------------------------------------------------


@needs_bwrap
def test_confined_exit_code_streams_stdin_and_cap_behave_as_unconfined(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    done = run_bounded(["sh", "-c", "cat; echo err >&2; exit 3"], cwd=tmp_path, env=env,
                       stdin=b"in\n", timeout=10, cap=100)
    assert done.level is Level.BWRAP
    assert (done.returncode, done.stdout, done.stderr) == (3, b"in\n", b"err\n")
    done = run_bounded(["yes"], cwd=tmp_path, env=env, timeout=30, cap=4096)
    assert done.cut and done.stdout == b"y\n" * 2048 and done.returncode is None
    done = run_bounded(["sleep", "30"], cwd=tmp_path, env=env, timeout=0.3, cap=10)
    assert done.timed_out and done.returncode is None


@needs_bwrap
def test_confined_a_program_that_cannot_be_started_still_raises_oserror(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    with pytest.raises(FileNotFoundError):
        run_bounded([str(tmp_path / "missing")], cwd=tmp_path, env=env, timeout=5, cap=10)
    with pytest.raises(FileNotFoundError):
        run_bounded(["replio-no-such-program"], cwd=tmp_path, env=env, timeout=5, cap=10)
    script = tmp_path / "not-executable.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    with pytest.raises(PermissionError):
        run_bounded(["./not-executable.sh"], cwd=tmp_path, env=env, timeout=5, cap=10)


@needs_bwrap
def test_confined_the_temp_folder_is_empty_but_for_what_is_named_readable(tmp_path: Path) -> None:
    root, tools = tmp_path / "worktree", tmp_path / "tools"
    root.mkdir()
    tools.mkdir()
    (tools / "hello.sh").write_text("echo hello from beside\n")
    (tools / "hello.sh").chmod(0o755)
    argv = ["sh", str(tools / "hello.sh")]
    hidden = run_bounded(argv, cwd=root, env=base_env(root), timeout=10, cap=1000)
    assert hidden.returncode != 0
    shown = run_bounded(argv, cwd=root, env=base_env(root), timeout=10, cap=1000,
                        readable=[tools])
    assert (shown.returncode, shown.stdout) == (0, b"hello from beside\n")
    wrote = run_bounded(["sh", "-c", f"echo x > {tools}/new.txt"], cwd=root, env=base_env(root),
                        timeout=10, cap=1000, readable=[tools])
    assert wrote.returncode != 0  # readable, not writable
    assert not (tools / "new.txt").exists()


@needs_bwrap
def test_confined_programs_on_path_in_the_temp_folder_stay_runnable(tmp_path: Path) -> None:
    # A virtualenv (replio's own, or tools the PATH names) may live in the temp folder too.
    root, bin_dir = tmp_path / "worktree", tmp_path / "venv" / "bin"
    root.mkdir()
    bin_dir.mkdir(parents=True)
    (bin_dir / "replio-hello").write_text("#!/bin/sh\necho hello from PATH\n")
    (bin_dir / "replio-hello").chmod(0o755)
    env = {**base_env(root), "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    done = run_bounded(["replio-hello"], cwd=root, env=env, timeout=10, cap=100)
    assert (done.level, done.returncode, done.stdout) == (Level.BWRAP, 0, b"hello from PATH\n")
    wrote = run_bounded(["sh", "-c", f"echo x > {bin_dir}/new"], cwd=root, env=env, timeout=10,
                        cap=100)
    assert wrote.returncode != 0 and not (bin_dir / "new").exists()


# where bubblewrap is missing or broken ------------------------------------------------------------


def test_without_bwrap_nor_unshare_on_path_programs_run_without_namespaces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_probe: None
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert confinement().level is Level.NONE
    assert confinement().problems == ("bubblewrap is missing (no `bwrap` on PATH)",
                                      "util-linux unshare is missing (no `unshare` on PATH)")
    done = run_bounded(["/bin/sh", "-c", "echo $$"], cwd=tmp_path, env={"PATH": "/usr/bin:/bin"},
                       timeout=10, cap=100)
    assert done.returncode == 0 and done.level is Level.NONE
    assert int(done.stdout) > 2  # not a fresh PID namespace's first processes


def _fake_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str) -> Path:
    """A `bwrap` running the shell `script`, first on PATH; its path."""
    fake = tmp_path / "bin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\n{script}")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{os.environ['PATH']}")
    return fake


def test_a_bwrap_that_cannot_start_is_probed_once_then_programs_run_at_the_next_level(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_probe: None
) -> None:
    calls = tmp_path / "bwrap-calls"
    _fake_bwrap(tmp_path, monkeypatch, f"echo call >> {calls}\n"
                "echo 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    assert confinement().level is not Level.BWRAP
    assert "No permissions to create new namespace" in confinement().problems[0]
    for _ in range(3):
        done = run_bounded(["sh", "-c", "echo ok"], cwd=tmp_path, env=base_env(tmp_path),
                           timeout=10, cap=100)
        assert (done.returncode, done.stdout) == (0, b"ok\n") and done.level is not Level.BWRAP
    assert calls.read_text() == "call\n"  # probed once, not once per call


def test_a_probe_that_times_out_is_tried_again_with_a_longer_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_probe: None
) -> None:
    calls = tmp_path / "bwrap-calls"
    # The first start stalls (as on a loaded machine) past the first wait; the second starts.
    _fake_bwrap(tmp_path, monkeypatch, f"if [ -e {calls} ]; then echo again >> {calls}; exit 0; fi\n"
                f"echo stalled > {calls}\nexec sleep 30\n")
    monkeypatch.setattr(confinement_module, "PROBE_TIMEOUTS", (0.5, 20.0))
    assert confinement().level is Level.BWRAP
    assert calls.read_text() == "stalled\nagain\n"


def test_a_probe_that_always_times_out_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_probe: None
) -> None:
    fake = _fake_bwrap(tmp_path, monkeypatch, "exec sleep 30\n")
    monkeypatch.setattr(confinement_module, "PROBE_TIMEOUTS", (0.2, 0.3))
    assert confinement().problems[0] == (f"bubblewrap ({fake}) did not start a program within 0.2 s, "
                                         "then 0.3 s (overloaded machine, or it hangs)")


_NEEDS_BWRAP = """
from tests.tools.test_confinement import bwrap, needs_bwrap  # noqa: F401 (the marker uses the fixture)

@needs_bwrap
def test_confined() -> None:
    pass
"""


@pytest.mark.parametrize(("required", "outcome", "status"), [("1", "1 error", 1), ("", "1 skipped", 0)])
def test_without_bubblewrap_a_confinement_test_skips_unless_it_is_required(
    tmp_path: Path, required: str, outcome: str, status: int
) -> None:
    (tmp_path / "test_needs.py").write_text(_NEEDS_BWRAP)
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    repo = Path(__file__).resolve().parents[2]
    # The test needs pytest alone: no installed plugin is loaded (hypothesis's and playwright's
    # imports were most of this pytest's start-up).
    env = {**os.environ, "PATH": str(empty), "REPLIO_REQUIRE_BWRAP": required, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
           "PYTHONPATH": os.pathsep.join([str(repo), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfs",
                           str(tmp_path / "test_needs.py")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert (done.returncode, outcome in done.stdout) == (status, True), done.stdout + done.stderr
    assert "bubblewrap is missing" in done.stdout
    if required:
        assert "REPLIO_REQUIRE_BWRAP=1: install bubblewrap" in done.stdout


_ABANDONER = """
import sys, threading, time
from pathlib import Path
from replio_replay.tools.process import base_env, run_bounded
root = Path(sys.argv[1])
threading.Thread(target=run_bounded, daemon=True, args=("echo $$ > sleeper.pid; exec sleep 300",),
                 kwargs=dict(shell=True, cwd=root, env=base_env(root), timeout=300, cap=100)).start()
while not (root / "sleeper.pid").exists():
    time.sleep(0.02)
time.sleep(0.1)
sys.exit(0)  # a call still in flight in a daemon thread, as when the toolbox gave up waiting
"""


def test_a_call_still_in_flight_when_replio_exits_does_not_outlive_it(
    tmp_path: Path, confine: Level
) -> None:
    subprocess.run([sys.executable, "-c", _ABANDONER, str(tmp_path)], timeout=60, check=True, cwd=Path.cwd(),
                   env={**os.environ, CAP: confine.value})
    assert ends_soon(tmp_path, pid_in(tmp_path / "sleeper.pid"))


_HOLDER = """
import sys
from pathlib import Path
from replio_replay.tools.process import base_env, run_bounded
root = Path(sys.argv[1])
run_bounded("echo $$ > sleeper.pid; exec sleep 300", shell=True, cwd=root, env=base_env(root),
            timeout=300, cap=100)
"""


@needs_bwrap
def test_confined_a_command_dies_with_replio_even_when_replio_is_killed(tmp_path: Path) -> None:
    # SIGKILL leaves no `finally` to run; bubblewrap's --die-with-parent ends the namespace.
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(tmp_path)], cwd=Path.cwd())
    try:
        pid = pid_in(tmp_path / "sleeper.pid", within=20)
        assert running_in(tmp_path, pid)
    finally:
        holder.kill()
        holder.wait()
    assert ends_soon(tmp_path, pid)
