"""The user's agent as a child process: started per fixture, spoken to, bounded, ended with all it spawned.

`AgentProcess` starts the agent's argv in the fixture's worktree, confined as all the user's code
is (`_runtime.confine`: under bubblewrap, in a PID namespace of its own, so it sees neither
replio's processes, whose environment holds the key, nor another fixture's agent and relay; the
worktree and its ``HOME`` writable, its own files readable, the network shared, so the relay on
127.0.0.1 answers it), with the environment `agent_env` builds from scratch: the relay's URLs
under every SDK's variable, placeholder keys, a throwaway ``HOME``, and never a key of replio's
environment. For one task it writes the task on standard input and closes it; its standard
output is the answer. In a conversation each `ask` writes one ``{"user": ...}`` line and waits for
one ``{"answer": ...}`` line (other lines on standard output are the agent's own noise and are
skipped); an answer may say the agent stopped at a step limit of its own (`protocol.reply`). Every wait is bounded by the agent's `timeout`, for the whole fixture, and by the run's
cancel event; output past `STDOUT_CAP` stops it. Whatever happens, `close` kills what is left of
its group. Standard error is kept (its last `STDERR_CAP` bytes) for the result.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from .._runtime.confine import returncode, spawn
from .._runtime.deadline import Interrupted
from .._runtime.groups import end_group
from .._runtime.surrogates import clean_text
from ..errors import AgentError
from .decl import AgentSpec
from .protocol import CONVERSATION, TASK, truncated_answer

__all__ = ["PLACEHOLDER_KEY", "STDERR_CAP", "STDOUT_CAP", "AgentEnd", "AgentProcess", "Answer", "agent_env"]

#: Bytes of standard output an agent may write for one fixture.
STDOUT_CAP = 1024 * 1024
#: Bytes of standard error kept: the last ones, where the reason for a failure is.
STDERR_CAP = 16 * 1024
#: What every API key variable of the agent's environment holds: no key, and shorter than any secret.
PLACEHOLDER_KEY = "replio"
_STEP = 0.05
_DRAIN = 1.0
_CHUNK = 65536


def agent_env(base_url: str, spec: AgentSpec, home: Path, extra: Mapping[str, str]) -> dict[str, str]:
    """The agent's environment: what it needs to run, the relay under each SDK's variable, placeholder
    keys, `extra` (the fixture's task or conversation flag) and the declaration's own `env`."""
    env = {"PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"), "HOME": str(home),
           "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    for name in ("LANG", "LC_ALL", "TZ", "VIRTUAL_ENV", "NODE_PATH", "SSL_CERT_FILE", "SSL_CERT_DIR"):
        if name in os.environ:
            env[name] = os.environ[name]
    relay = {
        "REPLIO_BASE_URL": base_url,
        "REPLIO_TOOLS_URL": f"{base_url}/replio/tools",  # the fixture's tools, run by replio (`agents.tools`)
        "OPENAI_BASE_URL": f"{base_url}/v1",
        "ANTHROPIC_BASE_URL": base_url,
        "GOOGLE_GEMINI_BASE_URL": base_url,
        "GEMINI_BASE_URL": f"{base_url}/v1beta",
        "OLLAMA_HOST": base_url,
        "NO_PROXY": "127.0.0.1,localhost",
        "OPENAI_AGENTS_DISABLE_TRACING": "1",  # the OpenAI Agents SDK would send its traces to OpenAI
    }
    keys = dict.fromkeys(("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"),
                         PLACEHOLDER_KEY)
    return {**env, **relay, **keys, **extra, **dict(spec.env)}


@dataclass(frozen=True)
class Answer:
    """One answer of the agent, and whether it says it stopped at a step limit of its own."""

    text: str
    truncated: bool = False


@dataclass(frozen=True)
class AgentEnd:
    """How the agent's process ended: its exit status (None: stopped) and the end of its standard error."""

    returncode: int | None
    stderr: str


class AgentProcess:
    """One fixture's agent process (see the module docstring); use as a context manager."""

    def __init__(self, spec: AgentSpec, *, cwd: Path, base_url: str, task: str | None,
                 cancel: threading.Event | None = None) -> None:
        self.spec = spec
        self.cancel = cancel
        self.conversation = task is None
        self.deadline = time.monotonic() + spec.timeout
        self.home = Path(tempfile.mkdtemp(prefix="replio-agent-home-"))
        extra = {CONVERSATION: "1"} if task is None else {TASK: task}
        try:
            self.proc = spawn(spec.argv, cwd=cwd, env=agent_env(base_url, spec, self.home, extra),
                              readable=_folders_named(spec.argv), writable=[self.home, *spec.writable],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as exc:
            shutil.rmtree(self.home, ignore_errors=True)
            raise AgentError(f"agent {spec.shown!r} could not start: {exc.strerror or exc}") from None
        self.out = bytearray()
        self.err = bytearray()
        self.over = threading.Event()
        self.answers: queue.SimpleQueue[Answer | None] = queue.SimpleQueue()  # None: standard output ended
        self.inbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()  # None: close standard input
        self.exited = threading.Event()  # set the moment the process exits (a thread waits on it)
        self.threads = [threading.Thread(target=self._read_out, daemon=True),
                        threading.Thread(target=self._read_err, daemon=True),
                        threading.Thread(target=self._write, daemon=True),
                        threading.Thread(target=self._reap, daemon=True)]
        for thread in self.threads:
            thread.start()
        if task is not None:
            self.inbox.put(task.encode("utf-8"))
            self.inbox.put(None)

    def __enter__(self) -> AgentProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def ask(self, message: str) -> Answer:
        """Send one user message of a conversation and return the agent's answer to it."""
        self.inbox.put((json.dumps({"user": message}, ensure_ascii=False) + "\n").encode("utf-8"))
        while True:
            self._check()
            try:
                answer = self.answers.get(timeout=_STEP)
            except queue.Empty:
                continue
            if answer is None:
                self.wait()
                raise self._failure("ended its standard output before answering")
            return answer

    def answer(self) -> Answer:
        """The answer of a one-task agent: its standard output once it exited 0 (trimmed), or the
        answer of the one line it wrote saying it was cut short (`protocol.reply`)."""
        self.wait()
        text = bytes(self.out).decode("utf-8", "replace").strip()
        cut = truncated_answer(text)
        return Answer(text) if cut is None else Answer(cut, truncated=True)

    def end(self) -> None:
        """End a conversation: close standard input and wait for the agent to exit 0."""
        self.inbox.put(None)
        self.wait()

    def wait(self) -> None:
        """Wait for the process to exit; AgentError unless it exits 0 within its time."""
        while not self.exited.wait(_STEP):
            self._check()
        self._drain()
        if self.over.is_set():
            raise AgentError(f"agent {self.spec.shown!r} wrote more than {STDOUT_CAP // 1024} KiB on standard "
                             "output; stopped")
        if returncode(self.proc) != 0:
            raise self._failure("")

    def close(self) -> AgentEnd:
        """Kill what is left of the agent's group and its marked processes; how it ended."""
        end_group(self.proc.pid)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        self.inbox.put(None)
        self._drain()
        shutil.rmtree(self.home, ignore_errors=True)
        return AgentEnd(returncode(self.proc), self.stderr)

    @property
    def stderr(self) -> str:
        return bytes(self.err).decode("utf-8", "replace")

    def _check(self) -> None:
        """Raise when the run is interrupted, the agent is out of time, or its output went over the cap."""
        if self.cancel is not None and self.cancel.is_set():
            end_group(self.proc.pid)
            raise Interrupted()
        if self.over.is_set():
            end_group(self.proc.pid)
            raise AgentError(f"agent {self.spec.shown!r} wrote more than {STDOUT_CAP // 1024} KiB on standard "
                             "output; stopped")
        if time.monotonic() >= self.deadline:
            end_group(self.proc.pid)
            raise AgentError(f"agent {self.spec.shown!r} took longer than {self.spec.timeout:g} s; stopped "
                             "(raise its \"timeout\")")

    def _failure(self, what: str) -> AgentError:
        code = returncode(self.proc)
        last = next((line.strip() for line in reversed(self.stderr.splitlines()) if line.strip()), "")
        said = f": {last[:300]}" if last else " (nothing on standard error)"
        if code is None:
            how = "stopped"
        elif code < 0:
            how = f"was killed by signal {-code}"
        else:
            how = f"exited {code}"
        return AgentError(f"agent {how}{' and ' + what if what else ''}{said}")

    def _drain(self) -> None:
        deadline = time.monotonic() + _DRAIN
        for thread in self.threads[:2]:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))

    def _read_out(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        with stream:
            if self.conversation:
                self._read_lines(stream)
            else:
                _read_capped(stream, self.out, STDOUT_CAP, self.over)
        self.answers.put(None)

    def _read_lines(self, stream: IO[bytes]) -> None:
        while True:
            line = stream.readline(STDOUT_CAP - len(self.out) + 1)
            if not line:
                return
            self.out += line
            if len(self.out) > STDOUT_CAP:
                self.over.set()
                return
            answer = _answer_of(line)
            if answer is not None:
                self.answers.put(answer)

    def _read_err(self) -> None:
        stream = self.proc.stderr
        assert stream is not None
        with stream:
            while chunk := stream.read1(_CHUNK):  # type: ignore[attr-defined]
                self.err += chunk
                if len(self.err) > STDERR_CAP:
                    del self.err[:len(self.err) - STDERR_CAP]

    def _reap(self) -> None:
        self.proc.wait()
        self.exited.set()

    def _write(self) -> None:
        stream = self.proc.stdin
        assert stream is not None
        with contextlib.suppress(OSError, ValueError):  # the agent exited, or does not read its input
            while (data := self.inbox.get()) is not None:
                stream.write(data)
                stream.flush()
        with contextlib.suppress(OSError, ValueError):
            stream.close()


def _folders_named(argv: tuple[str, ...]) -> list[Path]:
    """The folders of the files the agent's argv names (absolute, as resolving made them): its
    code and what sits beside it (modules, ``node_modules``), kept readable under confinement."""
    return [Path(arg).parent for arg in argv if os.path.isabs(arg) and os.path.isfile(arg)]


def _answer_of(line: bytes) -> Answer | None:
    """The answer a `{"answer": "..."}` line holds (`"truncated": true`: cut short); None for any other line."""
    try:
        data = json.loads(line)
    except ValueError:
        return None
    answer = data.get("answer") if isinstance(data, dict) else None
    return Answer(clean_text(answer), data.get("truncated") is True) if isinstance(answer, str) else None


def _read_capped(stream: IO[bytes], kept: bytearray, cap: int, over: threading.Event) -> None:
    while chunk := stream.read1(_CHUNK):  # type: ignore[attr-defined]
        room = cap - len(kept)
        kept += chunk[:room]
        if len(chunk) > room:
            over.set()
            return
