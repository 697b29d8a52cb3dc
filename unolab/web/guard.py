"""What guards the browser table: the errors its API answers with, the reading of data that
someone else may have written, and what stands in front of the app.

**Errors.** The API answers a refusal with a 4xx status (503 while the engine compiles) and a
one-line message.

**Untrusted data**: run folders, saved games, uploads.

Everything the server reads from disk or from a request is data, never code, and may be
hostile: a FIFO that blocks a reader forever, a file of gigabytes, JSON nested a hundred
thousand levels deep, a symbolic link to a file elsewhere on the server. The helpers here
read such data with bounds and answer every failure with one :class:`Invalid`
line that names the file as the browser knows it (a run id, a saved game id), never by its
path on the server.

**The guard.** What stands in front of the browser table's app: the ``Host`` check, the security
headers of every answer and the request-body limits (:class:`Guard`).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from pathlib import Path
from typing import Any, ClassVar

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from starlette.datastructures import MutableHeaders

from uno_env.files import UnreadableFileError, read_regular_file
from unolab.web.settings import ServeConfig, host_of

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "MAX_JSON_BYTES",
    "SECURITY_HEADERS",
    "ApiError",
    "Busy",
    "Conflict",
    "Forbidden",
    "Gone",
    "Guard",
    "Invalid",
    "NotFound",
    "NotReady",
    "NotStored",
    "inside",
    "is_regular",
    "json_text",
    "one_line",
    "parse_json",
    "read_bytes",
    "read_json",
]


class ApiError(Exception):
    """A request the server refuses; nothing was changed.

    Attributes:
        status: The HTTP status.
        headers: Headers the answer carries besides the usual ones.
    """

    status = 400
    headers: ClassVar[Mapping[str, str]] = {}


class NotFound(ApiError):
    """An unknown game, replay, run or agent id (404)."""

    status = 404


class Forbidden(ApiError):
    """A request of a seat at a table for several people without the seat's token, or with
    a token of no seat (403)."""

    status = 403


class Gone(ApiError):
    """A game that expired (idle past ``--idle-minutes``) or was closed to make room for a
    newer one (410); its finished hands are saved."""

    status = 410


class Conflict(ApiError):
    """A move that does not fit the game's moment: stale, out of turn, or a finished game (409)."""

    status = 409


class Invalid(ApiError):
    """A malformed or illegal move, bad settings, a file that is not a game (422)."""

    status = 422


class Busy(ApiError):
    """The cap on games held at once is reached (429)."""

    status = 429


class NotReady(ApiError):
    """The engine is still compiling on the first start of an install (503); try again."""

    status = 503
    headers: ClassVar[Mapping[str, str]] = {"Retry-After": "2"}


class NotStored(ApiError):
    """A move that could not be committed to the file of live games (a full disk, say): the
    game stands where it stood before the request (503); try again."""

    status = 503


MAX_JSON_BYTES = 16 * 2**20
"""The largest JSON file read whole (a run's config, a saved game): far above real ones."""

_BYTE_ORDER_MARKS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")
"""How UTF-8, UTF-16 LE and UTF-16 BE text may begin (UTF-32's begin as UTF-16's)."""

_MAX_DETAIL = 300
"""The longest message passed on from a parser (values from files can be huge)."""


def one_line(text: str, limit: int = _MAX_DETAIL) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def is_regular(path: Path) -> bool:
    """Whether ``path`` is (or links to) a regular file; never blocks, never raises."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def inside(path: Path, root: Path) -> bool:
    """Whether ``path``, with every symbolic link followed, lies under ``root`` (resolved)."""
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError, ValueError):  # a link loop, a NUL in the name
        return False


def read_bytes(path: Path, limit: int, what: str, shown_as: str) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes.

    Args:
        path: The file on the server.
        limit: The most bytes accepted.
        what: What the file is (``"run config"``).
        shown_as: How the message names the file (never its server path).

    Raises:
        Invalid: one line, for a missing file, a FIFO or device, a folder, a file too large.
    """
    try:
        return read_regular_file(path, limit, what)
    except UnreadableFileError as err:
        text = str(err).replace(repr(str(path)), repr(shown_as)).replace(str(path), shown_as)
        raise Invalid(one_line(text)) from None


def json_text(raw: bytes, where: str) -> str:
    """``raw`` read as the text of JSON: UTF-8, as JSON is exchanged (RFC 8259, 8.1).

    Python's own JSON reader would also take UTF-16 and UTF-32 (with or without a byte
    order mark) and skip UTF-8's byte order mark; the lab writes none of them and the
    terminal's readers refuse them, so every reader of the server refuses them too, with
    one line. A NUL byte is never part of JSON text (it marks UTF-16 or UTF-32).

    Raises:
        Invalid: naming ``where``, for bytes that are not UTF-8, that start with a byte
            order mark or that hold a NUL byte.
    """
    if raw.startswith(_BYTE_ORDER_MARKS):
        raise Invalid(
            f"{where}: starts with a byte order mark; JSON is read as UTF-8 text without one"
        )
    if b"\x00" in raw:
        raise Invalid(f"{where}: holds NUL bytes (UTF-16 or UTF-32?); JSON is read as UTF-8 text")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise Invalid(f"{where}: not UTF-8 text") from None


def parse_json(raw: bytes | str, where: str) -> Any:
    """Parse JSON from an untrusted source (bytes are read by :func:`json_text`).

    Raises:
        Invalid: naming ``where``, for text that is not UTF-8 JSON or is nested too deeply
            to parse (the parser would exhaust the stack).
    """
    text = json_text(raw, where) if isinstance(raw, bytes) else raw
    try:
        return json.loads(text)
    except RecursionError:
        raise Invalid(f"{where}: the JSON is nested too deeply to read") from None
    except ValueError as err:
        raise Invalid(f"{where}: not valid JSON ({one_line(str(err))})") from None


def read_json(path: Path, what: str, shown_as: str, limit: int = MAX_JSON_BYTES) -> Any:
    """A regular JSON file of at most ``limit`` bytes, parsed (see :func:`read_bytes`)."""
    return parse_json(read_bytes(path, limit, what, shown_as), shown_as)


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
