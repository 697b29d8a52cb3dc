"""The door for a training loop that is not an SB3 algorithm: a CleanRL-style masked policy
gradient registers, trains through the lab's run (checkpoints, evaluations, resume), exports a
pickle-free agent, and the exported agent plays."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv
from torch import nn

from uno_env import ConfigError
from uno_env.cards import NUM_ACTIONS
from uno_env.observation import OBS_DIM
from unolab.agent_cards import agent_card
from unolab.agents import policy_factory
from unolab.agents.arena import evaluate_vs
from unolab.agents.learned import load_policy
from unolab.train import algorithms
from unolab.train.algorithms import PlainLoopModel
from unolab.train.config import TrainConfig, load_config
from unolab.train.evaluation_log import EVALUATIONS_FILE
from unolab.train.export import export_checkpoint
from unolab.train.run import train


class MaskedPGModel(PlainLoopModel):
    """REINFORCE over legal actions, in the style of a CleanRL script: one torch network,
    rollouts of ``ppo.n_steps`` in every env, one gradient step per rollout."""

    def __init__(self, config: TrainConfig, env: VecEnv) -> None:
        super().__init__(env, config.run_dir / "tb")
        torch.manual_seed(config.seed)
        layers: list[nn.Module] = []
        width = OBS_DIM
        for hidden in config.ppo.net_arch:
            layers += [nn.Linear(width, hidden), nn.Tanh()]
            width = hidden
        self.policy = nn.Sequential(*layers, nn.Linear(width, NUM_ACTIONS))
        self.policy.optimizer = torch.optim.Adam(  # type: ignore[assignment]
            self.policy.parameters(), lr=config.ppo.learning_rate
        )
        self.n_steps = config.ppo.n_steps
        self.gamma = config.ppo.gamma

    def learn(self, steps: int, callbacks: Sequence[BaseCallback], reset: bool) -> None:
        hooks = self.start_callbacks(callbacks, "pg", reset)
        obs = self.env.reset()
        end = self.num_timesteps + steps
        going = True
        while going and self.num_timesteps < end:
            hooks.on_rollout_start()
            log_probs, rewards, dones = [], [], []
            for _ in range(self.n_steps):
                masks = torch.as_tensor(np.asarray(self.env.action_masks()), dtype=torch.bool)
                logits = self.policy(torch.as_tensor(obs, dtype=torch.float32))
                dist = torch.distributions.Categorical(logits=logits.masked_fill(~masks, -1e9))
                action = dist.sample()
                obs, reward, done, _ = self.env.step(action.numpy())
                self.num_timesteps += self.env.num_envs
                log_probs.append(dist.log_prob(action))
                rewards.append(torch.as_tensor(reward, dtype=torch.float32))
                dones.append(torch.as_tensor(done, dtype=torch.float32))
                going = hooks.on_step()
                if not going:
                    break
            returns, future = [], torch.zeros(self.env.num_envs)
            for reward, done in zip(reversed(rewards), reversed(dones), strict=True):
                future = reward + self.gamma * future * (1 - done)
                returns.append(future)
            advantage = torch.stack(returns[::-1])
            advantage = (advantage - advantage.mean()) / (advantage.std() + 1e-8)
            loss = -(torch.stack(log_probs) * advantage).mean()
            optimizer: torch.optim.Optimizer = self.policy.optimizer  # type: ignore[assignment]
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        hooks.on_training_end()


@dataclass(frozen=True)
class MaskedPolicyGradient:
    """The registry entry of the loop above (:class:`~unolab.train.algorithms.TrainingAlgorithm`)."""

    name: str = "masked_pg"
    label: str = "masked policy gradient"
    description: str = "masked REINFORCE (a policy network)"
    default_config: str = "ppo/tiny"
    fixed_settings: str = "the network and its updates are built from it"
    counters: tuple[str, ...] = ("num_timesteps",)

    def build(self, config: TrainConfig, env: VecEnv) -> MaskedPGModel:
        return MaskedPGModel(config, env)

    def learn(
        self, model: Any, steps: int, callbacks: Sequence[BaseCallback], *, reset: bool
    ) -> None:
        model.learn(steps, callbacks, reset)

    def load(self, path: str | Path, env: VecEnv | None = None) -> Any:
        raise ValueError(f"{path}: a masked_pg checkpoint loads with its run's config only")

    def acting_modules(self, model: Any) -> list[nn.Module]:
        return list(model.policy)

    def owns(self, model: Any) -> bool:
        return isinstance(model, MaskedPGModel)

    def steps_per_collect(self, config: TrainConfig) -> int:
        return config.ppo.n_steps * config.num_envs

    def check_config(self, config: TrainConfig) -> None:
        if config.imitate is not None:
            raise ConfigError("imitate: masked_pg starts from scratch or init_from")

    def policy_warmup_steps(self, config: TrainConfig) -> int:
        return 0


@pytest.fixture
def masked_pg() -> Iterator[MaskedPolicyGradient]:
    algorithm = MaskedPolicyGradient()
    algorithms.register(algorithm)
    yield algorithm
    algorithms.unregister(algorithm.name)


def _config(runs: Path, total_steps: int) -> TrainConfig:
    base = {
        "name": "pg_tiny",
        "algorithm": "masked_pg",
        "total_steps": total_steps,
        "num_envs": 8,
        "seed": 3,
        "runs_dir": str(runs),
        "opponents": {"bots": {"random": 1.0}, "self_play": 0.5, "snapshot_every": 128},
        "eval": {"every": 256, "games": 16, "bots": ["random"]},
        "ppo": {"n_steps": 16, "net_arch": [16], "learning_rate": 0.01},
    }
    return load_config(None, base=base)


def test_a_plain_torch_loop_trains_resumes_exports_and_plays(
    masked_pg: MaskedPolicyGradient, tmp_path: Path
) -> None:
    assert algorithms.get_algorithm("masked_pg") is masked_pg
    result = train(_config(tmp_path, 384), progress_bar=False, log=None)
    run_dir = result.run_dir
    assert result.steps == 384  # three rollouts of 16 steps in 8 envs
    for name in ("latest.zip", "latest.json", "best.zip", "config.yaml", EVALUATIONS_FILE):
        assert (run_dir / name).is_file(), name
    assert list((run_dir / "tb").iterdir()), "the evaluations are logged to TensorBoard"
    assert result.policy is not None and result.evaluations["random"]["games"] == 16

    # The exported agent: CPU-loadable safetensors, named by the registry's description.
    policy = load_policy(result.policy)
    assert policy.meta.algorithm == "masked_pg" and policy.meta.hidden == (16,)
    assert policy.meta.extra["algorithm_description"] == masked_pg.description
    rules = _config(tmp_path, 384).build_rules()
    played = evaluate_vs(rules, policy, "random", 12, seed=5, progress=False)
    assert played.games == 12
    assert policy_factory(str(result.policy), rules)(0).name == policy.name
    card = agent_card(str(result.policy))  # what `uno-lab agents PATH` prints
    assert card.startswith("# pg_tiny\n") and masked_pg.description.lower() in card.lower()

    # Resume: the checkpoint's network, optimiser state and step counter, without unpickling.
    before = torch.load(io_of(run_dir / "latest.zip"), weights_only=True)
    resumed = train(_config(tmp_path, 512), resume=True, progress_bar=False, log=None)
    assert resumed.steps == 512
    after = torch.load(io_of(run_dir / "latest.zip"), weights_only=True)
    assert any(not torch.equal(before[k], after[k]) for k in before), "it trained on"

    # Any checkpoint of the run exports as the SB3 algorithms' do.
    out = export_checkpoint(run_dir / "latest.zip", tmp_path / "agents" / "pg")
    assert load_policy(out).meta.extra["steps"] == 512
    algorithms.unregister("masked_pg")  # an exported agent plays without its training code
    try:
        agent = load_policy(out, rules=rules)
        masks = np.ones((1, NUM_ACTIONS), dtype=bool)
        assert agent.act(np.zeros((1, OBS_DIM), dtype=np.float32), masks).shape == (1,)
    finally:
        algorithms.register(masked_pg)


def io_of(checkpoint: Path) -> Any:
    """The network member of a checkpoint zip, as a file torch reads."""
    with zipfile.ZipFile(checkpoint) as archive:
        return io.BytesIO(archive.read("policy.pth"))


def test_a_config_names_only_registered_algorithms(
    masked_pg: MaskedPolicyGradient, tmp_path: Path
) -> None:
    assert _config(tmp_path, 128).algorithm == "masked_pg"
    algorithms.unregister("masked_pg")
    try:
        with pytest.raises(ConfigError, match="'masked_pg' is not allowed; choose one of"):
            _config(tmp_path, 128)
    finally:
        algorithms.register(masked_pg)
    with pytest.raises(ValueError, match="registered already"):
        algorithms.register(masked_pg)
    with pytest.raises(ValueError, match="no algorithm registered"):
        algorithms.unregister("ppo")
