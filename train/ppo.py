"""MaskablePPO on the batched UNO VecEnv: ``python -m train.ppo --config configs/ppo/<name>.yaml``.

The model is sb3-contrib's MaskablePPO with an MLP policy; the env gives it the legal-action
masks (``UnoVecEnv.action_masks``). Everything else (league, evaluation, checkpoints,
resume) is the shared run in :mod:`train.run`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import VecEnv

from train import run
from train.config import TrainConfig

__all__ = ["load_model", "main", "make_model"]


def make_model(config: TrainConfig, env: VecEnv) -> MaskablePPO:
    """A fresh MaskablePPO for ``config``."""
    p = config.ppo
    arch = list(p.net_arch)
    return MaskablePPO(
        "MlpPolicy",
        env,
        learning_rate=p.learning_rate,
        n_steps=p.n_steps,
        batch_size=p.batch_size,
        n_epochs=p.n_epochs,
        gamma=p.gamma,
        gae_lambda=p.gae_lambda,
        clip_range=p.clip_range,
        ent_coef=p.ent_coef,
        vf_coef=p.vf_coef,
        max_grad_norm=p.max_grad_norm,
        policy_kwargs={"net_arch": {"pi": arch, "vf": arch}},
        tensorboard_log=str(config.run_dir / "tb"),
        seed=config.seed,
        verbose=0,
        device="cpu",
    )


def load_model(path: Path, env: VecEnv) -> MaskablePPO:
    """Load a checkpoint to resume training (an SB3 zip: trusted, it is our own run)."""
    model: Any = MaskablePPO.load(path, env=env, device="cpu")
    return model


def main(argv: Sequence[str] | None = None) -> run.RunResult:
    """Command line entry point."""
    return run.main("ppo", make_model, load_model, argv)


if __name__ == "__main__":
    main()
