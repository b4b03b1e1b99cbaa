"""Recording and replay of provider HTTP as vcrpy cassettes; the only place vcrpy is used.

`modes` (record modes), `serializer` (readable YAML), `scrub` (secrets), `transport`
(a per-fixture httpx transport bound to one cassette), `store` (paths, atomic writes),
`session` (the per-fixture glue the runner plugs in), `network` (no sockets on replay).
"""
