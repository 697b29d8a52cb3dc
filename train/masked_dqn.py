"""Masked DQN: Stable-Baselines3's DQN acting and bootstrapping over legal actions only.

The algorithm itself, with no knowledge of the lab's configs or runs: the training run
builds and loads it through :mod:`unolab.train.algorithms` and the command line is
``python -m unolab.train.dqn --config configs/dqn/<name>.yaml`` (:mod:`unolab.train.dqn`).

:class:`MaskedDQN` is Stable-Baselines3's DQN with the legal-action masks of
``UnoVecEnv.action_masks()`` applied in both places where DQN takes a max or draws an action:

Acting (rollouts and :meth:`MaskedDQN.predict`)
    The greedy action is the argmax of the Q-values over the *legal* actions only (illegal
    Q-values are set to -inf), and the ε-exploration draws uniformly among the legal actions
    of each game (the warm-up before ``learning_starts`` is ε = 1). ε is drawn per game, not
    once for the whole batch as in SB3.

Learning (:meth:`MaskedDQN.train`)
    :class:`MaskedReplayBuffer` stores, with each transition, the legal-action mask of the
    *next* observation (``next_action_masks``, read from the env right after the step), and
    the TD target (:func:`masked_target`) is::

        r + γ (1 - done) max_{a' legal in s'} Q_target(s', a')

    For a finished hand, SB3 stores the final observation (``terminal_observation``) as the
    next observation, while the env's masks already describe the next hand's first state;
    that mask row is therefore stored as all False: the final state has no legal action, and
    a row without a legal action bootstraps 0. That keeps the target right even for a hand
    cut by ``max_turns``, which SB3 treats as not done (``handle_timeout_termination``).

    ``MaskedDQN(double_q=True)`` uses the double-DQN target instead: the online network
    picks the legal next action, the target network values it. On UNO the plain max
    overestimates (Q-values drift upwards although nearly every early hand is lost, and
    actions that add decisions, such as drawing, gain the most); the double target does not.

The replay buffer is not saved in the checkpoints (it holds hundreds of MB); after
``--resume`` the learner refills it, acting ε-greedily, before the gradient steps start again
(:meth:`MaskedDQN.train` waits until the buffer holds ``learning_starts`` transitions).
The export reads the Q-network (``policy.q_net.q_net``), and the exported policy plays the
masked argmax of the Q-values.

SB3 private API: this module overrides SB3's *private* methods
``OffPolicyAlgorithm._sample_action`` and ``OffPolicyAlgorithm._store_transition`` (besides
the public ``DQN.train``, ``DQN.predict`` and ``ReplayBuffer.add``), calls
``BaseAlgorithm._update_learning_rate`` and ``ReplayBuffer._normalize_obs`` /
``_normalize_reward``, and reads private state (``_last_obs``, ``_last_original_obs``,
``_vec_normalize_env``, ``_current_progress_remaining``, ``_n_updates``). SB3 may change
these in any release; pyproject.toml pins ``stable-baselines3`` and ``sb3-contrib`` below
their next major version (``<3``), and an upgrade must re-run ``tests/train/test_dqn.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt
import torch as th
from gymnasium import spaces
from stable_baselines3 import DQN
from stable_baselines3.common.buffers import ReplayBuffer
from stable_baselines3.common.noise import ActionNoise
from stable_baselines3.common.torch_layers import create_mlp
from stable_baselines3.common.type_aliases import GymEnv
from stable_baselines3.common.vec_env import VecEnv, VecNormalize
from stable_baselines3.dqn.policies import DQNPolicy, QNetwork
from torch import nn
from torch.nn import functional as F

__all__ = [
    "DuelingDQNPolicy",
    "DuelingHead",
    "DuelingQNetwork",
    "FoldedDuelingLinear",
    "MaskedDQN",
    "MaskedReplayBuffer",
    "MaskedReplaySamples",
    "Potential",
    "env_action_masks",
    "masked_argmax",
    "masked_target",
    "uniform_legal",
]

BoolArray = npt.NDArray[np.bool_]

Potential = Callable[[np.ndarray], np.ndarray]
"""A shaping potential: (B, obs_dim) raw observations -> (B,) values."""


# ---------------------------------------------------------------------- masking primitives


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


# ---------------------------------------------------------------------- replay buffer


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
        gamma: The discount of the return (the model's ``gamma``; :class:`MaskedDQN` passes
            it).
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


# ---------------------------------------------------------------------- dueling network


class FoldedDuelingLinear(nn.Linear):
    """A dueling head folded into one linear layer (an export view of :class:`DuelingHead`).

    ``Q = V + A - mean(A)`` is linear in the last hidden layer ``h``, so one layer computes
    it: ``W = W_A - mean_rows(W_A) + w_V`` and ``b = b_A - mean(b_A) + b_V``. The layer's
    tensors are a copy; :meth:`unfold` writes weights copied into it back into the head.
    """

    def __init__(self, head: DuelingHead) -> None:
        super().__init__(head.advantage.in_features, head.advantage.out_features)
        self._heads = [head]  # a plain list: the head is not a submodule of this view
        with th.no_grad():
            w_a, b_a = head.advantage.weight, head.advantage.bias
            self.weight.copy_(w_a - w_a.mean(dim=0, keepdim=True) + head.value.weight)
            self.bias.copy_(b_a - b_a.mean() + head.value.bias)

    def unfold(self) -> None:
        """Set the head so that it computes this layer: ``A = W x + b``, ``V = mean(A)``."""
        head = self._heads[0]
        with th.no_grad():
            head.advantage.weight.copy_(self.weight)
            head.advantage.bias.copy_(self.bias)
            head.value.weight.copy_(self.weight.mean(dim=0, keepdim=True))
            head.value.bias.copy_(self.bias.mean().reshape(1))


class DuelingHead(nn.Module):
    """The dueling output layer: ``Q(s, a) = V(s) + A(s, a) - mean_a A(s, a)``.

    The value stream learns how good a state is from every transition, whichever action
    was taken; the advantages only have to rank the actions (most UNO decisions have a few
    near-equivalent legal plays). The mean runs over all actions, legal or not, which keeps
    ``Q`` linear in the last hidden layer (:meth:`folded`) and leaves the legal argmax
    unchanged.

    Args:
        in_features: Width of the last hidden layer.
        num_actions: Number of actions.
    """

    def __init__(self, in_features: int, num_actions: int) -> None:
        super().__init__()
        self.value = nn.Linear(in_features, 1)
        self.advantage = nn.Linear(in_features, num_actions)

    def forward(self, hidden: th.Tensor) -> th.Tensor:
        """(B, in_features) -> (B, num_actions) Q-values."""
        advantage = self.advantage(hidden)
        return self.value(hidden) + advantage - advantage.mean(dim=1, keepdim=True)

    def folded(self) -> FoldedDuelingLinear:
        """One linear layer computing the same Q-values (for export)."""
        return FoldedDuelingLinear(self)


class DuelingQNetwork(QNetwork):
    """SB3's Q-network with a :class:`DuelingHead` after the hidden layers.

    ``q_net`` stays one ``nn.Sequential`` (hidden layers, activations, then the head), so the
    export reads it as the plain network with the head folded into its last layer.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        hidden = create_mlp(self.features_dim, -1, self.net_arch, self.activation_fn)
        width = self.net_arch[-1] if self.net_arch else self.features_dim
        self.q_net = nn.Sequential(*hidden, DuelingHead(width, int(self.action_space.n)))


class DuelingDQNPolicy(DQNPolicy):
    """SB3's DQN policy with dueling Q-networks (online and target)."""

    def make_q_net(self) -> DuelingQNetwork:
        """A fresh :class:`DuelingQNetwork` (its own features extractor)."""
        net_args = self._update_features_extractor(self.net_args, features_extractor=None)
        return DuelingQNetwork(**net_args).to(self.device)


# ---------------------------------------------------------------------- the algorithm


class MaskedDQN(DQN):
    """SB3 DQN that acts and bootstraps over legal actions only (see the module docstring).

    Takes DQN's arguments; ``replay_buffer_class`` defaults to (and must be a subclass of)
    :class:`MaskedReplayBuffer`. The env must expose ``action_masks()`` (``UnoVecEnv``).

    Args:
        policy: The DQN policy (``"MlpPolicy"``).
        env: The env (a VecEnv with ``action_masks()``).
        double_q: Double-DQN target: the online network picks the legal next action, the
            target network values it (less overestimation than the plain max).
        n_step: Rewards summed before bootstrapping (see :class:`MaskedReplayBuffer`): the
            final reward of a hand reaches decisions ``n_step`` turns earlier in one update
            instead of ``n_step`` target-network generations.
        potential: A shaping potential for the replay buffer (see
            :class:`MaskedReplayBuffer`; ``None``: no shaping). It must be picklable (a
            module-level function or a ``functools.partial`` of one): checkpoints keep it.
        **kwargs: SB3 DQN's other arguments.

    Raises:
        TypeError: for another replay buffer class.
        ValueError: for SB3's own ``n_steps > 1`` (use ``n_step``: SB3's n-step buffer
            knows no masks).
    """

    def __init__(
        self,
        policy: str | type[DQNPolicy],
        env: GymEnv | str,
        double_q: bool = False,
        n_step: int = 1,
        potential: Potential | None = None,
        **kwargs: Any,
    ) -> None:
        self.double_q = double_q
        self.n_step = n_step
        buffer_class = kwargs.setdefault("replay_buffer_class", MaskedReplayBuffer)
        if not (isinstance(buffer_class, type) and issubclass(buffer_class, MaskedReplayBuffer)):
            raise TypeError(f"MaskedDQN needs a MaskedReplayBuffer subclass, got {buffer_class!r}")
        if kwargs.get("n_steps", 1) != 1:
            raise ValueError("MaskedDQN takes n-step returns as n_step (masked), not SB3's n_steps")
        buffer_kwargs = dict(kwargs.get("replay_buffer_kwargs") or {})
        buffer_kwargs.setdefault("n_step", n_step)
        buffer_kwargs.setdefault("gamma", kwargs.get("gamma", 0.99))
        buffer_kwargs.setdefault("potential", potential)
        kwargs["replay_buffer_kwargs"] = buffer_kwargs
        super().__init__(policy, env, **kwargs)

    # -- helpers

    @property
    def masked_buffer(self) -> MaskedReplayBuffer:
        """The replay buffer, typed.

        Raises:
            TypeError: if the buffer is not a :class:`MaskedReplayBuffer`.
        """
        if not isinstance(self.replay_buffer, MaskedReplayBuffer):
            raise TypeError(
                f"MaskedDQN needs a MaskedReplayBuffer, got {type(self.replay_buffer).__name__}"
            )
        return self.replay_buffer

    def _env_masks(self) -> BoolArray:
        if self.env is None:
            raise RuntimeError("MaskedDQN needs an env exposing action_masks()")
        return env_action_masks(self.env)

    def q_values(self, observation: np.ndarray) -> th.Tensor:
        """The online network's Q-values for a batch of observations, (B, A)."""
        obs_tensor, _ = self.policy.obs_to_tensor(observation)
        with th.no_grad():
            q: th.Tensor = self.q_net(obs_tensor)
        return q

    def _masked_epsilon_greedy(
        self, observation: np.ndarray, masks: BoolArray, epsilon: float
    ) -> npt.NDArray[np.int64]:
        """Per row: a uniform legal action with probability ε, else the masked argmax."""
        n = masks.shape[0]
        explore: BoolArray = np.asarray(np.random.random_sample((n,)) < epsilon)
        actions = uniform_legal(masks)
        if not explore.all():
            greedy = masked_argmax(
                self.q_values(observation), th.as_tensor(masks, device=self.device)
            )
            actions = np.where(explore, actions, greedy.cpu().numpy()).astype(np.int64)
        return actions

    # -- acting

    def _sample_action(
        self,
        learning_starts: int,
        action_noise: ActionNoise | None = None,
        n_envs: int = 1,
    ) -> tuple[np.ndarray, np.ndarray]:
        """ε-greedy over legal actions (ε = 1 during the warm-up before ``learning_starts``)."""
        assert self._last_obs is not None, "self._last_obs was not set"
        assert isinstance(self._last_obs, np.ndarray)
        masks = self._env_masks()
        warmup = self.num_timesteps < learning_starts
        # The schedule itself: ``exploration_rate`` is only updated after the first step.
        epsilon = (
            1.0 if warmup else float(self.exploration_schedule(self._current_progress_remaining))
        )
        actions = self._masked_epsilon_greedy(self._last_obs, masks, epsilon)
        return actions, actions

    def predict(
        self,
        observation: np.ndarray | dict[str, np.ndarray],
        state: tuple[np.ndarray, ...] | None = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = False,
        action_masks: np.ndarray | None = None,
    ) -> tuple[np.ndarray, tuple[np.ndarray, ...] | None]:
        """Act on one observation or a batch; masked when ``action_masks`` is given.

        Args:
            observation: (OBS_DIM,) or (B, OBS_DIM).
            state: Unused (no recurrence), returned as is.
            episode_start: Unused.
            deterministic: The masked argmax; otherwise ε-greedy with the current
                exploration rate, ε drawing among legal actions.
            action_masks: (A,) or (B, A) bool legal-action masks; ``None``: SB3's unmasked
                DQN behaviour.

        Returns:
            The actions (a scalar array for a single observation) and ``state``.
        """
        if action_masks is None:
            return super().predict(observation, state, episode_start, deterministic)
        if isinstance(observation, dict):
            raise TypeError("MaskedDQN.predict expects array observations")
        vectorized = self.policy.is_vectorized_observation(observation)
        obs = observation if vectorized else observation[None]
        masks = np.asarray(action_masks, dtype=bool).reshape(obs.shape[0], -1)
        epsilon = 0.0 if deterministic else float(self.exploration_rate)
        actions = self._masked_epsilon_greedy(obs, masks, epsilon)
        return (actions if vectorized else actions[0]), state

    def _store_transition(
        self,
        replay_buffer: ReplayBuffer,
        buffer_action: np.ndarray,
        new_obs: np.ndarray | dict[str, np.ndarray],
        reward: np.ndarray,
        dones: np.ndarray,
        infos: list[dict[str, Any]],
    ) -> None:
        """SB3's transition storage, plus the legal-action masks of the next observations.

        For a finished game the stored next observation is ``terminal_observation`` and its
        mask row is all False (the final state has no legal action; the env's masks are
        already those of the next hand).
        """
        if not isinstance(replay_buffer, MaskedReplayBuffer):
            raise TypeError("MaskedDQN needs a MaskedReplayBuffer")
        if isinstance(new_obs, dict):
            raise TypeError("MaskedDQN expects array observations")
        next_masks = self._env_masks()
        done = np.asarray(dones, dtype=bool)
        next_masks[done] = False

        if self._vec_normalize_env is not None:
            new_obs_ = self._vec_normalize_env.get_original_obs()
            reward_ = self._vec_normalize_env.get_original_reward()
        else:
            self._last_original_obs, new_obs_, reward_ = self._last_obs, new_obs, reward
        assert isinstance(new_obs_, np.ndarray)
        next_obs = np.array(new_obs_, copy=True)
        for i in np.flatnonzero(done):
            terminal = infos[i].get("terminal_observation")
            if terminal is None:
                continue
            next_obs[i] = terminal
            if self._vec_normalize_env is not None:
                next_obs[i] = self._vec_normalize_env.unnormalize_obs(next_obs[i, :])

        assert isinstance(self._last_original_obs, np.ndarray)
        replay_buffer.add(
            self._last_original_obs,
            next_obs,
            buffer_action,
            reward_,
            dones,
            infos,
            next_action_masks=next_masks,
        )
        self._last_obs = new_obs
        if self._vec_normalize_env is not None:
            self._last_original_obs = new_obs_

    # -- learning

    def train(self, gradient_steps: int, batch_size: int = 100) -> None:
        """Gradient steps on the Huber loss to the masked TD target.

        Waits (does nothing) until the buffer holds ``learning_starts`` transitions (or is
        full): after a resume the buffer starts empty.
        """
        buffer = self.masked_buffer
        needed = min(self.learning_starts, buffer.buffer_size * buffer.n_envs)
        if buffer.transitions() < max(needed, 1) or buffer.size() < buffer.n_step:
            return
        self.policy.set_training_mode(True)
        self._update_learning_rate(self.policy.optimizer)

        losses = []
        for _ in range(gradient_steps):
            data = buffer.sample_masked(batch_size, env=self._vec_normalize_env)
            with th.no_grad():
                q_next = self.q_net_target(data.next_observations)
                q_online = self.q_net(data.next_observations) if self.double_q else None
                target = masked_target(
                    q_next,
                    data.next_action_masks,
                    data.rewards,
                    data.dones,
                    data.discounts,
                    q_online,
                )
            q = th.gather(self.q_net(data.observations), dim=1, index=data.actions.long())
            loss = F.smooth_l1_loss(q, target)
            losses.append(loss.item())
            self.policy.optimizer.zero_grad()
            loss.backward()
            th.nn.utils.clip_grad_norm_(self.policy.parameters(), self.max_grad_norm)
            self.policy.optimizer.step()

        self._n_updates += gradient_steps
        self.logger.record("train/n_updates", self._n_updates, exclude="tensorboard")
        self.logger.record("train/loss", float(np.mean(losses)))
