"""What a model is told of an MCP tool call, pure: a `tools/call` result as text.

Text blocks are joined; structured content is written as canonical JSON; images, audio and
resources are summarised (`[image image/png, 2,341 bytes]`), never pasted in; an `isError`
result is an ``Error:`` result. The input is the protocol's JSON, as the server sent it or as a
cassette keeps it (media as its size, see `recording.recordable`): both read the same.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from ..._runtime.jsoncanon import canonical

__all__ = ["decoded_size", "result_text"]


def result_text(result: Any) -> str:
    """The text for the model; raises nothing, whatever the result's shape."""
    if not isinstance(result, dict):
        return f"Error: the MCP server answered with {type(result).__name__}, not a tool result"
    parts = [_block(b) for b in result.get("content") or [] if isinstance(b, dict)]
    structured = result.get("structuredContent")
    if structured is not None and not any(p for p in parts):
        parts.append(canonical(structured))
    text = "\n".join(p for p in parts if p)
    if result.get("isError"):
        return f"Error: {text or 'the tool failed and said nothing'}"
    return text


def _block(block: dict[str, Any]) -> str:
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        size = block["dataBytes"] if isinstance(block.get("dataBytes"), int) else decoded_size(block.get("data"))
        return f"[{kind} {block.get('mimeType', 'unknown type')}, {size:,} bytes]"
    if kind == "resource":
        resource = block.get("resource") or {}
        if isinstance(resource, dict) and isinstance(resource.get("text"), str):
            size = len(resource["text"].encode("utf-8"))
        elif isinstance(resource, dict) and isinstance(resource.get("blobBytes"), int):
            size = resource["blobBytes"]
        else:
            size = decoded_size(resource.get("blob") if isinstance(resource, dict) else None)
        uri = resource.get("uri", "?") if isinstance(resource, dict) else "?"
        mime = resource.get("mimeType") if isinstance(resource, dict) else None
        return f"[resource {uri}{f' {mime}' if mime else ''}, {size:,} bytes]"
    if kind == "resource_link":
        name = f" ({block['name']})" if block.get("name") else ""
        return f"[resource link {block.get('uri', '?')}{name}]"
    return f"[{kind or 'unknown'} content]"


def decoded_size(data: Any) -> int:
    """The size of base64 data once decoded."""
    if not isinstance(data, str):
        return 0
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return len(data)
