"""Judging, pure: the result model (`results`), a fixture's declarative checks (`verifier`) and
the metrics of traces and trials (`metrics`).

Import from those modules: this package imports nothing.
"""
