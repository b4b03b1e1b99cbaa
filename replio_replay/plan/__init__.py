"""Planning a run: settings (flags > env > config > defaults), shards, the last failed fixtures,
`list`'s answer (what a run would run) and what each fixture is offered of its tool set (`offer`).

Import from those modules: this package imports nothing.
"""
