"""A coloured text view of one UNO table, from one seat or (for debugging) from every seat,
and the envs' render modes.

From one seat, only what that seat knows is shown: its own hand, the table and every seat's
card count; other hands stay hidden. The view ``"all"`` shows every hand. The PettingZoo and
Gymnasium envs check their ``render_mode`` and ``render_view`` here, and render through
:func:`render_in_mode`: ``"ansi"`` returns the text, ``"human"`` prints it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import gymnasium
import numpy as np

from uno_env import cards as C
from uno_env import core
from uno_env.core import UnoState
from uno_env.files import shown
from uno_env.rules import Rules

__all__ = [
    "RENDER_MODES",
    "check_render_mode",
    "check_render_view",
    "colour_card",
    "render_in_mode",
    "render_table",
]

_ANSI = {0: "\x1b[1;31m", 1: "\x1b[1;33m", 2: "\x1b[1;32m", 3: "\x1b[1;34m", 4: "\x1b[1;35m"}
_RESET = "\x1b[0m"
_COLOUR_NAMES = ("red", "yellow", "green", "blue", "not named")


def colour_card(name: str, colour: int, use_colour: bool = True) -> str:
    """Wrap a card or action name in the ANSI colour of ``colour`` (0-3; 4: wild)."""
    return f"{_ANSI[colour]}{name}{_RESET}" if use_colour else name


def _face_text(face: int, use_colour: bool) -> str:
    return colour_card(C.FACE_NAMES[face], int(C.FACE_COLOUR[face]), use_colour)


def _action_text(action: int, use_colour: bool) -> str:
    colour = int(C.ACTION_COLOUR[action])
    name = C.action_name(action)
    return colour_card(name, colour, use_colour) if colour >= 0 else name


def render_table(
    rules: Rules,
    state: UnoState,
    game: int = 0,
    view: int | Literal["all"] | None = None,
    colour: bool = True,
    names: Sequence[str] | None = None,
) -> str:
    """Return a text view of one game of a batch.

    Args:
        rules: The rules of the batch.
        state: The batch.
        game: Which game of the batch to show.
        view: The seat whose view is shown, ``"all"`` for every hand (debugging), or
            ``None`` for the seat that must act.
        colour: Use ANSI colours.
        names: A name per seat (default ``player_k``).

    Raises:
        ValueError: for a bad game index, seat or list of names.
    """
    n_players = rules.num_players
    if not 0 <= game < state.batch_size:
        raise ValueError(f"game must be in 0..{state.batch_size - 1}, got {game}")
    if view is not None and view != "all" and not 0 <= int(view) < n_players:
        raise ValueError(f"view must be 'all', None or a seat in 0..{n_players - 1}, got {view!r}")
    names = list(names) if names is not None else [f"player_{s}" for s in range(n_players)]
    if len(names) != n_players:
        raise ValueError(f"need {n_players} seat names, got {len(names)}")
    current = int(state.current[game])
    live = bool(state.live[game])
    seen = set(range(n_players)) if view == "all" else {current if view is None else int(view)}
    phase = int(state.phase[game])
    phase_name = core.PHASE_NAMES[phase] if phase < len(core.PHASE_NAMES) else f"phase {phase}"
    # With two players the turn alternates whichever way play goes: no direction is shown.
    direction = "clockwise" if state.direction[game] > 0 else "counter-clockwise"
    going = f"{direction}  " if n_players > 2 else ""
    top = int(state.top[game])
    table_colour = int(state.colour[game])
    lines = [
        f"UNO  hand {int(state.hand_no[game]) + 1}  turn {int(state.turn[game])}  "
        f"{going}phase: {phase_name}",
        f"top: {_face_text(top, colour)}  colour: "
        f"{colour_card(_COLOUR_NAMES[table_colour], table_colour, colour)}  "
        f"draw pile: {C.DECK_SIZE - int(state.draw_pos[game])}  "
        f"discards: {int(state.discard_len[game])}",
    ]
    if int(state.pending[game]) > 0:
        who = int(state.wd4_seat[game])
        by = f" (played by {names[who]})" if who >= 0 else ""
        lines.append(f"pending penalty: {int(state.pending[game])} cards{by}")
    exposed = int(state.uno_exposed[game])
    width = max(len(n) for n in names)
    for seat in range(n_players):
        count = int(state.hand_size[game, seat])
        marker = ">" if live and seat == current else " "
        text = f"{marker} {names[seat]:<{width}}  {count:>3} card{'s' if count != 1 else ' '}"
        if seat in seen:
            faces = np.repeat(np.arange(C.NUM_FACES), state.hands[game, seat].astype(np.int64))
            text += "  " + " ".join(_face_text(int(f), colour) for f in faces)
        if seat == exposed:
            text += "  (one card, no UNO declared: catchable)"
        if seat == current and live and bool(state.declared[game]):
            text += "  UNO!"
        lines.append(text)
    if live and current in seen:
        drawn = int(state.drawn[game])
        if drawn >= 0:
            lines.append(f"just drew: {_face_text(drawn, colour)}")
        legal = np.flatnonzero(core.legal_action_mask(rules, state)[game])
        lines.append("legal: " + ", ".join(_action_text(int(a), colour) for a in legal))
    if bool(state.done[game]):
        winner = int(state.winner[game])
        points = int(state.hand_points[game, winner])
        lines.append(f"{names[winner]} wins the hand (+{points} points)")
    elif bool(state.truncated[game]):
        lines.append(f"hand truncated after {int(state.turn[game])} turns (no winner)")
    return "\n".join(lines)


RENDER_MODES = ("ansi", "human")
"""The PettingZoo and Gymnasium envs' render modes: ``ansi`` returns the text of the table,
``human`` prints it."""


def check_render_mode(render_mode: str | None) -> str | None:
    """An env's ``render_mode``: one of :data:`RENDER_MODES`, or ``None``.

    Raises:
        ValueError: for anything else, naming it.
    """
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(
            f"render_mode must be one of {list(RENDER_MODES)} or None, got {render_mode!r}"
        )
    return render_mode


def check_render_view(
    render_view: int | np.integer | Literal["all"] | None, n_players: int
) -> int | Literal["all"] | None:
    """An env's ``render_view`` (whose view ``render`` shows): ``None`` (the seat to act),
    ``"all"``, or a seat (NumPy's integers too), as a Python int.

    Raises:
        ValueError: for anything else (a bool, a seat off the table), naming it.
    """
    if not (
        render_view is None
        or (isinstance(render_view, str) and render_view == "all")
        or (
            isinstance(render_view, (int, np.integer))
            and not isinstance(render_view, bool)
            and 0 <= render_view < n_players
        )
    ):
        raise ValueError(
            f"render_view must be None, 'all' or a seat in 0..{n_players - 1}, "
            f"got {shown(render_view)}"
        )
    if render_view is None or isinstance(render_view, str):
        return render_view
    return int(render_view)


def render_in_mode(render_mode: str | None, draw: Callable[[], str]) -> str | None:
    """What an env's ``render()`` gives in ``render_mode``: the text of ``draw()`` for
    ``"ansi"``; ``None`` after printing it for ``"human"``; ``None`` and a warning (nothing
    drawn) without a render mode."""
    if render_mode is None:
        gymnasium.logger.warn("render() called without a render_mode")
        return None
    text = draw()
    if render_mode == "human":
        print(text)
        return None
    return text
