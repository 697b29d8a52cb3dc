"""What stands in front of the browser table's app: the ``Host`` check, the security
headers of every answer and the request-body limits (:class:`Guard`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from starlette.datastructures import MutableHeaders

from unolab.web.errors import Invalid
from unolab.web.settings import ServeConfig, host_of
from unolab.web.untrusted import json_text

__all__ = ["CONTENT_SECURITY_POLICY", "SECURITY_HEADERS", "Guard"]

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
"""The page loads its own script and style sheet and talks to its own API, nothing else."""

SECURITY_HEADERS: dict[str, str] = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
"""Headers of every answer: no framing, no sniffing, no referrer, no foreign content."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]


class Guard:
    """What stands in front of the app: the ``Host`` check, the security headers and the
    request-body limit.

    * A request whose ``Host`` is not a name of this server gets 400 (a page of another
      site that rebinds its DNS name to 127.0.0.1 must not read this server).
    * Every answer gets :data:`SECURITY_HEADERS`; every answer but the static files gets
      ``Cache-Control: no-store`` (games and runs are not for caches).
    * A body over ``config.max_body_bytes`` gets 413 before the app reads it; a body that
      is not UTF-8 text (UTF-16, a byte order mark) gets 422: every body the API takes is
      JSON, which is UTF-8 (RFC 8259).

    Attributes:
        app: The FastAPI app behind it (its ``state`` holds the games and the batcher).
    """

    def __init__(self, app: FastAPI, config: ServeConfig) -> None:
        self.app = app
        self.config = config
        self.limit = config.max_body_bytes
        self.trusted = config.trusted_hosts()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        if scope.get("path") == "/favicon.ico":
            # Browsers ask for /favicon.ico whatever the page links: answer with the static
            # icon rather than a 404 (which the browser's console reports as an error).
            scope = {**scope, "path": "/static/favicon.ico", "raw_path": b"/static/favicon.ico"}
        static = str(scope.get("path", "")).startswith("/static/")

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                out = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    out[name] = value
                if not static:
                    out["Cache-Control"] = "no-store"
            await send(message)

        raw_host = headers.get(b"host", b"").decode("latin-1")
        host = host_of(raw_host)
        if host is None or not self.config.accepts(host, self.trusted):
            detail = (
                f"this server does not answer to the host {raw_host[:80]!r}; open it by "
                f"the address it was started on (e.g. http://127.0.0.1:{self.config.port}/), "
                "or start it with --allowed-host NAME"
            )
            await _answer(send_with_headers, 400, detail)
            return
        declared = headers.get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await _answer(send_with_headers, 413, self._too_large())
            return
        chunks: list[bytes] = []
        size, more = 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.limit:
                await _answer(send_with_headers, 413, self._too_large())
                return
            more = message.get("more_body", False)
        body = b"".join(chunks)
        try:
            json_text(body, "the request body")  # every body the API takes is JSON
        except Invalid as err:
            await _answer(send_with_headers, Invalid.status, str(err))
            return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send_with_headers)

    def _too_large(self) -> str:
        return f"request body over the limit of {self.limit} bytes"


async def _answer(send: Send, status: int, detail: str) -> None:
    """Send ``{"detail": detail}`` with ``status``."""
    await JSONResponse({"detail": detail}, status_code=status)({"type": "http"}, _no_receive, send)


async def _no_receive() -> Message:
    return {"type": "http.disconnect"}
