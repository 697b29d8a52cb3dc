"""The errors the API answers with a 4xx status and a one-line message."""

from __future__ import annotations

__all__ = ["ApiError", "Busy", "Conflict", "Invalid", "NotFound"]


class ApiError(Exception):
    """A request the server refuses; nothing was changed.

    Attributes:
        status: The HTTP status.
    """

    status = 400


class NotFound(ApiError):
    """An unknown game, replay, run or agent id (404)."""

    status = 404


class Conflict(ApiError):
    """A move that does not fit the game's moment: stale, out of turn, or a finished game (409)."""

    status = 409


class Invalid(ApiError):
    """A malformed or illegal move, bad settings, a file that is not a game (422)."""

    status = 422


class Busy(ApiError):
    """The cap on games held at once is reached (429)."""

    status = 429
