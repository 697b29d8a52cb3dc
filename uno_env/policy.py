"""The one batched policy interface, and the random baselines every table can fall back on.

Everything that plays UNO in the lab (bots, learned networks, search agents, the opponents
inside the envs, tournament entrants) is a :class:`Policy`: ``act(observations, masks)``
over a batch of decisions. The protocol lives here, in the engine's package, because the
envs and the batched play loop (:mod:`uno_env.play`) take policy objects; ``agents``
re-exports it and supplies the bots.

A :class:`PolicyFactory` is a policy not built yet: a name and a function from a seed to a
fresh policy. The learner envs accept factories as opponents and build them from the env's
seed, so a seeded env replays exactly (``agents.resolve_opponents`` turns bot names into
factories). A policy object handed to an env is used as it is and never reseeded.

The two random baselines live here too: the envs need a default opponent, and the engine's
package must not import ``agents`` (layers only look down). ``agents`` registers them as the
bots ``random`` and ``random_any``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from uno_env import cards as C
from uno_env.sampling import uniform_legal_actions

__all__ = [
    "Policy",
    "PolicyFactory",
    "RandomAnyBot",
    "RandomBot",
    "Seed",
    "policy_name",
]

Seed = int | np.random.Generator | None
"""What seeds a policy: an int, a NumPy generator, or ``None`` for fresh entropy."""


@runtime_checkable
class Policy(Protocol):
    """A batched UNO player.

    ``act`` maps a batch of observations (B, OBS_DIM) float32 and legal-action masks
    (B, 80) bool to one legal action id per row (B,) int64. Rows whose mask is all False
    (finished games) may get any action: the engine ignores it. ``reset`` clears the memory
    of stateful agents between games (stateless agents do nothing).

    A policy that never reads the observations may say so with a class attribute
    ``uses_observations = False``; batched players then hand it arrays of shape (rows, 0)
    and skip encoding when no policy at the table reads them.
    """

    name: str

    def act(
        self, observations: npt.NDArray[np.float32], masks: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.int64]:
        """Choose one legal action per row."""
        ...

    def reset(self, games: npt.NDArray[np.bool_] | None = None) -> None:
        """Forget per-game memory (all games, or those marked True)."""
        ...


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

    def act(
        self, observations: npt.NDArray[np.float32], masks: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.int64]:
        """Choose uniformly among the legal actions of each row."""
        return uniform_legal_actions(masks, self.rng)

    def reset(self, games: npt.NDArray[np.bool_] | None = None) -> None:
        """Stateless: nothing to forget."""


class RandomBot(RandomAnyBot):
    """A random legal play; draws only when it cannot play (the "random" of UNO papers).

    After a draw it plays the drawn card if it can. It always declares UNO, always catches,
    and challenges or accepts a Wild Draw Four at random.
    """

    name = "random"

    def act(
        self, observations: npt.NDArray[np.float32], masks: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.int64]:
        """Choose uniformly among the plays, drawing or keeping only when nothing plays."""
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
