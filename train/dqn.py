"""Masked DQN on the batched UNO VecEnv: ``uno-lab train dqn --config dqn/<name>``
(``python -m unolab.train.dqn --config FILE``).

The command line of the masked DQN. The algorithm, :class:`MaskedDQN` (SB3's DQN acting and
bootstrapping over legal actions only, through SB3 private API that an SB3 upgrade must
re-test), lives in :mod:`unolab.train.masked_dqn`; how it is built from a config and loaded
from a checkpoint is its registry entry's (:mod:`unolab.train.sb3_algorithms`); everything
else (league, evaluation, checkpoints, resume, export) is the shared run in
:mod:`unolab.train.run`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from stable_baselines3.common.vec_env import VecEnv

from uno_env.console import run_main
from unolab.train import run, run_cli
from unolab.train.checkpoint_state import restore_checkpoint
from unolab.train.config import TrainConfig, config_beside
from unolab.train.masked_dqn import MaskedDQN
from unolab.train.sb3_algorithms import MASKED_DQN

__all__ = [
    "load_model",
    "main",
    "make_model",
    "train",
]


def make_model(config: TrainConfig, env: VecEnv) -> MaskedDQN:
    """A fresh MaskedDQN for ``config``."""
    model: MaskedDQN = MASKED_DQN.build(config, env)
    return model


def load_model(path: Path, env: VecEnv) -> MaskedDQN:
    """A run's checkpoint (``runs/<name>/latest.zip``) as a model on ``env``.

    Nothing is unpickled: the model is built from the run's ``config.yaml`` beside the
    checkpoint and given its tensors and counters
    (:func:`unolab.train.checkpoint_state.restore_checkpoint`).

    Raises:
        FileNotFoundError: the run's ``config.yaml`` is not beside the checkpoint.
        ConfigError: that config is not valid, or is not a dqn run's.
        DamagedCheckpointError: (a ValueError) the checkpoint cannot be read, naming it.
    """
    model: MaskedDQN = restore_checkpoint(path, config_beside(path, "dqn"), env)
    return model


train = run.AlgorithmTrainer("dqn")
"""Train with masked DQN from a script or a notebook (:class:`unolab.train.run.AlgorithmTrainer`)."""


def main(argv: Sequence[str] | None = None) -> run.RunResult:
    """Command line entry point."""
    return run_cli.main("dqn", argv)


if __name__ == "__main__":
    run_main(main, "python -m unolab.train.dqn")
