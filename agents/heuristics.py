"""The scoring the heuristic bots share: decoded observations, score layers, the base class.

The bots themselves (``greedy_points``, ``card_ranking``, ``mixbot``) are in
:mod:`unolab.agents.bots`; each says only how it ranks its plays (:meth:`HeuristicBot.play_keys`).

A heuristic bot reads a batch of observations only through the named slices of
:mod:`uno_env.observation` (:class:`ObsView`), gives every one of the 80 actions a score, and
plays the best-scoring *legal* action of each row (:func:`choose_actions`). Because the choice
is always made among the actions the mask allows, a bot never plays an illegal action, even in
phases or with actions that it does not know (house rules added later).

The scores are layered so that the decisions every bot shares are taken the same way:

=====================  ==================================================================
score (high to low)    action
=====================  ==================================================================
``CATCH_SCORE``        ``catch``: always catch a player who failed to declare UNO
``UNO_SCORE``          ``uno``: always declare when it is offered
``PLAY_BASE + key``    plays (0-59) the bot wants to make, ordered by the bot's own key
``NAME_SCORE + rank``  ``colour:c``: name the Wild starter's colour (most common in hand)
``SWAP_SCORE - size``  ``swap:k``: swap with the seat holding the fewest cards
``CHALLENGE_YES``      ``challenge`` when the Wild Draw Four looks like a bluff
``KEEP_SCORE``         ``keep``: keep the card just drawn (only if its play is held)
``DRAW_SCORE``         ``draw``: draw only when no play is wanted
``HELD_SCORE``         plays the bot holds back (e.g. a Wild kept for later)
``PASS_SCORE``         ``pass``: decline an out-of-turn opportunity
``ACCEPT_SCORE``       ``accept`` a Wild Draw Four
``CHALLENGE_NO``       ``challenge`` when the Wild Draw Four looks legal
=====================  ==================================================================

Held plays rank below ``draw`` and ``keep`` (the bot draws rather than play them). Holding is
a policy of the bot's own turn (phases ``play`` and ``after_draw``): in any other phase (e.g.
a house rule's window to stack a penalty or to jump in) a held card is an ordinary play.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from uno_env import cards as C
from uno_env import core
from uno_env.files import shown
from uno_env.observation import get_field
from uno_env.policy import check_masks, check_reset_games

__all__ = [
    "ACTION_COLOUR_OF_PLAY",
    "ACTION_FACE_OF_PLAY",
    "ACTION_POINTS_OF_PLAY",
    "DEFAULT_CHALLENGE_MIN_CARDS",
    "PLAY_KEY_LIMIT",
    "BoolArray",
    "FloatArray",
    "HeuristicBot",
    "IntArray",
    "ObsView",
    "choose_actions",
    "colour_counts",
    "colour_ranks",
    "compose_scores",
    "lexicographic",
    "matchable_after",
    "rank_of_actions_colour",
    "unseen_matching",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

# Score layers (float64 holds every integer below 2**53 exactly).
CATCH_SCORE = float(2**51)
UNO_SCORE = float(2**50)
PLAY_BASE = float(2**40)
PLAY_KEY_LIMIT = 2**39
"""Play keys must lie in ``[0, PLAY_KEY_LIMIT)``."""
NAME_SCORE = 1000.0
SWAP_SCORE = 600.0
CHALLENGE_YES = 500.0
KEEP_SCORE = 400.0
DRAW_SCORE = 300.0
HELD_SCORE = 200.0
PASS_SCORE = 150.0
ACCEPT_SCORE = 100.0
CHALLENGE_NO = 50.0
_OWN_TURN_PHASES = (core.PLAY, core.AFTER_DRAW)

DEFAULT_CHALLENGE_MIN_CARDS = 4
"""Challenge a Wild Draw Four when its player still holds at least this many cards.

With public information only, the size of the bluffer's hand is the best clue: a large hand
very likely holds a card of the colour that was current. Measured on the official rules with
``random`` players (20,000 games), a Wild Draw Four was illegal 0-9% of the time when its
player held 1-3 cards afterwards, 22-31% with 4 cards and over 40% with 5 or more. A
challenge costs 2 cards when it fails and wins about 8 cards plus a turn when it succeeds,
so it pays from roughly a 20-25% chance of a bluff: from 4 cards.
"""

ACTION_FACE_OF_PLAY: npt.NDArray[np.int64] = C.ACTION_FACE[: C.NUM_PLAY_ACTIONS].astype(np.int64)
"""Face played by each of the 60 play actions."""
ACTION_COLOUR_OF_PLAY: npt.NDArray[np.int64] = C.ACTION_COLOUR[: C.NUM_PLAY_ACTIONS].astype(
    np.int64
)
"""Colour each play action makes current (the named colour for wilds)."""
ACTION_POINTS_OF_PLAY: npt.NDArray[np.int64] = C.FACE_POINTS[ACTION_FACE_OF_PLAY].astype(np.int64)
"""Points of the card each play action plays (wilds 50, actions 20, numbers face value)."""
_COLOUR_OF_FACE = C.FACE_COLOUR[: C.NUM_COLOURED_FACES].astype(np.int64)
_RANK_OF_FACE = C.FACE_RANK[: C.NUM_COLOURED_FACES].astype(np.int64)
_COLOUR_ONEHOT = (_COLOUR_OF_FACE[:, None] == np.arange(C.NUM_COLOURS)[None, :]).astype(np.int64)
"""(52, 4): which colour each coloured face has."""
_RANK_ONEHOT = (_RANK_OF_FACE[:, None] == np.arange(C.NUM_RANKS)[None, :]).astype(np.int64)
"""(52, 13): which rank each coloured face has."""


@dataclass(frozen=True)
class ObsView:
    """The fields of a batch of observations that the heuristics use, decoded.

    Attributes:
        hand: Own cards, count per face, shape (B, 54).
        top: Face of the top discard, (B,).
        colour: Current colour 0-3, or 4 while a Wild starter's colour is not named, (B,).
        direction: +1 clockwise, -1 counter-clockwise, (B,).
        phase: Decision phase index (see ``uno_env.core.PHASE_NAMES``), -1 if none, (B,).
        drawn: Face just drawn (phase after_draw), else -1, (B,).
        hand_sizes: Card count of each seat relative to the observer, (B, 10).
        num_players: Table size, (B,).
        discard_counts: Count per face in the discard pile, (B, 54).
    """

    hand: IntArray
    top: IntArray
    colour: IntArray
    direction: IntArray
    phase: IntArray
    drawn: IntArray
    hand_sizes: IntArray
    num_players: IntArray
    discard_counts: IntArray

    @classmethod
    def from_observations(cls, observations: npt.NDArray[np.float32]) -> ObsView:
        """Decode a batch of observations (B, OBS_DIM)."""
        obs = np.asarray(observations)
        if obs.ndim != 2:
            raise ValueError(f"observations must have shape (B, OBS_DIM), got {obs.shape}")
        if obs.dtype.kind not in "fiub":  # text or objects: no encoding the lab writes
            raise ValueError(
                f"observations: expected numbers (float32, as uno_env.observation.encode "
                f"writes them), got dtype {obs.dtype}"
            )

        def counts(name: str) -> IntArray:
            return np.rint(get_field(obs, name)).astype(np.int64)

        def onehot(name: str, empty: int) -> IntArray:
            field = get_field(obs, name)
            return np.where(field.any(axis=1), field.argmax(axis=1), empty).astype(np.int64)

        direction = get_field(obs, "direction")[:, 0]
        return cls(
            hand=counts("hand"),
            top=onehot("top_card", -1),
            colour=onehot("colour", C.NO_COLOUR),
            direction=np.where(direction < 0, -1, 1).astype(np.int64),
            phase=onehot("phase", -1),
            drawn=onehot("drawn_card", -1),
            hand_sizes=counts("hand_sizes"),
            num_players=onehot("num_players", 1) + 1,
            discard_counts=counts("discard_counts"),
        )

    @property
    def batch_size(self) -> int:
        """Number of rows B."""
        return int(self.hand.shape[0])

    @property
    def next_slot(self) -> IntArray:
        """Relative slot of the next player in the direction of play (1 or N-1)."""
        return np.where(self.direction < 0, self.num_players - 1, 1)

    @property
    def previous_slot(self) -> IntArray:
        """Relative slot of the previous player in the direction of play (N-1 or 1)."""
        return np.where(self.direction < 0, 1, self.num_players - 1)

    @property
    def next_hand_size(self) -> IntArray:
        """Cards held by the next player, (B,)."""
        return self.hand_sizes[np.arange(self.batch_size), self.next_slot]

    @property
    def previous_hand_size(self) -> IntArray:
        """Cards held by the previous player, (B,)."""
        return self.hand_sizes[np.arange(self.batch_size), self.previous_slot]

    @property
    def non_wild_count(self) -> IntArray:
        """Coloured cards in hand, (B,)."""
        return self.hand[:, : C.NUM_COLOURED_FACES].sum(axis=1)

    @functools.cached_property
    def colour_ranks(self) -> IntArray:
        """Preference rank of each colour, (B, 4); see :func:`colour_ranks`."""
        return colour_ranks(self.hand)

    def unseen(self) -> IntArray:
        """Copies of each face neither in the discard pile nor in the own hand, (B, 54).

        These are the cards that may still be in the draw pile or in an opponent's hand.
        """
        left = C.FACE_COUNTS.astype(np.int64)[None, :] - self.discard_counts - self.hand
        return np.maximum(left, 0)


def colour_counts(hand: IntArray) -> IntArray:
    """Cards of each colour in a batch of hands (wilds excluded), shape (B, 4)."""
    return hand[:, : C.NUM_COLOURED_FACES] @ _COLOUR_ONEHOT


def colour_ranks(hand: IntArray) -> IntArray:
    """Rank of each colour by preference, shape (B, 4): 3 for the best, 0 for the worst.

    The best colour is the most common one in the hand; ties go to the colour whose cards
    are worth more points (so they can be dumped), then to the lower colour index (R, Y, G,
    B). Every row ranks the four colours 0..3 exactly once.
    """
    coloured = hand[:, : C.NUM_COLOURED_FACES]
    points = coloured @ (_COLOUR_ONEHOT * C.FACE_POINTS[: C.NUM_COLOURED_FACES, None])
    key = colour_counts(hand) * 4096 + points * 4 + (3 - np.arange(C.NUM_COLOURS))[None, :]
    return np.argsort(np.argsort(key, axis=1), axis=1).astype(np.int64)


def rank_of_actions_colour(ranks: IntArray) -> IntArray:
    """Rank (0-3) of the colour each play action makes current, shape (B, 60)."""
    return ranks[:, ACTION_COLOUR_OF_PLAY]


def unseen_matching(view: ObsView) -> IntArray:
    """Unseen cards that could follow each play, shape (B, 60).

    After a play the next player may follow with a card of the new colour or (for a coloured
    card) of the same rank. This counts the unseen copies (:meth:`ObsView.unseen`) of those
    faces, wilds excluded (they follow anything): the fewer, the harder to follow.
    """
    unseen = view.unseen()[:, : C.NUM_COLOURED_FACES]
    by_colour = unseen @ _COLOUR_ONEHOT  # (B, 4)
    by_rank = unseen @ _RANK_ONEHOT  # (B, 13)
    out = by_colour[:, ACTION_COLOUR_OF_PLAY].copy()
    coloured = by_rank[:, _RANK_OF_FACE] - unseen  # same rank, other colours
    out[:, : C.NUM_COLOURED_FACES] += coloured
    return out


def matchable_after(view: ObsView) -> IntArray:
    """Own coloured cards that would be playable on each play's result, shape (B, 60).

    Counts the cards left in hand after the play that match the new colour or (for a coloured
    card) its rank; wilds are left out since they match anything.
    """
    coloured = view.hand[:, : C.NUM_COLOURED_FACES]
    by_colour = coloured @ _COLOUR_ONEHOT
    by_rank = coloured @ _RANK_ONEHOT
    out = by_colour[:, ACTION_COLOUR_OF_PLAY].copy()
    # A coloured play f: the cards of its colour minus the copy played, plus the cards of its
    # rank in the other colours (the copies of f are already counted with its colour).
    out[:, : C.NUM_COLOURED_FACES] += by_rank[:, _RANK_OF_FACE] - coloured - 1
    return np.maximum(out, 0)


def lexicographic(keys: Sequence[IntArray], radices: Sequence[int]) -> IntArray:
    """Combine integer keys into one, the first key most significant.

    Args:
        keys: Arrays of one shape; key ``i`` is clipped to ``[0, radices[i])``.
        radices: The number of values of each key.

    Returns:
        ``sum(key_i * prod(radices[i+1:]))``, an int64 array below ``prod(radices)``.

    Raises:
        ValueError: if the lengths differ or the combined range reaches ``PLAY_KEY_LIMIT``.
    """
    if len(keys) != len(radices):
        raise ValueError(f"{len(keys)} keys but {len(radices)} radices")
    if int(np.prod(radices, dtype=object)) > PLAY_KEY_LIMIT:
        raise ValueError(f"radices {list(radices)} exceed the play key range {PLAY_KEY_LIMIT}")
    total = np.zeros(np.shape(keys[0]), dtype=np.int64)
    for key, radix in zip(keys, radices, strict=True):
        total = total * radix + np.clip(key, 0, radix - 1)
    return total


def compose_scores(
    view: ObsView,
    play_keys: IntArray,
    held: BoolArray | None = None,
    challenge_min_cards: int = DEFAULT_CHALLENGE_MIN_CARDS,
) -> FloatArray:
    """Score all 80 actions from a bot's play keys and the shared decisions.

    Args:
        view: The decoded observations.
        play_keys: The bot's preference for each play action (B, 60), integers in
            ``[0, PLAY_KEY_LIMIT)``, higher is better.
        held: Plays the bot holds back (B, 60): in the bot's own turn (phases ``play`` and
            ``after_draw``) they score below ``draw`` and ``keep``; elsewhere they are
            ordinary plays.
        challenge_min_cards: Challenge a Wild Draw Four when the player who played it holds
            at least this many cards (see :data:`DEFAULT_CHALLENGE_MIN_CARDS`).

    Returns:
        Scores (B, 80), float64; pass them to :func:`choose_actions` with the mask.
    """
    n_rows = view.batch_size
    scores = np.zeros((n_rows, C.NUM_ACTIONS), dtype=np.float64)
    plays = PLAY_BASE + play_keys.astype(np.float64)
    if held is not None:
        own_turn = np.isin(view.phase, _OWN_TURN_PHASES)[:, None]
        plays = np.where(held & own_turn, HELD_SCORE, plays)
    scores[:, : C.NUM_PLAY_ACTIONS] = plays
    scores[:, C.DRAW] = DRAW_SCORE
    scores[:, C.KEEP] = KEEP_SCORE
    challenge = view.previous_hand_size >= challenge_min_cards
    scores[:, C.CHALLENGE] = np.where(challenge, CHALLENGE_YES, CHALLENGE_NO)
    scores[:, C.ACCEPT] = ACCEPT_SCORE
    scores[:, C.UNO] = UNO_SCORE
    scores[:, C.CATCH] = CATCH_SCORE
    scores[:, C.PASS] = PASS_SCORE
    scores[:, C.NAME_COLOUR : C.NAME_COLOUR + C.NUM_COLOURS] = NAME_SCORE + view.colour_ranks
    # swap:k swaps with the seat k places ahead: prefer the smallest hand.
    sizes = view.hand_sizes[:, 1 : C.MAX_PLAYERS].astype(np.float64)
    scores[:, C.SWAP : C.SWAP + C.MAX_PLAYERS - 1] = SWAP_SCORE - sizes
    return scores


def choose_actions(scores: FloatArray, masks: BoolArray) -> IntArray:
    """Pick the best-scoring legal action of each row (ties: the lowest action id).

    Rows without a legal action (finished games) get action 0, which the engine ignores.

    Args:
        scores: (B, A) scores, higher is better.
        masks: (B, A) legal-action mask.

    Returns:
        Action ids, (B,) int64, always legal where a row has a legal action.

    Raises:
        ValueError: for masks not of the scores' shape, naming them.
    """
    if np.shape(masks) != scores.shape:
        given = "an array" if isinstance(masks, np.ndarray) else shown(masks)  # no rows shown
        raise ValueError(
            f"masks: expected shape {scores.shape}, one row per observation, got {given} of "
            f"shape {np.shape(masks)}"
        )
    masks = np.asarray(masks, dtype=bool)
    legal_scores = np.where(masks, scores, -np.inf)
    return np.where(masks.any(axis=1), legal_scores.argmax(axis=1), 0).astype(np.int64)


class HeuristicBot(ABC):
    """Base of the deterministic heuristic bots: score the plays, share the rest.

    Subclasses implement :meth:`play_keys`; everything else (declaring, catching,
    challenging, naming a starter colour, drawing, keeping, unknown actions) comes from
    :func:`compose_scores`. The bots are stateless and deterministic: the same observation
    and mask always give the same action.
    """

    name = "heuristic"

    def __init__(
        self,
        seed: int | np.random.Generator | None = None,
        challenge_min_cards: int = DEFAULT_CHALLENGE_MIN_CARDS,
    ) -> None:
        """Create the bot.

        Args:
            seed: Accepted for a uniform registry; the heuristics use no randomness.
            challenge_min_cards: See :data:`DEFAULT_CHALLENGE_MIN_CARDS`.
        """
        del seed
        self.challenge_min_cards = challenge_min_cards

    @abstractmethod
    def play_keys(self, view: ObsView) -> tuple[IntArray, BoolArray | None]:
        """Return the preference of each play action (B, 60) and the held plays (or None)."""

    def scores(self, observations: npt.NDArray[np.float32]) -> FloatArray:
        """Score all 80 actions of each row (before the mask is applied)."""
        view = ObsView.from_observations(observations)
        keys, held = self.play_keys(view)
        return compose_scores(view, keys, held, self.challenge_min_cards)

    def act(
        self, observations: npt.NDArray[np.float32], masks: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.int64]:
        """Choose the best-scoring legal action of each row.

        Raises:
            ValueError: for observations or masks of the wrong shape or kind.
        """
        scores = self.scores(observations)
        return choose_actions(scores, check_masks(self.name, masks, scores.shape[0]))

    def reset(self, games: npt.NDArray[np.bool_] | None = None) -> None:
        """Stateless: nothing to forget.

        Raises:
            ValueError: for ``games`` that are neither None nor a boolean mask.
        """
        check_reset_games(self.name, games)
        del games  # the heuristics keep no memory between games
