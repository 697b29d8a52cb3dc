"""The errors the API answers with a 4xx status (503 while the engine compiles) and a one-line
message."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

__all__ = [
    "ApiError",
    "Busy",
    "Conflict",
    "Forbidden",
    "Gone",
    "Invalid",
    "NotFound",
    "NotReady",
    "NotStored",
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
