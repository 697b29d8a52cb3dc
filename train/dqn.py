"""Masked DQN on the batched UNO VecEnv: ``python -m unolab.train.dqn --config configs/dqn/<name>.yaml``.

The command line of the masked DQN. The algorithm, :class:`MaskedDQN` (SB3's DQN acting and
bootstrapping over legal actions only) and its :class:`MaskedReplayBuffer`, lives in
:mod:`unolab.train.masked_dqn` and is re-exported here; how it is built from a config and loaded
from a checkpoint is the registry's (:mod:`unolab.train.algorithms`); everything else (league,
evaluation, checkpoints, resume, export) is the shared run in :mod:`unolab.train.run`.

SB3 private API: :class:`MaskedDQN` overrides SB3's *private* methods
``OffPolicyAlgorithm._sample_action`` and ``OffPolicyAlgorithm._store_transition`` (and
relies on private helpers and state: ``_update_learning_rate``,
``ReplayBuffer._normalize_obs`` / ``_normalize_reward``, ``_last_obs``,
``_last_original_obs``, ``_vec_normalize_env``, ``_current_progress_remaining``,
``_n_updates``; see :mod:`unolab.train.masked_dqn`). They may change in any SB3 release:
pyproject.toml pins ``stable-baselines3`` and ``sb3-contrib`` below their next major
version (``<3``), and an upgrade must re-run ``tests/train/test_dqn.py``.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from stable_baselines3.common.vec_env import VecEnv

from unolab.train import run, run_cli
from unolab.train.algorithms import ALGORITHMS
from unolab.train.config import TrainConfig, config_for
from unolab.train.masked_dqn import (
    DuelingDQNPolicy,
    DuelingHead,
    MaskedDQN,
    MaskedReplayBuffer,
    MaskedReplaySamples,
    env_action_masks,
    masked_argmax,
    masked_target,
    uniform_legal,
)

__all__ = [
    "DuelingDQNPolicy",
    "DuelingHead",
    "MaskedDQN",
    "MaskedReplayBuffer",
    "MaskedReplaySamples",
    "env_action_masks",
    "load_model",
    "main",
    "make_model",
    "masked_argmax",
    "masked_target",
    "train",
    "uniform_legal",
]


def make_model(config: TrainConfig, env: VecEnv) -> MaskedDQN:
    """A fresh MaskedDQN for ``config``."""
    model: MaskedDQN = ALGORITHMS["dqn"].make_model(config, env)
    return model


def load_model(path: Path, env: VecEnv) -> MaskedDQN:
    """Load a checkpoint to resume training (an SB3 zip: trusted, it is our own run)."""
    model: MaskedDQN = ALGORITHMS["dqn"].load(path, env)
    return model


def train(
    config: TrainConfig | str | Path | Mapping[str, Any],
    overrides: Sequence[str] = (),
    *,
    resume: bool = False,
    overwrite: bool = False,
    progress_bar: bool = True,
    log: TextIO | None = sys.stderr,
) -> run.RunResult:
    """Train with masked DQN from a script or a notebook; return what the run produced.

    The same run as ``uno-lab train dqn --config FILE``: checkpoints, evaluations and the
    exported policy in ``config.run_dir``.

    Args:
        config: A :class:`~unolab.train.config.TrainConfig`, the path of a YAML config or a
            mapping of its keys (``algorithm`` may be left out).
        overrides: ``key=value`` items applied on top, as ``--set`` (``total_steps=4096``).
        resume: Continue the run in ``config.run_dir`` from its ``latest.zip``.
        overwrite: Start over if ``config.run_dir`` holds a run.
        progress_bar: Show progress bars.
        log: Where to report the start and each evaluation (None: silent).

    Returns:
        The run: its folder, the exported policy and the evaluations.

    Raises:
        ConfigError: for an invalid config, or one of another algorithm.
        RunExistsError: if the run folder holds a run and neither ``resume`` nor
            ``overwrite`` is set.

    Example:
        >>> from unolab.train.dqn import train
        >>> result = train("configs/dqn/tiny.yaml", ["total_steps=2048"])  # doctest: +SKIP
    """
    return run.train(
        config_for(config, "dqn", overrides),
        resume=resume,
        progress_bar=progress_bar,
        overwrite=overwrite,
        log=log,
    )


def main(argv: Sequence[str] | None = None) -> run.RunResult:
    """Command line entry point."""
    return run_cli.main("dqn", argv)


if __name__ == "__main__":
    main()
