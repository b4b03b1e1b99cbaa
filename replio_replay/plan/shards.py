"""Shards: a stable partition of fixture ids into N parts, so N CI jobs run one suite between them; pure.

A fixture belongs to shard `int(sha256(id).hexdigest(), 16) % N + 1`: its shard depends on its
id and N alone, not on the other fixtures or their order, so adding or removing a fixture moves
no other one (changing N moves most). Every trial, provider and tool set of a fixture goes to
its shard, so the shards' results merge back into the whole run (`merging`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from .._runtime.wording import plural
from ..errors import UsageError

__all__ = ["Shard", "shard_of"]

_SPEC = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


def shard_of(fixture_id: str, count: int) -> int:
    """The shard (1-based, of `count`) that `fixture_id` belongs to."""
    digest = hashlib.sha256(fixture_id.encode("utf-8")).hexdigest()
    return int(digest, 16) % count + 1


@dataclass(frozen=True)
class Shard:
    """Shard `index` of `count` (1-based, as `--shard 2/4` spells it)."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str, flag: str = "--shard") -> Shard:
        """`I/N` with 1 <= I <= N; a UsageError saying what `flag` expects otherwise."""
        found = _SPEC.fullmatch(text)
        if found is None:
            raise UsageError(f"{flag} {text!r} is not a shard: give I/N, the shard I of N, with 1 <= I <= N (e.g. 2/4)")
        index, count = int(found[1]), int(found[2])
        if count < 1:
            raise UsageError(f"{flag} {text!r} is not a shard: N, the number of shards, must be at least 1 (e.g. 1/4)")
        if not 1 <= index <= count:
            raise UsageError(f"{flag} {text!r} is not a shard: I must be between 1 and {count} (e.g. 1/{count})")
        return cls(index, count)

    def holds(self, fixture_id: str) -> bool:
        """Whether `fixture_id` belongs to this shard."""
        return shard_of(fixture_id, self.count) == self.index

    def narrow(self, ids: Sequence[str]) -> tuple[list[str], str]:
        """The ids of `ids` (the selection) this shard holds, in their order, and a line saying so:
        an empty shard is not an error, the line says there is nothing to run."""
        kept = [i for i in ids if self.holds(i)]
        of = f"of the {plural(len(ids), 'fixture')} selected"
        if not kept:
            return kept, f"--shard {self}: none {of} falls in this shard; nothing to run"
        return kept, f"--shard {self}: running {len(kept):,} {of}"

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"
