"""The child process of an agent declared as ``{"python": "PATH.py:function"}``.

``python -m replio_replay.agents.pychild FILE FUNCTION`` imports the file (its folder first on
``sys.path``) and calls the function with each user message (`protocol.agent_messages`), in this
one process, so module state carries over between the turns of a conversation; a coroutine
function runs on one event loop kept for all of them. Each answer goes back with
`protocol.reply`; one that raises `protocol.Truncated` (it stopped at a step limit of its own) is
answered as cut short, and the conversation ends. A function that raises anything else, or returns something other than a str, ends the child
with exit status 1 and the reason on standard error, which replio reports.
"""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import sys
import traceback
from pathlib import Path
from typing import Any

from .protocol import Truncated, agent_messages, reply


def _load(file: str, function: str) -> Any:
    path = Path(file)
    sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{file} cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    found = getattr(module, function, None)
    if not callable(found):
        raise AttributeError(f"{path.name} has no function {function!r}")
    return found


def main(argv: list[str]) -> int:
    file, function = argv
    try:
        run = _load(file, function)
    except BaseException as exc:  # the user's module: whatever it raises is reported, never a hang
        traceback.print_exc()
        print(f"{Path(file).name}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    loop = asyncio.new_event_loop()
    try:
        for message in agent_messages():
            try:
                answer = run(message)
                if inspect.isawaitable(answer):
                    answer = loop.run_until_complete(answer)
            except Truncated as cut:
                reply(cut.answer, truncated=True)
                return 0
            if not isinstance(answer, str):
                print(f"{Path(file).name}:{function} returned a {type(answer).__name__}, not a str", file=sys.stderr)
                return 1
            reply(answer)
    except Exception as exc:
        traceback.print_exc()
        print(f"{Path(file).name}:{function}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    finally:
        loop.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
