"""Copies of the envs: a deep copy or a pickle of the AEC env mid-hand, a pickled VecEnv."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from uno_env.envs.opponents import OpponentPool
from uno_env.envs.pettingzoo_env import env as make_aec
from uno_env.envs.pettingzoo_env import raw_env
from uno_env.envs.vec_env import UnoVecEnv
from uno_env.policy import PolicyFactory, RandomAnyBot, RandomBot

_COPIES: dict[str, Callable[[Any], Any]] = {
    "deepcopy": copy.deepcopy,
    "pickle": lambda env: pickle.loads(pickle.dumps(env)),
}


def _observe(env: Any) -> tuple[str, np.ndarray, np.ndarray, dict[str, float]]:
    agent = env.agent_selection
    obs = env.observe(agent)
    return agent, obs["observation"], obs["action_mask"], dict(env._cumulative_rewards)


def _play(env: Any, actions: list[int]) -> list[tuple[Any, ...]]:
    seen = []
    for action in actions:
        _, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else action)
        if not env.agents:
            break
        seen.append(_observe(env))
    return seen


def _choices(env: Any, n: int) -> list[int]:
    """Legal actions for ``n`` turns, chosen on a throwaway copy."""
    probe, rng, out = copy.deepcopy(env), np.random.default_rng(3), []
    for _ in range(n):
        obs, _, terminated, truncated, _ = probe.last()
        if terminated or truncated or not probe.agents:
            break
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        out.append(action)
        probe.step(action)
    return out


@pytest.mark.parametrize("how", sorted(_COPIES))
@pytest.mark.parametrize("wrapped", [False, True])
def test_a_copy_of_the_aec_env_mid_hand_is_equal_and_independent(how: str, wrapped: bool) -> None:
    env = make_aec(num_players=3) if wrapped else raw_env(num_players=3)
    env.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(12):  # into the hand
        obs = env.observe(env.agent_selection)
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    twin = _COPIES[how](env)
    assert twin is not env
    unwrapped = twin.unwrapped if wrapped else twin
    assert unwrapped.game_state.hands is not (env.unwrapped if wrapped else env).game_state.hands
    snapshot = _observe(env)
    for a, b in zip(_observe(twin), snapshot, strict=True):
        np.testing.assert_array_equal(a, b)

    actions = _choices(env, 40)
    assert len(actions) >= 5
    copied = _play(twin, actions)
    # Stepping the copy left the original where it was.
    for a, b in zip(_observe(env), snapshot, strict=True):
        np.testing.assert_array_equal(a, b)
    original = _play(env, actions)
    assert len(original) == len(copied)
    for mine, theirs in zip(original, copied, strict=True):
        for a, b in zip(mine, theirs, strict=True):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "opponents",
    [
        None,
        PolicyFactory("random_any", RandomAnyBot),
        [PolicyFactory("random", RandomBot), RandomAnyBot(seed=2)],
        OpponentPool([PolicyFactory("random", RandomBot), PolicyFactory("any", RandomAnyBot)]),
    ],
    ids=["default", "factory", "list", "pool"],
)
def test_a_pickled_vec_env_plays_on_the_same_games(opponents: object) -> None:
    vec = UnoVecEnv(6, {"num_players": 3}, opponents=opponents, seed=8)
    vec.reset()
    rng = np.random.default_rng(1)
    for _ in range(10):
        vec.step(np.array([rng.choice(np.flatnonzero(m)) for m in vec.action_masks()]))
    twin = pickle.loads(pickle.dumps(vec))
    np.testing.assert_array_equal(twin.action_masks(), vec.action_masks())
    for _ in range(40):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in vec.action_masks()])
        ours, theirs = vec.step(actions), twin.step(actions)
        for a, b in zip(ours[:3], theirs[:3], strict=True):
            np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(twin.tables.state.hands, vec.tables.state.hands)


@pytest.mark.parametrize("names", [["mixbot"], "ppo_official_2p"], ids=["bot", "learned"])
def test_a_vec_env_with_resolved_opponents_pickles(names: object) -> None:
    """Opponents resolved from names (bots, a shipped network) travel with the env."""
    from uno_env.rules import load_rules
    from unolab.agents.resolve import resolve_opponents

    rules = load_rules("official", num_players=2)
    vec = UnoVecEnv(4, rules, opponents=resolve_opponents(names, rules), seed=3)  # type: ignore[arg-type]
    vec.reset()
    twin = pickle.loads(pickle.dumps(vec))
    rng = np.random.default_rng(2)
    for _ in range(30):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in vec.action_masks()])
        ours, theirs = vec.step(actions), twin.step(actions)
        for a, b in zip(ours[:3], theirs[:3], strict=True):
            np.testing.assert_array_equal(a, b)
