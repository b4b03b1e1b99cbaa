"""Each fixture's child walled off from the others (tools/childmain.py, _runtime/nested.py), at each level
of confinement with namespaces (bubblewrap, unshare): it sees and signals only its own processes, writes
only its worktree and a temp folder of its own; through the real CLI, one fixture's Python cannot change
another's verdict under ``--jobs 2`` (issue 47).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from replio_replay._runtime.confine import CAP, Level
from replio_replay.tools.base import ToolContext
from replio_replay.tools.child import ForkServer
from replio_replay.tools.environment import build
from replio_replay.tools.permissions import Permissions
from replio_replay.tools.resolve import resolve_toolset
from replio_replay.tools.sandbox import Sandbox
from replio_replay.tools.setfile import load_chain
from replio_replay.tools.toolbox import Toolbox
from replio_replay.tools.toolset import ToolSet
from tests.helpers import replio_command, write_json
from tests.support.environments import write_module
from tests.tools.test_confinement import require_level

#: What a fixture's child looks for: the processes it sees, those it can signal among the first pids of
#: the server's namespace (where every child of a test's server is), and where it can write.
PROBE = '''
import json, os, tempfile
from replio_replay.tools.base import ToolContext


def _writes(path):
    try:
        with open(path, "w") as fh:
            fh.write("written")
        return True
    except OSError:
        return False


class Prober:
    """Looks around its child."""

    def look(self, other: str, ctx: ToolContext) -> str:
        """What this child sees, signals and writes; `other` is another fixture's worktree."""
        signalled = []
        for pid in range(2, 400):
            try:
                os.kill(pid, 0)
                signalled.append(pid)
            except OSError:
                pass
        fd, scratch = tempfile.mkstemp()
        os.close(fd)
        return json.dumps({
            "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
            "signalled": signalled,
            "own": _writes(os.path.join(ctx.root, "mine.txt")),
            "other": _writes(os.path.join(other, "theirs.txt")),
            "temp_folder": _writes(os.path.join(os.path.dirname(other), "beside.txt")),
            "scratch": os.path.dirname(scratch) == os.environ["TMPDIR"] and _writes(scratch),
            "shm": _writes("/dev/shm/replio-walls-" + os.path.basename(ctx.root)),
        })
'''


@pytest.fixture(params=[Level.BWRAP, Level.UNSHARE], ids=["bwrap", "unshare"])
def level(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Level:
    """Each level with namespaces, where it works here."""
    require_level(request.param)
    monkeypatch.setenv(CAP, request.param.value)
    return request.param  # type: ignore[no-any-return]


def _look(toolset: ToolSet, worktree: Path, other: Path) -> dict[str, Any]:
    child = toolset.python.child(worktree, 60)
    build(toolset.environments, child, 60)
    box = Toolbox(ToolContext(Sandbox(worktree), timeout=60, child=child), Permissions.for_fixture({}, []), toolset)
    return json.loads(box.call("look", {"other": str(other)}))  # type: ignore[no-any-return]


def test_a_fixtures_child_sees_signals_and_writes_nothing_of_anothers(tmp_path: Path, level: Level) -> None:
    write_module(tmp_path / "prober.py", PROBE)
    toolset = resolve_toolset("default", load_chain(write_json(tmp_path / "tools.json", {
        "environments": {"probe": {"python": "prober.py:Prober"}}})), [], python=ForkServer())
    worktrees = [tmp_path / "temp" / name for name in ("a", "b")]
    for worktree in worktrees:
        worktree.mkdir(parents=True)
    try:
        a, b = _look(toolset, *worktrees), _look(toolset, *reversed(worktrees))
    finally:
        toolset.python.close()
    for seen in (a, b):
        assert seen["pids"] == [1], seen  # itself, the first process of a PID namespace of its own
        assert seen["signalled"] == [], seen  # not the server, not the other child, nor their parents
        assert seen["own"] and seen["scratch"] and seen["shm"], seen
        assert not seen["other"] and not seen["temp_folder"], seen
    assert sorted(p.name for w in worktrees for p in w.iterdir()) == ["mine.txt", "mine.txt"]
    assert not (tmp_path / "temp" / "beside.txt").exists()
    assert not list(Path("/dev/shm").glob("replio-walls-*"))  # its own /dev/shm, gone with it


#: A fixture's environment that tries to write into every other fixture's worktree it finds beside
#: its own, once it finds one (within 20 s), and another's that naps while it does.
SCRIBBLER = '''
import json, os, time
from pathlib import Path
from replio_replay.tools.base import ToolContext


class Scribbler:
    """Writes where it should not."""

    def scribble(self, ctx: ToolContext) -> str:
        """Overwrite the other worktrees' note."""
        own = Path(ctx.root)
        deadline = time.monotonic() + 20
        while True:
            others = [p for p in own.parent.iterdir() if p.name.startswith("replio-wt-") and p != own
                      and (p / "note.txt").exists()]
            if others or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        written = 0
        for other in others:
            try:
                (other / "note.txt").write_text("overwritten by another fixture\\n")
                written += 1
            except OSError:
                pass
        return json.dumps({"others": len(others), "written": written})

    def nap(self) -> str:
        """Sleep a while."""
        time.sleep(4)
        return "woke"
'''


@pytest.fixture(params=list(Level), ids=[level.value for level in Level])
def any_level(request: pytest.FixtureRequest) -> Level:
    """Each level, where it works here (``none`` is the control)."""
    require_level(request.param)
    return request.param  # type: ignore[no-any-return]


def test_one_fixtures_python_cannot_write_anothers_worktree_nor_change_its_verdict(tmp_path: Path,
                                                                                   any_level: Level) -> None:
    project = tmp_path / "p"
    write_module(project / ".replio" / "envs" / "scribbler.py", SCRIBBLER)
    write_json(project / ".replio" / "config.json", {"provider": "mock", "bundled": False,
                                                     "providers": {"mock": {"script": ".replio/script.json"}}})
    write_json(project / ".replio" / "script.json", {
        name: [{"tool_calls": [{"name": method, "arguments": {}}]}, {"text": "Done."}]
        for name, method in (("a", "scribble"), ("b", "nap"))})
    for name in ("a", "b"):
        write_json(project / ".replio" / "eval" / f"{name}.json", {
            "task": f"Do {name}.", "files": {"note.txt": "mine\n"},
            "environments": {"scribbler": {"python": "../envs/scribbler.py:Scribbler"}},
            "verifier": {"files": {"note.txt": {"$unchanged": True}}}})
    temp = tmp_path / "temp"  # the worktrees' folder, apart from the project's
    temp.mkdir()
    done = subprocess.run([replio_command(), "eval", "--path", str(project), "run", "--no-cassettes", "--jobs", "2",
                           "--output", "json"], capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL,
                          env={**os.environ, CAP: any_level.value, "TMPDIR": str(temp)})
    fixtures = {f["id"]: f for f in json.loads(done.stdout)["fixtures"]}
    scribbled = json.loads(fixtures["a"]["trace"][0]["result"])
    if any_level is Level.NONE:  # the control: without namespaces the other worktree is written, its verdict changed
        assert scribbled == {"others": 1, "written": 1} and not fixtures["b"]["pass"], done.stderr
        return
    assert scribbled == {"others": 1, "written": 0}, done.stderr
    assert fixtures["b"]["status"] == "ok" and fixtures["b"]["pass"], fixtures["b"]
    assert done.returncode == 0, done.stderr
