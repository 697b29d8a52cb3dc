"""The routes of a game in play (:func:`game_router`): what the page offers
(``/api/options``), dealing a new match, reading it, the human's moves, a language model's
move and the next hand; and the tables for several people (``/api/tables``): opening one,
watching it, taking a seat, starting it, a seat's moves and the next hand
(:mod:`unolab.web.game.seats`).
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from fastapi import APIRouter, Header, Query, Request

from uno_env.cards import MAX_PLAYERS
from uno_env.rules import PRESETS, Rules
from unolab.play import random_seed
from unolab.web.catalogue import Catalogue, UnknownAgentError
from unolab.web.game.batching import AgentBatcher
from unolab.web.game.games import Games, run_locked
from unolab.web.game.picture import game_view, table_view
from unolab.web.game.requests import (
    PERSON,
    AgentMove,
    Join,
    Move,
    NewGame,
    NewTable,
    NextHand,
    rules_for,
    switch_list,
)
from unolab.web.game.seats import HOST_SEAT, SeatState, SharedTable
from unolab.web.game.table import HUMAN_SEAT, WebGame
from unolab.web.guard import Conflict, Invalid
from unolab.web.settings import ServeConfig
from unolab.web.store import GameStore, data_choice, new_game_id
from unolab.web.warming import NEEDS_ENGINE, require_searches

__all__ = [
    "MODEL_THREADS",
    "game_router",
]

MODEL_THREADS = 32
"""Language models' moves decided at once (each waits seconds for its endpoint); more wait
their turn. Their threads are their own: the requests of the other games never wait for a
model."""

SEAT_TOKEN = Header(
    None,
    alias="X-Seat-Token",
    max_length=128,
    description="the seat's secret token (from taking the seat); none: a spectator",
)


def game_router(
    config: ServeConfig,
    catalogue: Catalogue,
    batcher: AgentBatcher,
    games: Games,
    store: GameStore,
) -> APIRouter:
    """The routes of the games in play, for :func:`unolab.web.app.create_app`.

    Args:
        config: The server's options (its limits are on offer).
        catalogue: The agents on offer.
        batcher: Batches the agents' moves across the games.
        games: The games in play.
        store: Where finished hands are saved.
    """
    router = APIRouter()
    models = ThreadPoolExecutor(MODEL_THREADS, thread_name_prefix="web-model")

    @router.get("/api/options")
    def options() -> dict[str, Any]:
        """Presets (every switch), house-rule switches, agents on offer, limits."""
        return {
            "presets": {name: rules.to_dict() for name, rules in PRESETS.items()},
            "switches": switch_list(),
            "agents": [entry.public() for entry in catalogue.entries.values()],
            "players": {"min": 2, "max": MAX_PLAYERS},
            "collect_human_games": config.collect_human_games,
            "limits": {
                "max_games": config.max_games,
                "max_games_per_client": config.max_games_per_client,
                "max_body_bytes": config.max_body_bytes,
            },
        }

    @router.post("/api/games", status_code=201, dependencies=[NEEDS_ENGINE])
    def new_game(settings: NewGame, request: Request) -> dict[str, Any]:
        """Deal a new match: you in seat 0, the chosen agents in seats 1.. (in order)."""
        rules = rules_for(settings)
        _check_count(settings, rules)
        _check_agents(settings.opponents, rules, request, "opponents")
        seed = int(settings.seed) if settings.seed is not None else random_seed()
        # The seed as a string, as in the view: a JavaScript number cannot hold every seed.
        try:
            keep = data_choice(config.collect_human_games, settings.keep_as_data)
        except ValueError as err:
            raise Invalid(str(err)) from None
        setup = {**settings.model_dump(), "seed": str(seed), "keep_as_data": keep}
        game = WebGame.start(new_game_id(), rules, seed, settings.opponents, catalogue, setup)
        game.client = _client(request)
        try:
            game.seat_models(catalogue, store.decisions_path(game.id))
        except ValueError as err:
            game.close_models()
            raise Invalid(f"opponents: {err}") from None
        try:
            games.add(game)
        except Exception:
            game.close_models()
            raise
        with game.lock:
            game.deal_lines()
            game.play_agents(catalogue, batcher)
            games.commit(game)
            return game_view(game, HUMAN_SEAT, events_after=0)

    def _check_count(settings: NewGame, rules: Rules) -> None:
        if len(settings.opponents) != rules.num_players - 1:
            raise Invalid(
                f"opponents: {rules.num_players} players need {rules.num_players - 1} "
                f"opponent(s), got {len(settings.opponents)}"
            )

    def _check_agents(agent_ids: list[str], rules: Rules, request: Request, key: str) -> None:
        """Refuse, in one line naming ``key``, an agent that is unknown, does not play
        ``rules``, or cannot play here."""
        try:
            for agent_id in agent_ids:
                if catalogue.entry(agent_id).kind == "search":  # compiled last, if just now
                    require_searches(request.app.state.warmup, agent_id)
            for agent_id in agent_ids:
                entry = catalogue.entry(agent_id)
                if entry.kind == "llm":
                    if entry.unavailable is not None:
                        raise ValueError(f"{entry.label} cannot play here: {entry.unavailable}")
                    continue  # each game builds its own agent of the model
                catalogue.policy(agent_id, rules)  # unknown or unfit agents fail here
        except UnknownAgentError as err:
            raise Invalid(f"{key}: {err}") from None
        except ValueError as err:
            raise Invalid(f"{key}: {err}") from None

    @router.get("/api/games/{game_id}")
    async def get_game(
        game_id: str,
        log_from: int = Query(0, ge=0),
        events_after: int | None = Query(None, ge=0),
    ) -> dict[str, Any]:
        """The game as you see it, to take it up again (after a reload, say).

        ``log`` holds the sentences from ``log_from`` on; ``events`` the steps taken after
        move ``events_after`` (none unless it is given).
        """
        game = games.solo(game_id)

        def answer() -> dict[str, Any]:
            games.save(game)
            return game_view(game, HUMAN_SEAT, min(log_from, len(game.log)), events_after)

        return await run_locked(game, answer, _at_once(game))

    @router.post("/api/games/{game_id}/moves", dependencies=[NEEDS_ENGINE])
    async def move(game_id: str, body: Move) -> dict[str, Any]:
        """Your move; the agents then play until it is your turn or the hand is over.
        The actions are committed to the file of live games before the answer.

        ``log`` in the answer holds the sentences this move added, ``events`` its steps
        (yours and the agents', one by one).
        """
        game = games.solo(game_id)

        def answer() -> dict[str, Any]:
            start, seq = len(game.log), game.seq
            game.agent_error = None
            game.human_move(body.action, body.seq)
            game.play_agents(catalogue, batcher)
            games.commit(game)
            return game_view(game, HUMAN_SEAT, start, seq)

        return await run_locked(game, answer, _at_once(game))

    @router.post("/api/games/{game_id}/agent-move", dependencies=[NEEDS_ENGINE])
    async def agent_move(game_id: str, body: AgentMove) -> dict[str, Any]:
        """The move of the language model whose decision is due (the view's ``thinking``);
        the agents then play on until the next model decision, your turn, or the hand's end.

        The model is asked in a thread of the models' own, so that no other game's request
        waits for its answer. An endpoint that fails is answered with the seat's fallback
        move and ``agent_error`` (one line).
        """
        game = games.solo(game_id)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(models, _agent_move, game, body.seq)

    def _agent_move(game: WebGame, seq: int) -> dict[str, Any]:
        with game.lock:
            if game.thinking is None:
                raise Conflict("no language model's move is due in this game; reload the game")
            if seq != game.seq:
                raise Conflict(
                    f"stale request: the game is at move {game.seq}, not {seq}; reload the game"
                )
            start = len(game.log)
            game.agent_error = None
            game.play_agents(catalogue, batcher, model_moves=1)
            games.commit(game)
            return game_view(game, HUMAN_SEAT, start, seq)

    @router.post("/api/games/{game_id}/next-hand", dependencies=[NEEDS_ENGINE])
    async def next_hand(game_id: str, body: NextHand) -> dict[str, Any]:
        """Deal the next hand of the match (after a hand ended short of the target score)."""
        game = games.solo(game_id)

        def answer() -> dict[str, Any]:
            start, seq = len(game.log), game.seq
            game.agent_error = None
            game.next_hand(body.seq)
            game.play_agents(catalogue, batcher)
            games.commit(game)
            return game_view(game, HUMAN_SEAT, start, seq)

        return await run_locked(game, answer, _at_once(game))

    # ---- tables for several people ---------------------------------------------------

    @router.post("/api/tables", status_code=201, dependencies=[NEEDS_ENGINE])
    def new_table(settings: NewTable, request: Request) -> dict[str, Any]:
        """Open a table for several people: you (the host) in seat 0, each of the other
        seats an agent or ``"person"``. Nobody moves until the host starts the game. The
        answer carries the host's seat token: send it as ``X-Seat-Token`` with every
        request of the seat."""
        rules = rules_for(settings)
        _check_count(settings, rules)
        people = [HOST_SEAT] + [
            seat for seat, agent in enumerate(settings.opponents, 1) if agent == PERSON
        ]
        if len(people) < 2:
            raise Invalid(
                f"opponents: a table for several people needs a seat for a person "
                f"({PERSON!r}) besides yours; to play the agents alone, deal a game"
            )
        bots = [agent for agent in settings.opponents if agent != PERSON]
        for agent_id in [*bots, settings.stand_in]:
            if agent_id in catalogue.entries and catalogue.entry(agent_id).kind == "llm":
                key = "stand_in" if agent_id == settings.stand_in else "opponents"
                raise Invalid(
                    f"{key}: a language model cannot sit at a table for several people; "
                    "choose a bot"
                )
        _check_agents(bots, rules, request, "opponents")
        _check_agents([settings.stand_in], rules, request, "stand_in")
        shared = SharedTable(
            stand_in=settings.stand_in,
            away_seconds=settings.away_seconds,
            turn_seconds=settings.turn_seconds,
            seats={seat: SeatState(seat) for seat in people},
        )
        token = shared.take(HOST_SEAT, shared.player_name(settings.name, HOST_SEAT))
        seed = int(settings.seed) if settings.seed is not None else random_seed()
        setup = {**settings.model_dump(exclude={"name", "keep_as_data"}), "seed": str(seed)}
        agents = [None if agent == PERSON else agent for agent in settings.opponents]
        game = WebGame.start(new_game_id(), rules, seed, agents, catalogue, setup, shared)
        game.client = _client(request)
        games.add(game)
        with game.lock:
            game.deal_lines()
            return {"token": token, **table_view(game, HOST_SEAT, 0, 0, catalogue)}

    @router.get("/api/tables/{game_id}", dependencies=[NEEDS_ENGINE])
    async def get_table(
        game_id: str,
        version: str | None = Query(None, max_length=64),
        log_from: int = Query(0, ge=0),
        events_after: int | None = Query(None, ge=0),
        token: str | None = SEAT_TOKEN,
    ) -> dict[str, Any]:
        """The table as your seat sees it (without a token: as a spectator, public
        information only). Given the ``version`` of your last answer, an unchanged table
        answers ``{"changed": false}`` only (what the page asks every second or two).

        Each answer also moves the table on: a turn that ran out plays its seat's default
        move, and the seats of away players are played by the host's stand-in.
        """
        game, shared = games.table(game_id)

        def answer() -> dict[str, Any]:
            seat = shared.seat_for(token, required=False)
            _tick(game, shared)
            now = shared.version(game.seq, len(game.hands))
            if version == now:
                return {"version": now, "changed": False, "turn_left": shared.turn_left()}
            log = game.log_of(seat)
            return table_view(game, seat, min(log_from, len(log)), events_after, catalogue)

        return await run_locked(game, answer, _at_once(game))

    @router.post("/api/tables/{game_id}/join", dependencies=[NEEDS_ENGINE])
    def join_table(game_id: str, body: Join, token: str | None = SEAT_TOKEN) -> dict[str, Any]:
        """Take the first open seat for people (or ``seat``); the answer carries the seat's
        token, which no one else ever sees."""
        game, shared = games.table(game_id)
        with game.lock:
            if token:
                mine = shared.seat_of(token)
                if mine is not None:
                    raise Conflict(f"you sit at this table already (seat {mine})")
            if game.match_over:
                raise Conflict("this game is over: nobody can join it now; start a new table")
            seat = shared.free_seat(body.seat)
            new_token = shared.take(seat, shared.player_name(body.name, seat))
            games.commit_seats(game, seat)
            game.retell()  # the sentences so far name the new player, as after a restart
            _tick(game, shared)
            return {"token": new_token, **table_view(game, seat, 0, 0, catalogue)}

    @router.post("/api/tables/{game_id}/start", dependencies=[NEEDS_ENGINE])
    def start_table(game_id: str, token: str | None = SEAT_TOKEN) -> dict[str, Any]:
        """The host starts the game (anyone seated, once the host is away): the agents play
        until a person must act."""
        game, shared = games.table(game_id)
        with game.lock:
            seat = shared.seat_for(token, required=True)
            start, seq = len(game.log_of(seat)), game.seq
            shared.start(seat)
            games.commit_seats(game)
            game.play_agents(catalogue, batcher)
            games.commit(game)
            return table_view(game, seat, start, seq, catalogue)

    @router.post("/api/tables/{game_id}/moves", dependencies=[NEEDS_ENGINE])
    async def table_move(
        game_id: str, body: Move, token: str | None = SEAT_TOKEN
    ) -> dict[str, Any]:
        """Your seat's move; the agents (and the stand-in of away players) then play until
        a person must act or the hand is over."""
        game, shared = games.table(game_id)

        def answer() -> dict[str, Any]:
            seat = shared.seat_for(token, required=True)
            if not shared.started:
                raise Conflict("the host has not started the game yet")
            start, seq = len(game.log_of(seat)), game.seq
            _tick(game, shared)
            if shared.ran_out.get(seat) == body.seq < game.seq:
                raise Conflict(
                    "your time ran out: your seat played its default move; look at the table again"
                )
            game.human_move(body.action, body.seq, seat)
            game.play_agents(catalogue, batcher)
            games.commit(game)
            return table_view(game, seat, start, seq, catalogue)

        return await run_locked(game, answer, _at_once(game))

    @router.post("/api/tables/{game_id}/next-hand", dependencies=[NEEDS_ENGINE])
    async def table_next_hand(
        game_id: str, body: NextHand, token: str | None = SEAT_TOKEN
    ) -> dict[str, Any]:
        """Deal the next hand (any seated player may; the first request wins)."""
        game, shared = games.table(game_id)

        def answer() -> dict[str, Any]:
            seat = shared.seat_for(token, required=True)
            start, seq = len(game.log_of(seat)), game.seq
            game.next_hand(body.seq)
            game.play_agents(catalogue, batcher)
            games.commit(game)
            return table_view(game, seat, start, seq, catalogue)

        return await run_locked(game, answer, _at_once(game))

    def _at_once(game: WebGame) -> bool:
        """Whether every agent of ``game`` (the stand-in of away players included) decides
        at once, so that its requests run in the event loop (:func:`run_locked`)."""
        stand_in = game.shared.stand_in if game.shared is not None else None
        return catalogue.answers_at_once([*game.agents, stand_in])

    def _tick(game: WebGame, shared: SharedTable) -> None:
        """Move the table on (the game's lock held): a person's turn that ran out plays
        the seat's default move, then the agents and the stand-ins play until a person
        who is here must act."""
        if not shared.started or game.game.over:
            return
        if shared.time_out(game.game.current_seat, game.seq):
            game.timeout_move(game.game.current_seat)
        game.play_agents(catalogue, batcher)
        if game.pending:
            games.commit(game)

    return router


def _client(request: Request) -> str:
    """The address a request came from (the key of the per-client cap)."""
    return request.client.host if request.client is not None else ""
