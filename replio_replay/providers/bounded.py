"""One fixture's view of a provider's pooled connection: every request bounded and interruptible.

A request through `BoundedTransport` ends within the provider's `timeout` for the whole
exchange (headers and body, however slowly the server sends them: httpx's own timeouts bound
each read, not the sum), is refused when its body grows past `max_bytes`, and is abandoned at
once when the run is interrupted. Replayed requests never reach it: the cassette answers them.
"""

from __future__ import annotations

import threading

import httpx

from .._runtime.deadline import TimedOut, run_until

__all__ = ["DEFAULT_MAX_RESPONSE_BYTES", "BoundedTransport", "ResponseTooLarge"]

#: The largest response body a provider may send, unless the config says otherwise.
DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024


class ResponseTooLarge(httpx.TransportError):
    """The response body grew past the allowed size; it was not read further."""


class BoundedTransport(httpx.BaseTransport):
    """Sends through `inner`, within `timeout` seconds per request and `max_bytes` per body."""

    def __init__(
        self,
        inner: httpx.BaseTransport,
        *,
        timeout: float,
        max_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        cancel: threading.Event | None = None,
    ) -> None:
        self.inner = inner
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.cancel = cancel

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        held: dict[str, httpx.Response] = {}

        def send() -> httpx.Response:
            response = self.inner.handle_request(request)
            held["response"] = response
            try:
                body = self._read(response, request)
            finally:
                response.close()
            return httpx.Response(response.status_code, headers=response.headers, content=body,
                                  extensions=response.extensions, request=request)

        def abandon() -> None:  # unblocks the reading thread when the body is what is slow
            response = held.get("response")
            if response is not None:
                response.close()

        try:
            return run_until(send, timeout=self.timeout, cancel=self.cancel, on_abandon=abandon)
        except TimedOut:
            raise httpx.ReadTimeout(f"no complete response within {self.timeout:g} s", request=request) from None

    def _read(self, response: httpx.Response, request: httpx.Request) -> bytes:
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_raw():
            size += len(chunk)
            if size > self.max_bytes:
                raise ResponseTooLarge(
                    f"the response body is larger than {self.max_bytes:,} bytes", request=request
                )
            chunks.append(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        """The pooled transport belongs to the provider, which closes it at the end of the run."""
