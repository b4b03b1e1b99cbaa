"""Renderers: each takes a finished result and only formats it (JSON, tables, JUnit, HTML)."""
