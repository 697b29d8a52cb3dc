"""``UnoGame``: one game, by card names, for users, scenarios and tests.

It runs on the batched core with B = 1 (no second rules implementation) and speaks the text
notation of :mod:`uno_env.cards`::

    >>> from uno_env import UnoGame
    >>> game = UnoGame(seed=7, num_players=2, dealer=0,
    ...                deck=["R1", "G1", "R2", "G2", "R3", "G3", "R4", "G4", "R5", "G5",
    ...                      "R6", "G6", "R7", "G7", "R9"])
    >>> game.current_seat, game.top_card, game.current_colour
    (1, 'R9', 'R')
    >>> "G7" in game.legal_actions()
    False
    >>> game.step("R7")
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from uno_env import cards as C
from uno_env import core
from uno_env.config_values import check_int
from uno_env.core.checks import is_int
from uno_env.core.setup import game_keys
from uno_env.files import shown
from uno_env.rng import derive_keys, keyed_permutation
from uno_env.rules import Rules, load_rules

__all__ = ["UnoGame", "stacked_deck"]

STACKED_FILL_STREAM = 2**40 - 2
"""Random stream that orders the cards a stacked deck leaves unlisted."""


def _face(card: object) -> int:
    """A card of a stacked deck, by name or by face id, as its face id."""
    if isinstance(card, str):
        return C.parse_card(card)
    if not is_int(card) or not 0 <= card < C.NUM_FACES:  # type: ignore[operator]
        raise ValueError(
            f"deck: {shown(card)} is not a card: give a name like 'G7' or a face id in "
            f"0..{C.NUM_FACES - 1}"
        )
    return int(card)  # type: ignore[call-overload]


def stacked_deck(top_cards: Sequence[str | int], key: int) -> np.ndarray:
    """Build a 108-card deck whose first cards are ``top_cards``; the rest follow at random.

    Args:
        top_cards: Card names (or face ids), top of the deck first.
        key: The game key that orders the unlisted cards.

    Raises:
        ValueError: if a name is not a card, a face is listed more often than the deck holds,
            or ``key`` is no integer in ``[0, 2**64)`` (named as given).
    """
    key_arr = game_keys(key, "key")
    if key_arr.shape != ():
        raise ValueError(f"key: expected one game key, got {shown(key)}")
    if isinstance(top_cards, (str, bytes, Mapping)) or not isinstance(
        top_cards, (Sequence, np.ndarray)
    ):
        raise ValueError(
            f"deck: expected a list of card names or face ids, top first, got {shown(top_cards)}"
        )
    faces = [_face(card) for card in top_cards]
    counts = np.bincount(np.asarray(faces, dtype=np.int64), minlength=C.NUM_FACES)
    over = [
        f"{C.FACE_NAMES[f]} listed {counts[f]} times, the deck holds {C.FACE_COUNTS[f]}"
        for f in range(C.NUM_FACES)
        if counts[f] > C.FACE_COUNTS[f]
    ]
    if over:
        raise ValueError(f"stacked deck lists too many cards: {'; '.join(over)}")
    rest = np.repeat(np.arange(C.NUM_FACES), C.FACE_COUNTS - counts)
    order = keyed_permutation(key_arr.reshape(1), STACKED_FILL_STREAM, rest.size)[0]
    return np.concatenate([np.asarray(faces, dtype=np.int64), rest[order]]).astype(np.int8)


class UnoGame:
    """A single game of UNO (a match of hands) driven by card and action names.

    Args:
        rules: Rules, a preset name, a YAML path or a mapping; ``None`` is the official rules.
        seed: Seed of the game's key (same seed, same game).
        dealer: Dealer seat of the first hand; ``None`` draws it at random from the seed.
        deck: A stacked deck: card names, top first. Cards are dealt from it one at a time
            starting at the dealer's left, then the starter is turned, then the draw pile
            follows in order. Unlisted cards follow in seeded random order.
        **rule_overrides: Rules fields to change, e.g. ``num_players=3``.
    """

    def __init__(
        self,
        rules: Rules | str | Path | Mapping[str, Any] | None = None,
        seed: int | None = 0,
        *,
        dealer: int | None = None,
        deck: Sequence[str | int] | None = None,
        **rule_overrides: Any,
    ) -> None:
        self.rules: Rules = load_rules(rules, **rule_overrides)
        self.key = int(derive_keys(seed, 1)[0])
        decks = None if deck is None else stacked_deck(deck, self.key)
        self.state: core.UnoState = core.init(
            self.rules, keys=np.array([self.key], dtype=np.uint64), dealer=dealer, decks=decks
        )
        self.history: list[tuple[int, str]] = []
        """(seat, action name) of every step taken in the current hand."""

    # ---- reading the table -----------------------------------------------------------

    @property
    def num_players(self) -> int:
        """Seats at the table."""
        return self.rules.num_players

    def hand(self, seat: int) -> list[str]:
        """The cards of ``seat``, sorted by face."""
        self._check_seat(seat)
        counts = self.state.hands[0, seat]
        return [C.FACE_NAMES[f] for f in range(C.NUM_FACES) for _ in range(int(counts[f]))]

    @property
    def hands(self) -> list[list[str]]:
        """Every seat's cards (the full, hidden-information view)."""
        return [self.hand(seat) for seat in range(self.num_players)]

    @property
    def hand_sizes(self) -> list[int]:
        """Number of cards held by each seat."""
        return [int(n) for n in self.state.hands[0].sum(axis=1)]

    @property
    def current_seat(self) -> int:
        """The seat that must act."""
        return int(self.state.current[0])

    @property
    def top_card(self) -> str:
        """The top card of the discard pile."""
        return C.FACE_NAMES[int(self.state.top[0])]

    @property
    def current_colour(self) -> str | None:
        """The colour to match (``None`` while a Wild starter's colour is not yet named)."""
        colour = int(self.state.colour[0])
        return None if colour == C.NO_COLOUR else C.COLOURS[colour]

    @property
    def direction(self) -> int:
        """+1 for clockwise (increasing seats), -1 for counter-clockwise."""
        return int(self.state.direction[0])

    @property
    def phase(self) -> str:
        """What the acting seat is deciding: play, after_draw, challenge, choose_colour, over."""
        return core.PHASE_NAMES[int(self.state.phase[0])]

    @property
    def dealer(self) -> int:
        """The dealer of the current hand."""
        return int(self.state.dealer[0])

    @property
    def drawn_card(self) -> str | None:
        """The card just drawn that may now be played or kept."""
        face = int(self.state.drawn[0])
        return None if face < 0 else C.FACE_NAMES[face]

    @property
    def draw_pile_size(self) -> int:
        """Cards left in the draw pile."""
        return C.DECK_SIZE - int(self.state.draw_pos[0])

    @property
    def draw_pile(self) -> list[str]:
        """The draw pile, top first (hidden information)."""
        start = int(self.state.draw_pos[0])
        return [C.FACE_NAMES[f] for f in self.state.deck[0, start:]]

    @property
    def discard_pile(self) -> list[str]:
        """The discard pile, bottom first (the last is the top card)."""
        return [C.FACE_NAMES[f] for f in self.state.discard[0, : int(self.state.discard_len[0])]]

    @property
    def uno_exposed(self) -> int | None:
        """The seat that may be caught for not declaring UNO, if any."""
        seat = int(self.state.uno_exposed[0])
        return None if seat < 0 else seat

    @property
    def done(self) -> bool:
        """The hand ended with a winner."""
        return bool(self.state.done[0])

    @property
    def truncated(self) -> bool:
        """The hand hit ``max_turns``."""
        return bool(self.state.truncated[0])

    @property
    def over(self) -> bool:
        """The hand is finished (won or truncated)."""
        return self.done or self.truncated

    @property
    def winner(self) -> int | None:
        """The seat that went out, if any."""
        seat = int(self.state.winner[0])
        return None if seat < 0 else seat

    @property
    def hand_scores(self) -> list[int]:
        """Points each seat scored in the finished hand."""
        return [int(p) for p in self.state.hand_points[0]]

    @property
    def match_scores(self) -> list[int]:
        """Running match totals."""
        return [int(p) for p in self.state.scores[0]]

    @property
    def match_over(self) -> bool:
        """A seat reached ``target_score``."""
        return bool(self.state.match_over[0])

    @property
    def turn(self) -> int:
        """Decisions taken in this hand."""
        return int(self.state.turn[0])

    # ---- acting ----------------------------------------------------------------------

    def legal_action_ids(self) -> list[int]:
        """Legal action ids of the acting seat."""
        return [int(a) for a in np.flatnonzero(core.legal_action_mask(self.rules, self.state)[0])]

    def legal_actions(self) -> list[str]:
        """Legal actions of the acting seat, in notation."""
        return C.action_names(self.legal_action_ids())

    def step(self, action: str | int) -> None:
        """Take an action, by name (``"G7"``, ``"W:B"``, ``"draw"``) or by id.

        Raises:
            ValueError: for an unknown name, or an illegal action (the game is unchanged).
        """
        if self.over:
            raise core.IllegalActionError("the hand is over; call next_hand() to deal the next one")
        if isinstance(action, str):
            action_id = C.parse_action(action)
        elif isinstance(action, (int, np.integer)) and not isinstance(action, bool):
            action_id = int(action)
        else:
            raise TypeError(f"action must be a name or an int id, got {action!r}")
        seat = self.current_seat
        self.state = core.step(self.rules, self.state, np.array([action_id]))
        self.history.append((seat, C.action_name(action_id)))

    def next_hand(self) -> None:
        """Deal the next hand of the match; the deal passes to the left."""
        self.state = core.next_hand(self.rules, self.state)
        self.history = []

    def _check_seat(self, seat: int) -> None:
        check_int("seat", seat, 0, self.num_players - 1)

    def __repr__(self) -> str:
        lines = [
            f"UnoGame(players={self.num_players}, dealer={self.dealer}, turn={self.turn}, "
            f"phase={self.phase})",
            f"  top {self.top_card}  colour {self.current_colour}  direction {self.direction:+d}"
            f"  draw pile {self.draw_pile_size}",
        ]
        for seat in range(self.num_players):
            marker = ">" if seat == self.current_seat and not self.over else " "
            lines.append(f" {marker}seat {seat}: {' '.join(self.hand(seat))}")
        if self.over:
            lines.append(f"  winner {self.winner}  hand scores {self.hand_scores}")
        return "\n".join(lines)
