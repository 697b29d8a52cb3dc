"""The routes of a game in play (:func:`game_router`): what the page offers
(``/api/options``), dealing a new match, reading it, the human's moves, a language model's
move and the next hand.
"""

from __future__ import annotations

import asyncio
import errno
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    field_validator,
)

from uno_env.cards import MAX_PLAYERS
from uno_env.rules import DEFAULT_NUM_PLAYERS, PRESETS, Rules
from unolab.play import random_seed
from unolab.web.catalogue import Catalogue, UnknownAgentError
from unolab.web.errors import Conflict, Invalid
from unolab.web.game.batching import AgentBatcher
from unolab.web.game.games import Games
from unolab.web.game.table import WebGame
from unolab.web.settings import ServeConfig
from unolab.web.store import GameStore, new_game_id
from unolab.web.warming import NEEDS_ENGINE, require_searches

__all__ = [
    "MODEL_THREADS",
    "AgentMove",
    "Move",
    "NewGame",
    "NextHand",
    "game_router",
    "switch_list",
]

MODEL_THREADS = 32
"""Language models' moves decided at once (each waits seconds for its endpoint); more wait
their turn. Their threads are their own: the requests of the other games never wait for a
model."""

_FIXED = ("num_players", "seat_draw_streams")
"""Rule fields that are not house-rule switches (the table size is chosen apart)."""


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
    seed: StrictInt | Annotated[StrictStr, Field(max_length=32)] | None = Field(
        None, description="a number in 0 .. 2**63 - 1, or its decimal digits (as the view shows)"
    )

    @field_validator("seed")
    @classmethod
    def _seed_in_range(cls, seed: int | str | None) -> int | None:
        """A seed given as digits is read as the number; its range is checked either way."""
        if seed is None:
            return None
        if isinstance(seed, str) and not (seed.isascii() and seed.isdigit()):
            raise ValueError("the seed must be a whole number in 0 .. 2**63 - 1")
        number = int(seed)
        if not 0 <= number < 2**63:
            raise ValueError("the seed must be a whole number in 0 .. 2**63 - 1")
        return number


class Move(BaseModel):
    """The human's move: an action name and the move number it was chosen at."""

    model_config = ConfigDict(extra="forbid")
    action: StrictStr = Field(..., max_length=32, examples=["G7", "W:B", "draw", "uno"])
    seq: StrictInt = Field(..., ge=0, description="the game's `seq` when the move was chosen")


class AgentMove(BaseModel):
    """Ask the language model whose decision is due (the view's ``thinking``) for it."""

    model_config = ConfigDict(extra="forbid")
    seq: StrictInt = Field(..., ge=0, description="the game's `seq` when the page asked")


class NextHand(BaseModel):
    """Deal the next hand of the match."""

    model_config = ConfigDict(extra="forbid")
    seq: StrictInt = Field(..., ge=0)


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


def switch_list() -> list[dict[str, Any]]:
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
            "limits": {
                "max_games": config.max_games,
                "max_games_per_client": config.max_games_per_client,
                "max_body_bytes": config.max_body_bytes,
            },
        }

    @router.post("/api/games", status_code=201, dependencies=[NEEDS_ENGINE])
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
                if catalogue.entry(agent_id).kind == "search":  # compiled last, if just now
                    require_searches(request.app.state.warmup, agent_id)
            for agent_id in settings.opponents:
                entry = catalogue.entry(agent_id)
                if entry.kind == "llm":
                    if entry.unavailable is not None:
                        raise ValueError(f"{entry.label} cannot play here: {entry.unavailable}")
                    continue  # each game builds its own agent of the model
                catalogue.policy(agent_id, rules)  # unknown or unfit agents fail here
        except UnknownAgentError as err:
            raise Invalid(str(err)) from None
        except ValueError as err:
            raise Invalid(f"opponents: {err}") from None
        seed = int(settings.seed) if settings.seed is not None else random_seed()
        # The seed as a string, as in the view: a JavaScript number cannot hold every seed.
        setup = {**settings.model_dump(), "seed": str(seed)}
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
            _saved(game)
            return game.view(events_after=0)

    def _saved(game: WebGame) -> None:
        """Write the game's record if a finished hand is not on disk yet (the game's lock
        held). A failed write changes no game: the hand stays in memory, the view carries
        ``save_error``, and the next request about the game tries again. A finished match
        closes its models' agents (their connections and record files)."""
        if game.match_over:
            game.close_models()
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

    @router.get("/api/games/{game_id}")
    def get_game(
        game_id: str,
        log_from: int = Query(0, ge=0),
        events_after: int | None = Query(None, ge=0),
    ) -> dict[str, Any]:
        """The game as you see it, to take it up again (after a reload, say).

        ``log`` holds the sentences from ``log_from`` on; ``events`` the steps taken after
        move ``events_after`` (none unless it is given).
        """
        game = games.get(game_id)
        with game.lock:
            _saved(game)
            return game.view(min(log_from, len(game.log)), events_after)

    @router.post("/api/games/{game_id}/moves", dependencies=[NEEDS_ENGINE])
    def move(game_id: str, body: Move) -> dict[str, Any]:
        """Your move; the agents then play until it is your turn or the hand is over.
        The actions are committed to the file of live games before the answer.

        ``log`` in the answer holds the sentences this move added, ``events`` its steps
        (yours and the agents', one by one).
        """
        game = games.get(game_id)
        with game.lock:
            start, seq = len(game.log), game.seq
            game.agent_error = None
            game.human_move(body.action, body.seq)
            game.play_agents(catalogue, batcher)
            games.commit(game)
            _saved(game)
            return game.view(start, seq)

    @router.post("/api/games/{game_id}/agent-move", dependencies=[NEEDS_ENGINE])
    async def agent_move(game_id: str, body: AgentMove) -> dict[str, Any]:
        """The move of the language model whose decision is due (the view's ``thinking``);
        the agents then play on until the next model decision, your turn, or the hand's end.

        The model is asked in a thread of the models' own, so that no other game's request
        waits for its answer. An endpoint that fails is answered with the seat's fallback
        move and ``agent_error`` (one line).
        """
        game = games.get(game_id)
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
            _saved(game)
            return game.view(start, seq)

    @router.post("/api/games/{game_id}/next-hand", dependencies=[NEEDS_ENGINE])
    def next_hand(game_id: str, body: NextHand) -> dict[str, Any]:
        """Deal the next hand of the match (after a hand ended short of the target score)."""
        game = games.get(game_id)
        with game.lock:
            start, seq = len(game.log), game.seq
            game.agent_error = None
            game.next_hand(body.seq)
            game.play_agents(catalogue, batcher)
            games.commit(game)
            _saved(game)
            return game.view(start, seq)

    return router


def _client(request: Request) -> str:
    """The address a request came from (the key of the per-client cap)."""
    return request.client.host if request.client is not None else ""


def _reason(err: OSError) -> str:
    """Why a write failed, in words and without the path."""
    if err.errno == errno.ENOSPC:
        return "the disk is full"
    return (err.strerror or type(err).__name__).lower()
