"""The same seeded games through the AEC env, the Gymnasium env and a VecEnv slot agree.

Every seat plays a deterministic policy of its own observation (a hash picks a legal
action), so a game's course depends only on its key, the learner's seat and the rules: any
difference in what the three adapters show or do shows up as a diverging trajectory.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from uno_env import cards as C
from uno_env.envs.gym_env import UnoGymEnv
from uno_env.envs.pettingzoo_env import raw_env
from uno_env.envs.vec_env import UnoVecEnv
from uno_env.rules import PRESETS

Trajectory = list[tuple[bytes, bytes, float, bool, bool]]
"""(observation, mask, reward, terminated, truncated) at each learner decision, then the end."""


def hash_action(obs: np.ndarray, mask: np.ndarray) -> int:
    """A legal action picked by a hash of the observation (drawing only when stuck)."""
    legal = np.flatnonzero(mask)
    if legal.size > 1:
        legal = legal[legal != C.DRAW]
    return int(legal[zlib.crc32(obs.tobytes()) % legal.size])


def hash_policy(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    return np.array([hash_action(o, m) for o, m in zip(observations, masks, strict=True)])


def vec_first_hands(
    num_envs: int, rules: dict[str, object], seed: int
) -> tuple[list[Trajectory], np.ndarray, np.ndarray]:
    """Play the VecEnv until every slot finished its first hand; return their trajectories."""
    vec = UnoVecEnv(num_envs, rules, opponents=hash_policy, seed=seed)
    obs = vec.reset()
    keys, seats = vec.tables.game_keys, vec.tables.learner_seats
    trajectories: list[Trajectory] = [[] for _ in range(num_envs)]
    open_slots = set(range(num_envs))
    for _ in range(3000):
        masks = vec.action_masks()
        for g in open_slots:
            trajectories[g].append((obs[g].tobytes(), masks[g].tobytes(), 0.0, False, False))
        obs, rewards, dones, infos = vec.step(hash_policy(obs, masks))
        for g in list(open_slots):
            if dones[g]:
                truncated = infos[g]["TimeLimit.truncated"]
                final = infos[g]["terminal_observation"].tobytes()
                trajectories[g].append(
                    (final, b"", float(rewards[g]), not truncated, bool(truncated))
                )
                open_slots.discard(g)
        if not open_slots:
            break
    assert not open_slots
    return trajectories, keys, seats


def gym_hand(rules: dict[str, object], key: int, seat: int) -> Trajectory:
    env = UnoGymEnv(rules, opponents=hash_policy)
    obs, _ = env.reset(seed=0, options={"key": key, "learner_seat": seat})
    trajectory: Trajectory = []
    while True:
        mask = env.action_masks()
        trajectory.append((obs.tobytes(), mask.tobytes(), 0.0, False, False))
        obs, reward, terminated, truncated, _ = env.step(hash_action(obs, mask))
        if terminated or truncated:
            trajectory.append((obs.tobytes(), b"", reward, terminated, truncated))
            return trajectory


def aec_hand(rules: dict[str, object], key: int, seat: int) -> Trajectory:
    aec = raw_env(rules)
    aec.reset(options={"key": key})
    learner = f"player_{seat}"
    trajectory: Trajectory = []
    for agent in aec.agent_iter():
        obs, reward, terminated, truncated, _ = aec.last()
        if terminated or truncated:
            if agent == learner:
                final = aec.observe(learner)["observation"].tobytes()
                trajectory.append((final, b"", float(reward), terminated, truncated))
            aec.step(None)
            continue
        mask = obs["action_mask"].astype(bool)
        if agent == learner:
            trajectory.append((obs["observation"].tobytes(), mask.tobytes(), 0.0, False, False))
        aec.step(hash_action(obs["observation"], mask))
    return trajectory


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("n_players", [2, 4])
def test_aec_gym_and_vec_slots_play_identical_games(preset: str, n_players: int) -> None:
    rules: dict[str, object] = {"preset": preset, "num_players": n_players}
    trajectories, keys, seats = vec_first_hands(4, rules, seed=n_players)
    for slot in range(4):
        expected = trajectories[slot]
        assert len(expected) >= 2
        assert gym_hand(rules, int(keys[slot]), int(seats[slot])) == expected, f"gym, {slot}"
        assert aec_hand(rules, int(keys[slot]), int(seats[slot])) == expected, f"aec, {slot}"


def test_gym_seed_matches_vec_slot_zero_over_several_hands() -> None:
    """The key schedule: Gymnasium hand e after reset(seed) is slot 0's hand e."""
    rules = {"num_players": 3}
    vec = UnoVecEnv(3, rules, opponents=hash_policy, seed=21)
    env = UnoGymEnv(rules, opponents=hash_policy)
    vec_obs = vec.reset()
    gym_obs, _ = env.reset(seed=21)
    hands = 0
    for _ in range(2000):
        np.testing.assert_array_equal(gym_obs, vec_obs[0])
        action = hash_action(gym_obs, env.action_masks())
        vec_obs, vec_rewards, dones, infos = vec.step(hash_policy(vec_obs, vec.action_masks()))
        gym_obs, reward, terminated, truncated, _ = env.step(action)
        assert reward == vec_rewards[0] and (terminated or truncated) == dones[0]
        if dones[0]:
            np.testing.assert_array_equal(gym_obs, infos[0]["terminal_observation"])
            gym_obs, _ = env.reset()
            hands += 1
            if hands == 3:
                break
    assert hands == 3
