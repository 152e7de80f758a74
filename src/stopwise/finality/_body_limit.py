"""A request-body limit for the replay service: 413 beyond :data:`MAX_BODY_BYTES`.

The service's requests are a few hundred bytes (a write's ``value`` is at most 1,000 characters),
so a body past 64 KiB is refused before it is read: at once when its ``Content-Length`` says so,
and, for a chunked body without one, as soon as the bytes received pass the limit. Nothing past
the limit is kept in memory.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import HTTPException

__all__ = ["MAX_BODY_BYTES", "BodyLimit"]

MAX_BODY_BYTES = 64 * 1024
"""The largest request body the replay service reads (bytes); a larger one is answered with 413."""

_Scope = dict[str, Any]


def _detail(limit: int) -> str:
    return f"request body larger than {limit:,} bytes; the replay service reads at most that much"


class BodyLimit:
    """ASGI middleware: refuse a request body past ``limit`` bytes with 413, counting what arrives.

    Examples
    --------
    >>> from fastapi import FastAPI
    >>> app = FastAPI()
    >>> app.add_middleware(BodyLimit, limit=1024)
    """

    def __init__(self, app: Any, limit: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: _Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None:
            try:
                too_big = int(declared) > self.limit
            except ValueError:
                too_big = False  # the server refuses a malformed Content-Length itself
            if too_big:
                await self._refuse(send)
                return
        received = 0

        async def counted() -> Any:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    raise HTTPException(status_code=413, detail=_detail(self.limit))
            return message

        await self.app(scope, counted, send)

    async def _refuse(self, send: Any) -> None:
        body = json.dumps({"detail": _detail(self.limit)}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), (b"connection", b"close")]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})
