"""Record modes, with vcrpy's meanings, and the default chosen from the environment."""

from __future__ import annotations

from enum import Enum

from ..errors import UsageError

__all__ = ["RecordMode", "default_mode", "parse_mode", "record_flags", "rejudge_flags"]


class RecordMode(str, Enum):
    """When a cassette is read and when it is written.

    `none`: replay only, never touch the network. `once`: replay a cassette that exists,
    record one that does not. `new_episodes`: replay what is recorded, record requests
    beyond it. `all`: record everything again. `stale`: record again the cassettes whose fixture
    or tool set changed since they were recorded (`recording.staleness`), record the missing
    ones, replay the rest, and record again those whose replay showed request drift
    (`suite.execute`).
    """

    NONE = "none"
    ONCE = "once"
    NEW_EPISODES = "new_episodes"
    ALL = "all"
    STALE = "stale"


def parse_mode(value: str | RecordMode, *, source: str = "--record-mode") -> RecordMode:
    """The mode named by `value`; a typo is an error listing the valid modes."""
    try:
        return RecordMode(value)
    except ValueError:
        valid = ", ".join(m.value for m in RecordMode)
        raise UsageError(f"{source}: {value!r} is not a record mode; valid modes: {valid}") from None


def default_mode(ci: bool) -> RecordMode:
    """`none` on CI (nothing may be recorded there by accident), `once` elsewhere."""
    return RecordMode.NONE if ci else RecordMode.ONCE


def record_flags(mode: RecordMode, fixture_id: str, tools: str = "default") -> str:
    """The `run` flags that record one fixture (of a tool set other than the default) in `mode`."""
    flags = f"--record-mode {mode.value} --fixture {fixture_id}"
    return flags if tools == "default" else f"{flags} --tools {tools}"


def rejudge_flags(fixture_id: str, tools: str = "default") -> str:
    """The `run` flags that ask one fixture's judge again over its recorded run, recording the answers."""
    flags = f"--rejudge --fixture {fixture_id}"
    return flags if tools == "default" else f"{flags} --tools {tools}"
