"""The two SB3 algorithms of the lab, as registry entries: MaskablePPO and masked DQN.

:class:`SB3Algorithm` is the one adapter from an SB3 model class to the protocol a training
run needs (:class:`~unolab.train.algorithms.TrainingAlgorithm`); :data:`MASKABLE_PPO` and
:data:`MASKED_DQN` (:data:`SB3_ALGORITHMS`) are the entries
:data:`unolab.train.algorithms.ALGORITHMS` starts with:
how each builds its model from its config section (``ppo:``, ``dqn:``), which modules form
its acting network, and its checks of a config.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from sb3_contrib import MaskablePPO
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv
from torch import nn

from uno_env.config_values import ConfigError, check_int
from uno_env.observation import OBS_LAYOUT
from unolab.train.config_limits import MAX_ROLLOUT, resolve_device
from unolab.train.masked_dqn import DuelingDQNPolicy, DuelingHead, MaskedDQN
from unolab.train.masked_replay import MaskedReplayBuffer

if TYPE_CHECKING:  # the config imports the registry, to check its algorithm
    from unolab.train.config import TrainConfig

__all__ = ["MASKABLE_PPO", "MASKED_DQN", "SB3_ALGORITHMS", "SB3Algorithm", "hand_size_potential"]


@dataclass(frozen=True)
class SB3Algorithm:
    """An SB3 model class as a :class:`~unolab.train.algorithms.TrainingAlgorithm`.

    Attributes:
        name: As the protocol's (so are ``label``, ``description``, ``default_config``,
            ``fixed_settings`` and ``counters``).
        model_class: The SB3 class of its models and checkpoints.
        settings: Its policy and hyper-parameters for a config: ``(policy, kwargs)`` for
            ``model_class`` (:meth:`build` adds what every run shares).
        acting_modules: The modules of a model's acting network (flatten features
            extractor: they map the observation straight to one logit or Q-value per action);
            a model owns the network it finds (:meth:`owns`).
        steps_per_collect: The learner steps SB3 collects between two checks of the step
            budget (a PPO rollout: ``n_steps`` x ``num_envs``).
        check_config: Its checks of a whole config.
        policy_warmup_steps: The steps its acting network stays frozen.
        custom_objects: Passed to ``model_class.load`` (replace pickled attributes).
    """

    name: str
    label: str
    description: str
    default_config: str
    fixed_settings: str
    model_class: type[BaseAlgorithm]
    settings: Callable[[TrainConfig], tuple[Any, dict[str, Any]]]
    acting_modules: Callable[[Any], list[nn.Module]]
    steps_per_collect: Callable[[TrainConfig], int]
    check_config: Callable[[TrainConfig], None]
    policy_warmup_steps: Callable[[TrainConfig], int] = lambda config: 0  # none frozen
    custom_objects: Mapping[str, Any] = field(default_factory=dict)
    counters: tuple[str, ...] = ("num_timesteps", "_n_updates", "_episode_num")

    def owns(self, model: Any) -> bool:
        """Whether ``model`` has this algorithm's acting network."""
        try:
            self.acting_modules(model)
        except AttributeError:
            return False
        return True

    def build(self, config: TrainConfig, env: VecEnv) -> Any:
        """A fresh model for a training run: on the config's ``device``, seeded, logging to
        ``<run_dir>/tb``.

        Raises:
            ConfigError: for ``device: cuda`` where torch sees no GPU.
        """
        policy, kwargs = self.settings(config)
        return self.model_class(
            policy,
            env,
            **kwargs,
            tensorboard_log=str(config.run_dir / "tb"),
            seed=config.seed,
            verbose=0,
            device=resolve_device(config.device),
        )

    def learn(
        self, model: Any, steps: int, callbacks: Sequence[BaseCallback], *, reset: bool
    ) -> None:
        """SB3's ``learn`` (its TensorBoard logs under the algorithm's name)."""
        model.learn(
            total_timesteps=steps,
            callback=list(callbacks),
            progress_bar=False,
            reset_num_timesteps=reset,
            tb_log_name=self.name,
        )

    def load(self, path: str | Path, env: VecEnv | None = None) -> Any:
        """Load a checkpoint ``.zip`` on the CPU, with ``env`` to resume training.

        SB3 zips are read with cloudpickle, which runs code from the file: load only trusted
        checkpoints. Training, resuming and exporting use
        :func:`~unolab.train.checkpoint_state.restore_checkpoint`, which runs none.
        """
        return self.model_class.load(
            path, env=env, device="cpu", custom_objects=dict(self.custom_objects) or None
        )


# ---------------------------------------------------------------------- MaskablePPO


def _model_args(section: Any, *own: str) -> dict[str, Any]:
    """The keys of a config section that its SB3 class takes under the same names: all but
    ``own``, the lab's own keys (the network's shape, the extras the lab adds)."""
    return {f.name: getattr(section, f.name) for f in fields(section) if f.name not in own}


def _ppo_settings(config: TrainConfig) -> tuple[str, dict[str, Any]]:
    """MaskablePPO's MLP policy and its ``ppo:`` section (the env gives it the legal-action
    masks)."""
    arch = list(config.ppo.net_arch)
    kwargs = _model_args(config.ppo, "net_arch", "value_warmup_steps")
    return "MlpPolicy", {**kwargs, "policy_kwargs": {"net_arch": {"pi": arch, "vf": arch}}}


def _ppo_acting_modules(model: Any) -> list[nn.Module]:
    """The policy branch of the MLP extractor, then the action head (tanh)."""
    policy = model.policy
    return [*policy.mlp_extractor.policy_net, policy.action_net]


def _check_ppo(config: TrainConfig) -> None:
    check_int(
        "ppo.n_steps * num_envs",
        config.ppo.n_steps * config.num_envs,
        2,
        MAX_ROLLOUT,
        "the rollout buffer holds that many transitions; SB3 needs two",
    )


# ---------------------------------------------------------------------- masked DQN


def hand_size_potential(observations: np.ndarray, per_card: float) -> np.ndarray:
    """The DQN shaping potential: ``per_card`` × (the others' mean hand size - one's own).

    Read off the observation's ``hand_sizes`` (card counts, the observer first) and
    ``num_players`` fields; see :class:`~unolab.train.masked_replay.MaskedReplayBuffer` for how the
    potential shapes the returns without changing the greedy policy they lead to.

    Args:
        observations: (B, OBS_DIM) raw observations.
        per_card: The potential of one card of difference.

    Returns:
        (B,) potentials.
    """
    sizes = observations[:, OBS_LAYOUT["hand_sizes"]].astype(np.float64)
    players = observations[:, OBS_LAYOUT["num_players"]].argmax(axis=1) + 1
    others = sizes[:, 1:].sum(axis=1) / np.maximum(players - 1, 1)
    return np.asarray(per_card * (others - sizes[:, 0]), dtype=np.float32)


def _dqn_settings(config: TrainConfig) -> tuple[Any, dict[str, Any]]:
    """MaskedDQN's Q-network (MLP, dueling or not) and its ``dqn:`` section (masked replay
    buffer; a hand-size shaping potential, :func:`hand_size_potential`, if set)."""
    p = config.dqn
    potential = (
        functools.partial(hand_size_potential, per_card=p.hand_size_shaping)
        if p.hand_size_shaping > 0
        else None
    )
    kwargs = _model_args(p, "net_arch", "dueling", "hand_size_shaping")
    return DuelingDQNPolicy if p.dueling else "MlpPolicy", {
        **kwargs,
        "potential": potential,
        "replay_buffer_class": MaskedReplayBuffer,
        "policy_kwargs": {"net_arch": list(p.net_arch)},
    }


def _dqn_acting_modules(model: Any) -> list[nn.Module]:
    """The Q-network (relu); a dueling head as one folded linear layer.

    The folded layer (:class:`~unolab.train.masked_dqn.FoldedDuelingLinear`) computes
    ``V + A - mean(A)`` exactly; :func:`~unolab.train.algorithms.load_policy_layers` writes it back into the head
    through its ``unfold``.
    """
    return [m.folded() if isinstance(m, DuelingHead) else m for m in model.policy.q_net.q_net]


def _check_dqn(config: TrainConfig) -> None:
    rows = config.dqn.buffer_size // config.num_envs
    if config.dqn.n_step >= max(rows, 1):
        raise ConfigError(
            f"dqn.n_step must be below the replay buffer's rows (buffer_size / "
            f"num_envs = {rows}), got n_step={config.dqn.n_step}: raise dqn.buffer_size"
        )
    if config.imitate is not None:
        raise ConfigError(
            "imitate: a clone stage starts PPO runs only; for dqn, clone with uno-lab "
            "train imitate (activation: relu) and give the clone as init_from"
        )


# ---------------------------------------------------------------------- the entries

MASKABLE_PPO = SB3Algorithm(
    name="ppo",
    label="MaskablePPO",
    description="MaskablePPO (an actor-critic network)",
    default_config="ppo/quick",
    fixed_settings="the network and its updates are built from it",
    model_class=MaskablePPO,
    settings=_ppo_settings,
    acting_modules=_ppo_acting_modules,
    # learn() collects whole rollouts of n_steps in every env
    steps_per_collect=lambda config: config.ppo.n_steps * config.num_envs,
    check_config=_check_ppo,
    policy_warmup_steps=lambda config: config.ppo.value_warmup_steps,
)
"""sb3-contrib's MaskablePPO (``algorithm: ppo``)."""

MASKED_DQN = SB3Algorithm(
    name="dqn",
    label="DQN",
    description="masked DQN (a Q-network)",
    default_config="dqn/tiny",
    fixed_settings="the network, its replay buffer and its updates are built from it",
    model_class=MaskedDQN,
    settings=_dqn_settings,
    acting_modules=_dqn_acting_modules,
    # learn() collects train_freq steps of every env between two updates
    steps_per_collect=lambda config: config.dqn.train_freq * config.num_envs,
    check_config=_check_dqn,
    # The zip names its replay buffer class by a pickled reference: load the masked
    # buffer whatever module that reference names.
    custom_objects={"replay_buffer_class": MaskedReplayBuffer},
    # _n_calls paces the target network's updates (every target_update_interval)
    counters=("num_timesteps", "_n_updates", "_episode_num", "_n_calls"),
)
"""The lab's :class:`~unolab.train.masked_dqn.MaskedDQN` (``algorithm: dqn``)."""

SB3_ALGORITHMS = (MASKABLE_PPO, MASKED_DQN)
"""The lab's own algorithms, in the order a checkpoint of unknown kind is tried: an SB3
algorithm added here is in the registry."""
