"""The JSON API and the page: :func:`create_app`.

Every refusal is a 4xx with ``{"detail": "<one line>"}`` and changes nothing: a request
addressed to a host name this server does not answer to (400), unknown ids (404), moves
that do not fit the moment (409: stale, repeated, out of turn, finished game), malformed or
illegal moves, bad settings and files that are not games (422), bodies over the size limit
(413) and more games than the caps (429). A failure of the server itself is a 500 with a
one-line ``detail`` too (no traceback, no path). Every answer carries the security headers
of :data:`SECURITY_HEADERS`. The API is described at ``/openapi.json`` and in
``docs/web.md``.
"""

from __future__ import annotations

import errno
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any, Literal

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr
from starlette.datastructures import MutableHeaders

from uno_env.cards import MAX_PLAYERS
from uno_env.rules import DEFAULT_NUM_PLAYERS, PRESETS, Rules
from unolab.play import random_seed
from unolab.web.batching import AgentBatcher
from unolab.web.catalogue import Catalogue, UnknownAgentError
from unolab.web.errors import ApiError, Busy, Invalid, NotFound
from unolab.web.replays import replay_saved, replay_upload
from unolab.web.runs import RunFinder
from unolab.web.settings import ServeConfig, host_of
from unolab.web.store import GameStore, new_game_id
from unolab.web.table import WebGame

__all__ = ["SECURITY_HEADERS", "Guard", "create_app"]

STATIC = Path(__file__).resolve().parent / "static"

_FIXED = ("num_players", "seat_draw_streams")
"""Rule fields that are not house-rule switches (the table size is chosen apart)."""

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

IDLE_BEFORE_EVICTION_S = 300
"""A client at its cap gives up its least recently used game for a new one only if that
game has been untouched this long (a game being played is never taken away)."""

INTERNAL_ERROR = (
    "the server failed on this request (an internal error, logged by the server); "
    "try again, and if it persists report what you did"
)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]


class NewGame(BaseModel):
    """The settings of a new game."""

    model_config = ConfigDict(extra="forbid")
    preset: Literal["official", "street", "seven_zero", "rlcard"] = "official"
    num_players: StrictInt = Field(DEFAULT_NUM_PLAYERS, ge=2, le=MAX_PLAYERS)
    opponents: list[StrictStr] = Field(
        default_factory=lambda: ["mixbot"], max_length=MAX_PLAYERS - 1
    )
    switches: dict[StrictStr, StrictBool | StrictInt | StrictStr | None] = Field(
        default_factory=dict, max_length=64
    )
    seed: StrictInt | None = Field(None, ge=0, lt=2**63)


class Move(BaseModel):
    """The human's move: an action name and the move number it was chosen at."""

    model_config = ConfigDict(extra="forbid")
    action: StrictStr = Field(..., max_length=32, examples=["G7", "W:B", "draw", "uno"])
    seq: StrictInt = Field(..., ge=0, description="the game's `seq` when the move was chosen")


class NextHand(BaseModel):
    """Deal the next hand of the match."""

    model_config = ConfigDict(extra="forbid")
    seq: StrictInt = Field(..., ge=0)


class Guard:
    """What stands in front of the app: the ``Host`` check, the security headers and the
    request-body limit.

    * A request whose ``Host`` is not a name of this server gets 400 (a page of another
      site that rebinds its DNS name to 127.0.0.1 must not read this server).
    * Every answer gets :data:`SECURITY_HEADERS`; every answer but the static files gets
      ``Cache-Control: no-store`` (games and runs are not for caches).
    * A body over ``config.max_body_bytes`` gets 413 before the app reads it.

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


class Games:
    """The games held in memory, by id, with the caps and the idle timeout.

    Two caps bound memory: ``max_games`` in all and ``max_games_per_client`` per client
    address, so that one client cannot fill the server with games it abandons.
    """

    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        self._games: dict[str, WebGame] = {}
        self._lock = threading.Lock()

    def add(self, game: WebGame) -> None:
        """Hold a new game (its ``client`` set).

        Games idle past ``idle_minutes`` are dropped first. A client at its cap gives up
        its oldest finished game, else its least recently used one if that has been idle
        for :data:`IDLE_BEFORE_EVICTION_S`. At the server's cap, finished games go first
        (they are on disk).

        Raises:
            Busy: when a cap is still reached.
        """
        config = self.config
        with self._lock:
            now = time.monotonic()
            idle = now - 60 * config.idle_minutes
            for old in [k for k, g in self._games.items() if g.touched < idle]:
                del self._games[old]
            mine = sorted(
                (g for g in self._games.values() if g.client == game.client),
                key=lambda g: (not self._finished(g), g.touched),
            )
            if len(mine) >= config.max_games_per_client:
                oldest = mine[0]
                if not self._finished(oldest) and oldest.touched > now - IDLE_BEFORE_EVICTION_S:
                    raise Busy(
                        f"this client holds {len(mine)} games in play (the server's "
                        f"--max-games-per-client is {config.max_games_per_client}); finish "
                        f"one, or wait {IDLE_BEFORE_EVICTION_S // 60} minutes for the oldest "
                        "to count as abandoned"
                    )
                del self._games[oldest.id]
            if len(self._games) >= config.max_games:
                for old in [k for k, g in self._games.items() if self._finished(g)]:
                    del self._games[old]
            if len(self._games) >= config.max_games:
                raise Busy(
                    f"the server holds {config.max_games} games (its --max-games); "
                    "finish one or try again later"
                )
            self._games[game.id] = game

    @staticmethod
    def _finished(game: WebGame) -> bool:
        """A match that is over and on disk: dropping it loses nothing."""
        return game.match_over and not game.unsaved

    def get(self, game_id: str) -> WebGame:
        """A held game.

        Raises:
            NotFound: for an unknown (or dropped) id.
        """
        with self._lock:
            game = self._games.get(game_id)
        if game is None:
            raise NotFound(f"no game {game_id!r} on this server (finished games are under Replay)")
        game.touched = time.monotonic()
        return game

    def __len__(self) -> int:
        return len(self._games)


def _rules_for(settings: NewGame) -> Rules:
    """The rules of a new game: the preset, the table size, the switches."""
    fixed = sorted(set(settings.switches) & set(_FIXED))
    if fixed:
        raise Invalid(f"switches: {fixed[0]!r} is not a house rule (choose num_players apart)")
    try:
        return PRESETS[settings.preset].replace(
            num_players=settings.num_players, **settings.switches
        )
    except (ValueError, TypeError) as err:
        raise Invalid(str(err)) from None


def _switch_list() -> list[dict[str, Any]]:
    """Every house-rule switch with its default and, for choices, the values."""
    from uno_env.rules import allowed_values, switch_descriptions

    descriptions = switch_descriptions()
    out = []
    for name, spec in Rules.__dataclass_fields__.items():
        if name in _FIXED:
            continue
        out.append(
            {
                "name": name,
                "default": getattr(Rules(), name),
                "allowed": allowed_values(spec),
                "about": descriptions.get(name, ""),
            }
        )
    return out


def create_app(config: ServeConfig | None = None, catalogue: Catalogue | None = None) -> Guard:
    """The ASGI app of the browser table.

    Args:
        config: The server's options (defaults: :class:`ServeConfig`).
        catalogue: The agents on offer (default: built from ``config.agents_dir``).

    Returns:
        The app, with the :class:`Guard` (host check, headers, body limit) in front of it.
    """
    config = config or ServeConfig()
    catalogue = catalogue or Catalogue(config.agents_dir)
    batcher = AgentBatcher()
    games = Games(config)
    store = GameStore(config.games_dir)
    runs = RunFinder(config.runs_dir, config.agents_dir)
    # The API is described at /openapi.json only: the /docs and /redoc pages load their
    # scripts from a CDN, which the page's content security policy (self only) forbids.
    app = FastAPI(
        title="uno-lab table",
        description="Play UNO against the lab's agents and replay recorded games.",
        version="1",
        docs_url=None,
        redoc_url=None,
    )
    app.state.batcher = batcher
    app.state.games = games

    @app.exception_handler(ApiError)
    async def refused(request: Request, err: ApiError) -> JSONResponse:
        return JSONResponse({"detail": str(err)}, status_code=err.status)

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

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/api/options")
    def options() -> dict[str, Any]:
        """Presets (every switch), house-rule switches, agents on offer, limits."""
        return {
            "presets": {name: rules.to_dict() for name, rules in PRESETS.items()},
            "switches": _switch_list(),
            "agents": [entry.public() for entry in catalogue.entries.values()],
            "players": {"min": 2, "max": MAX_PLAYERS},
            "limits": {
                "max_games": config.max_games,
                "max_games_per_client": config.max_games_per_client,
                "max_body_bytes": config.max_body_bytes,
            },
        }

    @app.post("/api/games", status_code=201)
    def new_game(settings: NewGame, request: Request) -> dict[str, Any]:
        """Deal a new match: you in seat 0, the chosen agents in seats 1.. (in order)."""
        rules = _rules_for(settings)
        if len(settings.opponents) != rules.num_players - 1:
            raise Invalid(
                f"opponents: {rules.num_players} players need {rules.num_players - 1} "
                f"opponent(s), got {len(settings.opponents)}"
            )
        try:
            for agent_id in settings.opponents:
                catalogue.policy(agent_id, rules)  # unknown or unfit agents fail here
        except UnknownAgentError as err:
            raise Invalid(str(err)) from None
        except ValueError as err:
            raise Invalid(f"opponents: {err}") from None
        seed = settings.seed if settings.seed is not None else random_seed()
        setup = {**settings.model_dump(), "seed": seed}
        game = WebGame.start(new_game_id(), rules, seed, settings.opponents, catalogue, setup)
        game.client = _client(request)
        games.add(game)
        with game.lock:
            game.deal_lines()
            game.play_agents(catalogue, batcher)
            _saved(game)
            return game.view()

    def _saved(game: WebGame) -> None:
        """Write the game's record if a finished hand is not on disk yet (the game's lock
        held). A failed write changes no game: the hand stays in memory, the view carries
        ``save_error``, and the next request about the game tries again."""
        if not game.unsaved:
            return
        try:
            store.save(game.id, game.record())
        except OSError as err:
            game.save_error = (
                f"the finished hand could not be saved to the games folder ({_reason(err)}); "
                "it is kept in memory and saved with your next request: free some space or "
                "check the folder"
            )
            return
        game.unsaved, game.save_error = False, None

    @app.get("/api/games/{game_id}")
    def get_game(game_id: str, log_from: int = Query(0, ge=0)) -> dict[str, Any]:
        """The game as you see it; ``log`` holds the sentences from ``log_from`` on."""
        game = games.get(game_id)
        with game.lock:
            _saved(game)
            return game.view(min(log_from, len(game.log)))

    @app.post("/api/games/{game_id}/moves")
    def move(game_id: str, body: Move) -> dict[str, Any]:
        """Your move; the agents then play until it is your turn or the hand is over.

        ``log`` in the answer holds the sentences this move added.
        """
        game = games.get(game_id)
        with game.lock:
            start = len(game.log)
            game.human_move(body.action, body.seq)
            game.play_agents(catalogue, batcher)
            _saved(game)
            return game.view(start)

    @app.post("/api/games/{game_id}/next-hand")
    def next_hand(game_id: str, body: NextHand) -> dict[str, Any]:
        """Deal the next hand of the match (after a hand ended short of the target score)."""
        game = games.get(game_id)
        with game.lock:
            start = len(game.log)
            game.next_hand(body.seq)
            game.play_agents(catalogue, batcher)
            _saved(game)
            return game.view(start)

    @app.get("/api/replays")
    def saved_games() -> list[dict[str, Any]]:
        """The saved web games, newest first."""
        return store.listing()

    @app.get("/api/replays/{game_id}")
    def replay_game(game_id: str) -> dict[str, Any]:
        """A saved web game, frame by frame."""
        return replay_saved(catalogue, store, game_id)

    @app.post("/api/replay-file")
    async def replay_file(request: Request) -> dict[str, Any]:
        """An uploaded record (the JSON of ``uno-lab play --record``), frame by frame."""
        body = await request.body()
        return replay_upload(catalogue, body)

    @app.get("/api/runs")
    def run_list() -> list[str]:
        """The tournament runs under the runs folder (ids: paths relative to it)."""
        return sorted(runs.runs())

    @app.get("/api/runs/games")
    def run_games(
        run: str = Query(..., max_length=300),
        offset: int = Query(0, ge=0),
        limit: int = Query(100, ge=1, le=1000),
    ) -> dict[str, Any]:
        """The games of a run (from ``offset``): seats, ranks, turns, how each ended."""
        records = runs.records(run)
        return {
            "run": run,
            "total": len(records),
            "games": [
                {
                    "game": offset + i,
                    "seats": list(r.seats),
                    "ranks": list(r.ranks),
                    "turns": r.turns,
                    "end": r.end,
                }
                for i, r in enumerate(records[offset : offset + limit])
            ],
        }

    @app.get("/api/runs/replay")
    def run_replay(
        run: str = Query(..., max_length=300), game: int = Query(..., ge=0)
    ) -> dict[str, Any]:
        """One game of a run, played again exactly and shown frame by frame."""
        return runs.replay(run, game)

    return Guard(app, config)


def _client(request: Request) -> str:
    """The address a request came from (the key of the per-client cap)."""
    return request.client.host if request.client is not None else ""


def _reason(err: OSError) -> str:
    """Why a write failed, in words and without the path."""
    if err.errno == errno.ENOSPC:
        return "the disk is full"
    return (err.strerror or type(err).__name__).lower()
