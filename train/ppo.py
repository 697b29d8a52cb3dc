"""MaskablePPO on the batched UNO VecEnv: ``uno-lab train ppo --config ppo/<name>``
(``python -m unolab.train.ppo --config FILE``).

The model is sb3-contrib's MaskablePPO with an MLP policy; the env gives it the legal-action
masks (``UnoVecEnv.action_masks``). How it is built from a config and loaded from a
checkpoint is its registry entry's (:mod:`unolab.train.sb3_algorithms`); everything else
(league, evaluation, checkpoints, resume) is the shared run in :mod:`unolab.train.run`. This
module is the command line.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import VecEnv

from uno_env.console import run_main
from unolab.train import run, run_cli
from unolab.train.checkpoint_state import restore_checkpoint
from unolab.train.config import TrainConfig, config_beside
from unolab.train.sb3_algorithms import MASKABLE_PPO

__all__ = ["load_model", "main", "make_model", "train"]


def make_model(config: TrainConfig, env: VecEnv) -> MaskablePPO:
    """A fresh MaskablePPO for ``config``."""
    model: MaskablePPO = MASKABLE_PPO.build(config, env)
    return model


def load_model(path: Path, env: VecEnv) -> MaskablePPO:
    """A run's checkpoint (``runs/<name>/latest.zip``) as a model on ``env``.

    Nothing is unpickled: the model is built from the run's ``config.yaml`` beside the
    checkpoint and given its tensors and counters
    (:func:`unolab.train.checkpoint_state.restore_checkpoint`).

    Raises:
        FileNotFoundError: the run's ``config.yaml`` is not beside the checkpoint.
        ConfigError: that config is not valid, or is not a ppo run's.
        DamagedCheckpointError: (a ValueError) the checkpoint cannot be read, naming it.
    """
    model: MaskablePPO = restore_checkpoint(path, config_beside(path, "ppo"), env)
    return model


train = run.AlgorithmTrainer("ppo")
"""Train with MaskablePPO from a script or a notebook (:class:`unolab.train.run.AlgorithmTrainer`)."""


def main(argv: Sequence[str] | None = None) -> run.RunResult:
    """Command line entry point."""
    return run_cli.main("ppo", argv)


if __name__ == "__main__":
    run_main(main, "python -m unolab.train.ppo")
