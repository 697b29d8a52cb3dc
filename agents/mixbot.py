"""``mixbot``: colour control, held wilds, aggression near the end, card counting."""

from __future__ import annotations

import numpy as np

from uno_env import cards as C
from unolab.agents._common import (
    ACTION_COLOUR_OF_PLAY,
    ACTION_FACE_OF_PLAY,
    DEFAULT_CHALLENGE_MIN_CARDS,
    BoolArray,
    HeuristicBot,
    IntArray,
    ObsView,
    colour_counts,
    lexicographic,
    matchable_after,
    rank_of_actions_colour,
    unseen_matching,
)

__all__ = ["ATTACK_RANK", "MixBot"]


def _attack_rank() -> IntArray:
    """Draw Two 4 > Wild Draw Four 3 > Skip 2 > Reverse 1 > anything else 0, per play."""
    rank = C.FACE_RANK[ACTION_FACE_OF_PLAY].astype(np.int64)
    out = np.zeros(C.NUM_PLAY_ACTIONS, dtype=np.int64)
    out[rank == C.DRAW_TWO] = 4
    out[ACTION_FACE_OF_PLAY == C.WILD_DRAW_FOUR] = 3
    out[rank == C.SKIP] = 2
    out[rank == C.REVERSE] = 1
    return out


ATTACK_RANK: IntArray = _attack_rank()
"""Preference of each play when the next player is about to go out."""
_IS_COLOURED: IntArray = (ACTION_FACE_OF_PLAY < C.NUM_COLOURED_FACES).astype(np.int64)
_IS_WILD: BoolArray = ACTION_FACE_OF_PLAY == C.WILD
_IS_WD4: BoolArray = ACTION_FACE_OF_PLAY == C.WILD_DRAW_FOUR
_PLAY_POINTS: IntArray = C.FACE_POINTS[ACTION_FACE_OF_PLAY].astype(np.int64)
_MAX_COUNT = 128


class MixBot(HeuristicBot):
    """A mix of the classic UNO heuristics.

    Plays are ranked by these keys, the first most significant:

    1. Aggression: when the next player in the direction of play holds one card, Draw Two >
       Wild Draw Four > Skip > Reverse > anything else.
    2. A coloured card before a wild.
    3. Colour control: the cards of the resulting colour left in the hand (so it keeps or
       switches to its most common colour).
    4. The own cards left matchable after the play (its colour or its rank).
    5. Card counting: the fewer unseen cards (not in the discard pile nor in the hand) could
       follow the play (its colour or its rank), the better.
    6. Points: dump the more valuable card.
    7. The wild's colour: the most common colour in the hand (ties by points, then R, Y, G, B).

    It holds a Wild while it has more than ``wild_hold`` (2) coloured cards and a Wild Draw
    Four while it has more than ``wd4_hold`` (4), except that it attacks with a Wild Draw
    Four when the next player holds one card. A held card is not played: the bot draws
    instead, and keeps a held card it has just drawn. Declaring, catching, challenging and
    the starter colour are the shared rules of :mod:`unolab.agents._common`.
    """

    name = "mixbot"

    def __init__(
        self,
        seed: int | np.random.Generator | None = None,
        challenge_min_cards: int = DEFAULT_CHALLENGE_MIN_CARDS,
        wild_hold: int = 2,
        wd4_hold: int = 4,
    ) -> None:
        """Create the bot.

        Args:
            seed: Unused (the bot is deterministic).
            challenge_min_cards: See :data:`unolab.agents._common.DEFAULT_CHALLENGE_MIN_CARDS`.
            wild_hold: Play a Wild only with at most this many coloured cards in hand.
            wd4_hold: Play a Wild Draw Four only with at most this many coloured cards in
                hand (or to attack).
        """
        super().__init__(seed, challenge_min_cards)
        self.wild_hold = wild_hold
        self.wd4_hold = wd4_hold

    def play_keys(self, view: ObsView) -> tuple[IntArray, BoolArray | None]:
        """The seven keys above, and the held wilds."""
        shape = (view.batch_size, C.NUM_PLAY_ACTIONS)
        aggressive = (view.next_hand_size == 1)[:, None]
        attack = np.where(aggressive, ATTACK_RANK[None, :], 0)
        coloured = np.broadcast_to(_IS_COLOURED, shape)
        colour_left = colour_counts(view.hand)[:, ACTION_COLOUR_OF_PLAY] - _IS_COLOURED
        matchable = matchable_after(view)
        hard_to_follow = _MAX_COUNT - 1 - unseen_matching(view)
        points = np.broadcast_to(_PLAY_POINTS, shape)
        colour = rank_of_actions_colour(view.colour_ranks)
        keys = lexicographic(
            [attack, coloured, colour_left, matchable, hard_to_follow, points, colour],
            [5, 2, _MAX_COUNT, _MAX_COUNT, _MAX_COUNT, 64, 4],
        )
        non_wild = view.non_wild_count[:, None]
        held = (_IS_WILD[None, :] & (non_wild > self.wild_hold)) | (
            _IS_WD4[None, :] & (non_wild > self.wd4_hold) & ~aggressive
        )
        return keys, held
