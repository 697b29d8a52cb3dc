"""``UnoGymEnv``: single-agent Gymnasium UNO, the learner against opponent policies.

The learner holds one seat (fixed, or drawn for each hand); opponent policies from
``agents/`` play the other seats inside :meth:`UnoGymEnv.step`, so the observation and the
reward it returns always belong to the learner. An episode is one hand. The env is one game
of :class:`~uno_env.envs.learner_tables.LearnerTables`, the machinery of the batched
:class:`~uno_env.envs.vec_env.UnoVecEnv` too, so both play identical games from one seed.

``import uno_env`` registers it::

    import gymnasium, uno_env
    env = gymnasium.make("uno_env/Uno-v0", rules="official", num_players=2)

It exposes ``action_masks()`` for sb3-contrib's ``MaskablePPO``; ``info["action_mask"]``
holds the same mask.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import gymnasium
import numpy as np
import numpy.typing as npt

from uno_env.config_values import check_switch
from uno_env.envs import RewardFn, action_space, observation_space
from uno_env.envs.common import action_id, checked_seed
from uno_env.envs.learner_tables import LearnerTables
from uno_env.envs.opponents import OpponentsSpec
from uno_env.envs.registration import (
    DEFAULT_ILLEGAL_ACTION,
    IllegalActionMode,
    check_illegal_action,
)
from uno_env.envs.render import RENDER_MODES, check_render_mode, render_in_mode, render_table
from uno_env.envs.table_inputs import ResetNeededError, check_options, explicit_hands
from uno_env.rules import Rules, load_rules

__all__ = [
    "UnoGymEnv",
]


class UnoGymEnv(gymnasium.Env[npt.NDArray[Any], np.int64]):
    """UNO for one learner seat; opponents act inside ``step``.

    Args:
        rules: A preset name, YAML path, mapping or :class:`~uno_env.rules.Rules`
            (``None``: official).
        opponents: One policy for every opponent seat, a list with one per opponent seat (in
            seat order after the learner), or an
            :class:`~uno_env.envs.opponents.OpponentPool`; a policy may be a bot name of
            :func:`unolab.agents.make_agent`. ``None``: the ``"random"`` bot.
        learner_seat: A fixed seat, or ``"random"`` (drawn for each hand from the seed).
        reward: ``"win_loss"`` (default), ``"points"``, or a reward function (see
            :data:`uno_env.envs.REWARD_SCHEMES`).
        render_mode: ``"ansi"`` (``render()`` returns the text) or ``"human"`` (prints it).
        colour: Use ANSI colours in the rendering.
        illegal_action: ``"terminate"`` (default): an illegal action ends the episode with
            ``illegal_reward`` for the learner, as PettingZoo's ``TerminateIllegalWrapper``
            does, so that unmasked algorithms and the env checkers (which step random
            actions) work; ``"raise"``: it raises ``uno_env.IllegalActionError``.
        illegal_reward: The learner's reward for an illegal action under ``"terminate"``.
        **rule_overrides: Rule fields on top of ``rules`` (e.g. ``num_players=2``).

    ``reset(options=...)`` accepts ``{"key": k}`` to deal the hand of game key ``k`` and
    ``{"learner_seat": s}`` to seat the learner for that hand.
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 1}  # noqa: RUF012

    def __init__(
        self,
        rules: str | Path | Mapping[str, Any] | Rules | None = None,
        opponents: OpponentsSpec = None,
        learner_seat: int | np.integer | Literal["random"] = "random",
        reward: str | RewardFn = "win_loss",
        render_mode: str | None = None,
        colour: bool = True,
        illegal_action: IllegalActionMode = DEFAULT_ILLEGAL_ACTION,
        illegal_reward: float = -1.0,
        **rule_overrides: Any,
    ) -> None:
        illegal_reward = check_illegal_action(illegal_action, illegal_reward)
        self.render_mode = check_render_mode(render_mode)
        self.rules = load_rules(rules, **rule_overrides)
        self.colour = check_switch("colour", colour)
        self.illegal_action = illegal_action
        self.illegal_reward = illegal_reward
        self._forfeited = False
        self.tables = LearnerTables(
            self.rules, 1, opponents, learner_seat=learner_seat, reward=reward, autoreset=False
        )
        self.observation_space = observation_space(self.rules)
        self.action_space = action_space()

    @property
    def learner_seat(self) -> int:
        """The learner's seat in the current hand."""
        return int(self.tables.learner_seats[0])

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """The learner's legal actions, (80,) bool (for ``MaskablePPO``)."""
        return self.tables.action_masks()[0].copy()

    def _info(self) -> dict[str, Any]:
        return {"action_mask": self.action_masks(), "learner_seat": self.learner_seat}

    def reset(
        self, *, seed: int | np.integer | None = None, options: dict[str, Any] | None = None
    ) -> tuple[npt.NDArray[np.float32], dict[str, Any]]:
        """Deal a hand and play the opponents up to the learner's first decision.

        Args:
            seed: Restart the key schedule (the same seed replays the same hands).
            options: ``{"key": game_key, "learner_seat": seat}``, both optional; other keys
                are ignored.

        Returns:
            The learner's observation and the info dict.
        """
        # Checked first: Gymnasium's own seeding refuses NumPy integers, and names no
        # argument for a bad one.
        seed = checked_seed(seed)
        opts = check_options(options)
        # The options too, before the seed restarts the key schedule: a refused reset
        # changes nothing.
        explicit_hands(
            np.arange(1), opts.get("key"), opts.get("learner_seat"), self.tables.rules.num_players
        )
        super().reset(seed=seed)
        if seed is not None:
            self.tables.seed(seed)
        elif not self.tables.seeded:
            self.tables.seed(self.np_random)
        self._forfeited = False
        obs = self.tables.reset(keys=opts.get("key"), learner_seats=opts.get("learner_seat"))
        if self.render_mode == "human":
            self.render()
        return obs[0].copy(), self._info()

    def step(
        self, action: int | np.integer | npt.NDArray[np.integer]
    ) -> tuple[npt.NDArray[np.float32], float, bool, bool, dict[str, Any]]:
        """Play the learner's action, then the opponents' until the learner must act again.

        Returns:
            ``(observation, reward, terminated, truncated, info)``, all the learner's.

        Raises:
            uno_env.IllegalActionError: if the action is not legal and ``illegal_action`` is
                ``"raise"``, or, in every mode, a number that is no action id (out of range,
                fractional), named as given (the state is untouched).
            TypeError: for an action that is not a number (a bool, text, a list).
            RuntimeError: if the hand is over and ``reset`` was not called.
        """
        if self._forfeited or self.tables.over[0]:
            raise ResetNeededError("the hand is over: call reset() before stepping again")
        # A one-element array of shape (1,) (what a policy's predict may give) counts as its
        # element, as [a] does not; what is no action id at all (a (1, 1) array too) is the
        # caller's bug, refused in every mode.
        given = (
            action.reshape(())
            if isinstance(action, np.ndarray) and action.shape == (1,)
            else action
        )
        act = action_id(given)
        if self.illegal_action == "terminate" and not self.tables.action_masks()[0, act]:
            self._forfeited = True
            gymnasium.logger.warn(
                "UnoGymEnv: an illegal action ends the episode with illegal_reward "
                "(pass illegal_action='raise' to get an error instead)"
            )
            obs = self.tables.observations()[0].copy()
            return obs, self.illegal_reward, True, False, {**self._info(), "illegal": True}
        out = self.tables.step(np.array([act], dtype=np.int64))
        if self.render_mode == "human":
            self.render()
        return (
            out.observations[0].copy(),
            float(out.rewards[0]),
            bool(out.terminated[0]),
            bool(out.truncated[0]),
            self._info(),
        )

    def render(self) -> str | None:
        """Render the table from the learner's seat (``ansi``: return it; ``human``: print)."""
        return render_in_mode(
            self.render_mode,
            lambda: render_table(
                self.rules,
                self.tables.state,
                view=self.learner_seat,
                colour=self.colour,
                names=[
                    ("you" if s == self.learner_seat else f"seat {s}")
                    for s in range(self.rules.num_players)
                ],
            ),
        )
