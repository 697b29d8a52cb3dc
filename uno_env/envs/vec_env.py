"""``UnoVecEnv``: a natively batched Stable-Baselines3 ``VecEnv`` of single-learner UNO games.

All ``num_envs`` games advance in one batched core call per decision round: the learners'
actions in one ``core.step``, then the opponents' decisions, batched across games (each
opponent policy is called once per round with every game where one of its seats acts), until
each game waits for its learner again. A game whose hand ended is dealt again at once
(autoreset) with the next key of the seed's key schedule; its final observation is in
``infos[i]["terminal_observation"]`` and ``infos[i]["TimeLimit.truncated"]`` tells a hand cut
by ``max_turns`` from one that was won. Slot i plays the same hands as a
:class:`~uno_env.envs.gym_env.UnoGymEnv` would with the same seed, key and learner seat.

``action_masks()`` returns the (num_envs, 80) legal-action masks for sb3-contrib's
``MaskablePPO``; the env works under ``VecMonitor``. The checked Stable-Baselines3 plumbing
(indices, attributes, ``env_method``, seeds) is :class:`MaskedVecEnv`'s, which
:class:`~uno_env.envs.shared_vec_env.ShardedUnoVecEnv` shares.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import gymnasium
import numpy as np
import numpy.typing as npt
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices, VecEnvStepReturn

from uno_env.envs import RewardFn, action_space, observation_space
from uno_env.envs.common import action_ids, checked_seed
from uno_env.envs.learner_tables import LearnerTables
from uno_env.envs.opponents import OpponentsSpec
from uno_env.envs.render import render_table
from uno_env.files import shown
from uno_env.rules import Rules, load_rules

__all__ = ["FIXED_ATTRIBUTES", "RENDER_MODES", "MaskedVecEnv", "UnoVecEnv"]

FIXED_ATTRIBUTES = frozenset({"num_envs", "observation_space", "action_space", "rules", "tables"})
"""What :meth:`UnoVecEnv.set_attr` does not set: the games are built from them (their
number, spaces and rules) and checked against them once, when the env is built."""


RENDER_MODES = ("ansi", "human", "rgb_array")
"""The modes Stable-Baselines3 asks ``render`` for; only ``"ansi"`` draws anything."""


class MaskedVecEnv(VecEnv):
    """A ``VecEnv`` whose games are one object with legal-action masks: the checked plumbing
    Stable-Baselines3 calls (indices, attributes, methods, wrappers, seeds).

    The games share the env, so an attribute or a method's result is the same for every
    requested game, except ``env_method("action_masks")``, which gives each requested game's
    row of the masks (as sb3-contrib's ``MaskablePPO`` asks) through :meth:`mask_rows`.
    ``seed(s)`` checks the seed and keeps it in ``_pending_seed`` for the subclass's next
    ``reset()``; ``step_async`` checks the learners' actions and keeps them in ``_actions``.
    A subclass implements :meth:`mask_rows`, ``set_attr`` and the rest of the core API
    (``reset``, ``step_wait``, ``close``, ``render``).
    """

    _pending_seed: int | None = None
    _actions: npt.NDArray[np.int64] | None = None

    def step_async(self, actions: np.ndarray) -> None:
        """Store the learners' actions, shape (num_envs,).

        Raises:
            ValueError: for actions of another size (nothing is stored).
            uno_env.IllegalActionError: for a number that is no action id (out of range,
                fractional), naming the env and the value as given.
            TypeError: for actions that are not numbers.
        """
        self._actions = action_ids(actions, self.num_envs, unit="env")

    @abstractmethod
    def mask_rows(self, indices: list[int]) -> npt.NDArray[np.bool_]:
        """The learners' legal actions in the games ``indices`` (checked env indices), one
        (80,) bool row each, in a new array."""

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """The learners' legal actions, (num_envs, 80) bool (a copy)."""
        return self.mask_rows(list(range(self.num_envs)))

    @staticmethod
    def check_render_mode(mode: object) -> None:
        """Refuse a ``render`` mode that is none of :data:`RENDER_MODES` (``None`` passes).

        Raises:
            ValueError: for such a mode, named as given.
        """
        if mode is not None and mode not in RENDER_MODES:
            raise ValueError(
                f"mode: expected one of {list(RENDER_MODES)} or None, got {shown(mode)}"
            )

    @staticmethod
    def seed_or_entropy(seed: int | None) -> int:
        """``seed``, or a fresh one from the system's entropy for ``None``."""
        return int(np.random.default_rng().integers(2**63)) if seed is None else seed

    def seed(self, seed: int | np.integer | None = None) -> Sequence[int | None]:
        """Restart the key schedule from ``seed`` (``None``: fresh entropy) at the next
        ``reset()``.

        Returns:
            The seed, once per game.

        Raises:
            ValueError: for a seed that is not an integer in ``0 <= seed < 2**63`` (nothing
                changes).
        """
        checked = self.seed_or_entropy(checked_seed(seed))
        self._pending_seed = checked
        return [checked] * self.num_envs

    def _indices(self, indices: VecEnvIndices) -> list[int]:
        """The games ``indices`` names (None: all), each checked to be one of them.

        Raises:
            ValueError: for an index outside ``0..num_envs - 1`` (negative ones count from
                the end, as in a list) or that is not an integer, naming it.
        """
        given = list(self._get_indices(indices))
        out: list[int] = []
        for index in given:
            if isinstance(index, (bool, np.bool_)) or not isinstance(index, (int, np.integer)):
                raise TypeError(
                    f"indices must be env indices (integers in 0..{self.num_envs - 1}), got "
                    f"{shown(indices)}"
                )
            if not -self.num_envs <= index < self.num_envs:
                raise ValueError(
                    f"indices: env {shown(index)} does not exist; this VecEnv has "
                    f"{self.num_envs} envs (0..{self.num_envs - 1})"
                )
            out.append(int(index) % self.num_envs)
        return out

    def _get_indices(self, indices: VecEnvIndices) -> Iterable[int]:
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, (int, np.integer)):
            return [indices]
        if isinstance(indices, (str, bytes, Mapping)) or not isinstance(indices, Iterable):
            raise TypeError(
                f"indices must be None, an env index or a list of them, got {shown(indices)}"
            )
        return indices

    def _attribute(self, what: str, name: object) -> str:
        """``name`` if the env has an attribute of that name, else a ValueError naming it."""
        if not isinstance(name, str) or not hasattr(self, name):
            raise ValueError(f"{what}: the env has no attribute {shown(name)}")
        return name

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The env's attribute, once per requested game (the games share the env).

        Raises:
            ValueError: for an attribute the env does not have, or a bad index, named.
        """
        value = getattr(self, self._attribute("attr_name", attr_name))
        return [value for _ in self._indices(indices)]

    def env_method(
        self,
        method_name: str,
        *method_args: Any,
        indices: VecEnvIndices = None,
        **method_kwargs: Any,
    ) -> list[Any]:
        """Call a method of the env; ``action_masks`` gives each requested game's row.

        Other methods are called once and their result repeated for each requested game.

        Raises:
            ValueError: for a method the env does not have, or a bad index, named.
            TypeError: for arguments given to ``action_masks``, which takes none.
        """
        method = getattr(self, self._attribute("method_name", method_name))
        if not callable(method):
            raise ValueError(f"method_name: {shown(method_name)} is not a method of the env")
        idx = self._indices(indices)
        if method_name == "action_masks" and (method_args or method_kwargs):
            given = shown((*method_args, *(f"{k}={v!r}" for k, v in method_kwargs.items())))
            raise TypeError(f"env_method: action_masks takes no arguments, got {given}")
        if method_name == "action_masks":
            return list(self.mask_rows(idx))
        result = method(*method_args, **method_kwargs)
        return [result for _ in idx]

    def env_is_wrapped(
        self,
        wrapper_class: type[gymnasium.Wrapper[Any, Any, Any, Any]],
        indices: VecEnvIndices = None,
    ) -> list[bool]:
        """No game is wrapped.

        Raises:
            TypeError: for a ``wrapper_class`` that is no class.
            ValueError: for a bad index, named.
        """
        if not isinstance(wrapper_class, type):
            raise TypeError(
                f"wrapper_class: expected a wrapper class such as gymnasium.Wrapper, got "
                f"{shown(wrapper_class)}"
            )
        return [False for _ in self._indices(indices)]


class UnoVecEnv(MaskedVecEnv):
    """``num_envs`` UNO games stepped together, one learner seat in each.

    Args:
        num_envs: Number of games.
        rules: Preset name, YAML path, mapping or Rules (``None``: official).
        opponents: One policy for every opponent seat, a list with one per opponent seat (in
            seat order after the learner), or an
            :class:`~uno_env.envs.opponents.OpponentPool`; a policy may be a bot name of
            :func:`unolab.agents.make_agent`. ``None``: the ``"random"`` bot.
        seed: Seed of the key schedule (``None``: fresh entropy). ``seed()`` changes it for
            the next ``reset()``.
        learner_seat: A fixed seat, or ``"random"`` (drawn for each hand from the seed).
        reward: ``"win_loss"`` (default), ``"points"`` or a reward function.
        render_mode: ``"ansi"`` or ``None``: ``render()`` returns game 0 from its learner.

    Raises:
        ValueError: for a bad size, seat, reward or opponent list.
    """

    def __init__(
        self,
        num_envs: int | np.integer,
        rules: str | Path | Mapping[str, Any] | Rules | None = None,
        opponents: OpponentsSpec = None,
        seed: int | np.integer | None = None,
        *,
        learner_seat: int | np.integer | Literal["random"] = "random",
        reward: str | RewardFn = "win_loss",
        render_mode: str | None = None,
    ) -> None:
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be 'ansi' or None, got {render_mode!r}")
        self.rules = load_rules(rules)
        self.render_mode = render_mode
        self.tables = LearnerTables(
            self.rules,
            num_envs,
            opponents,
            learner_seat=learner_seat,
            reward=reward,
            autoreset=True,
            seed=seed,
        )
        self._actions = None
        super().__init__(self.tables.num_games, observation_space(self.rules), action_space())

    # ------------------------------------------------------------------ core API

    def reset(self) -> npt.NDArray[np.float32]:
        """Deal a new hand in every game; return the learners' observations (n, OBS_DIM)."""
        if self._pending_seed is not None:
            self.tables.seed(self._pending_seed)
            self._pending_seed = None
        obs = self.tables.reset()
        self._reset_seeds()
        return obs

    def step_wait(self) -> VecEnvStepReturn:
        """Play the stored actions and the opponents' replies; autoreset finished games.

        Returns:
            ``(observations, rewards, dones, infos)``; a finished game's info holds
            ``terminal_observation`` and ``TimeLimit.truncated``.

        Raises:
            uno_env.IllegalActionError: if a learner action is not legal.
        """
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async(): call step(actions)")
        actions, self._actions = self._actions, None
        out = self.tables.step(actions)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if not out.finished.size:  # most steps at small sizes: no hand ended
            return out.observations, out.rewards, out.terminated, infos  # all False, new
        dones = out.terminated | out.truncated
        for row, game in enumerate(out.finished.tolist()):
            infos[game]["terminal_observation"] = out.terminal_observations[row]
            infos[game]["TimeLimit.truncated"] = bool(out.truncated[game])
        return out.observations, out.rewards, dones, infos

    def mask_rows(self, indices: list[int]) -> npt.NDArray[np.bool_]:
        """The learners' legal actions in the games ``indices``, (len(indices), 80) bool."""
        return self.tables.action_masks()[indices]

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """The learners' legal actions, (num_envs, 80) bool (a copy; asked once a step, so
        taken whole rather than row by row)."""
        return self.tables.action_masks().copy()

    def close(self) -> None:
        """Nothing to release."""

    def render(self, mode: str | None = None) -> np.ndarray | None:
        """Print game 0 from its learner's seat (``render_mode="ansi"``).

        Raises:
            ValueError: for a ``mode`` that is no render mode, named as given.
        """
        self.check_render_mode(mode)
        if (mode or self.render_mode) != "ansi":
            gymnasium.logger.warn("UnoVecEnv renders text only: use render_mode='ansi'")
            return None
        seat = int(self.tables.learner_seats[0])
        print(render_table(self.rules, self.tables.state, 0, view=seat))
        return None

    # ------------------------------------------------------------------ attribute access

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set an attribute of the env (shared by all games).

        The attributes the games are built from (:data:`FIXED_ATTRIBUTES`: the size, the
        spaces, the rules, the tables), the private ones and the methods are not set: the
        games would no longer be what they say.

        Raises:
            ValueError: for an attribute the env does not have (a misspelt name would set
                one that nothing reads) or that cannot be set, or a bad index, named.
        """
        self._attribute("attr_name", attr_name)
        if (
            attr_name in FIXED_ATTRIBUTES
            or attr_name.startswith("_")
            or callable(getattr(self, attr_name))
        ):
            raise ValueError(
                f"attr_name: {shown(attr_name)} cannot be set: the env's size, spaces, rules, "
                "tables, methods and private attributes are fixed when it is built; build a "
                "new UnoVecEnv instead"
            )
        self._indices(indices)
        setattr(self, attr_name, value)
