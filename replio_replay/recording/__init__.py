"""Recording and replay of provider HTTP as vcrpy cassettes; the only place vcrpy is used.

`base` (the session interface the runner holds), `modes` (record modes), `cassette` (a vcrpy
`Cassette` built through vcrpy's registry, never patched in), `serializer` (readable YAML) over
`yamlcodec` (PyYAML, bounded), `scrub` (secrets), `transport` (a per-fixture httpx transport
bound to one cassette), `persister` (the atomic, secret-checking persister), `session` (the
per-fixture glue the runner plugs in), `network` (no sockets on replay).
"""
