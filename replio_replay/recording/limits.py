"""How big and how deep a cassette may be: the bounds the YAML loader holds a document to, and the
serializer a recorded body (kept apart from the loader, so checking a body needs no YAML)."""

from __future__ import annotations

from ..jsonin import MAX_DEPTH as INPUT_DEPTH

__all__ = ["MAX_DEPTH", "MAX_EXPANDED"]

#: The most values a document may expand to once every alias is followed. The cassettes in
#: this repository weigh at most about 11,500. A conversation resends its earlier messages and
#: the tool list with every request, so the expanded size grows with the square of its turns:
#: 80 turns with 2 KB of tool output each weigh 470,000 (7 MB of JSON), and this bound lets
#: such a recording run to about 170 turns (the default turn limit is 12). Past it, a file is
#: not a recording but an alias bomb (nine levels of ten aliases are a billion values); at it,
#: what is written out holds at most about 32 MB of text, and encoding it peaks near twice that.
MAX_EXPANDED = 2_000_000

#: The deepest nesting accepted, as for every input (recorded bodies nest about 15 levels): it
#: keeps every later recursive walk of the data (JSON encoding, request drift) far from Python's limit.
MAX_DEPTH = INPUT_DEPTH
