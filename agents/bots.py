"""The bots that act on observations, by name: the random baselines and the heuristic bots.

:data:`PLAIN_BOTS` is the table :mod:`unolab.agents.registry` extends with the searches. The
heuristic bots here, ``greedy_points``, ``card_ranking`` and ``mixbot``, each rank the plays
(:meth:`~unolab.agents.heuristics.HeuristicBot.play_keys`); declaring, catching, challenging
and the starter colour are the shared rules of :mod:`unolab.agents.heuristics`. The random
baselines are :mod:`uno_env.policy`'s (the envs' default opponents).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from uno_env import cards as C
from uno_env.policy import Policy, RandomActionBot, RandomAnyBot, RandomBot, Seed
from unolab.agents.heuristics import (
    ACTION_COLOUR_OF_PLAY,
    ACTION_FACE_OF_PLAY,
    ACTION_POINTS_OF_PLAY,
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

__all__ = ["ATTACK_RANK", "KIND_RANK", "PLAIN_BOTS", "CardRankingBot", "GreedyPointsBot", "MixBot"]


class GreedyPointsBot(HeuristicBot):
    """``greedy_points``: plays the playable card worth the most points, so that a lost hand
    costs least.

    Ties (e.g. two 20-point action cards) go to the card whose colour is the most common in
    the hand (it keeps that colour current), then to the lowest action id (so a Wild goes
    before a Wild Draw Four). A wild names the most common colour in the hand. It draws only
    when it cannot play and always plays a playable drawn card. Declaring, catching,
    challenging and the starter colour are the shared rules of :mod:`unolab.agents.heuristics`.
    """

    name = "greedy_points"

    def play_keys(self, view: ObsView) -> tuple[IntArray, BoolArray | None]:
        """Points first, then the preference for the colour the play makes current."""
        points = np.broadcast_to(ACTION_POINTS_OF_PLAY, (view.batch_size, C.NUM_PLAY_ACTIONS))
        colour = rank_of_actions_colour(view.colour_ranks)
        return lexicographic([points, colour], [64, 4]), None


def _by_kind(
    *, draw_two: int, skip: int, reverse: int, wild_draw_four: int, wild: int, other: int
) -> IntArray:
    """A preference of each play action by the kind of card it plays, higher first."""
    rank = C.FACE_RANK[ACTION_FACE_OF_PLAY].astype(np.int64)
    out = np.full(C.NUM_PLAY_ACTIONS, other, dtype=np.int64)  # numbers
    out[rank == C.DRAW_TWO] = draw_two
    out[rank == C.SKIP] = skip
    out[rank == C.REVERSE] = reverse
    out[ACTION_FACE_OF_PLAY == C.WILD_DRAW_FOUR] = wild_draw_four
    out[ACTION_FACE_OF_PLAY == C.WILD] = wild
    return out


KIND_RANK: IntArray = _by_kind(draw_two=5, skip=4, reverse=2, wild_draw_four=1, wild=0, other=3)
"""Preference of each play action's card kind, higher first (``card_ranking``): Draw Two >
Skip > number > Reverse > Wild Draw Four > Wild."""


class CardRankingBot(HeuristicBot):
    """``card_ranking``: plays by card kind: Draw Two > Skip > number > Reverse > Wild Draw
    Four > Wild.

    Within a kind it plays the higher number (more points), then the card of the colour most
    common in the hand. A wild names the most common colour in the hand. It draws only when
    it cannot play and always plays a playable drawn card; the other decisions are the shared
    rules of :mod:`unolab.agents.heuristics`.
    """

    name = "card_ranking"

    def play_keys(self, view: ObsView) -> tuple[IntArray, BoolArray | None]:
        """Kind first, then points, then the preference for the resulting colour."""
        shape = (view.batch_size, C.NUM_PLAY_ACTIONS)
        kind = np.broadcast_to(KIND_RANK, shape)
        points = np.broadcast_to(ACTION_POINTS_OF_PLAY, shape)
        colour = rank_of_actions_colour(view.colour_ranks)
        return lexicographic([kind, points, colour], [6, 64, 4]), None


ATTACK_RANK: IntArray = _by_kind(draw_two=4, skip=2, reverse=1, wild_draw_four=3, wild=0, other=0)
"""Preference of each play when the next player is about to go out (``mixbot``): Draw Two >
Wild Draw Four > Skip > Reverse > anything else."""
_IS_COLOURED: IntArray = (ACTION_FACE_OF_PLAY < C.NUM_COLOURED_FACES).astype(np.int64)
_IS_WILD: BoolArray = ACTION_FACE_OF_PLAY == C.WILD
_IS_WD4: BoolArray = ACTION_FACE_OF_PLAY == C.WILD_DRAW_FOUR
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
    the starter colour are the shared rules of :mod:`unolab.agents.heuristics`.
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
            challenge_min_cards: See :data:`unolab.agents.heuristics.DEFAULT_CHALLENGE_MIN_CARDS`.
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
        points = np.broadcast_to(ACTION_POINTS_OF_PLAY, shape)
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


PLAIN_BOTS: dict[str, Callable[[Seed], Policy]] = {
    RandomBot.name: RandomBot,
    RandomActionBot.name: RandomActionBot,
    RandomAnyBot.name: RandomAnyBot,
    GreedyPointsBot.name: GreedyPointsBot,
    CardRankingBot.name: CardRankingBot,
    MixBot.name: MixBot,
}
"""Bot name -> builder from a seed, in the order of :data:`unolab.agents.BOT_NAMES`."""
