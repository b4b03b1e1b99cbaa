"""MCP servers as a tool source: configuration (`config`), result conversion (`convert`), the SDK
bridge (`client`, the only module that imports the official `mcp` SDK), and a fixture's MCP tools
served live, recorded, or replayed from its cassette (`session`).

Import from those modules: this package imports nothing, so loading the config stays cheap.
"""
