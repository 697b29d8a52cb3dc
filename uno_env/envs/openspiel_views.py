"""What each seat of ``python_uno`` sees: the hand's public record and the two observers.

A state (:mod:`uno_env.envs.openspiel_state`) keeps a :class:`PublicTable`: the core state and
the record of every step's public result. From it the observers write the observation tensor
(the lab's :func:`uno_env.observation.encode`), the observation string, and the
perfect-recall information-state string; nothing hidden from the seat enters either.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from uno_env import cards as C
from uno_env import core
from uno_env.core import UnoState
from uno_env.files import shown
from uno_env.observation import OBS_DIM, OBS_FIELDS, OBS_LAYOUT, encode
from uno_env.rules import Rules

if TYPE_CHECKING:
    from uno_env.envs.openspiel_state import UnoOpenSpielState

GAME_NAME = "python_uno"
"""The short name the game is registered under."""


def check_player(player: Any, num_players: int) -> None:
    """Refuse a seat that is no integer (``TypeError``) or is outside the table."""
    if isinstance(player, bool) or not isinstance(player, (int, np.integer)):
        raise TypeError(
            f"{GAME_NAME}: player must be an integer in 0..{num_players - 1}, got {shown(player)}"
        )
    if not 0 <= player < num_players:
        raise ValueError(
            f"{GAME_NAME}: player must be in 0..{num_players - 1}, got {shown(int(player))}"
        )


def _table_of(state: Any, rules: Rules) -> PublicTable:
    """The table of a ``python_uno`` state that an observer of ``rules`` is given.

    Raises:
        TypeError: for anything but a ``python_uno`` state (``None``, another game's state).
        ValueError: for a state of other rules than the observer's game.
    """
    table = getattr(state, "_table", None)
    if not isinstance(table, PublicTable):
        kind = "None" if state is None else f"a {type(state).__module__}.{type(state).__name__}"
        raise TypeError(f"{GAME_NAME}: an observer reads a {GAME_NAME} state, got {kind}")
    if table.rules.num_players != rules.num_players:
        raise ValueError(
            f"{GAME_NAME}: the state has {table.rules.num_players} seats; the observer's game "
            f"has num_players={rules.num_players}"
        )
    if table.rules != rules:
        raise ValueError(f"{GAME_NAME}: the state is of other rules than the observer's game")
    return table


class PublicStep(NamedTuple):
    """One applied decision (or the deal, seat -1) and its public and private results."""

    seat: int
    action: int
    hands: bytes
    """Every seat's cards after the step (each seat reads only its own)."""
    sizes: tuple[int, ...]
    top: int
    colour: int
    pile: int
    current: int
    phase: int
    events: int
    dealer: int


def step_of(seat: int, action: int, state: UnoState) -> PublicStep:
    return PublicStep(
        seat=seat,
        action=action,
        hands=state.hands[0].tobytes(),
        sizes=tuple(state.hand_size[0].tolist()),
        top=int(state.top[0]),
        colour=int(state.colour[0]),
        pile=C.DECK_SIZE - int(state.draw_pos[0]),
        current=int(state.current[0]),
        phase=int(state.phase[0]),
        events=int(state.step_events[0]),
        dealer=int(state.dealer[0]),
    )


class PublicTable:
    """Everything a state holds, in one attribute (OpenSpiel deep-copies a Python state's
    attributes on every clone: this one copies only what changes)."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.key_bytes: list[int] = []
        self.state: UnoState | None = None
        self.steps: list[PublicStep] = []
        self.known_from = [0] * rules.num_players
        """Per seat: the first step whose own cards this state knows (later than 0 in a
        resampled state, for the seats other than the one it was resampled for)."""
        self.resamples: list[tuple[int, int, int]] = []
        """Each resampling that made this state, in order: (the number of actions applied
        before it, the seat, the key), what ``serialize()`` writes beside the history."""

    def __deepcopy__(self, memo: dict[int, Any]) -> PublicTable:
        # The rules and the steps are immutable: shared; the core state is copied.
        out = PublicTable.__new__(PublicTable)
        out.rules = self.rules
        out.key_bytes = list(self.key_bytes)
        out.state = None if self.state is None else self.state.copy()
        out.steps = list(self.steps)
        out.known_from = list(self.known_from)
        out.resamples = list(self.resamples)
        return out

    def __getstate__(self) -> dict[str, Any]:
        # OpenSpiel's C++ serialization of a Python state (``random_sim_test``'s round trips)
        # pickles the state's attributes; only the arrays of the core state are kept (not
        # its caches). Text from users never comes here: ``python_uno`` reads states back
        # by replaying their actions (openspiel_game.UnoOpenSpielGame.deserialize_state).
        return {
            "rules": self.rules.to_dict(),
            "key_bytes": self.key_bytes,
            "state": None if self.state is None else self.state.array_fields(),
            "steps": [tuple(step) for step in self.steps],
            "known_from": self.known_from,
            "resamples": self.resamples,
        }

    def __setstate__(self, data: dict[str, Any]) -> None:
        self.rules = Rules.from_dict(data["rules"])
        self.key_bytes = list(data["key_bytes"])
        arrays = data["state"]
        self.state = None if arrays is None else UnoState(**arrays)
        self.steps = [PublicStep(*step) for step in data["steps"]]
        self.known_from = list(data["known_from"])
        self.resamples = [(int(m), int(p), int(k)) for m, p, k in data["resamples"]]


def hand_text(hands: bytes, seat: int) -> str:
    """The cards of ``seat`` in a step's ``hands`` (54 counts per seat), sorted by face."""
    return _counts_text(hands[seat * C.NUM_FACES : (seat + 1) * C.NUM_FACES])


@functools.lru_cache(maxsize=1 << 16)
def _counts_text(counts: bytes) -> str:
    # Information-state strings render the same hands over and over: cached by their bytes.
    return " ".join(C.FACE_NAMES[f] for f, n in enumerate(counts) for _ in range(n))


def colour_text(colour: int) -> str:
    return "-" if colour == C.NO_COLOUR else C.COLOURS[colour]


@functools.lru_cache(maxsize=1 << 16)
def _step_text(step: PublicStep) -> str:
    """The public part of a step, as any seat saw it."""
    head = (
        f"dealer {step.dealer} deals"
        if step.seat < 0
        else f"{step.seat}:{C.ACTION_NAMES[step.action]}"
    )
    events = core.event_names(step.events)
    return (
        f"{head} | top {C.FACE_NAMES[step.top]} {colour_text(step.colour)} | cards "
        f"{' '.join(map(str, step.sizes))} | pile {step.pile} | "
        + ("over" if step.phase == core.OVER else f"{step.current} {core.PHASE_NAMES[step.phase]}")
        + (f" | {' '.join(events)}" if events else "")
    )


def _seat_list(values: np.ndarray, player: int, num_players: int) -> list[tuple[int, np.ndarray]]:
    """(absolute seat, entry) pairs of a field kept per relative seat (slot k: seat p+k)."""
    return [((player + k) % num_players, values[k]) for k in range(num_players)]


def _observation_text(obs: np.ndarray, player: int, num_players: int) -> str:
    """The encoded observation of ``player`` as text (what the tensor holds, in words)."""

    def field(name: str) -> np.ndarray:
        return obs[OBS_LAYOUT[name]]

    def faces(counts: np.ndarray) -> str:
        return " ".join(C.FACE_NAMES[f] for f in range(C.NUM_FACES) for _ in range(int(counts[f])))

    def one_hot(values: np.ndarray, names: tuple[str, ...] | str) -> str:
        hot = np.flatnonzero(values)
        return "-" if hot.size == 0 else names[int(hot[0])]

    def per_seat(name: str, width: int, render: Callable[[np.ndarray], str]) -> str:
        rows = field(name).reshape(C.MAX_PLAYERS, width)
        return " ".join(
            f"{seat}:{render(row)}" for seat, row in _seat_list(rows, player, num_players)
        )

    def colours(values: np.ndarray) -> str:
        return "".join(C.COLOURS[c] for c in np.flatnonzero(values)) or "-"

    relative_seats = tuple(str((player + k) % num_players) for k in range(C.MAX_PLAYERS))
    legal = [C.ACTION_NAMES[a] for a in np.flatnonzero(field("legal_actions"))]
    played_ranks = (*C.RANK_NAMES, "W", "W+4")
    parts = [
        f"p{player}",
        f"hand {faces(field('hand')) or '-'}",
        f"top {one_hot(field('top_card'), C.FACE_NAMES)} "
        f"{one_hot(field('colour'), C.COLOURS + '-')}",
        f"direction {int(field('direction')[0]):+d}",
        f"phase {one_hot(field('phase'), core.PHASE_NAMES)}",
        f"cards {per_seat('hand_sizes', 1, lambda v: str(int(v[0])))}",
        f"pile {round(float(field('draw_pile_size')[0]) * C.DECK_SIZE)}",
        f"discards {faces(field('discard_counts')) or '-'}",
        f"uno_exposed {one_hot(field('uno_exposed'), relative_seats)}",
        f"drawn {one_hot(field('drawn_card'), C.FACE_NAMES)}",
        f"pending {int(field('pending_penalty')[0])}",
        f"declared {int(field('declared')[0])}",
        f"legal {' '.join(legal) or '-'}",
        f"lacks {per_seat('shown_lacks', C.NUM_COLOURS, colours)}",
        "last "
        + per_seat(
            "last_played_rank",
            len(played_ranks),
            lambda v: one_hot(v, played_ranks),
        ),
        "last_colour "
        + per_seat("last_played_colour", C.NUM_COLOURS + 1, lambda v: one_hot(v, C.COLOURS + "W")),
        f"named {per_seat('last_named', C.NUM_COLOURS, lambda v: one_hot(v, C.COLOURS))}",
        f"drew {per_seat('cards_drawn', 1, lambda v: str(int(v[0])))}",
        "unseen " + " ".join(f"{int(n)}" for n in field("unseen_colours")),
        "scores " + per_seat("scores", 1, lambda v: f"{float(v[0]):g}"),
    ]
    return " | ".join(parts)


class ObservationObserver:
    """The default observation: :func:`uno_env.observation.encode` from the player's seat.

    ``tensor`` is the flat vector; ``dict`` holds one view per field of ``OBS_FIELDS``.
    """

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.tensor: np.ndarray | None = np.zeros(OBS_DIM, dtype=np.float32)
        self.dict = {field.name: self.tensor[OBS_LAYOUT[field.name]] for field in OBS_FIELDS}

    def _encoded(self, state: UnoOpenSpielState, player: int) -> np.ndarray | None:
        table = _table_of(state, self.rules)
        check_player(player, self.rules.num_players)
        if table.state is None:  # before the deal nothing is on the table
            return None
        return encode(self.rules, table.state, np.array([player], dtype=np.int64))[0]

    def set_from(self, state: UnoOpenSpielState, player: int) -> None:
        """Write the observation of ``state`` from ``player``'s seat into ``tensor``."""
        assert self.tensor is not None
        obs = self._encoded(state, player)
        if obs is None:
            self.tensor.fill(0.0)
        else:
            self.tensor[:] = obs

    def string_from(self, state: UnoOpenSpielState, player: int) -> str:
        """The observation of ``state`` from ``player``'s seat, as text."""
        obs = self._encoded(state, player)
        if obs is None:
            return f"p{player} | before the deal"
        return _observation_text(obs, player, self.rules.num_players)


class InfoStateObserver:
    """The perfect-recall information state: a string only (``tensor`` is None)."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.tensor: np.ndarray | None = None
        self.dict: dict[str, np.ndarray] = {}
        self._now = ObservationObserver(rules)

    def set_from(self, state: UnoOpenSpielState, player: int) -> None:
        """No tensor to write (the state and the seat are checked all the same).

        Raises:
            TypeError: for a state that is no ``python_uno`` state, or a seat that is no
                integer.
            ValueError: for a state of other rules, or a seat outside the table.
        """
        _table_of(state, self.rules)
        check_player(player, self.rules.num_players)

    def string_from(self, state: UnoOpenSpielState, player: int) -> str:
        """``player``'s information state: its history of public steps and own cards."""
        table = _table_of(state, self.rules)
        check_player(player, self.rules.num_players)
        if table.state is None:
            return f"p{player} | before the deal"
        n_players = self.rules.num_players
        known = table.known_from[player]
        lines = [f"p{player} of {n_players}"]
        if known > 0:
            lines.append(f"own cards before step {known} not known (a resampled state)")
        width = C.NUM_FACES
        shown: bytes | None = None
        for i, step in enumerate(table.steps):
            text = _step_text(step)
            if i >= known:
                # Render the own hand only where it changed (comparing its bytes is cheap).
                own = step.hands[player * width : (player + 1) * width]
                if own != shown:
                    text += f" | you {hand_text(step.hands, player) or '-'}"
                    shown = own
            lines.append(text)
        lines.append("now " + self._now.string_from(state, player))
        return "\n".join(lines)
