"""The user's code confined, through the real CLI, at each level (``REPLIO_CONFINE``): an agent and an
environment's method look for the run's key and for another fixture's relay in ``/proc``, and start a
daemon that empties its environment and leaves its session; at the fallback, replio says what is not
covered and protects itself as it can (issue 47).

With namespaces (bubblewrap, unshare) nothing is found and the daemon dies with its fixture. Without
them (the last level), run as root here, the key *is* readable: that run is the control showing the
looking works, and the daemon still does not outlive the run (the subreaper).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from replio_replay._runtime.confine import CAP, Level
from tests.helpers import replio_command, write_json
from tests.support.agents import openai_agent
from tests.support.llm_server import LLMServer
from tests.support.processes import said_ended
from tests.tools.test_confinement import require_level

KEY = "sk-test-" + "c0nf1ne5ecret0042" * 2

#: What a process of the user's finds in /proc over `seconds`: environments holding a key other than
#: the placeholder, relay URLs other than its own, and whether replio's own process is in sight.
SCAN = '''
import json, os, time

def scan(seconds, mine):
    keys, relays, replio = 0, set(), False
    deadline = time.monotonic() + seconds
    while True:
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    replio = replio or b"eval\\0--path" in fh.read()
                with open(f"/proc/{entry}/environ", "rb") as fh:
                    environ = fh.read().split(b"\\0")
            except OSError:
                continue
            keys += sum(1 for e in environ if e.startswith(b"OPENAI_API_KEY=sk-"))
            relays.update(e.decode() for e in environ if e.startswith(b"REPLIO_BASE_URL=") and e.decode() != mine)
        if time.monotonic() > deadline:
            return {"keys": keys, "relays": sorted(relays), "replio_seen": replio}
        time.sleep(0.1)
'''

#: An agent that scans (for long enough that the other fixture's agent runs meanwhile), starts a
#: daemon with an emptied environment in a session of its own that ticks into `TICKS`, then asks
#: the model once and answers. What it found and the daemon's pid are on its standard error.
AGENT = SCAN + '''
import subprocess, sys, urllib.request
TICK = "import sys, time\\nwhile True:\\n    try:\\n        open(sys.argv[1], 'a').write('tick\\\\n')\\n" \\
       "    except OSError:\\n        pass\\n    time.sleep(0.05)\\n"
daemon = subprocess.Popen([sys.executable, "-c", TICK, os.environ["TICKS"]], env={}, start_new_session=True,
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print("DAEMON", os.readlink("/proc/self/ns/pid"), daemon.pid, file=sys.stderr)
print("FOUND", json.dumps(scan(2.0, "REPLIO_BASE_URL=" + os.environ["REPLIO_BASE_URL"])), file=sys.stderr)
body = json.dumps({"model": "m", "messages": [{"role": "user", "content": os.environ["REPLIO_TASK"]}]}).encode()
req = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", body,
                             {"content-type": "application/json"})
with urllib.request.urlopen(req) as r:
    print(json.load(r)["choices"][0]["message"]["content"])
'''

#: An environment whose method scans from the fork server's child.
ENVIRONMENT = SCAN + '''

class Looker:
    """Looks around."""

    def look(self) -> str:
        """What this process finds in /proc."""
        return json.dumps(scan(0.0, ""))
'''


@pytest.fixture(params=list(Level), ids=[level.value for level in Level])
def level(request: pytest.FixtureRequest) -> Level:
    """Each level of confinement, where it works here."""
    require_level(request.param)
    return request.param  # type: ignore[no-any-return]


def _replio(project: Path, level: Level, *args: str, url: str = "http://127.0.0.1:9/v1",
            **more: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": url, CAP: level.value, **more}
    return subprocess.run([replio_command(), "eval", "--path", str(project), *args], capture_output=True, text=True,
                          env=env, timeout=180, stdin=subprocess.DEVNULL)


def _results(done: subprocess.CompletedProcess[str]) -> dict[str, dict[str, Any]]:
    return {f["id"]: f for f in json.loads(done.stdout)["fixtures"]}


def _line(stderr: str, word: str) -> str:
    return next(line.split(" ", 1)[1] for line in stderr.splitlines() if line.startswith(f"{word} "))


def test_agents_find_no_key_nor_each_others_relay_and_their_daemons_end(
        tmp_path: Path, llm_server: LLMServer, level: Level) -> None:
    llm_server.handler = openai_agent({"": ["Done."]})
    project = tmp_path / "p"
    (project / "agent.py").parent.mkdir(parents=True)
    (project / "agent.py").write_text(AGENT)
    ticks = tmp_path / "ticks.txt"
    for name in ("alpha", "beta"):
        write_json(project / ".replio" / "eval" / f"{name}.json", {"task": f"{name}: say done"})
    write_json(project / ".replio" / "config.json", {"provider": "openai:test-model", "bundled": False, "agent": {
        "command": ["python", "agent.py"], "timeout": 60, "env": {"TICKS": str(ticks)}}})
    done = _replio(project, level, "run", "--no-cassettes", "--jobs", "2", "--output", "json",
                   url=f"{llm_server.url}/v1")
    found = _results(done)
    assert sorted(found) == ["alpha", "beta"], done.stderr
    daemons = [_line(found[name]["agent_stderr"], "DAEMON") for name in found]
    looked = [json.loads(_line(found[name]["agent_stderr"], "FOUND")) for name in found]
    assert [f["answer"] for f in found.values()] == ["Done.", "Done."]
    assert [said for said in daemons if not said_ended(said, within=2)] == []
    if ticks.exists():  # the daemons wrote where they could: they write no more
        size = ticks.stat().st_size
        time.sleep(0.5)
        assert ticks.stat().st_size == size
    if level is Level.NONE:  # the control: run as root without namespaces, the key and the relays are in sight
        assert os.geteuid() != 0 or any(f["keys"] for f in looked), looked
        assert any(f["relays"] for f in looked), looked
        assert "runs without namespaces: replio is non-dumpable" in done.stderr
        return
    assert looked == [{"keys": 0, "relays": [], "replio_seen": False}] * 2
    assert not ticks.exists() or level is Level.UNSHARE  # under bubblewrap, /tmp is the agent's own
    assert ("runs in a PID namespace of its own (unshare)" in done.stderr) is (level is Level.UNSHARE)


def test_an_environments_method_finds_no_key_nor_replio(tmp_path: Path, level: Level) -> None:
    project = tmp_path / "p"
    (project / ".replio" / "envs").mkdir(parents=True)
    (project / ".replio" / "envs" / "looker.py").write_text(ENVIRONMENT)
    write_json(project / ".replio" / "config.json", {"provider": "mock", "bundled": False,
                                                     "providers": {"mock": {"script": ".replio/script.json"}}})
    write_json(project / ".replio" / "script.json", {"look": [{"tool_calls": [{"name": "look", "arguments": {}}]},
                                                              {"text": "Done."}]})
    write_json(project / ".replio" / "eval" / "look.json", {
        "task": "Look.", "environments": {"looker": {"python": "../envs/looker.py:Looker"}}})
    temp = tmp_path / "temp"  # the worktrees' folder, apart from the project's: the project is still read
    temp.mkdir()
    done = _replio(project, level, "run", "--no-cassettes", "--output", "json", TMPDIR=str(temp))
    looked = json.loads(_results(done)["look"]["trace"][0]["result"])
    if level is Level.NONE:  # the control: without namespaces, replio is in sight (its key too, unless the
        assert looked["replio_seen"], looked  # child could drop root's capabilities in a namespace of its own)
        return
    assert looked == {"keys": 0, "relays": [], "replio_seen": False}


_FALLBACK = """
import ctypes, json, sys
from replio_replay._runtime.confine import confinement
print(confinement().level.value, file=sys.stderr)
libc = ctypes.CDLL(None)
subreaper = ctypes.c_int()
libc.prctl(37, ctypes.byref(subreaper), 0, 0, 0)  # PR_GET_CHILD_SUBREAPER
print(json.dumps({"dumpable": libc.prctl(3, 0, 0, 0, 0), "subreaper": subreaper.value}))
confinement()  # told once per run, however often asked
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
def test_without_namespaces_replio_is_non_dumpable_a_subreaper_and_says_so_once(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", _FALLBACK], capture_output=True, text=True, timeout=60,
                          env={**os.environ, CAP: Level.NONE.value}, cwd=Path(__file__).resolve().parents[2])
    assert json.loads(done.stdout) == {"dumpable": 0, "subreaper": 1}
    told = [line for line in done.stderr.splitlines() if line.startswith("replio: ")]
    assert told == [
        "replio: REPLIO_CONFINE=none asks for no namespaces; the user's code (agents, environments, Python tools, "
        "commands, an importer's child) runs without namespaces: replio is non-dumpable (a process without "
        "CAP_SYS_PTRACE cannot read its environment in /proc; root's can) and a child subreaper (what left its "
        "session is killed when the run ends); not covered: the code sees every process and the filesystem as your "
        "user does, reads replio's key when run as root, and what it starts may live until the run ends. Install "
        "bubblewrap (apt-get install bubblewrap) to confine it."], done.stderr
