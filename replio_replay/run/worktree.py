"""Throwaway worktrees: one temp folder per fixture, provisioned, always removed afterwards.

A worktree's name carries the process that made it (`replio-wt-<pid>-...`), so the next run
can remove the ones a killed run left behind, and only those: a folder whose process is alive
is never touched.
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..fixtures.model import Fixture
from ..tools.sandbox import TEMP_PREFIX, Sandbox, SandboxError

__all__ = ["NO_WORKTREE", "TEMP_PREFIX", "Removals", "reap_stale_worktrees", "remove_active_worktrees",
           "remove_worktree", "snapshot", "worktree"]

_OWNED = re.compile(rf"^{re.escape(TEMP_PREFIX)}(\d+)-")

#: The root of a fixture given no worktree, nothing it runs being able to see one (the runner's
#: `_worktree_seen`): a path nothing can be made under, so a tool wrongly thought blind to the
#: worktree fails there rather than write somewhere else.
NO_WORKTREE = Path(os.devnull)

_active: set[Path] = set()
_active_lock = threading.Lock()


@contextmanager
def worktree(fixture: Fixture, settings: Mapping[str, Any],
             remove: Callable[[Path], None] | None = None) -> Iterator[Path]:
    """A fresh folder holding the fixture's files and `.replio/config.json` with `settings`, made a git
    repository when the fixture asks (`git`).

    The folder is removed on exit, also on error and on KeyboardInterrupt: at once, or handed to
    `remove` (a run's `Removals`, which removes it on a thread of its own).
    """
    root = Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-"))
    with _active_lock:
        _active.add(root)
    try:
        made = {root}
        for rel, content in fixture.files.items():
            _provision(root / rel, content, made)
        _provision(root / ".replio" / "config.json", json.dumps(dict(settings), indent=2, sort_keys=True) + "\n",
                   made)
        if fixture.git is not None:
            from .gitrepo import make_repository

            make_repository(root, fixture.git, fixture_id=fixture.id)
        yield root
    finally:
        (remove or remove_worktree)(root)


def _provision(target: Path, content: str, made: set[Path]) -> None:
    """Write a new file of the worktree, making its folders first (each once: `made` holds those
    there already). A worktree is made for most fixtures, so this keeps to the fewest system
    calls: `open` in text mode adds a stat, a terminal check and two seeks to each file."""
    if target.parent not in made:
        target.parent.mkdir(parents=True, exist_ok=True)
        made.update(target.parents)
    data = content.encode("utf-8")
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def remove_worktree(root: Path) -> None:
    """Remove a worktree now."""
    shutil.rmtree(root, ignore_errors=True)
    with _active_lock:
        _active.discard(root)


class Removals:
    """Removes a run's finished worktrees on threads of their own, up to `threads` at once, so the
    next fixture need not wait.

    Removing a folder is a slow system call on some file systems (about 3 ms a folder on this
    project's ext4 machines, 10 ms and more a fixture), and it lets go of the GIL while it waits;
    the file system takes several at once nearly as fast as one (eight worktrees: 13-16 ms at once,
    65-75 ms one after the other here). With `--jobs 8` a round of fixtures ends together, and
    the run waits for the last round's worktrees to go. A thread ends when nothing is left to
    remove; `wait` returns once all have.
    """

    def __init__(self, threads: int = 1) -> None:
        self._queue: queue.SimpleQueue[Path] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._most = max(1, threads)

    def __call__(self, root: Path) -> None:
        self._queue.put(root)
        with self._lock:
            if len(self._threads) < self._most:
                thread = threading.Thread(target=self._work, name="replio-remove", daemon=True)
                self._threads.append(thread)
                thread.start()

    def _work(self) -> None:
        while True:
            try:
                root = self._queue.get_nowait()
            except queue.Empty:
                with self._lock:
                    if self._queue.empty():  # checked under the lock `__call__` starts threads under
                        self._threads.remove(threading.current_thread())
                        return
                continue
            remove_worktree(root)

    def wait(self) -> None:
        """Return once every worktree handed over so far is removed."""
        with self._lock:
            threads = list(self._threads)
        for thread in threads:  # each ends only once nothing is left to remove
            thread.join()


#: Characters of a file the verifier reads back.
SNAPSHOT_CAP = 1_000_000


def snapshot(sandbox: Sandbox, paths: Iterable[str]) -> dict[str, str | None]:
    """The content of each worktree-relative path as the run left it (None: no such file).

    Read through the sandbox, so a link the model made to somewhere outside reads as missing;
    capped, and decoded leniently, so a huge or binary file cannot stall the verdict.
    """
    found: dict[str, str | None] = {}
    for path in paths:
        try:
            real = sandbox.resolve(path)
            with real.open("rb") as fh:
                found[path] = fh.read(SNAPSHOT_CAP).decode("utf-8", "replace")
        except (SandboxError, OSError):
            found[path] = None
    return found


def remove_active_worktrees() -> None:
    """Remove the worktrees of fixtures still running (after an interrupt, once they are abandoned)."""
    with _active_lock:
        roots = list(_active)
    for root in roots:
        shutil.rmtree(root, ignore_errors=True)


def reap_stale_worktrees(parent: Path | None = None) -> list[Path]:
    """Remove worktrees whose process is gone (a run killed with SIGKILL); returns them."""
    folder = Path(parent or tempfile.gettempdir())
    removed: list[Path] = []
    try:
        entries = list(folder.iterdir())
    except OSError:
        return removed
    for entry in entries:
        match = _OWNED.match(entry.name)
        if match is None or not entry.is_dir() or _alive(int(match.group(1))):
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True
