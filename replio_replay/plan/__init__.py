"""Planning a run: settings (flags > env > config > defaults), shards, the last failed fixtures,
and `list`'s answer (what a run would run).

Import from those modules: this package imports nothing.
"""
