"""Opponents of the learner envs: the forms they are given in, and the pool they are drawn from.

Opponents are batched policies (:class:`uno_env.policy.Policy` objects or plain callables
``(observations, masks) -> actions``), or :class:`~uno_env.policy.PolicyFactory` objects,
which the tables build and seed from the env's seed, so a seeded env replays exactly
(``unolab.agents.resolve_opponents`` turns bot names into factories). A policy object is used as it
is and never reseeded. They are given as

* one policy for every opponent seat,
* a list with one policy per opponent seat, in seat order after the learner (entry k-1 plays
  the seat k places after the learner), or
* an :class:`OpponentPool`, from which each opponent seat of each hand is drawn.

Without opponents, every opponent seat is the ``random`` baseline
(:class:`uno_env.policy.RandomBot`), seeded from the env's seed. The tables that play them
are :mod:`uno_env.envs.learner_tables`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from uno_env.config_values import check_float
from uno_env.files import shown
from uno_env.policy import (
    ActArray,
    MaskArray,
    ObsArray,
    Policy,
    PolicyFactory,
    Resettable,
    policy_name,
)

__all__ = ["MAX_WEIGHT", "OpponentPool", "OpponentsSpec", "PolicyFn", "as_policy"]

MAX_WEIGHT = 1e9
"""The largest weight of a policy in an :class:`OpponentPool` (they are relative: their sum
stays finite)."""

PolicyFn = Callable[[ObsArray, MaskArray], npt.ArrayLike]
"""A batched policy as a callable: ``(observations (B, D), masks (B, A)) -> actions (B,)``."""


class OpponentPool:
    """A pool of policies; each opponent seat of each hand plays one drawn from it.

    The draw uses the env's key schedule, so it is reproducible from the env's seed.

    Args:
        policies: The policies (objects with ``act``, plain callables or factories).
        weights: Relative probabilities, one per policy (uniform when ``None``).

    Raises:
        ValueError: for an empty pool, policies that are not a list, or weights that are
            not one finite number in ``0..MAX_WEIGHT`` per policy with a positive sum,
            naming the weight.
        TypeError: for an entry that is no policy, callable or factory (a bot name
            included), naming it.
    """

    def __init__(self, policies: Sequence[object], weights: Sequence[float] | None = None) -> None:
        if isinstance(policies, (str, bytes)) or not isinstance(policies, (Sequence, np.ndarray)):
            raise ValueError(
                f"policies: expected a list of policies, got {shown(policies)} (bot names "
                "become policies with unolab.agents.resolve_opponents)"
            )
        if not len(policies):
            raise ValueError("an OpponentPool needs at least one policy")
        for policy in policies:
            if not isinstance(policy, PolicyFactory):
                as_policy(policy)  # refused here, naming it, not when a hand draws it
        self.policies = list(policies)
        w = np.ones(len(self.policies))
        if weights is not None:
            given = list(weights) if isinstance(weights, (Sequence, np.ndarray)) else None
            if given is None or len(given) != len(self.policies):
                raise ValueError(
                    f"weights must be {len(self.policies)} non-negative numbers with a "
                    f"positive sum, one per policy, got {shown(weights)}"
                )
            # Each a finite number (not a bool) within bounds, so that their sum is finite.
            w = np.array(
                [
                    check_float(f"weights[{i}]", x, 0.0, MAX_WEIGHT, why="relative weights")
                    for i, x in enumerate(given)
                ]
            )
            if not w.sum() > 0:
                raise ValueError(f"weights must have a positive sum, got {shown(weights)}")
        self.cumulative = np.cumsum(w / w.sum())

    def sample(self, words: npt.NDArray[np.uint64]) -> npt.NDArray[np.int64]:
        """Map random 64-bit words to policy indices, following the weights."""
        uniform = (words >> np.uint64(11)).astype(np.float64) * 2.0**-53
        idx = np.searchsorted(self.cumulative, uniform, side="right")
        return np.minimum(idx, len(self.policies) - 1).astype(np.int64)


OpponentsSpec = object | Sequence[object] | OpponentPool | None
"""What the learner envs accept as ``opponents`` (see the module docstring)."""


class _CallablePolicy:
    """A plain callable ``(observations, masks) -> actions`` dressed as a policy."""

    def __init__(self, fn: PolicyFn) -> None:
        self.fn = fn
        self.name = policy_name(fn)

    def act(self, observations: ObsArray, masks: MaskArray) -> ActArray:
        """Call the function."""
        return np.asarray(self.fn(observations, masks))

    def reset(self, games: npt.NDArray[np.bool_] | None = None) -> None:
        """Stateless."""


def as_policy(policy: object) -> Policy:
    """Return a policy object for a policy or a plain callable.

    Raises:
        TypeError: for a bot name (resolve it with ``unolab.agents.resolve_opponents``), a
            class (not built yet), or anything without an ``act`` method that is not callable.
    """
    if isinstance(policy, str):
        raise TypeError(
            f"opponent {policy!r} is a name: the envs take policies; build it with "
            f"unolab.agents.resolve_opponents([{policy!r}]) or unolab.agents.make_agent({policy!r}, seed)"
        )
    if isinstance(policy, type):  # its act is an unbound function: no policy plays it
        raise TypeError(
            f"opponent {shown(policy)} is a class, not a policy: build one first (such as "
            f"{policy.__name__}(seed=0)), or give a PolicyFactory that builds it"
        )
    act = getattr(policy, "act", None)
    if callable(act):
        if isinstance(policy, Resettable):
            return policy  # type: ignore[return-value]
        wrapped = _CallablePolicy(act)  # a policy without memory to reset
        wrapped.name = policy_name(policy)
        return wrapped
    if callable(policy):
        return _CallablePolicy(policy)
    raise TypeError(
        f"an opponent must be a policy with an act(observations, masks) method, a callable "
        f"or a PolicyFactory, got {shown(policy)}"
    )
