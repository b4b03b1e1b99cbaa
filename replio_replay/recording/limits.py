"""How big and how deep a cassette may be: the bounds the YAML loader holds a document to, and the
serializer a recorded body (kept apart from the loader, so checking a body needs no YAML)."""

from __future__ import annotations

from .._runtime.jsonin import MAX_DEPTH as INPUT_DEPTH

__all__ = ["MAX_DEPTH", "MAX_EXPANDED"]

#: The most values a document may expand to once every alias is followed (a string weighs one
#: per 16 characters). The cassettes in this repository weigh at most about 11,500. A
#: conversation resends its earlier messages and the tool list with every request, so the
#: expanded size grows with the square of its turns: 30 turns each told 99 KB weigh 2,900,000
#: (46 MB of requests), and under the default limits (12 turns, 40 calls, 100,000 characters a
#: result) a recording weighs at most about 3,100,000. The recorder checks what it writes against
#: this bound, so a longer run is refused when it is recorded, never when it is replayed. Past
#: it, a file is not a recording but an alias bomb (nine levels of ten aliases are a billion
#: values); at it, what is written out holds at most about 64 MB of text, and loading peaks near
#: twice that.
MAX_EXPANDED = 4_000_000

#: The deepest nesting accepted, as for every input (recorded bodies nest about 15 levels): it
#: keeps every later recursive walk of the data (JSON encoding, request drift) far from Python's limit.
MAX_DEPTH = INPUT_DEPTH
