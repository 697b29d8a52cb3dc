"""Masked DQN: legal actions in rollouts and predict, a target over legal next actions only,
next-state masks in the replay buffer, and the end-to-end run (train, resume, export)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from gymnasium import spaces
from stable_baselines3.common.logger import configure
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper, VecMonitor
from stable_baselines3.common.vec_env.base_vec_env import VecEnvStepReturn
from torch import nn

from uno_env.cards import NUM_ACTIONS
from uno_env.config_values import ConfigError
from uno_env.envs.vec_env import UnoVecEnv
from uno_env.observation import OBS_DIM, OBS_LAYOUT
from unolab.agents.learned import load_policy
from unolab.train.algorithms import load_policy_layers, make_model, policy_layers
from unolab.train.checkpoint_state import restore_checkpoint
from unolab.train.config import load_config
from unolab.train.export import export_policy
from unolab.train.masked_dqn import DuelingDQNPolicy, DuelingHead, MaskedDQN
from unolab.train.masked_replay import (
    MaskedReplayBuffer,
    masked_argmax,
    masked_target,
    uniform_legal,
)
from unolab.train.run_cli import main as train_main
from unolab.train.sb3_algorithms import hand_size_potential

torch.set_num_threads(1)


class LegalityRecorder(VecEnvWrapper):
    """Records, before each step, the masks and the actions sent to the env."""

    def __init__(self, venv: UnoVecEnv) -> None:
        super().__init__(venv)
        self.uno = venv
        self.records: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._obs: np.ndarray | None = None

    def reset(self) -> np.ndarray:
        obs = self.venv.reset()
        assert isinstance(obs, np.ndarray)
        self._obs = obs
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        masks = self.uno.action_masks()
        acts = np.asarray(actions).reshape(self.num_envs)
        assert self._obs is not None
        self.records.append((self._obs.copy(), masks.copy(), acts.copy()))
        legal = masks[np.arange(self.num_envs), acts]
        assert legal.all(), f"illegal actions {acts[~legal]} in games {np.flatnonzero(~legal)}"
        self.venv.step_async(actions)

    def step_wait(self) -> VecEnvStepReturn:
        obs, rewards, dones, infos = self.venv.step_wait()
        assert isinstance(obs, np.ndarray)
        self._obs = obs
        return obs, rewards, dones, infos


def make_env(num_envs: int = 32, seed: int = 0) -> tuple[VecEnv, LegalityRecorder]:
    recorder = LegalityRecorder(UnoVecEnv(num_envs, "official", seed=seed))
    return VecMonitor(recorder), recorder


def small_model(env: VecEnv, policy: Any = "MlpPolicy", **kwargs: Any) -> MaskedDQN:
    params: dict[str, Any] = {
        "buffer_size": 2048,
        "learning_starts": 0,
        "batch_size": 32,
        "train_freq": 4,
        "gradient_steps": 1,
        "target_update_interval": 64,
        "policy_kwargs": {"net_arch": [32, 32]},
        "seed": 0,
        "device": "cpu",
        **kwargs,
    }
    return MaskedDQN(policy, env, **params)


def last_linear(net: nn.Module) -> nn.Linear:
    return [m for m in net.modules() if isinstance(m, nn.Linear)][-1]


# ---------------------------------------------------------------------- (a) rollouts


@pytest.mark.parametrize("epsilon", [1.0, 0.3, 0.0])
def test_rollout_actions_are_legal(epsilon: float) -> None:
    env, recorder = make_env()
    model = small_model(env, exploration_initial_eps=epsilon, exploration_final_eps=epsilon)
    initial_net = copy.deepcopy(model.q_net)
    model.learn(total_timesteps=150 * 32)  # 150 env steps, 4800 actions
    # The first step acts with the initial network and the scheduled ε from the start.
    first_obs, first_masks, first_actions = recorder.records[0]
    with torch.no_grad():
        q0 = initial_net(torch.as_tensor(first_obs)).numpy()
    greedy0 = np.where(first_masks, q0, -np.inf).argmax(axis=1)
    if epsilon == 0.0:
        np.testing.assert_array_equal(first_actions, greedy0)
    elif epsilon == 1.0:
        assert (first_actions != greedy0).mean() > 0.3
    steps = len(recorder.records)
    assert steps >= 150
    obs = np.stack([r[0] for r in recorder.records])
    masks = np.stack([r[1] for r in recorder.records])
    actions = np.stack([r[2] for r in recorder.records])
    assert masks[np.arange(steps)[:, None], np.arange(32)[None, :], actions].all()
    # The unmasked greedy action of this network is often illegal: the check can fail.
    with torch.no_grad():
        q = model.q_net(torch.as_tensor(obs.reshape(-1, OBS_DIM))).numpy()
    unmasked = q.argmax(axis=1)
    assert not masks.reshape(-1, NUM_ACTIONS)[np.arange(unmasked.size), unmasked].all()
    if epsilon == 1.0:
        # Uniform among legal actions: many distinct actions (uniformity: see below).
        assert len(np.unique(actions)) > 20


def test_greedy_rollouts_take_the_masked_argmax() -> None:
    """ε = 0 without learning: every action is the legal action with the highest Q-value."""
    env, recorder = make_env(seed=3)
    model = small_model(env, exploration_initial_eps=0.0, exploration_final_eps=0.0)
    model.gradient_steps = 0  # freeze the network so Q can be recomputed afterwards
    model.learn(total_timesteps=100 * 32)
    obs = np.concatenate([r[0] for r in recorder.records])
    masks = np.concatenate([r[1] for r in recorder.records])
    actions = np.concatenate([r[2] for r in recorder.records])
    with torch.no_grad():
        q = model.q_net(torch.as_tensor(obs)).numpy()
    expected = np.where(masks, q, -np.inf).argmax(axis=1)
    np.testing.assert_array_equal(actions, expected)
    assert (q.argmax(axis=1) != expected).any()  # masking changed some choices


def test_uniform_legal_is_uniform_over_legal_actions() -> None:
    masks = np.zeros((6000, NUM_ACTIONS), dtype=bool)
    masks[:, [3, 40, 79]] = True
    masks[0] = False  # a row without legal actions gets action 0
    actions = uniform_legal(masks, np.random.default_rng(0))
    assert actions[0] == 0
    counts = np.bincount(actions[1:], minlength=NUM_ACTIONS)
    assert counts.sum() == counts[[3, 40, 79]].sum()
    np.testing.assert_allclose(counts[[3, 40, 79]] / counts.sum(), 1 / 3, atol=0.03)


# ---------------------------------------------------------------------- (b) the target


def test_masked_target_ignores_illegal_next_actions() -> None:
    q_next = torch.tensor(
        [
            [1.0, 1e6, 3.0, -2.0],  # action 1 is illegal and huge
            [1.0, 1e6, 3.0, -2.0],  # same, but the episode ended
            [5.0, 1e6, 7.0, 9.0],  # no legal action (a finished hand): worth 0
            [-4.0, 1e6, -1.0, -3.0],  # negative legal values: max is -1, not 0
        ]
    )
    masks = torch.tensor(
        [
            [True, False, True, True],
            [True, False, True, True],
            [False, False, False, False],
            [True, False, True, True],
        ]
    )
    rewards = torch.tensor([[0.5], [1.0], [-1.0], [0.0]])
    dones = torch.tensor([[0.0], [1.0], [0.0], [0.0]])
    target = masked_target(q_next, masks, rewards, dones, 0.9)
    assert target.shape == (4, 1)
    expected = torch.tensor([[0.5 + 0.9 * 3.0], [1.0], [-1.0], [-0.9]])
    torch.testing.assert_close(target, expected)
    # A per-sample discount tensor works too.
    gammas = torch.tensor([[0.5], [0.5], [0.5], [1.0]])
    torch.testing.assert_close(
        masked_target(q_next, masks, rewards, dones, gammas),
        torch.tensor([[2.0], [1.0], [-1.0], [-1.0]]),
    )


def test_double_q_target_picks_the_online_legal_argmax() -> None:
    q_target = torch.tensor([[1.0, 1e6, 3.0, -2.0], [2.0, 1e6, 5.0, 4.0]])
    q_online = torch.tensor([[0.0, 1e6, -1.0, 7.0], [9.0, 1e6, 0.0, 1.0]])
    masks = torch.tensor([[True, False, True, True], [False, False, False, False]])
    rewards, dones = torch.zeros(2, 1), torch.zeros(2, 1)
    target = masked_target(q_target, masks, rewards, dones, 0.5, q_next_online=q_online)
    # Row 0: the online network's legal argmax is action 3, valued -2 by the target network.
    torch.testing.assert_close(target, torch.tensor([[-1.0], [0.0]]))


def test_masked_argmax() -> None:
    q = torch.tensor([[1.0, 9.0, 2.0], [1.0, 9.0, 2.0], [-5.0, -9.0, -6.0]])
    masks = torch.tensor([[True, False, True], [False, False, False], [False, True, True]])
    assert masked_argmax(q, masks).tolist() == [2, 0, 2]


def test_buffer_stores_next_masks_and_terminal_rows() -> None:
    env, recorder = make_env(seed=5)
    model = small_model(env, gradient_steps=0)
    model.learn(total_timesteps=32 * 100)  # 100 env steps: the 64-row buffer wraps around
    buffer = model.replay_buffer
    assert isinstance(buffer, MaskedReplayBuffer)
    assert buffer.next_action_masks.shape == (2048 // 32, 32, NUM_ACTIONS)
    assert buffer.next_action_masks.dtype == np.bool_
    assert buffer.full and len(recorder.records) == 100
    done = buffer.dones.astype(bool)
    assert done.any() and (~done).any()
    assert not buffer.next_action_masks[done].any()  # a finished hand: no legal next action
    # Env step k is in row k % 64; for a live game its next observation and next mask are
    # those the env showed at step k + 1.
    for k in range(100 - 64, 99):
        row, live = k % 64, ~done[k % 64]
        next_obs, next_masks, _ = recorder.records[k + 1]
        np.testing.assert_array_equal(buffer.next_action_masks[row][live], next_masks[live])
        np.testing.assert_array_equal(buffer.next_observations[row][live], next_obs[live])
        # A finished game's next observation is its final one, not the next hand's first.
        assert (buffer.next_observations[row][~live] != next_obs[~live]).any(axis=1).all()


@pytest.mark.parametrize(("double_q", "loss"), [(False, 0.125), (True, 0.405)])
def test_train_uses_the_masked_target(double_q: bool, loss: float) -> None:
    """One gradient step on a batch whose next state's only huge Q-value is illegal."""
    env, _ = make_env(num_envs=1)
    model = small_model(
        env, learning_rate=0.0, gamma=0.5, batch_size=8, learning_starts=1, double_q=double_q
    )
    model.set_logger(configure(None, []))
    buffer = model.replay_buffer
    assert isinstance(buffer, MaskedReplayBuffer)
    for net, q5 in ((model.q_net, 2.0), (model.q_net_target, 0.2)):
        layer = last_linear(net)
        with torch.no_grad():
            layer.weight.zero_()
            layer.bias.fill_(1.0)
            layer.bias[5] = q5  # the online net's legal favourite, rated 0.2 by the target
            layer.bias[7] = 1e6  # huge, and illegal in every stored next state
    obs = np.zeros((1, OBS_DIM), dtype=np.float32)
    next_masks = np.ones((1, NUM_ACTIONS), dtype=bool)
    next_masks[0, 7] = False
    buffer.add(obs, obs, np.array([3]), np.array([0.0]), np.array([False]), [{}], next_masks)
    model.train(gradient_steps=1, batch_size=8)
    # Q(s, 3) = 1. Plain target 0 + 0.5 * 1 = 0.5: Huber loss 0.5 * 0.5**2 = 0.125.
    # Double DQN: 0.5 * Q_target(s', 5) = 0.1: Huber loss 0.5 * 0.9**2 = 0.405.
    assert model.logger.name_to_value["train/loss"] == pytest.approx(loss, rel=1e-5)


def test_buffer_refuses_a_transition_without_masks() -> None:
    env, _ = make_env(num_envs=2)
    buffer = small_model(env).replay_buffer
    assert isinstance(buffer, MaskedReplayBuffer)
    obs = np.zeros((2, OBS_DIM), dtype=np.float32)
    with pytest.raises(ValueError, match="next_action_masks"):
        buffer.add(obs, obs, np.zeros(2), np.zeros(2), np.zeros(2), [{}, {}])


class TwoStepEnv(VecEnv):
    """Two decisions per episode, the second one with a trap that only masking avoids.

    State A (legal: 0, 1) leads to state B with reward 0. In B (legal: 2, 3) action 2 wins
    +1 and action 3 gets 0, both ending the episode. Action 4 is never legal. The env
    refuses illegal actions, like the UNO core.
    """

    LEGAL = ((0, 1), (2, 3))

    def __init__(self, num_envs: int) -> None:
        self.render_mode = None
        super().__init__(
            num_envs,
            spaces.Box(0.0, 1.0, (2,), dtype=np.float32),
            spaces.Discrete(5),
        )
        self.state = np.zeros(num_envs, dtype=np.int64)
        self._actions = np.zeros(num_envs, dtype=np.int64)

    def _obs(self, states: np.ndarray) -> np.ndarray:
        return np.eye(2, dtype=np.float32)[states]

    def action_masks(self) -> np.ndarray:
        masks = np.zeros((self.num_envs, 5), dtype=bool)
        for i, s in enumerate(self.state):
            masks[i, list(self.LEGAL[s])] = True
        return masks

    def reset(self) -> np.ndarray:
        self.state[:] = 0
        return self._obs(self.state)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs)

    def step_wait(self) -> VecEnvStepReturn:
        if not self.action_masks()[np.arange(self.num_envs), self._actions].all():
            raise ValueError(f"illegal action in {self._actions} for states {self.state}")
        in_b = self.state == 1
        rewards = np.where(in_b & (self._actions == 2), 1.0, 0.0).astype(np.float32)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(in_b):
            infos[i] = {
                "terminal_observation": self._obs(np.array(1)),
                "TimeLimit.truncated": False,
            }
        self.state = np.where(in_b, 0, 1)
        return self._obs(self.state), rewards, in_b.copy(), infos

    def close(self) -> None:
        pass

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [getattr(self, attr_name)] * self.num_envs

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self, attr_name, value)

    def env_method(
        self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any
    ) -> list[Any]:
        return [getattr(self, method_name)(*args, **kwargs)] * self.num_envs

    def env_is_wrapped(self, wrapper_class: Any, indices: Any = None) -> list[bool]:
        return [False] * self.num_envs


@pytest.mark.parametrize(("seed", "double_q"), [(0, False), (1, True)])
def test_learning_bootstraps_over_legal_actions_only(seed: int, double_q: bool) -> None:
    """Q(A) learns γ·1 although the target network rates the illegal action 4 at 10."""
    env = TwoStepEnv(8)
    model = small_model(
        env,
        seed=seed,
        double_q=double_q,
        learning_rate=3e-3,
        gamma=0.9,
        batch_size=64,
        learning_starts=200,
        target_update_interval=200,
        exploration_fraction=0.3,
        exploration_final_eps=0.2,
    )
    for net in (model.q_net, model.q_net_target):
        with torch.no_grad():
            last_linear(net).bias[4] = 10.0  # never trained: action 4 is never taken
    model.learn(total_timesteps=8 * 600)
    with torch.no_grad():
        q = model.q_net(torch.eye(2)).numpy()
    assert q[1, 4] > 5.0  # the trap is still there
    np.testing.assert_allclose(q[1, [2, 3]], [1.0, 0.0], atol=0.15)
    np.testing.assert_allclose(q[0, [0, 1]], [0.9, 0.9], atol=0.15)
    masks = np.array([[True, True, False, False, False], [False, False, True, True, False]])
    actions, _ = model.predict(np.eye(2, dtype=np.float32), deterministic=True, action_masks=masks)
    assert actions[0] in (0, 1) and actions[1] == 2


# ---------------------------------------------------------------------- (c) predict


def test_predict_with_masks_never_returns_an_illegal_action() -> None:
    env, _ = make_env(num_envs=4)
    model = small_model(env, exploration_initial_eps=0.5, exploration_final_eps=0.5)
    model.exploration_rate = 0.5
    layer = last_linear(model.q_net)
    with torch.no_grad():
        layer.bias[11] = 1e3  # the unmasked argmax is 11 everywhere
    rng = np.random.default_rng(1)
    obs = rng.random((256, OBS_DIM)).astype(np.float32)
    masks = rng.random((256, NUM_ACTIONS)) < 0.1
    masks[np.arange(256), rng.integers(NUM_ACTIONS, size=256)] = True
    masks[:, 11] = False
    masks[:8] = False
    masks[:8, 50] = True  # rows with a single legal action
    for deterministic in (True, False):
        actions, state = model.predict(obs, deterministic=deterministic, action_masks=masks)
        assert state is None and actions.shape == (256,)
        assert masks[np.arange(256), actions].all()
        assert (actions[:8] == 50).all()
    unmasked, _ = model.predict(obs, deterministic=True)
    assert (unmasked == 11).all()  # without masks: SB3's plain argmax
    single, _ = model.predict(obs[0], deterministic=True, action_masks=masks[0])
    assert single.shape == () and int(single) == 50


# ---------------------------------------------------------------------- (d) end to end


def test_make_model_maps_every_dqn_param(tmp_path: Path) -> None:
    config = load_config(
        "configs/dqn/official_2p.yaml",
        [f"runs_dir={tmp_path}", "num_envs=4", "dqn.buffer_size=4096", "dqn.net_arch=[24, 16]"],
    )
    env = VecMonitor(UnoVecEnv(4, config.build_rules(), seed=0))
    model = make_model(config, env)
    p = config.dqn
    assert isinstance(model, MaskedDQN) and isinstance(model.replay_buffer, MaskedReplayBuffer)
    assert model.learning_rate == p.learning_rate
    assert model.buffer_size == p.buffer_size == 4096
    assert model.replay_buffer.buffer_size * 4 == 4096
    assert (model.learning_starts, model.batch_size) == (p.learning_starts, p.batch_size)
    assert (model.gamma, model.gradient_steps) == (p.gamma, p.gradient_steps)
    assert model.train_freq.frequency == p.train_freq  # type: ignore[union-attr]
    assert model.target_update_interval == p.target_update_interval
    assert model.exploration_fraction == p.exploration_fraction
    assert model.exploration_final_eps == p.exploration_final_eps
    widths = [int(weight.shape[0]) for weight, _ in policy_layers(model)[0]]
    assert widths == [24, 16, NUM_ACTIONS]  # the dueling head exported as one layer
    assert model.tensorboard_log == str(tmp_path / config.name / "tb")
    assert model.device.type == "cpu" and model.double_q is p.double_q is True
    assert isinstance(model.policy, DuelingDQNPolicy) is p.dueling is True
    assert model.n_step == model.masked_buffer.n_step == p.n_step > 1
    assert model.masked_buffer.gamma == p.gamma
    assert model.masked_buffer.potential is not None and p.hand_size_shaping > 0


def test_train_resume_and_export(tmp_path: Path) -> None:
    result = train_main(
        "dqn",
        ["--config", "configs/dqn/tiny.yaml", "--set", f"runs_dir={tmp_path}", "--no-progress"],
    )
    run_dir = tmp_path / "dqn_tiny"
    assert result.run_dir == run_dir and result.steps == 2048
    for name in ("latest.zip", "best.zip", "best_policy.safetensors", "best.json"):
        assert (run_dir / name).is_file(), name
    best = json.loads((run_dir / "best.json").read_text())
    assert best["algorithm"] == "dqn"

    resumed = train_main(
        "dqn", ["--resume", str(run_dir), "--set", "total_steps=3072", "--no-progress"]
    )
    assert resumed.steps == 3072
    latest = json.loads((run_dir / "latest.json").read_text())
    assert latest["steps"] == 3072

    config = load_config(run_dir / "config.yaml")
    rules = config.build_rules()
    vec = UnoVecEnv(4, rules, seed=2)
    model = restore_checkpoint(run_dir / "latest.zip", vec)
    assert isinstance(model, MaskedDQN) and isinstance(model.replay_buffer, MaskedReplayBuffer)
    assert model.num_timesteps == 3072

    policy = load_policy(run_dir / "best_policy.safetensors", rules)
    assert policy.meta.algorithm == "dqn" and policy.meta.hidden == (32, 32)
    obs = vec.reset()
    for _ in range(100):
        masks = vec.action_masks()
        actions = policy.act(obs, masks)
        assert masks[np.arange(4), actions].all()
        step_obs = vec.step(actions)[0]
        assert isinstance(step_obs, np.ndarray)
        obs = step_obs


# ---------------------------------------------------------------------- (e) n-step, dueling


def one_column_buffer(n_step: int, gamma: float, rows: int = 16) -> MaskedReplayBuffer:
    """A one-game buffer whose observation 0 holds the row it was stored in."""
    return MaskedReplayBuffer(
        rows,
        spaces.Box(-1e3, 1e3, (2,), dtype=np.float32),
        spaces.Discrete(4),
        device="cpu",
        n_envs=1,
        n_step=n_step,
        gamma=gamma,
    )


def fill(buffer: MaskedReplayBuffer, rewards: list[float], dones: list[bool]) -> None:
    for t, (reward, done) in enumerate(zip(rewards, dones, strict=True)):
        obs = np.array([[t, 0]], dtype=np.float32)
        next_obs = np.array([[t + 1, 1]], dtype=np.float32)
        masks = np.zeros((1, 4), dtype=bool) if done else np.eye(4, dtype=bool)[[t % 4]]
        buffer.add(
            obs,
            next_obs,
            np.array([t % 4]),
            np.array([reward]),
            np.array([done]),
            [{}],
            next_action_masks=masks,
        )


def test_n_step_returns_stop_at_the_end_of_a_hand() -> None:
    buffer = one_column_buffer(n_step=3, gamma=0.5)
    # Rows 0-3: a hand ending at row 3 (reward 1); rows 4-7: the next hand, still running.
    fill(buffer, [0.0, 0.0, 0.0, 1.0, 0.0, 0.5, 0.0, 0.0], [False] * 3 + [True] + [False] * 4)
    data = buffer.sample_masked(2000)
    rows = data.observations[:, 0].long().numpy()
    assert set(rows) == set(range(6))  # rows 6 and 7 lack two successors: not sampled yet
    expected = {  # row: (n-step reward, discount, row of the next state, done)
        0: (0.0, 0.125, 2, 0.0),
        1: (0.25, 0.125, 3, 1.0),  # 0 + 0.5 * 0 + 0.25 * 1, the hand ends at row 3
        2: (0.5, 0.25, 3, 1.0),  # two rewards only: the hand ends first
        3: (1.0, 0.5, 3, 1.0),
        4: (0.25, 0.125, 6, 0.0),
        5: (0.5, 0.125, 7, 0.0),
    }
    for row, (reward, discount, last, done) in expected.items():
        at = rows == row
        assert np.allclose(data.rewards[at, 0].numpy(), reward), row
        assert np.allclose(data.discounts[at, 0].numpy(), discount), row
        assert (data.next_observations[at, 0].numpy() == last + 1).all(), row
        assert (data.dones[at, 0].numpy() == done).all(), row
        want_mask = np.zeros(4, dtype=bool) if done else np.eye(4, dtype=bool)[last % 4]
        assert (data.next_action_masks[at].numpy() == want_mask).all(), row
        assert (data.actions[at, 0].numpy() == row % 4).all(), row


def test_n_step_window_wraps_around_a_full_buffer() -> None:
    buffer = one_column_buffer(n_step=2, gamma=1.0, rows=4)
    fill(buffer, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [False] * 6)  # rows hold steps 4, 5, 2, 3
    data = buffer.sample_masked(500)
    steps = data.observations[:, 0].long().numpy()
    assert set(steps) == {2, 3, 4}  # step 5 (the newest) has no successor yet
    for step in (2, 3, 4):
        at = steps == step
        assert np.allclose(data.rewards[at, 0].numpy(), (step + 1) + (step + 2))
        assert (data.next_observations[at, 0].numpy() == step + 2).all()


def test_one_step_sampling_discounts_by_gamma() -> None:
    buffer = one_column_buffer(n_step=1, gamma=0.9)
    fill(buffer, [0.0, 1.0], [False, True])
    data = buffer.sample_masked(64)
    assert set(data.observations[:, 0].long().tolist()) == {0, 1}  # the newest row too
    assert torch.allclose(data.discounts, torch.full((64, 1), 0.9))


def test_n_step_must_fit_the_buffer() -> None:
    with pytest.raises(ValueError, match="n_step"):
        one_column_buffer(n_step=16, gamma=0.9, rows=16)
    with pytest.raises(ValueError, match="n_steps"):
        small_model(make_env(num_envs=2)[0], n_steps=3)
    model = small_model(make_env(num_envs=2)[0], n_step=4, gamma=0.7)
    assert model.masked_buffer.n_step == 4 and model.masked_buffer.gamma == 0.7


@pytest.mark.parametrize(("seed", "double_q", "dueling"), [(2, True, True), (3, False, False)])
def test_n_step_dueling_learns_over_legal_actions_only(
    seed: int, double_q: bool, dueling: bool
) -> None:
    """The two-step env with 2-step returns and a dueling head: Q(A) is 1 at once (γ = 1)."""
    env = TwoStepEnv(8)
    model = small_model(
        env,
        policy=DuelingDQNPolicy if dueling else "MlpPolicy",
        seed=seed,
        double_q=double_q,
        n_step=2,
        learning_rate=3e-3,
        gamma=1.0,
        batch_size=64,
        learning_starts=200,
        target_update_interval=200,
        exploration_fraction=0.3,
        exploration_final_eps=0.2,
    )
    model.learn(total_timesteps=8 * 400)
    with torch.no_grad():
        q = model.q_net(torch.eye(2)).numpy()
    np.testing.assert_allclose(q[1, [2, 3]], [1.0, 0.0], atol=0.15)
    # A 2-step return from A: 0 + the reward in B (a mix of 2 and 3 while ε > 0).
    assert q[0, [0, 1]].min() > 0.6
    masks = np.array([[True, True, False, False, False], [False, False, True, True, False]])
    actions, _ = model.predict(np.eye(2, dtype=np.float32), deterministic=True, action_masks=masks)
    assert actions[0] in (0, 1) and actions[1] == 2


def test_dueling_export_plays_the_model_greedy_actions(tmp_path: Path) -> None:
    config = load_config(
        "configs/dqn/tiny.yaml", [f"runs_dir={tmp_path}", "dqn.dueling=true", "dqn.n_step=3"]
    )
    env = VecMonitor(UnoVecEnv(16, config.build_rules(), seed=4))
    model = make_model(config, env)
    assert isinstance(model.policy, DuelingDQNPolicy)
    assert isinstance(model.q_net.q_net[-1], DuelingHead)
    with torch.no_grad():  # a value stream and advantages far from their initialisation
        for param in model.q_net.parameters():
            param.add_(torch.randn_like(param) * 0.3)
    layers, activation = policy_layers(model)
    assert activation == "relu" and [tuple(w.shape) for w, _ in layers][-1] == (NUM_ACTIONS, 32)
    rules = config.build_rules()
    path = export_policy(model, tmp_path / "duel", "duel", "dqn", rules, {})
    policy = load_policy(path, rules)
    vec = UnoVecEnv(16, rules, seed=5)
    obs = vec.reset()
    for _ in range(50):
        masks = vec.action_masks()
        greedy, _ = model.predict(obs, deterministic=True, action_masks=masks)
        np.testing.assert_array_equal(policy.act(obs, masks), greedy)
        step_obs = vec.step(greedy)[0]
        assert isinstance(step_obs, np.ndarray)
        obs = step_obs
    # Loading the exported layers back (init_from) restores the same Q-values, target too.
    fresh = make_model(config, env)
    load_policy_layers(fresh, layers)
    x = torch.as_tensor(obs)
    with torch.no_grad():
        torch.testing.assert_close(fresh.q_net(x), model.q_net(x), atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(fresh.q_net_target(x), model.q_net(x), atol=1e-5, rtol=1e-5)


def test_dqn_config_bounds_n_step(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="n_step"):
        load_config("configs/dqn/tiny.yaml", [f"runs_dir={tmp_path}", "dqn.n_step=0"])
    with pytest.raises(ConfigError, match="n_step must be below"):  # 2048 / 16 = 128 rows
        load_config("configs/dqn/tiny.yaml", [f"runs_dir={tmp_path}", "dqn.n_step=128"])
    config = load_config("configs/dqn/official_2p.yaml", [f"runs_dir={tmp_path}"])
    env = VecMonitor(UnoVecEnv(4, config.build_rules(), seed=0))
    model = make_model(config.__class__(**{**config.__dict__, "num_envs": 4}), env)
    assert model.n_step == config.dqn.n_step == model.masked_buffer.n_step
    assert isinstance(model.policy, DuelingDQNPolicy) is config.dqn.dueling
    assert (model.masked_buffer.potential is not None) is (config.dqn.hand_size_shaping > 0)
    with pytest.raises(ConfigError, match="hand_size_shaping"):
        load_config("configs/dqn/tiny.yaml", [f"runs_dir={tmp_path}", "dqn.hand_size_shaping=2"])


def test_potential_shaping_telescopes_and_ends_at_zero() -> None:
    """R + γ^k Φ(s_k) - Φ(s_0), with Φ = 0 once the hand has ended."""

    def potential(observations: np.ndarray) -> np.ndarray:
        return np.asarray(observations[:, 1] * 10.0, dtype=np.float32)  # Φ = 10·obs[1]

    buffer = MaskedReplayBuffer(
        16,
        spaces.Box(-1e3, 1e3, (2,), dtype=np.float32),
        spaces.Discrete(4),
        device="cpu",
        n_envs=1,
        n_step=2,
        gamma=0.5,
        potential=potential,
    )
    # obs [t, 0] -> next obs [t + 1, 1]: Φ(s) = 0 for stored states, 10 for next states.
    fill(buffer, [0.0, 1.0, 0.0, 0.0], [False, True, False, False])
    data = buffer.sample_masked(500)
    rows = data.observations[:, 0].long().numpy()
    shaped = {0: 0.5 * 1.0, 1: 1.0, 2: 0.25 * 10.0}  # row 1 ends the hand: no Φ(s') term
    for row, reward in shaped.items():
        assert np.allclose(data.rewards[rows == row, 0].numpy(), reward), row


def test_hand_size_potential_reads_the_hand_sizes() -> None:
    env = UnoVecEnv(3, load_config("configs/dqn/tiny.yaml").build_rules(), seed=0)
    obs = env.reset()
    sizes = obs[:, OBS_LAYOUT["hand_sizes"]]
    expected = 0.1 * (sizes[:, 1] - sizes[:, 0])  # two players: the opponent minus oneself
    np.testing.assert_allclose(hand_size_potential(obs, 0.1), expected, rtol=1e-6)
    assert sizes[:, 2:].sum() == 0 and (sizes[:, :2] == 7).all()


def test_shipped_dqn_agent_loads_and_plays_legal_moves() -> None:
    path = Path(__file__).resolve().parents[2] / "agents/pretrained/dqn_official_2p.safetensors"
    rules = load_config("configs/dqn/official_2p.yaml").build_rules()
    policy = load_policy(path, rules)
    assert policy.meta.algorithm == "dqn" and policy.meta.activation == "relu"
    figures = json.loads(path.with_suffix(".json").read_text())["extra"]["strength"]
    assert figures["random"]["games"] == 10_000 and figures["random"]["ci_low"] > 0.62
    vec = UnoVecEnv(32, rules, seed=9)
    obs = vec.reset()
    for _ in range(40):
        masks = vec.action_masks()
        actions = policy.act(obs, masks)
        assert masks[np.arange(32), actions].all()
        step_obs = vec.step(actions)[0]
        assert isinstance(step_obs, np.ndarray)
        obs = step_obs
