"""Golden traces: the canonical form of a result, the store (the only golden I/O), and drift."""
