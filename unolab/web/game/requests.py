"""What the game routes take (:mod:`unolab.web.game.routes`): the request bodies, checked
by pydantic before a route runs, the rules a new game asks for, and the house-rule switches
the page offers."""

from __future__ import annotations

from typing import Annotated, Any, Literal

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
from unolab.web.game.seats import AWAY_SECONDS, TURN_SECONDS
from unolab.web.guard import Invalid

__all__ = [
    "PERSON",
    "AgentMove",
    "Join",
    "Move",
    "NewGame",
    "NewTable",
    "NextHand",
    "PlayerName",
    "rules_for",
    "switch_list",
]

PERSON = "person"
"""The word of a seat for people among a new table's ``opponents``."""

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
    keep_as_data: StrictBool | None = Field(
        None, description="keep the game as research data (where the server collects games)"
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


PlayerName = Annotated[StrictStr, Field(max_length=24, description="the name the others see")]


class NewTable(NewGame):
    """The settings of a table for several people: a new game whose ``opponents`` may be
    ``"person"`` (a seat for a player who joins by the link), you in seat 0 as the host."""

    name: PlayerName = ""
    stand_in: StrictStr = Field(
        "mixbot", max_length=128, description="the agent that plays an away player's seat"
    )
    away_seconds: StrictInt = Field(AWAY_SECONDS[0], ge=AWAY_SECONDS[1], le=AWAY_SECONDS[2])
    turn_seconds: StrictInt = Field(TURN_SECONDS[0], ge=TURN_SECONDS[1], le=TURN_SECONDS[2])


class Join(BaseModel):
    """Take a seat at a table for several people (the first open one, or ``seat``)."""

    model_config = ConfigDict(extra="forbid")
    name: PlayerName = ""
    seat: StrictInt | None = Field(None, ge=0, lt=MAX_PLAYERS)


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


def rules_for(settings: NewGame) -> Rules:
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
