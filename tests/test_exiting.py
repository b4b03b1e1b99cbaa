"""How the process ends: `leave` keeps what an exit must do (at-exit handlers, flushed output, the
status `sys.exit` would give) and skips the interpreter's teardown. Each case is a real process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest


def python(code: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=60, **kwargs)  # type: ignore[call-overload]


@pytest.mark.parametrize(("code", "status", "err"), [(None, 0, ""), (0, 0, ""), (3, 3, ""), (130, 130, ""),
                                                     ("replio: no", 1, "replio: no\n")])
def test_the_status_is_the_one_sys_exit_gives(code: object, status: int, err: str) -> None:
    done = python(f"from replio_replay.exiting import leave\nleave({code!r})")
    assert (done.returncode, done.stderr) == (status, err)


def test_at_exit_handlers_run_and_buffered_output_is_written() -> None:
    done = python("""
        import atexit, sys
        from replio_replay.exiting import leave
        atexit.register(lambda: print("second handler"))
        atexit.register(lambda: print("first handler"))
        sys.stdout.write("buffered, no newline")
        sys.stderr.write("on stderr")
        leave(0)
    """)
    assert done.stdout == "buffered, no newlinefirst handler\nsecond handler\n"
    assert done.stderr == "on stderr"


def test_the_interpreter_is_not_torn_down() -> None:
    # A finalizer runs at teardown; after `leave` there is none: the process ended first.
    done = python("""
        import sys
        from replio_replay.exiting import leave
        class Noisy:
            def __del__(self):
                print("torn down")
        keep = Noisy()
        leave(0)
    """)
    assert done.stdout == ""
    assert python("""
        class Noisy:
            def __del__(self):
                print("torn down")
        keep = Noisy()
    """).stdout == "torn down\n"  # what a plain exit does, so the case above could fail


#: A wrapper's code after the program returns (coverage and cProfile save in such a `finally`).
WRAPPED = """
from replio_replay.exiting import leave
try:
    leave(5)
finally:
    print("the wrapper saved its data")
"""


@pytest.mark.parametrize("setup", ["import sys; sys.settrace(lambda *a: None)",
                                   "import sys; sys.setprofile(lambda *a: None)",
                                   "import os; os.environ['REPLIO_FAST_EXIT'] = '0'"],
                         ids=["tracer", "profiler", "asked"])
def test_a_tracer_a_profiler_or_the_user_get_pythons_own_exit(setup: str) -> None:
    done = python(f"{setup}\n{WRAPPED}")
    assert (done.returncode, done.stdout) == (5, "the wrapper saved its data\n")
    assert python(WRAPPED).stdout == ""  # otherwise the process ends in `leave`: the case above could fail


def test_cprofile_still_writes_its_profile(tmp_path: Path) -> None:
    script = tmp_path / "prog.py"
    script.write_text("from replio_replay.exiting import leave\nleave(0)\n")
    subprocess.run([sys.executable, "-m", "cProfile", "-o", str(tmp_path / "prog.prof"), str(script)],
                   check=True, timeout=60)
    assert (tmp_path / "prog.prof").stat().st_size > 0


def test_a_closed_stdout_is_not_flushed_and_not_an_error() -> None:
    done = python("import sys\nfrom replio_replay.exiting import leave\nsys.stdout.close()\nleave(0)")
    assert (done.returncode, done.stderr) == (0, "")


def test_a_thread_that_holds_the_exit_is_waited_for() -> None:
    done = python("""
        import threading, time
        from replio_replay.exiting import leave
        def late():
            time.sleep(0.3)
            print("the thread finished")
        threading.Thread(target=late).start()
        leave(4)
    """)
    assert (done.returncode, done.stdout) == (4, "the thread finished\n")


@pytest.mark.parametrize("end", ["leave(0)", "pass"], ids=["leave", "plain-python"])
def test_a_closed_stdout_is_status_120_as_python_gives(end: str) -> None:
    read, write = os.pipe()
    os.close(read)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # the write is kept to the flush
    proc = subprocess.Popen([sys.executable, "-c", "import sys\nfrom replio_replay.exiting import leave\n"
                             f"sys.stdout.write('x' * 10)\n{end}"], stdout=write, stderr=subprocess.DEVNULL,
                            env=env)
    os.close(write)
    assert proc.wait(timeout=60) == 120


def test_the_cli_ends_through_leave_and_keeps_its_status(tmp_path: Path) -> None:
    # An unknown fixture id is a usage error (2), said on stderr; the at-exit handler a plugin or
    # coverage registers still runs (here registered through sitecustomize).
    (tmp_path / "sitecustomize.py").write_text(
        "import atexit, sys\natexit.register(lambda: sys.stderr.write('plugin saved its data\\n'))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    done = subprocess.run([sys.executable, "-c", "from replio_replay.cli import entry; entry()",
                           "eval", "--path", str(tmp_path), "run", "--fixture", "no-such-fixture",
                           "--provider", "mock"], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stderr.endswith("plugin saved its data\n")
    assert "no-such-fixture" in done.stderr
