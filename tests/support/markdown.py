"""The code samples of the documentation's Markdown pages, with the `<!-- ... -->` marks above them.

A page is read as a list of `Block`s (a fenced sample, its language, the marks written on the
lines just above it) and `Mark`s standing alone (`<!-- docs-test: ... -->`). The marks the tests
act on:

- `<!-- file: PATH -->`: the sample is a file the reader writes; the page's run writes it there.
- `<!-- validate: fixture|config|tool-set -->`: the JSON sample is such a file, read by replio's model.
- `<!-- same-as: PATH -->`: the JSON sample holds what that file of the repository holds.
- `<!-- docs-test: empty folder -->`: the page's commands run in an empty folder, not a clone.
- `<!-- docs-test: stop the background commands -->`: what a `$ ... &` started is stopped here.
- `<!-- docs-test: each section apart -->`: the page's `## ` sections are independent; each runs in a
  clone of its own, as a test of its own.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

_FENCE = re.compile(r"```(\w*)$")
_MARK = re.compile(r"<!-- ([\w-]+): (.*?) -->$")


@dataclass
class Block:
    """A fenced code sample."""

    page: Path
    line: int
    lang: str
    text: str
    marks: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.page.name}:{self.line}"


@dataclass
class Mark:
    """A `<!-- docs-test: ... -->` line between samples."""

    what: str


def read_page(page: Path) -> list[Block | Mark]:
    """The samples and lone marks of `page`, in order."""
    lines = page.read_text(encoding="utf-8").split("\n")
    found: list[Block | Mark] = []
    marks: dict[str, str] = {}
    i = 0
    while i < len(lines):
        fence, mark = _FENCE.match(lines[i]), _MARK.match(lines[i])
        if fence:
            end = lines.index("```", i + 1)
            found.append(Block(page, i + 1, fence.group(1), "\n".join(lines[i + 1:end]) + "\n", marks))
            marks, i = {}, end + 1
            continue
        if mark and mark.group(1) == "docs-test":
            found.append(Mark(mark.group(2)))
        elif mark:
            marks = {**marks, mark.group(1): mark.group(2)}
        elif lines[i].strip():
            marks = {}
        i += 1
    return found


def commands(block: Block) -> list[str]:
    """The shell commands of a `sh` sample: continuation lines joined, comments dropped."""
    joined = re.sub(r"\\\n\s*", " ", block.text)
    return [line.split(" #", 1)[0].strip() for line in joined.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def replio_args(command: str) -> list[str] | None:
    """The arguments after `replio` when `command` (after `VAR=value` settings) runs it, else None."""
    words = shlex.split(command)
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", words[0]):
        words = words[1:]
    return words[1:] if words and words[0] == "replio" else None


def transcript(block: Block) -> list[tuple[str, str]]:
    """A `console` sample as (command, the output shown after it) pairs."""
    pairs: list[tuple[str, list[str]]] = []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            pairs.append((line[2:], []))
        else:
            assert pairs, f"{block}: a console sample starts with a `$ ` command"
            pairs[-1][1].append(line)
    return [(command, "".join(f"{line}\n" for line in out)) for command, out in pairs]
