"""run_bounded and base_env: exit code and output, timeout, output cap, stdin, minimal env."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from replio_replay._runtime.confine import CAP, Level
from replio_replay.tools.process import Finished, base_env, run_bounded


def test_exit_code_and_both_streams_are_captured(tmp_path: Path) -> None:
    done = run_bounded(["sh", "-c", "echo out; echo err >&2; exit 3"], cwd=tmp_path,
                       env=base_env(tmp_path), timeout=10, cap=1000)
    assert done.returncode == 3
    assert done.stdout == b"out\n"
    assert done.stderr == b"err\n"
    assert not done.timed_out
    assert not done.cut


def test_a_clean_exit_is_code_zero(tmp_path: Path) -> None:
    done = run_bounded(["true"], cwd=tmp_path, env=base_env(tmp_path), timeout=10, cap=10)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def test_a_shell_string_runs_with_shell_true(tmp_path: Path) -> None:
    done = run_bounded("echo $((6 * 7)) | tr 4 X", cwd=tmp_path, env=base_env(tmp_path), timeout=10,
                       cap=100, shell=True)
    assert done.stdout == b"X2\n"


def test_it_runs_in_cwd(tmp_path: Path) -> None:
    (tmp_path / "here.txt").write_text("in cwd")
    done = run_bounded(["cat", "here.txt"], cwd=tmp_path, env=base_env(tmp_path), timeout=10,
                       cap=100)
    assert done.stdout == b"in cwd"


def test_stdin_is_delivered(tmp_path: Path) -> None:
    data = "héllo\nwörld\n".encode() * 3
    done = run_bounded(["cat"], cwd=tmp_path, env=base_env(tmp_path), stdin=data, timeout=10,
                       cap=1000)
    assert done.stdout == data
    assert done.returncode == 0


def test_stdin_is_closed_after_it_is_delivered(tmp_path: Path) -> None:
    # `cat` with no input must see end of file at once, not wait for the timeout.
    started = time.monotonic()
    done = run_bounded(["cat"], cwd=tmp_path, env=base_env(tmp_path), timeout=10, cap=100)
    assert done == Finished(0, b"", b"", level=done.level)
    assert time.monotonic() - started < 5


def test_a_large_stdin_is_delivered_whole(tmp_path: Path) -> None:
    data = b"z" * 300_000
    done = run_bounded(["wc", "-c"], cwd=tmp_path, env=base_env(tmp_path), stdin=data, timeout=10,
                       cap=100)
    assert done.stdout.strip() == b"300000"


def test_a_program_that_ignores_its_stdin_does_not_fail(tmp_path: Path) -> None:
    done = run_bounded(["echo", "ignored"], cwd=tmp_path, env=base_env(tmp_path),
                       stdin=b"x" * 200_000, timeout=10, cap=100)
    assert done.stdout == b"ignored\n"
    assert not done.timed_out


def test_a_sleeping_program_times_out_promptly(tmp_path: Path) -> None:
    started = time.monotonic()
    done = run_bounded(["sleep", "30"], cwd=tmp_path, env=base_env(tmp_path), timeout=0.3, cap=100)
    assert time.monotonic() - started < 5
    assert done.timed_out
    assert done.returncode is None
    assert not done.cut


def test_output_before_a_timeout_is_kept(tmp_path: Path) -> None:
    done = run_bounded(["sh", "-c", "echo early; sleep 30"], cwd=tmp_path, env=base_env(tmp_path),
                       timeout=0.3, cap=100)
    assert done.timed_out
    assert done.stdout == b"early\n"


def test_the_timeout_holds_while_a_large_stdin_is_unread(tmp_path: Path) -> None:
    # The program never reads its stdin, which is larger than a pipe holds: feeding it must not
    # keep the caller waiting past the timeout.
    started = time.monotonic()
    done = run_bounded(["sleep", "2"], cwd=tmp_path, env=base_env(tmp_path), stdin=b"x" * 1_000_000,
                       timeout=0.3, cap=100)
    elapsed = time.monotonic() - started
    assert done.timed_out
    assert elapsed < 1.5


def test_the_timeout_stops_what_the_program_spawned(tmp_path: Path) -> None:
    script = "sh -c 'sleep 0.6; echo late > late.txt' & sleep 30"
    done = run_bounded(["sh", "-c", script], cwd=tmp_path, env=base_env(tmp_path), timeout=0.3,
                       cap=100)
    assert done.timed_out
    time.sleep(0.8)
    assert not (tmp_path / "late.txt").exists()


def test_output_over_the_cap_is_cut(tmp_path: Path) -> None:
    code = "import sys; sys.stdout.write('x' * 10_000_000)"
    done = run_bounded([sys.executable, "-c", code], cwd=tmp_path, env=base_env(tmp_path),
                       timeout=20, cap=5000)
    assert done.cut
    assert done.stdout == b"x" * 5000
    assert done.returncode is None
    assert not done.timed_out


def test_output_of_exactly_the_cap_is_not_cut(tmp_path: Path) -> None:
    code = "import sys; sys.stdout.write('x' * 5000)"
    done = run_bounded([sys.executable, "-c", code], cwd=tmp_path, env=base_env(tmp_path),
                       timeout=20, cap=5000)
    assert not done.cut
    assert done.stdout == b"x" * 5000
    assert done.returncode == 0


def test_stderr_over_the_cap_is_cut_too(tmp_path: Path) -> None:
    code = "import sys; sys.stderr.write('e' * 1_000_000)"
    done = run_bounded([sys.executable, "-c", code], cwd=tmp_path, env=base_env(tmp_path),
                       timeout=20, cap=300)
    assert done.cut
    assert done.stderr == b"e" * 300


def test_the_program_is_stopped_once_the_cap_is_reached(tmp_path: Path) -> None:
    # It would write a marker after its 10 MB; stopped at the cap, it never gets there.
    code = ("import sys; sys.stdout.write('x' * 10_000_000); sys.stdout.flush(); "
            "open('finished.txt', 'w').write('all written')")
    done = run_bounded([sys.executable, "-c", code], cwd=tmp_path, env=base_env(tmp_path),
                       timeout=20, cap=1000)
    assert done.cut
    assert len(done.stdout) <= 1000
    time.sleep(0.2)
    assert not (tmp_path / "finished.txt").exists()


def test_a_program_that_writes_forever_returns_quickly_because_of_the_cap(tmp_path: Path) -> None:
    started = time.monotonic()
    done = run_bounded(["yes"], cwd=tmp_path, env=base_env(tmp_path), timeout=30, cap=4096)
    assert time.monotonic() - started < 5
    assert done.cut
    assert not done.timed_out
    assert done.stdout == b"y\n" * 2048


def test_a_program_that_cannot_be_started_raises_oserror(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        run_bounded([str(tmp_path / "missing-program")], cwd=tmp_path, env=base_env(tmp_path),
                    timeout=5, cap=10)
    script = tmp_path / "not-executable.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    with pytest.raises(PermissionError):
        run_bounded([str(script)], cwd=tmp_path, env=base_env(tmp_path), timeout=5, cap=10)


def test_the_program_sees_only_the_given_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    done = run_bounded(["env"], cwd=tmp_path, env={"PATH": os.environ["PATH"], "ONLY": "this"},
                       timeout=10, cap=10_000)
    lines = set(done.stdout.decode().splitlines())
    assert "ONLY=this" in lines
    assert not any(line.startswith("OPENAI_API_KEY=") for line in lines)
    assert b"sk-secret" not in done.stdout


# base_env -----------------------------------------------------------------------------------------


def test_base_env_has_home_at_the_root_and_only_path_and_locale_from_the_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant")
    monkeypatch.setenv("REPLIO_PARENT_ONLY", "x")
    monkeypatch.setenv("PATH", "/opt/a:/usr/bin:/bin")
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.setenv("TZ", "UTC")
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.setenv("HOME", "/home/parent")
    env = base_env(tmp_path)
    assert env == {"PATH": "/opt/a:/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8",
                   "TZ": "UTC"}


def test_base_env_passes_lc_all_when_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LC_ALL", "C")
    assert base_env(tmp_path)["LC_ALL"] == "C"


def test_base_env_without_parent_path_uses_a_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PATH")
    for name in ("LANG", "LC_ALL", "TZ"):
        monkeypatch.delenv(name, raising=False)
    env = base_env(tmp_path)
    assert set(env) == {"PATH", "HOME"}
    assert "/usr/bin" in env["PATH"].split(":")


def test_base_env_extra_adds_and_overrides(tmp_path: Path) -> None:
    env = base_env(tmp_path, {"TOOL_TOKEN": "t", "HOME": "/elsewhere"})
    assert env["TOOL_TOKEN"] == "t"
    assert env["HOME"] == "/elsewhere"
    assert base_env(tmp_path)["HOME"] == str(tmp_path)


def test_programs_run_at_the_runs_level_of_confinement(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CAP, Level.NONE.value)
    done = run_bounded(["sh", "-c", "echo $$"], cwd=tmp_path, env=base_env(tmp_path), timeout=10,
                       cap=100)
    assert done.level is Level.NONE
    assert not done.cancelled
    assert int(done.stdout) > 2  # a pid of ours, not a fresh PID namespace's first ones
