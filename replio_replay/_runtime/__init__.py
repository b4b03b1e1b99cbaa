"""Process plumbing nobody outside the package needs: atomic writes, deadlines, process groups,
interrupts, worker threads, the environment snapshot, JSON in and canonical JSON out, regular
expressions, redaction, structural diffs and the words of messages (plurals, did-you-mean).

Import from those modules: this package imports nothing.
"""
