"""Training with the env sharded over worker processes (``num_workers``) and on a chosen
``device``: configs, PPO and DQN runs with self-play snapshots, exports that load on the CPU."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch
from support import ROOT

from uno_env import ConfigError, load_rules
from uno_env.envs.opponents import OpponentPool
from uno_env.envs.shared_vec_env import MAX_WORKERS, ShardedUnoVecEnv
from uno_env.envs.vec_env import UnoVecEnv
from uno_env.observation import OBS_DIM
from unolab.agents.learned import load_policy
from unolab.train import algorithms
from unolab.train.algorithms import policy_layers
from unolab.train.config import load_config
from unolab.train.config_limits import MAX_NUM_WORKERS, resolve_device
from unolab.train.imitate import fit
from unolab.train.imitate import run as imitate
from unolab.train.imitate.config import load_imitate_config
from unolab.train.imitate.data import Demonstrations
from unolab.train.run import train, training_env
from unolab.train.run_callback import League, SnapshotSlot

PPO_TINY = ROOT / "configs" / "ppo" / "tiny.yaml"
DQN_TINY = ROOT / "configs" / "dqn" / "tiny.yaml"
IMITATE_TINY = ROOT / "configs" / "imitate" / "tiny.yaml"


def test_the_config_bound_is_the_envs() -> None:
    assert MAX_NUM_WORKERS == MAX_WORKERS


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("num_workers=0", "num_workers"),
        ("num_workers=17", "--set num_workers=17: 17 is more than num_envs (16)"),
        ("num_workers=true", "num_workers"),
        ("device=gpu", "'gpu' is not allowed; choose one of ['auto', 'cpu', 'cuda']"),
    ],
)
def test_bad_worker_counts_and_devices_name_the_key(override: str, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(PPO_TINY, [override])


def test_defaults_are_one_process_and_auto() -> None:
    config = load_config(PPO_TINY)
    assert config.num_workers == 1 and config.device == "auto"


def test_cuda_without_a_gpu_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto") == "cpu"
    config = load_config(PPO_TINY, ["device=cuda", f"runs_dir={tmp_path}"])  # loads anywhere
    with pytest.raises(
        ConfigError, match="device: cuda asks for a GPU, but torch sees none"
    ) as err:
        train(config, progress_bar=False, log=None)
    assert "\n" not in str(err.value)
    assert not (tmp_path / "ppo_tiny").exists()
    imitation = load_imitate_config(IMITATE_TINY, ["device=cuda", f"runs_dir={tmp_path}"])
    with pytest.raises(ConfigError, match="device: cuda asks for a GPU"):
        imitate.imitate(imitation, progress=False, log=None)


def test_auto_picks_cuda_when_torch_sees_a_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("auto") == "cuda"
    assert resolve_device("cpu") == "cpu"


def slot_snapshots(pool: OpponentPool) -> list[str | None]:
    """The name of the snapshot in each slot of a worker's league pool (None: empty)."""
    return [
        None if policy.snapshot is None else policy.snapshot.name
        for policy in pool.policies
        if isinstance(policy, SnapshotSlot)
    ]


def test_the_workers_play_the_leagues_snapshots() -> None:
    config = load_config(PPO_TINY, ["num_workers=2", "num_envs=8"])
    rules = config.build_rules()
    league = League(config.opponents, rules, seed=config.seed)
    env = training_env(config, rules, league)
    try:
        assert isinstance(env, ShardedUnoVecEnv) and env.num_workers == 2
        assert env.update_opponents(slot_snapshots) == [[None, None]] * 2
        model = algorithms.make_model(config, env)
        league.snapshot(model, "ppo", 512)
        assert env.update_opponents(slot_snapshots) == [["snapshot@512", None]] * 2
        env.reset()
        for _ in range(10):
            env.step(env.action_masks().argmax(axis=1))
    finally:
        env.close()


@pytest.mark.parametrize("config", [PPO_TINY, DQN_TINY])
def test_a_run_on_two_workers_trains_and_exports_a_cpu_agent(config: Path, tmp_path: Path) -> None:
    overrides = [
        f"runs_dir={tmp_path}",
        "num_workers=2",
        "device=cpu",
        "total_steps=1024",
        "eval.every=512",
    ]
    result = train(load_config(config, overrides), progress_bar=False, log=None)
    assert result.steps >= 1024 and result.policy is not None
    policy = load_policy(result.policy, rules=load_rules("official", num_players=2))
    assert all(p.device.type == "cpu" for p in policy.net.parameters())


def test_exported_layers_are_cpu_tensors_whatever_the_device() -> None:
    config = load_config(PPO_TINY)
    env = UnoVecEnv(4, config.build_rules(), seed=0)
    model = algorithms.make_model(load_config(PPO_TINY, ["device=cpu"]), env)
    assert str(model.device) == "cpu"
    layers, _ = policy_layers(model)
    assert all(w.device.type == "cpu" and b.device.type == "cpu" for w, b in layers)
    # The copies are the model's: changing them leaves the model as it was.
    layers[0][0].zero_()
    assert policy_layers(model)[0][0][0].abs().sum() > 0


def test_the_clone_is_fitted_on_the_device_and_returned_on_the_cpu(tmp_path: Path) -> None:
    config = load_imitate_config(IMITATE_TINY, ["device=cpu", f"runs_dir={tmp_path}"])
    rng = np.random.default_rng(0)
    masks = rng.random((64, 80)) < 0.3
    masks[:, 0] = True
    demos = Demonstrations(
        observations=rng.random((64, OBS_DIM), dtype=np.float32),
        masks=masks,
        actions=np.zeros(64, dtype=np.int64),
        phases=np.zeros(64, dtype=np.int8),
        teachers=np.zeros(64, dtype=np.int16),
        games=np.arange(64, dtype=np.int64),
        teacher_names=("mixbot",),
        num_games=64,
        forced=0,
        seconds=0.0,
    )
    net, history = fit.fit_clone(config, demos, np.arange(48), np.arange(48, 64), progress=False)
    assert len(history) == config.epochs
    assert all(p.device.type == "cpu" for p in net.parameters())


def test_the_gpu_config_is_sized_for_a_device() -> None:
    gpu = load_config(ROOT / "configs" / "ppo" / "gpu_2p.yaml")
    tiny = load_config(PPO_TINY)
    assert gpu.device == "cuda" and gpu.num_workers > 1
    assert gpu.num_envs >= 16 * tiny.num_envs and gpu.ppo.batch_size >= 8 * 4096
    assert gpu.ppo.batch_size <= gpu.ppo.n_steps * gpu.num_envs
