"""What a search infers about the hidden hands: the deals it samples and how it weighs them.

The one place where the searches' inference is put together. :func:`sample_deals` draws the
determinizations of a decision (:func:`uno_env.core.determinize`, under the public facts
:data:`LACK_FACTS` names) and weighs each by :func:`choice_weights`, how likely it makes
every other seat's last choice of a card. ``pimc`` and ``ismcts`` search on them, and
``python -m unolab.benchmarks.inference`` scores what they know against the real hands.
Public information only: the searching seat's own hand, the piles, the counts and the
history every player saw.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from uno_env import cards as C
from uno_env import core
from uno_env.core import UnoState
from uno_env.core.kernel import FACE_MATCH
from uno_env.rules import Rules

__all__ = ["LACK_FACTS", "check_lack_facts", "choice_weights", "sample_deals"]

LACK_FACTS = ("drawn", "drawn_wild", "shown", "none")
"""What determinizations take from the public history (docs/search.md, "Inference"):
``drawn``, what a seat that drew when it could not play held then (no card of the colour
to match, none of the top card's rank); ``drawn_wild``, that and no wild; ``shown``, the
colours the observation marks as lacking; ``none``, nothing."""


def check_lack_facts(agent: str, value: object) -> None:
    """Refuse a ``lack_facts`` choice not in :data:`LACK_FACTS`, naming it."""
    if value not in LACK_FACTS:
        raise ValueError(
            f"{agent}: lack_facts must be one of {', '.join(LACK_FACTS)}, got {value!r}"
        )


_NO_LACKS = np.zeros((C.MAX_PLAYERS, C.NUM_COLOURS), dtype=np.bool_)


def sample_deals(
    rules: Rules,
    state: UnoState,
    seats: npt.NDArray[np.int64],
    keys: npt.NDArray[np.uint64],
    *,
    lack_facts: str = "drawn",
    weigh_choices: bool = True,
) -> tuple[UnoState, npt.NDArray[np.float64]]:
    """The determinizations the search samples for a decision, and their weights.

    The one place where the search's inference about the hidden cards is put together:
    :func:`uno_env.core.determinize` under the public facts ``lack_facts`` names, then
    :func:`choice_weights` (or equal weights). :class:`PimcAgent` searches on them, and
    ``python -m unolab.benchmarks.inference`` measures how much they know.

    Args:
        rules: The rules of the games.
        state: The B live games searched.
        seats: The searching seat of each game, (B,).
        keys: (B, K) random keys of the determinizations.
        lack_facts: One of :data:`LACK_FACTS`.
        weigh_choices: Weigh the deals by :func:`choice_weights` (else all weights are 1).

    Returns:
        The B x K determinizations (game-major) and (B, K) weights of mean 1 per game.

    Raises:
        ValueError: for an unknown ``lack_facts``, or as :func:`uno_env.core.determinize`.
    """
    if lack_facts not in LACK_FACTS:
        raise ValueError(f"lack_facts must be one of {', '.join(LACK_FACTS)}, got {lack_facts!r}")
    if lack_facts == "shown":
        dets = core.determinize(rules, state, seats, keys, lacks=state.shown_lacks)
    elif lack_facts == "none":
        dets = core.determinize(rules, state, seats, keys, lacks=_NO_LACKS[: rules.num_players])
    else:
        dets = core.determinize(rules, state, seats, keys, wild_facts=lack_facts == "drawn_wild")
    n_games, per_game = keys.shape
    weights = (
        choice_weights(state, seats, dets.hands, per_game)
        if weigh_choices
        else np.ones((n_games, per_game))
    )
    return dets, weights


def choice_weights(
    state: UnoState,
    seats: npt.NDArray[np.int64],
    hands: npt.NDArray[np.int8],
    per_game: int,
) -> npt.NDArray[np.float64]:
    """How likely each determinization makes the other seats' last choices of a card.

    A seat that played a card in a normal turn chose it among the cards that played; the
    state keeps the context of that choice (``choice_colour``, ``choice_top``,
    ``choice_draws``, :mod:`uno_env.core.history`). While the seat has drawn nothing since,
    its hand then was its sampled hand plus that card. Under the random player's rule (one
    of the distinct playable cards, uniformly) the choice had probability 1 / (playable
    faces in that hand): a sampled hand with many other cards that played explains the
    choice less well. The weight of a determinization is the product over the other seats
    (the core's matching table: the colour, the top card's rank, wilds), normalised to a mean of 1
    per game. Public information only: the contexts, the cards played, the sampled hands.

    Args:
        state: The B games searched.
        seats: The searching seat of each game, (B,).
        hands: The determinizations' hands, (B x K, N, 54), game-major.
        per_game: K.

    Returns:
        (B, K) weights, each game's of mean 1 (all ones where no choice is known).
    """
    n_games = state.batch_size
    weights = np.ones((n_games, per_game))
    known = (state.choice_draws == state.seat_draws) & (state.choice_draws >= 0)
    known &= state.last_played >= 0
    known[np.arange(n_games), seats] = False
    for game, seat in zip(*np.nonzero(known), strict=True):
        played = int(state.last_played[game, seat])
        colour = int(state.choice_colour[game, seat])
        top = int(state.choice_top[game, seat])
        # The core's matching table: the faces that played on that top card and colour.
        plays = FACE_MATCH[top * (C.NUM_COLOURS + 1) + colour]
        if not plays[played]:
            continue  # other matching rules: no model of the choice
        held = hands[game * per_game : (game + 1) * per_game, seat].astype(np.int64)
        held[:, played] += 1
        options = ((held > 0) & plays).sum(axis=1)
        weights[game] /= np.maximum(options, 1)
    return weights / weights.mean(axis=1, keepdims=True)
