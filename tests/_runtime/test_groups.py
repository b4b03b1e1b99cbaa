"""Ending what replio started: the process group, and every process carrying the program's mark."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from replio_replay._runtime.groups import MARK, end_group, kill_marked, marked, track_group
from tests.support.processes import alive, ended

#: Starts `sleep 300` in a session of its own, forked twice, its pid in the file named by $PIDS.
DAEMON = "(setsid sh -c 'echo $$ > \"$PIDS\"; exec sleep 300' </dev/null >/dev/null 2>&1 &)"


def _pid_in(path: Path) -> int:
    deadline = time.monotonic() + 10
    while not (path.exists() and path.read_text().strip()):
        assert time.monotonic() < deadline, f"{path} was never written"
        time.sleep(0.02)
    return int(path.read_text())


def _daemon(env: dict[str, str], pids: Path) -> int:
    subprocess.run(["sh", "-c", DAEMON], env={**env, "PIDS": str(pids)}, timeout=10, check=True)
    return _pid_in(pids)


def test_marked_adds_a_fresh_token_and_keeps_the_rest() -> None:
    first, token = marked({"PATH": "/bin"})
    second, other = marked({"PATH": "/bin"})
    assert first == {"PATH": "/bin", MARK: token} and token != other and len(token) == 32


def test_a_daemon_carrying_the_mark_is_killed_and_one_without_it_is_not(tmp_path: Path) -> None:
    env, token = marked({"PATH": os.environ["PATH"]})
    ours = _daemon(env, tmp_path / "ours")
    stranger = _daemon({"PATH": os.environ["PATH"], MARK: "someone-else"}, tmp_path / "stranger")
    try:
        assert alive(ours) and alive(stranger)
        kill_marked(token)
        assert ended(ours)
        assert alive(stranger)
    finally:
        os.kill(stranger, 9)


def test_ending_a_group_ends_what_left_it_with_the_mark(tmp_path: Path) -> None:
    env, token = marked({"PATH": os.environ["PATH"], "PIDS": str(tmp_path / "daemon")})
    leader = subprocess.Popen(["sh", "-c", f"{DAEMON}; exec sleep 300"], env=env, start_new_session=True)
    daemon = _pid_in(tmp_path / "daemon")
    track_group(leader.pid, token)
    end_group(leader.pid)
    leader.wait(timeout=5)
    assert ended(daemon)
