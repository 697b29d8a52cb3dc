"""Masked DQN's legal actions: the replay buffer that keeps their masks, and the argmax, TD
target and exploration over them.

:class:`MaskedReplayBuffer` is SB3's replay buffer plus, per transition, the legal-action
mask of the next observation, so that the TD target bootstraps over legal actions only; it
samples n-step returns and can add potential-based reward shaping. The pure tensor and
array functions (:func:`masked_argmax`, :func:`masked_target`, :func:`uniform_legal`,
:func:`env_action_masks`) let :class:`~unolab.train.masked_dqn.MaskedDQN` act and bootstrap
only over the actions the masks allow (True: legal).

SB3 private API: it calls ``ReplayBuffer._normalize_obs`` / ``_normalize_reward``, which may
change in any SB3 release (see :mod:`unolab.train.masked_dqn`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt
import torch as th
from gymnasium import spaces
from stable_baselines3.common.buffers import ReplayBuffer
from stable_baselines3.common.vec_env import VecEnv, VecNormalize

__all__ = [
    "BoolArray",
    "MaskedReplayBuffer",
    "MaskedReplaySamples",
    "Potential",
    "env_action_masks",
    "masked_argmax",
    "masked_target",
    "uniform_legal",
]

BoolArray = npt.NDArray[np.bool_]


def masked_argmax(q_values: th.Tensor, masks: th.Tensor) -> th.Tensor:
    """The argmax of each row over its legal actions.

    Args:
        q_values: (B, A) Q-values.
        masks: (B, A) bool, True where the action is legal.

    Returns:
        (B,) int64 action ids; a row without any legal action gets action 0.
    """
    masked = q_values.masked_fill(~masks, float("-inf"))
    masked[~masks.any(dim=1)] = 0.0
    return masked.argmax(dim=1)


def masked_target(
    q_next: th.Tensor,
    next_masks: th.Tensor,
    rewards: th.Tensor,
    dones: th.Tensor,
    gamma: float | th.Tensor,
    q_next_online: th.Tensor | None = None,
) -> th.Tensor:
    """The 1-step TD target over the legal next actions only.

    ``rewards + gamma * (1 - dones) * max_{a' legal} q_next[a']``; a next state without any
    legal action (a finished hand) is worth 0. With ``q_next_online`` (double DQN), the
    next action is the legal argmax of the online network, valued by the target network:
    ``q_next[argmax_{a' legal} q_next_online[a']]``.

    Args:
        q_next: (B, A) target-network Q-values of the next observations.
        next_masks: (B, A) bool legal-action masks of the next observations.
        rewards: (B, 1) rewards.
        dones: (B, 1) 1.0 where the transition ends the episode (no bootstrap).
        gamma: The discount, a float or a (B, 1) tensor.
        q_next_online: (B, A) online-network Q-values of the next observations, for the
            double-DQN target; ``None``: the plain max.

    Returns:
        (B, 1) targets.
    """
    if q_next_online is None:
        best = q_next.masked_fill(~next_masks, float("-inf")).max(dim=1).values
    else:
        chosen = masked_argmax(q_next_online, next_masks)
        best = q_next.gather(1, chosen.reshape(-1, 1))[:, 0]
    best = th.where(next_masks.any(dim=1), best, th.zeros_like(best)).reshape(-1, 1)
    return rewards + (1 - dones) * gamma * best


def uniform_legal(
    masks: BoolArray, rng: np.random.Generator | None = None
) -> npt.NDArray[np.int64]:
    """One action per row, uniform among the row's legal actions (action 0 for an empty row).

    Args:
        masks: (B, A) bool legal-action masks.
        rng: Random generator; ``None`` uses NumPy's global one (seeded by SB3).
    """
    noise = np.random.random_sample(masks.shape) if rng is None else rng.random(masks.shape)
    noise = np.where(masks, noise, -1.0)
    return noise.argmax(axis=1).astype(np.int64)


def env_action_masks(env: VecEnv) -> BoolArray:
    """The (num_envs, A) legal-action masks of the env's current observations.

    Uses ``env.action_masks()`` (``UnoVecEnv``, also through SB3 wrappers such as
    ``VecMonitor``), else ``env_method("action_masks")``.
    """
    method = getattr(env, "action_masks", None)
    masks = method() if callable(method) else np.stack(env.env_method("action_masks"))
    return np.asarray(masks, dtype=bool).reshape(env.num_envs, -1)


Potential = Callable[[np.ndarray], np.ndarray]
"""A shaping potential: (B, obs_dim) raw observations -> (B,) values."""


class MaskedReplaySamples(NamedTuple):
    """A replay batch with the legal-action masks of the next observations."""

    observations: th.Tensor
    actions: th.Tensor
    next_observations: th.Tensor
    dones: th.Tensor
    rewards: th.Tensor
    next_action_masks: th.Tensor
    discounts: th.Tensor
    """(B, 1) discount of the bootstrap: γ^k for a return over k rewards (γ for 1-step)."""


class MaskedReplayBuffer(ReplayBuffer):
    """SB3's replay buffer plus ``next_action_masks``, (buffer_size, n_envs, A) bool.

    Args:
        buffer_size: Transitions kept (divided among the ``n_envs`` columns).
        observation_space: The observation space.
        action_space: A ``Discrete`` action space (A actions).
        device: Torch device of the sampled batches.
        n_envs: Games per env step.
        optimize_memory_usage: Must be False (not supported).
        handle_timeout_termination: As in SB3: a truncated episode is not done.
        n_step: Rewards summed before bootstrapping (1: the plain 1-step target). Each env
            column is one stream of consecutive learner decisions, so the n-step return of
            row ``i`` reads rows ``i .. i + n - 1`` of its column, stopping at the end of a
            hand; the newest ``n - 1`` rows are not sampled until their successors exist.
        gamma: The discount of the return (the model's ``gamma``;
            :class:`~unolab.train.masked_dqn.MaskedDQN` passes it).
        potential: A potential ``Φ`` for potential-based reward shaping, or ``None``. Each
            sampled return becomes ``R + γ^k Φ(s_k) - Φ(s_0)``, with ``Φ = 0`` once the hand
            has ended: the shaped rewards telescope, so the greedy policy they lead to is
            the unshaped one (Ng, Harada and Russell, 1999), and the network learns
            ``Q - Φ``, which differs from ``Q`` by the same amount for every action of a
            state. It gives each decision an immediate, low-variance signal (such as the
            change in hand sizes) long before the hand's outcome is learnt.

    Raises:
        TypeError: for a non-discrete action space.
        ValueError: for ``optimize_memory_usage=True``, ``n_step`` below 1 or not below
            the rows of the buffer, or ``gamma`` outside (0, 1].
    """

    next_action_masks: BoolArray

    def __init__(
        self,
        buffer_size: int,
        observation_space: spaces.Space[Any],
        action_space: spaces.Space[Any],
        device: th.device | str = "auto",
        n_envs: int = 1,
        optimize_memory_usage: bool = False,
        handle_timeout_termination: bool = True,
        n_step: int = 1,
        gamma: float = 0.99,
        potential: Potential | None = None,
    ) -> None:
        if not isinstance(action_space, spaces.Discrete):
            raise TypeError(f"MaskedReplayBuffer needs a Discrete action space, got {action_space}")
        if optimize_memory_usage:
            raise ValueError("MaskedReplayBuffer does not support optimize_memory_usage=True")
        super().__init__(
            buffer_size,
            observation_space,
            action_space,
            device=device,
            n_envs=n_envs,
            optimize_memory_usage=False,
            handle_timeout_termination=handle_timeout_termination,
        )
        if not 1 <= n_step < self.buffer_size:
            raise ValueError(
                f"n_step must be at least 1 and below the buffer's {self.buffer_size} rows "
                f"(buffer_size / n_envs), got {n_step}"
            )
        if not 0.0 < gamma <= 1.0:
            raise ValueError(f"gamma must be in (0, 1], got {gamma}")
        self.n_step = int(n_step)
        self.gamma = float(gamma)
        self.potential = potential
        self.num_actions = int(action_space.n)
        self.next_action_masks = np.zeros(
            (self.buffer_size, self.n_envs, self.num_actions), dtype=bool
        )

    def add(
        self,
        obs: np.ndarray,
        next_obs: np.ndarray,
        action: np.ndarray,
        reward: np.ndarray,
        done: np.ndarray,
        infos: list[dict[str, Any]],
        next_action_masks: BoolArray | None = None,
    ) -> None:
        """Store one env step (``n_envs`` transitions) with the next observations' masks.

        Raises:
            ValueError: if ``next_action_masks`` is missing or of the wrong shape.
        """
        if next_action_masks is None:
            raise ValueError("MaskedReplayBuffer.add needs next_action_masks")
        masks = np.asarray(next_action_masks, dtype=bool)
        if masks.shape != (self.n_envs, self.num_actions):
            raise ValueError(
                f"next_action_masks must have shape {(self.n_envs, self.num_actions)}, "
                f"got {masks.shape}"
            )
        self.next_action_masks[self.pos] = masks  # before super().add() advances pos
        super().add(obs, next_obs, action, reward, done, infos)

    def _sample_rows(self, batch_size: int) -> npt.NDArray[np.int64]:
        """Rows to sample: any written row whose next ``n_step - 1`` rows are written too.

        Raises:
            ValueError: if no row qualifies yet (an empty buffer).
        """
        lookahead = self.n_step - 1
        if self.full:
            # Rows pos-lookahead .. pos-1 (the newest) lack their successors; skip them.
            offsets = np.random.randint(0, self.buffer_size - lookahead, size=batch_size)
            return np.asarray((self.pos + offsets) % self.buffer_size, dtype=np.int64)
        upper = self.pos - lookahead
        if upper <= 0:
            raise ValueError("cannot sample from an empty replay buffer")
        return np.random.randint(0, upper, size=batch_size).astype(np.int64)

    def sample_masked(
        self, batch_size: int, env: VecNormalize | None = None
    ) -> MaskedReplaySamples:
        """Sample ``batch_size`` transitions (with replacement), masks included.

        With ``n_step > 1`` each sample is an n-step transition: the discounted sum of up to
        ``n_step`` rewards of its column, the observation and mask after the last of them,
        ``dones`` of that last one and ``discounts`` = γ^k for the k rewards summed (fewer
        than ``n_step`` when the hand ends first).

        Raises:
            ValueError: if the buffer is empty.
        """
        batch_inds = self._sample_rows(batch_size)
        env_inds = np.random.randint(0, self.n_envs, size=batch_size)
        obs = self._normalize_obs(self.observations[batch_inds, env_inds, :], env)
        rewards = np.zeros(batch_size, dtype=np.float32)
        discounts = np.ones(batch_size, dtype=np.float32)
        live = np.ones(batch_size, dtype=bool)  # the hand has not ended within the window
        last = batch_inds.copy()  # the row whose next state the target bootstraps from
        for k in range(self.n_step):
            rows = (batch_inds + k) % self.buffer_size
            step_rewards = self._normalize_reward(self.rewards[rows, env_inds], env)
            rewards += np.where(live, discounts * step_rewards, 0.0).astype(np.float32)
            discounts = np.where(live, discounts * self.gamma, discounts).astype(np.float32)
            last = np.where(live, rows, last)
            live &= self.dones[rows, env_inds] == 0
        if self.potential is not None:
            ended = self.dones[last, env_inds] != 0  # won, lost or cut: Φ(end) = 0
            start = self.potential(self.observations[batch_inds, env_inds, :])
            end = self.potential(self.next_observations[last, env_inds, :])
            rewards += (discounts * np.where(ended, 0.0, end) - start).astype(np.float32)
        next_obs = self._normalize_obs(self.next_observations[last, env_inds, :], env)
        assert isinstance(obs, np.ndarray) and isinstance(next_obs, np.ndarray)  # Box obs
        dones = self.dones[last, env_inds] * (1 - self.timeouts[last, env_inds])
        return MaskedReplaySamples(
            observations=self.to_torch(obs),
            actions=self.to_torch(self.actions[batch_inds, env_inds, :]),
            next_observations=self.to_torch(next_obs),
            dones=self.to_torch(dones.reshape(-1, 1)),
            rewards=self.to_torch(rewards.reshape(-1, 1)),
            next_action_masks=th.as_tensor(
                self.next_action_masks[last, env_inds, :], device=self.device
            ),
            discounts=self.to_torch(discounts.reshape(-1, 1)),
        )

    def transitions(self) -> int:
        """The number of transitions held (all columns together)."""
        return self.size() * self.n_envs
