"""MaskablePPO on the batched UNO VecEnv: ``python -m unolab.train.ppo --config configs/ppo/<name>.yaml``.

The model is sb3-contrib's MaskablePPO with an MLP policy; the env gives it the legal-action
masks (``UnoVecEnv.action_masks``). How it is built from a config and loaded from a
checkpoint is the registry's (:mod:`unolab.train.algorithms`); everything else (league,
evaluation, checkpoints, resume) is the shared run in :mod:`unolab.train.run`. This module is the
command line.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import VecEnv

from unolab.train import run, run_cli
from unolab.train.algorithms import ALGORITHMS
from unolab.train.config import TrainConfig, config_for

__all__ = ["load_model", "main", "make_model", "train"]


def make_model(config: TrainConfig, env: VecEnv) -> MaskablePPO:
    """A fresh MaskablePPO for ``config``."""
    model: MaskablePPO = ALGORITHMS["ppo"].make_model(config, env)
    return model


def load_model(path: Path, env: VecEnv) -> MaskablePPO:
    """Load a checkpoint to resume training (an SB3 zip: trusted, it is our own run)."""
    model: MaskablePPO = ALGORITHMS["ppo"].load(path, env)
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
    """Train with MaskablePPO from a script or a notebook; return what the run produced.

    The same run as ``uno-lab train ppo --config FILE``: checkpoints, evaluations and the
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
        >>> from unolab.train.ppo import train
        >>> result = train("configs/ppo/tiny.yaml", ["total_steps=2048"])  # doctest: +SKIP
    """
    return run.train(
        config_for(config, "ppo", overrides),
        resume=resume,
        progress_bar=progress_bar,
        overwrite=overwrite,
        log=log,
    )


def main(argv: Sequence[str] | None = None) -> run.RunResult:
    """Command line entry point."""
    return run_cli.main("ppo", argv)


if __name__ == "__main__":
    main()
