"""Process plumbing nobody outside the package needs: atomic writes, deadlines, process groups,
interrupts, worker threads, the environment snapshot, JSON in and canonical JSON out, regular
expressions, redaction (and the spellings of a secret it looks for), text every output can hold
(lone surrogates replaced), structural diffs, the words
of messages (plurals, did-you-mean, pydantic's errors), the `Problem` a broken input is reported
as, and the matcher language the fixture model, stub tools and the verifier all speak (so it sits
below each of them).

Import from those modules: this package imports nothing.
"""
