"""Tools a model may call, each confined to the fixture's worktree and checked against permissions.

`base` (what a tool is), `sandbox` (the path sandbox), `permissions`, one module per tool
family (`files`, `search`, `shell`, `web`) and `registry` (the tool set and the toolbox).
Import from those modules: this package imports nothing, so loading `permissions` alone
stays cheap.
"""
