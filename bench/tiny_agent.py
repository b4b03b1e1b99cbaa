"""The agent of budget 7 (`bench/run.py`): a tool loop over chat completions in a few lines.

It does what an agent replio runs does (the task from ``REPLIO_TASK``, else standard input; the
model at ``OPENAI_BASE_URL``; the answer on standard output) with the standard library alone
(`urllib`), so a run of many of them times replio, not an SDK's import. With ``--sdk`` it sends
the same requests through the official `openai` SDK instead, for comparison. Its tools are those
`bench/server.py`'s plan calls: `file_read` and `grep` over the working directory.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

MAX_STEPS = 6
TOOLS = [
    {"type": "function", "function": {
        "name": "file_read", "description": "Read a file of the working directory.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
    {"type": "function", "function": {
        "name": "grep", "description": "The lines of the working directory's files holding a text.",
        "parameters": {"type": "object", "properties": {"pattern": {"type": "string"}}, "required": ["pattern"]}}},
]


def file_read(path: str) -> str:
    return Path(path).read_text(encoding="utf-8")


def grep(pattern: str) -> str:
    return "\n".join(f"{file}:{number}:{line}" for file in sorted(Path().rglob("*")) if file.is_file()
                     for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1)
                     if pattern in line)


FUNCTIONS: dict[str, Callable[..., str]] = {"file_read": file_read, "grep": grep}


def call(name: str, arguments: str) -> str:
    try:
        return FUNCTIONS[name](**json.loads(arguments or "{}"))
    except Exception as exc:  # the model sees what went wrong
        return f"Error: {type(exc).__name__}: {exc}"


def urllib_model() -> Any:
    url = os.environ["OPENAI_BASE_URL"].rstrip("/") + "/chat/completions"
    headers = {"content-type": "application/json", "authorization": f"Bearer {os.environ.get('OPENAI_API_KEY', '')}"}

    def ask(messages: list[dict[str, Any]]) -> dict[str, Any]:
        data = json.dumps({"model": "bench", "messages": messages, "tools": TOOLS, "temperature": 0}).encode()
        with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=headers), timeout=60) as answer:
            return json.load(answer)["choices"][0]["message"]

    return ask


def sdk_model() -> Any:
    from openai import OpenAI

    client = OpenAI()

    def ask(messages: list[dict[str, Any]]) -> dict[str, Any]:
        response = client.chat.completions.create(model="bench", messages=messages, tools=TOOLS,  # type: ignore[arg-type]
                                                  temperature=0)
        return response.choices[0].message.model_dump(exclude_none=True)

    return ask


def main() -> None:
    ask = sdk_model() if "--sdk" in sys.argv[1:] else urllib_model()
    task = os.environ.get("REPLIO_TASK") or sys.stdin.read()
    messages: list[dict[str, Any]] = [{"role": "user", "content": task}]
    for _ in range(MAX_STEPS):
        message = ask(messages)
        messages.append(message)
        if not message.get("tool_calls"):
            print(message.get("content") or "", flush=True)
            return
        for tool_call in message["tool_calls"]:
            function = tool_call["function"]
            messages.append({"role": "tool", "tool_call_id": tool_call["id"],
                             "content": call(function["name"], function["arguments"])})
    print("", flush=True)


if __name__ == "__main__":
    main()
