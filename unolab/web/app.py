"""The JSON API and the page: :func:`create_app`.

Every refusal is a 4xx with ``{"detail": "<one line>"}`` and changes nothing: unknown ids
(404), moves that do not fit the moment (409: stale, repeated, out of turn, finished game),
malformed or illegal moves, bad settings and files that are not games (422), bodies over
the size limit (413) and more games than the cap (429). The API is described at
``/docs`` (OpenAPI) and in ``docs/web.md``.
"""

from __future__ import annotations

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

from uno_env.cards import MAX_PLAYERS
from uno_env.rules import PRESETS, Rules
from unolab.play import random_seed
from unolab.web.batching import AgentBatcher
from unolab.web.catalogue import Catalogue, UnknownAgentError
from unolab.web.errors import ApiError, Busy, Invalid, NotFound
from unolab.web.replays import replay_saved, replay_upload
from unolab.web.runs import RunFinder
from unolab.web.settings import ServeConfig
from unolab.web.store import GameStore, new_game_id
from unolab.web.table import WebGame

__all__ = ["create_app"]

STATIC = Path(__file__).resolve().parent / "static"

_FIXED = ("num_players", "seat_draw_streams")
"""Rule fields that are not house-rule switches (the table size is chosen apart)."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]


class NewGame(BaseModel):
    """The settings of a new game."""

    model_config = ConfigDict(extra="forbid")
    preset: Literal["official", "street", "seven_zero", "rlcard"] = "official"
    num_players: StrictInt = Field(2, ge=2, le=MAX_PLAYERS)
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


class BodyLimit:
    """Refuses request bodies over ``limit`` bytes with 413, before the app reads them."""

    def __init__(self, app: Asgi, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await self._refuse(send)
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
                await self._refuse(send)
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

        await self.app(scope, replay, send)

    async def _refuse(self, send: Send) -> None:
        response = JSONResponse(
            {"detail": f"request body over the limit of {self.limit} bytes"}, status_code=413
        )
        await response({"type": "http"}, _no_receive, send)


async def _no_receive() -> Message:
    return {"type": "http.disconnect"}


class Games:
    """The games held in memory, by id, with the cap and the idle timeout."""

    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        self._games: dict[str, WebGame] = {}
        self._lock = threading.Lock()

    def add(self, game: WebGame) -> None:
        """Hold a new game.

        Raises:
            Busy: when the cap is reached even after dropping idle games.
        """
        with self._lock:
            if len(self._games) >= self.config.max_games:
                idle = time.monotonic() - 60 * self.config.idle_minutes
                for old in [k for k, g in self._games.items() if g.touched < idle]:
                    del self._games[old]
            if len(self._games) >= self.config.max_games:
                for old in [k for k, g in self._games.items() if g.match_over]:
                    del self._games[old]  # saved to disk already
            if len(self._games) >= self.config.max_games:
                raise Busy(
                    f"the server holds {self.config.max_games} games (its --max-games); "
                    "finish one or try again later"
                )
            self._games[game.id] = game

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


def create_app(config: ServeConfig | None = None, catalogue: Catalogue | None = None) -> BodyLimit:
    """The ASGI app of the browser table.

    Args:
        config: The server's options (defaults: :class:`ServeConfig`).
        catalogue: The agents on offer (default: built from ``config.agents_dir``).

    Returns:
        The app, with the request-body limit in front of it.
    """
    config = config or ServeConfig()
    catalogue = catalogue or Catalogue(config.agents_dir)
    batcher = AgentBatcher()
    games = Games(config)
    store = GameStore(config.games_dir)
    runs = RunFinder(config.runs_dir)
    app = FastAPI(
        title="uno-lab table",
        description="Play UNO against the lab's agents and replay recorded games.",
        version="1",
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
            "limits": {"max_games": config.max_games, "max_body_bytes": config.max_body_bytes},
        }

    @app.post("/api/games", status_code=201)
    def new_game(settings: NewGame) -> dict[str, Any]:
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
        games.add(game)
        with game.lock:
            game.deal_lines()
            game.play_agents(catalogue, batcher)
            _saved(game)
            return game.view()

    def _saved(game: WebGame) -> None:
        if game.game.over:
            store.save(game.id, game.record())

    @app.get("/api/games/{game_id}")
    def get_game(game_id: str, log_from: int = Query(0, ge=0)) -> dict[str, Any]:
        """The game as you see it; ``log`` holds the sentences from ``log_from`` on."""
        game = games.get(game_id)
        with game.lock:
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

    return BodyLimit(app, config.max_body_bytes)
