"""The JSON API and the page: :func:`create_app`.

Every refusal is a 4xx with ``{"detail": "<one line>"}`` and changes nothing: a request
addressed to a host name this server does not answer to (400), unknown ids (404), moves
that do not fit the moment (409: stale, repeated, out of turn, finished game), malformed or
illegal moves, bad settings and files that are not games (422), bodies over the size limit
(413) and more games than the caps (429). On the first start of an install a request that
runs the engine while it still compiles gets a 503 of the same form
(:mod:`unolab.web.warming`). A failure of the server itself is a 500 with a one-line
``detail`` too (no traceback, no path). Every answer carries the security headers
of :data:`unolab.web.guard.SECURITY_HEADERS`. The API is described at ``/openapi.json`` and in
``docs/web.md``.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.types import Scope

from unolab.warmup import WarmupStatus
from unolab.web.catalogue import Catalogue
from unolab.web.game.batching import AgentBatcher
from unolab.web.game.games import Games
from unolab.web.game.live import LIVE_FILE, LiveStore, StoredGame
from unolab.web.game.routes import game_router
from unolab.web.game.table import WebGame
from unolab.web.guard import ApiError, Guard
from unolab.web.lab.routes import lab_router
from unolab.web.replay.routes import replay_router
from unolab.web.replay.tournament import RunFinder
from unolab.web.settings import ServeConfig
from unolab.web.store import GameStore
from unolab.web.warming import ready_status, warmup_state

__all__ = ["MEDIA_TYPES", "PageFiles", "create_app", "open_live_games"]

LOG = logging.getLogger(__name__)

STATIC = Path(__file__).resolve().parent / "static"

MEDIA_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".html": "text/html; charset=utf-8",
}
"""The type each kind of the page's files is served with, whatever the machine's own table
of file types says (some map ``.js`` to ``text/plain``): with ``nosniff``, a browser runs a
script module only if it comes as JavaScript, and applies a style sheet only as CSS."""

INTERNAL_ERROR = (
    "the server failed on this request (an internal error, logged by the server); "
    "try again, and if it persists report what you did"
)


class PageFiles(StaticFiles):
    """The page's files under ``/static``, each served with its :data:`MEDIA_TYPES` type."""

    def file_response(
        self,
        full_path: str | os.PathLike[str],
        stat_result: os.stat_result,
        scope: Scope,
        status_code: int = 200,
    ) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        media_type = MEDIA_TYPES.get(Path(full_path).suffix.lower())
        if media_type is not None and isinstance(response, FileResponse):
            response.media_type = media_type
            response.headers["content-type"] = media_type
        return response


def open_live_games(config: ServeConfig) -> LiveStore:
    """The file of live games of ``config.games_dir`` (``live.sqlite3``), opened.

    Raises:
        ValueError: one line naming the file, if it is damaged, foreign or newer (it is
            left as it was).
    """
    return LiveStore(Path(config.games_dir) / LIVE_FILE)


def create_app(
    config: ServeConfig | None = None,
    catalogue: Catalogue | None = None,
    warmup: WarmupStatus | None = None,
    live: LiveStore | None = None,
) -> Guard:
    """The ASGI app of the browser table.

    Args:
        config: The server's options (defaults: :class:`ServeConfig`).
        catalogue: The agents on offer (default: built from ``config.agents_dir``).
        warmup: The engine's warm-up running in the background
            (:func:`unolab.web.warming.start_warmup`), which ``GET /api/warmup`` reports
            and the routes that run the engine refuse with a 503 until it ends; none: the
            engine is ready.
        live: The file of live games (default: :func:`open_live_games`).

    Returns:
        The app, with the :class:`Guard` (host check, headers, body limit) in front of it.
    """
    config = config or ServeConfig()
    catalogue = catalogue or Catalogue(config.agents_dir)
    batcher = AgentBatcher()
    store = GameStore(config.games_dir)
    live = live or open_live_games(config)

    def restore(stored: StoredGame) -> WebGame:
        return WebGame.restore(stored, catalogue, store.decisions_path(stored.id))

    games = Games(config, live, restore, store)
    runs = RunFinder(config.runs_dir, config.agents_dir, trusted_code=config.trusted_code)
    # The API is described at /openapi.json only: the /docs and /redoc pages load their
    # scripts from a CDN, which the page's content security policy (self only) forbids.
    app = FastAPI(
        title="uno-lab table",
        description="Play UNO against the lab's agents and replay recorded games.",
        version="1",
        docs_url=None,
        redoc_url=None,
        lifespan=_expiring(games),
    )
    app.state.batcher = batcher
    app.state.games = games
    app.state.warmup = warmup if warmup is not None else ready_status()

    @app.exception_handler(ApiError)
    async def refused(request: Request, err: ApiError) -> JSONResponse:
        return JSONResponse({"detail": str(err)}, status_code=err.status, headers=dict(err.headers))

    @app.exception_handler(RequestValidationError)
    async def malformed(request: Request, err: RequestValidationError) -> JSONResponse:
        first = err.errors()[0] if err.errors() else {"loc": (), "msg": "malformed request"}
        where = ".".join(str(part) for part in first.get("loc", ()))
        return JSONResponse({"detail": f"{where}: {first.get('msg')}"}, status_code=422)

    @app.exception_handler(RecursionError)
    async def too_deep(request: Request, err: RecursionError) -> JSONResponse:
        # Only input nested beyond the parser's stack gets here (every reader of files and
        # uploads refuses it itself): a bad request, not a failure of the server.
        return JSONResponse(
            {"detail": "the request's data is nested too deeply to read"}, status_code=422
        )

    @app.exception_handler(Exception)
    async def failed(request: Request, err: Exception) -> JSONResponse:
        # The traceback goes to the server's log (the exception is raised on after this
        # answer); the client gets one line, with no path or code of the server in it.
        return JSONResponse({"detail": INTERNAL_ERROR}, status_code=500)

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    app.mount("/static", PageFiles(directory=STATIC), name="static")

    @app.get("/api/warmup")
    def warmup_progress() -> dict[str, object]:
        """Whether the engine is ready, or ``playable`` (every game but one against a
        search); while it compiles (the first start of an install), the parts done, what
        compiles now, the seconds spent and about how many in all."""
        return warmup_state(app.state.warmup)

    # One router per job (unolab/web/<job>/routes.py); their paths do not overlap.
    app.include_router(game_router(config, catalogue, batcher, games, store))
    app.include_router(replay_router(catalogue, store, runs))
    app.include_router(lab_router(config.runs_dir, games_dir=config.games_dir))
    return Guard(app, config)


def _expiring(games: Games) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    """The app's lifespan: while it serves, a thread expires the games idle past
    ``--idle-minutes``, every ``--expire-every-seconds``."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        stop = threading.Event()

        def sweep() -> None:
            while True:  # at the start too: games that went idle while the server was down
                try:
                    games.expire()
                except Exception:  # a locked or full disk: tried again on the next round
                    LOG.exception("expiring idle games failed")
                if stop.wait(games.config.expire_every_seconds):
                    return

        thread = threading.Thread(target=sweep, name="web-expiry", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()

    return lifespan
