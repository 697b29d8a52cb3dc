"""The one batched policy interface, and the random baselines every table can fall back on.

Everything that plays UNO in the lab (bots, learned networks, search agents, the opponents
inside the envs, tournament entrants) is a :class:`Policy`: ``act(observations, masks)``
over a batch of decisions. The protocol lives here, in the engine's package, because the
envs and the batched play loop (:mod:`uno_env.play`) take policy objects; ``agents``
re-exports it and supplies the bots.

A :class:`PolicyFactory` is a policy not built yet: a name and a function from a seed to a
fresh policy. The learner envs accept factories as opponents and build them from the env's
seed, so a seeded env replays exactly (``unolab.agents.resolve_opponents`` turns bot names into
factories). A policy object handed to an env is used as it is and never reseeded.

The random baselines live here too: the envs need a default opponent, and the engine's
package must not import ``agents`` (layers only look down). ``agents`` registers them as the
bots ``random`` (the random player of the UNO papers, :class:`RandomBot`), ``random_action``
(uniform over the play actions' ids, the lab's former ``random``) and ``random_any``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from uno_env import cards as C
from uno_env.core.checks import check_rules
from uno_env.files import shown
from uno_env.sampling import uniform_legal_actions

if TYPE_CHECKING:
    from uno_env.core import UnoState
    from uno_env.rules import Rules

__all__ = [
    "ActArray",
    "ActionProbabilities",
    "MaskArray",
    "ObsArray",
    "ObservationUse",
    "Policy",
    "PolicyFactory",
    "RandomActionBot",
    "RandomAnyBot",
    "RandomBot",
    "Resettable",
    "SearchStatistics",
    "Seed",
    "StateOnlyPolicy",
    "StateSearcher",
    "check_agent_rules",
    "check_masks",
    "check_reset_games",
    "policy_name",
    "reads_observations",
    "searches_from_state",
]

Seed = int | np.random.Generator | None
"""What seeds a policy: an int, a NumPy generator, or ``None`` for fresh entropy."""

ObsArray = npt.NDArray[np.float32]
"""A batch of observations, (B, OBS_DIM) float32."""

MaskArray = npt.NDArray[np.bool_]
"""A batch of legal-action masks, (B, 80) bool."""

ActArray = npt.NDArray[np.int64]
"""One action id per row, (B,) int64."""


@runtime_checkable
class Policy(Protocol):
    """A batched UNO player.

    ``act`` maps a batch of observations (B, OBS_DIM) float32 and legal-action masks
    (B, 80) bool to one legal action id per row (B,) int64. Rows whose mask is all False
    (finished games) may get any action: the engine ignores it. ``reset`` clears the memory
    of stateful agents between games (stateless agents do nothing).

    A policy that never reads the observations may say so with a class attribute
    ``uses_observations = False`` (:class:`ObservationUse`); batched players then hand it
    arrays of shape (rows, 0) and skip encoding when no policy at the table reads them.

    Optional capabilities are protocols of their own, checked with ``isinstance``:
    :class:`StateSearcher` (acting from the state), :class:`ActionProbabilities` (the
    probability of each action), :class:`SearchStatistics` (a search's counts and
    estimates), :class:`ObservationUse` and :class:`Resettable`.
    """

    name: str

    def act(self, observations: ObsArray, masks: MaskArray) -> ActArray:
        """Choose one legal action per row."""
        ...

    def reset(self, games: npt.NDArray[np.bool_] | None = None) -> None:
        """Forget per-game memory (all games, or those marked True)."""
        ...


@runtime_checkable
class StateSearcher(Protocol):
    """A policy that decides from the state, not the observation (a search agent).

    It sets ``needs_state = True``; the play loop (:func:`uno_env.play.choose_actions`) then
    calls ``act_from_state`` with the rules and the games of the rows. Hidden information is
    the searcher's to respect: it may read only what ``seats`` could know.
    """

    needs_state: bool

    def act_from_state(
        self, rules: Rules, state: UnoState, seats: npt.ArrayLike, masks: MaskArray | None = None
    ) -> ActArray:
        """Choose one action per game for the acting ``seats``, (B,)."""
        ...


@runtime_checkable
class ActionProbabilities(Protocol):
    """A policy that can say how likely it plays each action (a learned agent)."""

    def action_probs(
        self, observations: npt.ArrayLike, masks: npt.ArrayLike
    ) -> npt.NDArray[np.float32]:
        """(B, 80) probabilities: 0 for an illegal action, each row summing to 1."""
        ...


@runtime_checkable
class Resettable(Protocol):
    """An object with per-game memory to forget: every :class:`Policy` has ``reset``; an
    opponent given as a bare object with ``act`` alone has none (the envs wrap it)."""

    def reset(self, games: npt.NDArray[np.bool_] | None = None) -> None:
        """Forget per-game memory (all games, or those marked True)."""
        ...


@runtime_checkable
class SearchStatistics(Protocol):
    """A search agent's account of its work (``pimc``, ``ismcts``).

    ``decisions`` counts the decisions searched so far (forced ones excluded);
    ``last_values`` holds the estimates behind the last ``act_from_state`` call, (B, 80):
    each searched action's value for the acting seat, NaN for the actions not searched
    (expert iteration imitates them, ``unolab.train.imitate``'s ``value_targets``).
    """

    decisions: int
    last_values: npt.NDArray[np.float32] | None


@runtime_checkable
class ObservationUse(Protocol):
    """A policy that says whether it reads the observations (``uses_observations``).

    One that reads only the masks sets the class attribute ``uses_observations = False``:
    the batched play loop then hands it arrays of shape (rows, 0) and skips encoding when
    no policy at the table reads them. A policy without the attribute reads them.
    """

    uses_observations: bool


def reads_observations(policy: object) -> bool:
    """Whether ``policy`` reads the observations (see :class:`ObservationUse`)."""
    # An attribute read, not isinstance: the play loop asks every round, and an isinstance
    # check against a runtime-checkable protocol costs microseconds (a tenth of a step).
    return bool(getattr(policy, "uses_observations", True))


def check_masks(who: str, masks: object, rows: int | None = None) -> npt.NDArray[np.bool_]:
    """A batch of legal-action masks as given to ``act``: (B, 80), boolean or 0/1 integers.

    The bots pick among what a mask allows, so a mask of fractions or of another shape
    would give actions that mean nothing; it is refused instead.

    Args:
        who: The policy's name, as the message names it.
        masks: The masks.
        rows: B, when the caller knows it (one row per observation).

    Returns:
        The masks as a boolean array (the array given, when it is one).

    Raises:
        ValueError: naming ``masks``, their shape and what was expected.
    """
    arr = np.asarray(masks) if not isinstance(masks, np.ndarray) else masks
    if (
        arr.ndim != 2
        or arr.shape[1] != C.NUM_ACTIONS
        or (rows is not None and arr.shape[0] != rows)
    ):
        given = "an array" if isinstance(masks, np.ndarray) else shown(masks)  # no rows shown
        expected = f"({'B' if rows is None else rows}, {C.NUM_ACTIONS})"
        raise ValueError(
            f"{who}: masks: expected shape {expected}, one row of legal actions per "
            f"observation, got {given} of shape {arr.shape}"
        )
    if arr.dtype == np.bool_:
        return arr
    if arr.dtype.kind in "iu" and ((arr == 0) | (arr == 1)).all():
        return arr.astype(np.bool_)
    raise ValueError(
        f"{who}: masks: expected True/False (or 0/1) per action, got dtype {arr.dtype}"
    )


def check_agent_rules(rules: object) -> Rules:
    """An agent's ``rules`` argument as a :class:`~uno_env.rules.Rules` object.

    Raises:
        TypeError: naming ``rules`` as given, for anything else.
    """
    return check_rules(rules)


def check_reset_games(who: str, games: object) -> None:
    """The ``games`` of a policy's ``reset``: ``None`` (all) or a 1-d boolean mask.

    Raises:
        ValueError: naming ``games`` as given.
    """
    if games is None:
        return
    arr = np.asarray(games) if isinstance(games, list | tuple | np.ndarray) else None
    if arr is None or arr.ndim != 1 or (arr.dtype != np.bool_ and arr.size):
        raise ValueError(
            f"{who}: reset: games: expected None (every game) or a boolean mask, one per "
            f"game, got {shown(games)}"
        )


class StateOnlyPolicy:
    """The ``act`` side of a policy that decides from the state alone (a search agent, a
    language model): it sets ``needs_state`` and says no to observations.

    Subclasses set ``name`` and implement ``act_from_state`` (:class:`StateSearcher`).
    """

    name: str
    needs_state = True
    """:func:`uno_env.play.choose_actions` calls ``act_from_state`` with the state."""
    uses_observations = False
    """The state is all it reads: batched players need not encode observations for it."""

    def act(self, observations: ObsArray, masks: MaskArray) -> ActArray:
        """Not available: the policy needs the state (see ``act_from_state``).

        Raises:
            TypeError: always, naming the way to play it.
        """
        raise TypeError(
            f"{self.name} decides from the game state, which observations do not carry: "
            "play it through uno_env.play (play_tables, choose_actions) or a tournament, "
            "which pass the state to policies with needs_state = True, or call "
            "act_from_state(rules, state, seats)"
        )


def searches_from_state(policy: object) -> bool:
    """Whether ``policy`` decides from the state (:class:`StateSearcher` with ``needs_state``)."""
    return bool(getattr(policy, "needs_state", False)) and isinstance(policy, StateSearcher)


@dataclass(frozen=True)
class PolicyFactory:
    """A named recipe for a policy: ``build(seed)`` returns a fresh, seeded policy.

    Attributes:
        name: The name of the policies it builds (for messages).
        build: Builds one policy from a seed (an int or a NumPy generator).
    """

    name: str
    build: Callable[[Seed], Policy]

    def __call__(self, seed: Seed = None) -> Policy:
        """Build a fresh policy seeded with ``seed``."""
        return self.build(seed)


def policy_name(policy: object) -> str:
    """The name of a policy (its ``name``, else its ``__name__``, else its type's name)."""
    name = getattr(policy, "name", None)
    return str(name) if name is not None else getattr(policy, "__name__", type(policy).__name__)


class RandomAnyBot:
    """Uniform over all legal actions, voluntary draws and declines included."""

    name = "random_any"
    uses_observations = False
    """Reads only the masks: batched players may skip encoding observations for it."""

    def __init__(self, seed: Seed = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observations: ObsArray, masks: MaskArray) -> ActArray:
        """Choose uniformly among the legal actions of each row.

        Raises:
            ValueError: for masks that are not (B, 80) booleans (:func:`check_masks`).
        """
        return uniform_legal_actions(check_masks(self.name, masks), self.rng)

    def reset(self, games: npt.NDArray[np.bool_] | None = None) -> None:
        """Stateless: nothing to forget.

        Raises:
            ValueError: for ``games`` that are neither None nor a boolean mask.
        """
        check_reset_games(self.name, games)


class RandomActionBot(RandomAnyBot):
    """A random legal play by action id; draws only when it cannot play.

    Uniform over the legal play *actions*, so a Wild or a Wild Draw Four counts once per
    colour it may name (four times under the official rules). This was the lab's ``random``
    once; it is kept, bit for bit, so the figures measured against it stay
    reproducible. After a draw it plays the drawn card if it can. It always declares UNO,
    always catches, and challenges or accepts a Wild Draw Four at random.
    """

    name = "random_action"

    def act(self, observations: ObsArray, masks: MaskArray) -> ActArray:
        """Choose uniformly among the plays, drawing or keeping only when nothing plays.

        Raises:
            ValueError: for masks that are not (B, 80) booleans (:func:`check_masks`).
        """
        masks = check_masks(self.name, masks)
        preferred = masks.copy()
        can_play = masks[:, : C.NUM_PLAY_ACTIONS].any(axis=1)
        preferred[can_play, C.DRAW] = False
        preferred[can_play, C.KEEP] = False
        # Declaring and catching are free: do them whenever they are offered (catch first).
        for forced in (C.UNO, C.CATCH):
            rows = masks[:, forced]
            preferred[rows] = False
            preferred[rows, forced] = True
        return uniform_legal_actions(preferred, self.rng)


_WILD_GROUPS = (C.PLAY_WILD, C.PLAY_WILD_DRAW_FOUR)
"""The first action of each wild's block of four colour choices (``W:R``, ``W+4:R``)."""


class RandomBot(RandomAnyBot):
    """The random player of the UNO papers: a playable *card* uniformly, then a colour.

    * **Its turn** (``play``, ``after_draw``, and a stacking window): when a card plays, it
      chooses one uniformly among the distinct playable cards, a Wild or a Wild Draw Four
      counting once however many colours it may name, then names a colour uniformly among
      those allowed. It never draws or keeps while a card plays, so it plays a playable
      drawn card. When nothing plays it draws (or, facing a Wild Draw Four, challenges or
      accepts at random).
    * **Always** declares UNO and catches a missed declaration (catching first).
    * **Any other decision** (the Wild Draw Four challenge, the starter's colour, a jump-in
      window, the seven-zero swap target...): uniformly among the options, a wild again
      counting once, then its colour uniformly.

    It reads only the masks (``uses_observations = False``), so the phase comes from the
    mask: ``keep`` marks the decision after a draw and ``pass`` a jump-in window, while a
    stacking window (plays of draw cards and ``draw``) looks like a normal turn, and is
    played as one. Deterministic for a seed: the same seed, masks and batching give the
    same actions.
    """

    name = "random"

    def act(self, observations: ObsArray, masks: MaskArray) -> ActArray:
        """Choose a card uniformly (a wild once), then a colour, per row; see the class.

        Raises:
            ValueError: for masks that are not (B, 80) booleans (:func:`check_masks`).
        """
        masks = check_masks(self.name, masks)
        options = masks.copy()
        # In its own turn a playable card is always played: draw, keep and (facing a Wild
        # Draw Four it can stack on) challenge are dropped. A jump-in window (pass) is not
        # its turn: playing and passing stay equally likely there.
        turn_with_play = masks[:, : C.NUM_PLAY_ACTIONS].any(axis=1) & ~masks[:, C.PASS]
        options[:, C.NUM_PLAY_ACTIONS :] &= ~turn_with_play[:, None]
        # Declaring and catching are free: do them whenever they are offered (catch first).
        for forced in (C.UNO, C.CATCH):
            rows = np.flatnonzero(masks[:, forced])
            if rows.size:
                options[rows] = False
                options[rows, forced] = True
        return _one_card_then_colour(options, self.rng)


def _one_card_then_colour(
    options: npt.NDArray[np.bool_], rng: np.random.Generator
) -> npt.NDArray[np.int64]:
    """Uniform over the options with each wild's colour choices as one, then a colour.

    Stage one stands each wild's block of colour choices for one option (its first column)
    and picks uniformly; stage two picks the colour uniformly among the block's legal
    choices, on the rows that picked a wild. Both stages run in the compiled sampler.
    """
    cards = options.copy()
    for first in _WILD_GROUPS:
        cards[:, first] = options[:, first : first + C.NUM_COLOURS].any(axis=1)
        cards[:, first + 1 : first + C.NUM_COLOURS] = False
    chosen = uniform_legal_actions(cards, rng)
    # A row without options (a finished game) got action 0, never a wild's column.
    wild_rows = np.flatnonzero((chosen == _WILD_GROUPS[0]) | (chosen == _WILD_GROUPS[1]))
    if wild_rows.size:
        firsts = chosen[wild_rows]
        colours = options[wild_rows[:, None], firsts[:, None] + np.arange(C.NUM_COLOURS)]
        chosen[wild_rows] = firsts + uniform_legal_actions(colours, rng)
    return chosen
