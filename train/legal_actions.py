"""Legal-action primitives of masked DQN: argmax, TD target and exploration over legal actions.

Pure tensor and array functions with no state, used by :class:`~unolab.train.masked_dqn.MaskedDQN`
to act and to bootstrap only over the actions the legal-action masks allow (True: legal).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import torch as th
from stable_baselines3.common.vec_env import VecEnv

__all__ = [
    "BoolArray",
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
