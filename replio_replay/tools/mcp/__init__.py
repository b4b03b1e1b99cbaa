"""MCP servers as a source of tools: their configuration (`config`), what a call's result says to a
model (`convert`), what a cassette records of them (`recording`), and the bridge to the official
`mcp` SDK (`client`, the only module that imports it) and what its logging may say (`logs`). A fixture's MCP servers become tools in
`source`.

Import from those modules: this package imports nothing, so loading the config stays cheap.
"""
