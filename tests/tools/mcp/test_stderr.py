"""The tail of a server's stderr: bounded, complete up to the call, and gone with the server."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

from replio_replay.tools.mcp.stderr import StderrTail


def _pumps() -> set[threading.Thread]:
    """The stderr readers alive now (another test's may still be ending: compare sets, not counts)."""
    return {t for t in threading.enumerate() if t.name == "replio-mcp-stderr"}


def test_only_the_last_bytes_are_kept_and_everything_written_before_is_seen() -> None:
    tail = StderrTail(keep=100)
    program = "import sys\nfor i in range(100_000): sys.stderr.write(f'line {i}\\n')\nsys.stderr.write('the end')"
    subprocess.run([sys.executable, "-c", program], stderr=tail.errlog, check=True)
    tail.spawned()
    text = tail.text()  # at once: what the program wrote is there, whether the thread read it yet or not
    assert text.endswith("line 99999\nthe end") and len(text.encode()) <= 100


def test_the_reading_thread_ends_with_the_last_writer() -> None:
    before = _pumps()
    tail = StderrTail()
    child = subprocess.Popen([sys.executable, "-c", "import sys, time; sys.stderr.write('hi'); time.sleep(30)"],
                             stderr=tail.errlog)
    tail.spawned()
    (mine,) = _pumps() - before
    deadline = time.monotonic() + 20
    while tail.text() != "hi":
        assert time.monotonic() < deadline, "the child never wrote"
        time.sleep(0.01)
    child.kill()
    child.wait()
    mine.join(timeout=5)
    assert not mine.is_alive(), "the thread outlived the pipe's writers"
    assert tail.text() == "hi"


def test_a_server_never_started_leaves_no_thread() -> None:
    before = _pumps()
    tail = StderrTail()
    tail.spawned()
    for thread in _pumps() - before:
        thread.join(timeout=5)
    assert not (_pumps() - before)
    assert tail.text() == ""


def test_a_word_cut_where_the_kept_bytes_start_is_left_out() -> None:
    tail = StderrTail(keep=30)
    subprocess.run([sys.executable, "-c", "import sys; sys.stderr.write('using tok-0123456789abcdef and then some')"],
                   stderr=tail.errlog, check=True)
    tail.spawned()
    assert tail.text() == " and then some"  # not '9abcdef and then some', the end of a token
