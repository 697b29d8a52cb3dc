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
are :mod:`uno_env.envs.learner_tables`. They play the opponents' turns in one of two ways:
:func:`opponents_act` makes one decision of any policies in a batch of games, and
:class:`CompiledOpponents` keeps track of the policies' compiled forms
(:mod:`uno_env.learner_kernel`), with which the tables play them in one compiled call per
step.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from uno_env import cards as C
from uno_env import core
from uno_env.config_values import check_float
from uno_env.core import UnoState
from uno_env.core.state import ARRAY_FIELDS
from uno_env.files import shown
from uno_env.learner_kernel import (
    WAITING,
    Autoreset,
    BoundAdvance,
    TableBuffers,
    compiled_bot,
    generator_pointers,
)
from uno_env.observation import OBS_DIM
from uno_env.play import choose_actions
from uno_env.policy import (
    ActArray,
    MaskArray,
    ObsArray,
    Policy,
    PolicyFactory,
    Resettable,
    policy_name,
)
from uno_env.rules import Rules

__all__ = [
    "MAX_WEIGHT",
    "CompiledOpponents",
    "OpponentPool",
    "OpponentsSpec",
    "PolicyFn",
    "as_policy",
    "opponents_act",
]

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


def opponents_act(
    rules: Rules,
    state: UnoState,
    games: npt.NDArray[np.int64],
    policies: Sequence[Policy],
    learner: npt.NDArray[np.int64],
    assign: npt.NDArray[np.int64],
) -> UnoState:
    """One decision in each of ``games`` (all live, an opponent to act); return the state.

    Each policy is called once with the sub-batch of games where one of its seats acts
    (:func:`uno_env.play.choose_actions`).

    Args:
        rules: The rules of the games.
        state: The tables' own state: its arrays are updated in place for a sub-batch.
        games: The games to play, (k,).
        policies: The opponent policies, by index.
        learner: The learner's seat in each game of ``state``, (B,).
        assign: Which policy plays the seat k places after the learner, (B, N).

    Raises:
        PolicyError: if a policy fails (:class:`uno_env.play.PolicyError`).
    """
    whole = games.size == state.batch_size
    sub = state if whole else state.select(games)
    if len(policies) == 1:
        acting = np.zeros(games.size, dtype=np.int64)
    else:
        relative = (sub.current.astype(np.int64) - learner[games]) % rules.num_players
        acting = assign[games, relative]
    actions, _ = choose_actions(rules, sub, policies, acting, game_ids=games)
    new_sub = core.step(rules, sub, actions, in_place=True)  # sub is ours
    if whole:
        return new_sub
    return _merge(state, games, new_sub)


def _merge(state: UnoState, games: npt.NDArray[np.int64], sub: UnoState) -> UnoState:
    """Write the sub-batch ``sub`` into rows ``games`` of ``state``, which the caller owns.

    Returns a new state object over the same arrays, so that no mask cached on ``state``
    survives the change.
    """
    for name in ARRAY_FIELDS:
        getattr(state, name)[games] = getattr(sub, name)
    state.clear_mask_cache()  # for anyone still holding the old object
    return state.view()


def _no_generators() -> npt.NDArray[np.int64]:
    return np.zeros((0, 2), dtype=np.int64)


class CompiledOpponents:
    """The compiled forms of a table's opponent policies, and the compiled loop's work space.

    It works out whether the compiled loop (:func:`uno_env.learner_kernel.advance`) can play
    the policies: each must have a compiled form
    (:func:`~uno_env.learner_kernel.compiled_bot`) and no pool may draw them. Its plan (the
    forms, and the addresses of the policies' generators from
    :func:`~uno_env.learner_kernel.generator_pointers`) is worked out again whenever a policy
    or its generator changed. A copy or a pickle holds the plan as not worked out yet: the
    addresses belong to this process's generators, so the copy works out its own at its
    first use.

    Args:
        num_games: B, the number of tables.
        pooled: Whether an :class:`OpponentPool` draws the policies (the loop then plays
            none of them).

    Attributes:
        buffers: The loop's work space; the tables read and write its ``reported`` rows and
            read its ``terminal`` rows between calls.
        outputs: Where the next call that returns :data:`~uno_env.learner_kernel.WAITING`
            encodes the learners' observations, (B, OBS_DIM) float32, and masks, (B, 80)
            bool (C-ordered rows; a shared block's, say); ``None`` (what such a call leaves):
            new arrays, allocated when needed.
    """

    def __init__(self, num_games: int, pooled: bool) -> None:
        self.num_games = num_games
        self.pooled = pooled
        self.buffers = TableBuffers(num_games)
        self._bots: npt.NDArray[np.int64] | None = None
        self._generators = _no_generators()
        self._plan_of: list[tuple[object, object]] = []
        self.outputs: tuple[ObsArray, MaskArray] | None = None
        self._bound: BoundAdvance | None = None

    def __getstate__(self) -> dict[str, object]:
        """Its fields for pickling and copying, less the plan (see the class docstring)."""
        fields = self.__dict__.copy()
        fields.update(_plan_of=[], _bots=None, _generators=_no_generators(), _bound=None)
        return fields

    def plays(self, policies: Sequence[Policy]) -> bool:
        """Whether the compiled loop plays ``policies`` (the tables' policies, in order).

        Checked on every step: when no policy and no generator changed since the last call,
        the plan stands.
        """
        plan = self._plan_of
        if len(plan) == len(policies):  # a plain loop is cheapest
            for i, policy in enumerate(policies):
                known, rng = plan[i]
                if policy is not known or getattr(policy, "rng", None) is not rng:
                    break
            else:
                return self._bots is not None
        current: list[tuple[object, object]] = [
            (policy, getattr(policy, "rng", None)) for policy in policies
        ]
        codes = [compiled_bot(policy) for policy in policies]
        self._bots = None
        if not self.pooled and all(code is not None for code in codes):
            self._bots = np.array(codes, dtype=np.int64)
            self._generators = np.array(
                [generator_pointers(rng) for _, rng in current],  # type: ignore[arg-type]
                dtype=np.int64,
            ).reshape(-1, 2)
        self._plan_of = current
        return self._bots is not None

    def advance(
        self,
        rules: Rules,
        state: UnoState,
        learner: npt.NDArray[np.int64],
        assign: npt.NDArray[np.int64],
        actions: npt.NDArray[np.int64] | None,
        autoreset: Autoreset | None = None,
    ) -> tuple[int, tuple[ObsArray, MaskArray] | None]:
        """One call of the compiled loop (:func:`uno_env.learner_kernel.advance`), after
        :meth:`plays` said yes for the current policies.

        Args:
            rules: The tables' rules.
            state: The tables' own state, changed in place.
            learner: The learner's seat in each game, (B,).
            assign: Which policy plays the seat k places after the learner, (B, N).
            actions: The learners' actions (C-contiguous int64, (B,)), or None.
            autoreset: With actions, the tables' key schedule: the loop then pays the hands
                that end and deals the next ones itself (see
                :func:`~uno_env.learner_kernel.advance`).

        Returns:
            The loop's status, and on :data:`~uno_env.learner_kernel.WAITING` the learners'
            observations and (read-only) masks, which then belong to the caller.
        """
        assert self._bots is not None, "advance() before plays() accepted the policies"
        if self.outputs is None:
            self.outputs = (
                np.empty((self.num_games, OBS_DIM), dtype=np.float32),
                np.empty((self.num_games, C.NUM_ACTIONS), dtype=np.bool_),
            )
        obs, masks = self.outputs
        bound = self._bound
        if (
            bound is None
            or bound.state is not state
            or bound.generators is not self._generators
            or bound.autoreset is not autoreset
            or bound.learner is not learner
        ):
            bound = self._bound = BoundAdvance(
                rules, state, learner, assign, self._bots, self._generators, self.buffers, autoreset
            )
        status = bound(actions, obs, masks)
        if status != WAITING:
            return status, None
        masks.setflags(write=False)
        self.outputs = None
        return status, (obs, masks)
