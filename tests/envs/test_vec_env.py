"""The natively batched SB3 VecEnv: shapes, autoreset, masks, determinism, SB3 integration."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from stable_baselines3.common.vec_env import VecEnv, VecMonitor

from uno_env import core
from uno_env.core import IllegalActionError
from uno_env.envs.vec_env import MaskedVecEnv, UnoVecEnv
from uno_env.observation import OBS_DIM
from uno_env.rules import Rules
from uno_env.sampling import uniform_legal_actions


def run(vec: UnoVecEnv, steps: int, seed: int = 0) -> list[tuple[np.ndarray, ...]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(steps):
        obs, rewards, dones, infos = vec.step(uniform_legal_actions(vec.action_masks(), rng))
        out.append((obs, rewards, dones, infos))
    return out


def test_shapes_and_masks() -> None:
    vec = UnoVecEnv(8, {"num_players": 3}, seed=0)
    assert isinstance(vec, VecEnv)
    obs = vec.reset()
    assert obs.shape == (8, OBS_DIM) and obs.dtype == np.float32
    masks = vec.action_masks()
    assert masks.shape == (8, 80) and masks.dtype == bool and masks.any(axis=1).all()
    np.testing.assert_array_equal(masks, np.stack(vec.env_method("action_masks")))
    np.testing.assert_array_equal(vec.env_method("action_masks", indices=[2, 5]), masks[[2, 5]])
    assert isinstance(vec, MaskedVecEnv)
    np.testing.assert_array_equal(vec.mask_rows([5, 2]), masks[[5, 2]])
    masks[:] = False  # the caller's copy: the env's own masks stay as they are
    assert vec.action_masks().any(axis=1).all()
    masks = vec.action_masks()
    assert vec.get_attr("rules", indices=[0, 1]) == [vec.rules, vec.rules]
    assert vec.has_attr("action_masks")
    assert vec.env_is_wrapped(VecMonitor) == [False] * 8
    # Each game waits for its learner.
    state = vec.tables.state
    np.testing.assert_array_equal(state.current, vec.tables.learner_seats)
    obs, rewards, dones, infos = vec.step(uniform_legal_actions(masks, np.random.default_rng()))
    assert rewards.shape == (8,) and rewards.dtype == np.float32
    assert dones.shape == (8,) and dones.dtype == bool
    assert len(infos) == 8


def test_autoreset_with_terminal_observations() -> None:
    vec = UnoVecEnv(16, {"num_players": 2}, seed=1)
    vec.reset()
    finished = 0
    for obs, rewards, dones, infos in run(vec, 120):
        for g in np.flatnonzero(dones):
            finished += 1
            info = infos[g]
            assert info["terminal_observation"].shape == (OBS_DIM,)
            assert info["TimeLimit.truncated"] is False
            assert abs(rewards[g]) == pytest.approx(1.0)  # two players: +1 or -1
            # The new hand: no discards played yet beyond the opening moves.
            assert not np.array_equal(info["terminal_observation"], obs[g])
        for g in np.flatnonzero(~dones):
            assert rewards[g] == 0.0 and infos[g] == {}
    assert finished > 0
    assert vec.tables.state.live.all()


def test_truncated_hands_are_time_limits() -> None:
    vec = UnoVecEnv(4, {"num_players": 2, "max_turns": 8}, seed=2)
    vec.reset()
    truncated = 0
    for _, rewards, dones, infos in run(vec, 12):
        for g in np.flatnonzero(dones):
            if infos[g]["TimeLimit.truncated"]:
                truncated += 1
                assert rewards[g] == 0.0
    assert truncated > 0


def test_seeded_runs_are_identical_and_seed_applies_at_reset() -> None:
    a = UnoVecEnv(6, {"num_players": 4}, seed=7)
    b = UnoVecEnv(6, {"num_players": 4}, seed=7)
    np.testing.assert_array_equal(a.reset(), b.reset())
    for (oa, ra, da, _), (ob, rb, db, _) in zip(run(a, 40), run(b, 40), strict=True):
        np.testing.assert_array_equal(oa, ob)
        np.testing.assert_array_equal(ra, rb)
        np.testing.assert_array_equal(da, db)
    c = UnoVecEnv(6, {"num_players": 4}, seed=8)
    assert not np.array_equal(c.reset(), UnoVecEnv(6, {"num_players": 4}, seed=7).reset())
    c.seed(7)
    np.testing.assert_array_equal(c.reset(), UnoVecEnv(6, {"num_players": 4}, seed=7).reset())


def test_illegal_learner_action_raises() -> None:
    vec = UnoVecEnv(3, seed=0)
    vec.reset()
    actions = uniform_legal_actions(vec.action_masks(), np.random.default_rng(0))
    actions[1] = int(np.flatnonzero(~vec.action_masks()[1])[0])
    before = vec.tables.state
    with pytest.raises(IllegalActionError, match="game 1"):
        vec.step(actions)
    np.testing.assert_array_equal(vec.tables.state.hands, before.hands)
    with pytest.raises(ValueError, match="positive"):
        UnoVecEnv(0)


def test_rewards_follow_the_learner_seat() -> None:
    """A reward function that pays seat s the value s + 1 shows whose reward is returned."""

    def seat_number(rules: Rules, state: core.UnoState) -> np.ndarray:
        out = np.zeros((state.batch_size, rules.num_players), dtype=np.float32)
        out[state.done | state.truncated] = np.arange(1, rules.num_players + 1)
        return out

    vec = UnoVecEnv(32, {"num_players": 4}, seed=3, reward=seat_number)
    vec.reset()
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(60):
        seats_before = vec.tables.learner_seats
        _, rewards, dones, _ = vec.step(uniform_legal_actions(vec.action_masks(), rng))
        np.testing.assert_array_equal(rewards[~dones], 0.0)
        np.testing.assert_array_equal(rewards[dones], seats_before[dones] + 1)
        checked += int(dones.sum())
    assert checked > 0
    assert len(set(vec.tables.learner_seats.tolist())) > 1  # random seats
    with pytest.raises(ValueError, match="reward scheme"):
        UnoVecEnv(2, reward="nope")


def test_vecmonitor_and_maskable_ppo_learn() -> None:
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    venv = VecMonitor(UnoVecEnv(16, {"num_players": 2}, seed=0))
    model = MaskablePPO("MlpPolicy", venv, n_steps=16, batch_size=64, n_epochs=1, seed=0)
    model.learn(total_timesteps=512)
    assert model.num_timesteps >= 512
    assert len(model.ep_info_buffer) > 0  # VecMonitor saw finished hands
    obs = venv.reset()
    actions, _ = model.predict(obs, action_masks=venv.env_method("action_masks"))
    masks = venv.unwrapped.action_masks()  # type: ignore[attr-defined]
    assert masks[np.arange(16), actions].all()


def test_state_copies_do_not_alias_the_live_state() -> None:
    vec = UnoVecEnv(4, seed=0)
    vec.reset()
    snapshot = vec.tables.state
    snapshot.hands[:] = 0
    assert vec.tables.state.hands.sum() > 0
    assert core.card_totals(vec.tables.state).tolist() == [108] * 4
