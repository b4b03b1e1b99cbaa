"""The fork server and a fixture's child (tools/child.py, tools/childmain.py): described once, restarted
after a death, every request bounded, a stopped child stopped for good, values crossing as JSON."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from replio_replay._runtime.deadline import Interrupted
from replio_replay.errors import ToolSetError, UserCodeError
from replio_replay.tools import child as child_module
from replio_replay.tools.base import ToolContext
from replio_replay.tools.child import ForkServer
from replio_replay.tools.environment import build
from replio_replay.tools.permissions import Permissions
from replio_replay.tools.resolve import resolve_toolset
from replio_replay.tools.sandbox import Sandbox
from replio_replay.tools.setfile import load_chain
from replio_replay.tools.toolbox import Toolbox
from replio_replay.tools.toolset import ToolSet
from tests.helpers import write_json
from tests.support.environments import write_module
from tests.support.llm_server import LLMServer, Reply
from tests.support.processes import alive, ended, host_pid

ODD = '''
import os
import time


class Odd:
    """Methods whose answers test the line to replio."""

    def echo(self, text: str) -> str:
        """Say `text` back."""
        return text

    def number(self, value: float) -> float:
        """Say `value` back, as a number."""
        return value

    def nan(self) -> float:
        """Not a number."""
        return float("nan")

    def big(self, size: int) -> str:
        """`size` characters."""
        return "x" * size

    def pid(self) -> str:
        """The child's PID namespace and process id there."""
        return f"{os.readlink('/proc/self/ns/pid')} {os.getpid()}"

    def keys(self) -> list:
        """The child's environment variables."""
        return sorted(os.environ)

    def nap(self, seconds: float) -> str:
        """Sleep."""
        time.sleep(seconds)
        return "woke"
'''


def _toolset(tmp_path: Path, server: ForkServer | None = None, **environments: str) -> ToolSet:
    write_module(tmp_path / "odd.py", ODD)
    decls = {name: {"python": python} for name, python in (environments or {"odd": "odd.py:Odd"}).items()}
    return resolve_toolset("default", load_chain(write_json(tmp_path / "tools.json", {"environments": decls})), [],
                           python=server)


def _toolbox(toolset: ToolSet, timeout: float = 10, cancel: threading.Event | None = None) -> Toolbox:
    child = toolset.python.child(Path(os.devnull), timeout, cancel=cancel)
    build(toolset.environments, child, timeout)
    return Toolbox(ToolContext(Sandbox(Path(os.devnull)), timeout=timeout, cancel=cancel, child=child),
                   Permissions.for_fixture({}, []), toolset)


def test_values_cross_as_json_and_nan_is_refused_both_ways(tmp_path: Path) -> None:
    box = _toolbox(_toolset(tmp_path))
    assert box.call("echo", {"text": "é \ud800 \n"}) == "é \ufffd \n"  # a lone surrogate crosses as its escape: U+FFFD
    assert box.call("number", {"value": 1.5}) == "1.5"
    assert box.call("nan", {}) == ("Error: the tool returned a value JSON cannot hold (NaN, Infinity or a cycle); "
                                   "return numbers JSON can write, or text saying what it means")
    assert box.call("number", {"value": float("inf")}) == (
        "Error: invalid arguments for number: NaN and Infinity are no JSON values; pass numbers JSON can write")
    assert box.call("echo", {"text": "still here"}) == "still here"


def test_each_fixture_has_a_child_of_its_own_and_closing_it_ends_it(tmp_path: Path) -> None:
    toolset = _toolset(tmp_path)
    first, second = _toolbox(toolset), _toolbox(toolset)
    pids = [host_pid(first.call("pid", {})), host_pid(second.call("pid", {}))]
    assert None not in pids and pids[0] != pids[1] and os.getpid() not in pids
    assert first.ctx.child is not None
    first.ctx.child.close()
    assert ended(pids[0]) and alive(pids[1])  # type: ignore[arg-type]
    toolset.python.close()
    assert ended(pids[1])  # type: ignore[arg-type]


def test_the_child_has_no_key_of_replios_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-the-child-0123456789")
    keys = _toolbox(_toolset(tmp_path)).call("keys", {})
    assert "PATH" in keys and "OPENAI_API_KEY" not in keys


def test_an_answer_over_the_cap_stops_the_child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(child_module, "MESSAGE_CAP", 10_000)
    box = _toolbox(_toolset(tmp_path))
    assert box.call("big", {"size": 100}) == "x" * 100
    with pytest.raises(UserCodeError, match=r"^environment Odd: big answered with more than 10,000 bytes; stopped$"):
        box.call("big", {"size": 50_000})


def test_the_runs_cancel_event_interrupts_a_call_and_kills_the_child(tmp_path: Path) -> None:
    cancel = threading.Event()
    box = _toolbox(_toolset(tmp_path), cancel=cancel)
    pid = host_pid(box.call("pid", {}))
    assert pid is not None
    threading.Timer(0.3, cancel.set).start()
    assert box.call("nap", {"seconds": 60}) == "Error: the run was interrupted"
    assert ended(pid)
    assert box.ctx.child is not None and box.ctx.child.stopped == "the run was interrupted"
    with pytest.raises(Interrupted):
        _toolbox(_toolset(tmp_path / "again"), cancel=cancel)  # nothing starts once the run is interrupted


def test_a_class_is_described_once_per_server_and_a_problem_too(tmp_path: Path) -> None:
    server = ForkServer()
    first = _toolset(tmp_path, server)
    again = _toolset(tmp_path, server)
    assert first.environments["odd"].unit == again.environments["odd"].unit
    write_module(tmp_path / "bad.py", "raise RuntimeError('once')\n")
    for _ in range(2):
        with pytest.raises(ToolSetError, match="failed: RuntimeError: once; fix the module"):
            _toolset(tmp_path, server, bad="bad.py:Bad")


def test_a_module_ending_the_server_is_named_and_the_server_starts_again_with_what_it_had(tmp_path: Path) -> None:
    server = ForkServer()
    toolset = _toolset(tmp_path, server)
    write_module(tmp_path / "exits.py", "import os\n\nos._exit(7)\n")
    with pytest.raises(ToolSetError, match=r"environments\.x\.python: loading it ended its process \(exit status 7\); "
                                           "fix the module$"):
        _toolset(tmp_path, server, x="exits.py:X")
    assert _toolbox(toolset).call("echo", {"text": "back"}) == "back"  # a new server, told what the last one had


def test_a_module_that_never_finishes_importing_is_named_after_the_load_timeout(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(child_module, "LOAD_TIMEOUT", 1.0)
    write_module(tmp_path / "stuck.py", "import time\n\ntime.sleep(600)\n")
    with pytest.raises(ToolSetError, match=r"environments\.s\.python: loading it took longer than 1 s; stopped$"):
        _toolset(tmp_path, s="stuck.py:S")


FETCH = '''
def fetch(url: str, ctx) -> str:
    """Fetch `url` with the context's client."""
    response = ctx.http.get(url)
    return f"{response.status_code} {response.text}"
'''


def test_ctx_http_in_the_child_is_replios_client_checked_and_recorded_there(tmp_path: Path,
                                                                            llm_server: LLMServer) -> None:
    llm_server.replies.append(Reply(200, json={"order": "A-1042"}))
    write_module(tmp_path / "fetch.py", FETCH)
    toolset = resolve_toolset("default", load_chain(write_json(tmp_path / "tools.json", {
        "tools": {"fetch": {"python": "fetch.py:fetch"}}})), [])
    assert toolset.get("fetch").touches_worktree  # type: ignore[union-attr]

    def box(allow: tuple[str, ...]) -> Toolbox:
        child = toolset.python.child(tmp_path, 10, web_allow=allow)
        return Toolbox(ToolContext(Sandbox(tmp_path), timeout=10, web_allow=allow, child=child),
                       Permissions.for_fixture({}, []), toolset)

    url = f"{llm_server.url}/orders/A-1042"
    assert box(("127.0.0.1",)).call("fetch", {"url": url}) == '200 {"order": "A-1042"}'
    assert [seen.path for seen in llm_server.requests] == ["/orders/A-1042"]
    refused = box(()).call("fetch", {"url": url})
    assert refused.startswith(f"Error: refused to fetch {url}: 127.0.0.1 is ")
    assert len(llm_server.requests) == 1


def test_a_fork_server_killed_between_fixtures_is_started_again_for_the_next(tmp_path: Path) -> None:
    import signal

    toolset = _toolset(tmp_path)
    first = _toolbox(toolset)
    assert first.call("echo", {"text": "one"}) == "one"
    server = toolset.python._proc
    assert server is not None
    os.kill(server.pid, signal.SIGKILL)
    server.wait()
    assert _toolbox(toolset).call("echo", {"text": "two"}) == "two"


POOLED = '''
from concurrent.futures import ThreadPoolExecutor

_POOL = ThreadPoolExecutor(2)
_POOL.submit(print, "warmed up").result()


class Pooled:
    """Its work goes to the pool made at import."""

    def square(self, n: int) -> int:
        """`n` squared, worked out on the pool."""
        return _POOL.submit(lambda: n * n).result()
'''


def test_a_module_that_leaves_threads_running_at_import_is_named_and_the_server_goes_on_without_it(
        tmp_path: Path) -> None:
    server = ForkServer()
    toolset = _toolset(tmp_path, server)
    write_module(tmp_path / "pooled.py", POOLED)
    with pytest.raises(ToolSetError, match=r"environments\.p\.python: loading pooled\.py:Pooled started threads at "
                                           r"import \(ThreadPoolExecutor-0_0\) that still run; each fixture's "
                                           r"process is forked .* not at import$"):
        _toolset(tmp_path, server, p="pooled.py:Pooled")
    assert _toolbox(toolset).call("echo", {"text": "fine"}) == "fine"  # forked from a server without the threads


FORGER = '''
import json
import os
import stat


def _to_replio(line: bytes) -> None:
    for fd in map(int, os.listdir("/proc/self/fd")):
        try:
            if stat.S_ISSOCK(os.fstat(fd).st_mode):
                os.write(fd, line)
        except OSError:
            pass


class Forger:
    """Methods that write onto the socket to replio."""

    def garble(self) -> str:
        """A line that is not JSON."""
        _to_replio(b"hello replio\\n")
        return "done"

    def shape(self) -> str:
        """JSON, but no answer replio knows."""
        _to_replio(json.dumps({"status": 0}).encode() + b"\\n")
        return "done"

    def forge(self) -> str:
        """An answer of the right shape, before its own."""
        _to_replio(json.dumps({"result": "forged"}).encode() + b"\\n")
        return "real"

    def echo(self, text: str) -> str:
        """Say `text` back."""
        return text

    def sockets(self) -> str:
        """How many sockets this process holds."""
        import stat
        return str(sum(1 for fd in map(int, os.listdir("/proc/self/fd"))
                       if _is_socket(fd, stat)))


def _is_socket(fd, stat):
    try:
        return stat.S_ISSOCK(os.fstat(fd).st_mode)
    except OSError:
        return False
'''


@pytest.mark.parametrize(("method", "sent"), [("garble", "a line that is not JSON: b'hello replio'"),
                                             ("shape", "a line that is no answer to a 'call' request: "
                                                       "b'{\"status\": 0}'")])
def test_a_line_the_projects_code_writes_to_replio_stops_its_child_named(tmp_path: Path, method: str,
                                                                         sent: str) -> None:
    write_module(tmp_path / "forger.py", FORGER)
    box = _toolbox(_toolset(tmp_path, f="forger.py:Forger"))
    with pytest.raises(UserCodeError) as raised:
        box.call(method, {})
    assert str(raised.value) == (f"environment Forger: {method}: its process sent {sent}, which is not replio's "
                                 "protocol: the project's code wrote onto the socket to replio, so nothing more it "
                                 "says can be trusted; stopped")
    with pytest.raises(UserCodeError, match="its process sent"):
        box.call("echo", {"text": "again"})  # stopped for good


def test_a_fixtures_child_holds_its_own_line_to_replio_and_no_other_socket(tmp_path: Path) -> None:
    write_module(tmp_path / "forger.py", FORGER)
    box = _toolbox(_toolset(tmp_path, f="forger.py:Forger"))
    # not the fork server's line too (a socket closed while the server's reader of it lived stayed open)
    assert box.call("sockets", {}) == "1"


def test_an_answer_forged_before_the_real_one_is_caught_at_once(tmp_path: Path) -> None:
    write_module(tmp_path / "forger.py", FORGER)
    box = _toolbox(_toolset(tmp_path, f="forger.py:Forger"))
    # of the answer's shape, but without the request's number: never taken for the answer
    with pytest.raises(UserCodeError, match=r"forge: its process sent a line that is no answer to a 'call' request: "
                                            r"b'\{\"result\": \"forged\"\}'"):
        box.call("forge", {})
    with pytest.raises(UserCodeError, match="its process sent"):
        box.call("echo", {"text": "next"})  # stopped for good


def test_a_module_writing_to_replio_at_import_is_named_and_the_server_starts_again(tmp_path: Path) -> None:
    server = ForkServer()
    toolset = _toolset(tmp_path, server)
    noisy = FORGER.replace("class Forger:", '_to_replio(json.dumps({"pid": 1}).encode() + b"\\n")\n\n\nclass Forger:')
    write_module(tmp_path / "noisy.py", noisy)
    with pytest.raises(ToolSetError, match=r"environments\.n\.python: loading it sent a line that is no answer to a "
                                           r"'describe' request: b'\{\"pid\": 1\}' onto the socket to replio"):
        _toolset(tmp_path, server, n="noisy.py:Forger")
    assert _toolbox(toolset).call("echo", {"text": "back"}) == "back"
