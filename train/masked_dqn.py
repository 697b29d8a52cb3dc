"""Masked DQN: Stable-Baselines3's DQN acting and bootstrapping over legal actions only.

The algorithm itself, with no knowledge of the lab's configs or runs: the training run
builds and loads it through :mod:`unolab.train.algorithms` and the command line is
``uno-lab train dqn --config dqn/<name>`` (:mod:`unolab.train.run_cli`).
Its parts: the masked argmax, TD target and exploration, and the replay buffer
(:mod:`unolab.train.masked_replay`); this module adds the algorithm and the dueling Q-network.

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
``BaseAlgorithm._update_learning_rate`` and (in its replay buffer)
``ReplayBuffer._normalize_obs`` / ``_normalize_reward``, and reads private state
(``_last_obs``, ``_last_original_obs``, ``_vec_normalize_env``,
``_current_progress_remaining``, ``_n_updates``). SB3 may change these in any release;
pyproject.toml pins ``stable-baselines3`` and ``sb3-contrib`` below their next major version
(``<3``), and an upgrade must re-run ``tests/train/test_dqn.py``.

**The dueling Q-network.** ``MaskedDQN(policy=DuelingDQNPolicy)`` learns
``Q = V + A - mean(A)``; the export folds the head into the last linear layer
(:class:`FoldedDuelingLinear`), so an exported dueling network is a plain MLP.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import torch as th
from stable_baselines3 import DQN
from stable_baselines3.common.buffers import ReplayBuffer
from stable_baselines3.common.noise import ActionNoise
from stable_baselines3.common.torch_layers import create_mlp
from stable_baselines3.common.type_aliases import GymEnv
from stable_baselines3.dqn.policies import DQNPolicy, QNetwork
from torch import nn
from torch.nn import functional as F

from unolab.train.masked_replay import (
    BoolArray,
    MaskedReplayBuffer,
    Potential,
    env_action_masks,
    masked_argmax,
    masked_target,
    uniform_legal,
)

__all__ = ["DuelingDQNPolicy", "DuelingHead", "DuelingQNetwork", "FoldedDuelingLinear", "MaskedDQN"]


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
