"""The Gymnasium single-agent env: registration, the checkers, the learner's view, opponents."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import uno_env
from uno_env import cards as C
from uno_env import core
from uno_env.core import IllegalActionError
from uno_env.envs.gym_env import UnoGymEnv
from uno_env.envs.opponents import OpponentPool
from uno_env.envs.registration import register_envs
from uno_env.observation import OBS_DIM
from uno_env.rules import PRESETS
from unolab.agents import resolve_opponents


def random_action(mask: np.ndarray, rng: np.random.Generator) -> int:
    """A random legal action, drawing only when nothing else is legal (short hands)."""
    legal = np.flatnonzero(mask)
    if legal.size > 1:
        legal = legal[legal != C.DRAW]
    return int(legal[rng.integers(legal.size)])


def play_hand(env: UnoGymEnv, seed: int) -> tuple[float, int, dict[str, object]]:
    """One hand with a random learner; return (reward, learner steps, last info)."""
    rng = np.random.default_rng(seed)
    _, info = env.reset(seed=seed)
    steps = 0
    while True:
        _, reward, terminated, truncated, info = env.step(random_action(env.action_masks(), rng))
        steps += 1
        if terminated or truncated:
            return reward, steps, info


def test_registered_on_import() -> None:
    assert "uno_env/Uno-v0" in gymnasium.registry
    register_envs()  # idempotent
    env = gymnasium.make("uno_env/Uno-v0", rules="official", num_players=2)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (OBS_DIM,)
    assert isinstance(env.unwrapped, UnoGymEnv)
    assert env.unwrapped.rules.num_players == 2
    assert uno_env.PRESETS is PRESETS


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_gymnasium_and_sb3_checkers(preset: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(gymnasium.make("uno_env/Uno-v0", rules=preset).unwrapped)
        check_env(UnoGymEnv(preset, num_players=3, render_mode="ansi"))
        sb3_check_env(UnoGymEnv(preset, num_players=4))


@pytest.mark.parametrize("n_players", [2, 4, 10])
def test_learner_always_acts_and_gets_its_reward(n_players: int) -> None:
    env = UnoGymEnv(num_players=n_players)
    rng = np.random.default_rng(n_players)
    for seed in range(3):
        obs, info = env.reset(seed=seed)
        while True:
            state = env.tables.state
            seat = info["learner_seat"]
            assert int(state.current[0]) == seat  # opponents acted inside step
            np.testing.assert_array_equal(obs[:54], state.hands[0, seat])  # the learner's hand
            np.testing.assert_array_equal(
                info["action_mask"], core.legal_action_mask(env.rules, state)[0]
            )
            obs, reward, terminated, truncated, info = env.step(
                random_action(env.action_masks(), rng)
            )
            if terminated or truncated:
                break
            assert reward == 0.0
        final = env.tables.state
        expected = core.hand_rewards(env.rules, final)[0, info["learner_seat"]]
        assert reward == pytest.approx(float(expected))
        assert terminated == bool(final.done[0]) and truncated == bool(final.truncated[0])
        with pytest.raises(RuntimeError, match="reset"):
            env.step(0)


def test_fixed_and_random_learner_seats() -> None:
    fixed = UnoGymEnv(num_players=4, learner_seat=2)
    seats = set()
    for seed in range(4):
        _, info = fixed.reset(seed=seed)
        seats.add(info["learner_seat"])
    assert seats == {2}
    random_seat = UnoGymEnv(num_players=4)
    random_seat.reset(seed=0)
    seen = {random_seat.reset()[1]["learner_seat"] for _ in range(20)}
    assert len(seen) > 1
    with pytest.raises(ValueError, match="learner_seat"):
        UnoGymEnv(num_players=3, learner_seat=3)


def test_seeding_replays_the_same_hands() -> None:
    a, b = UnoGymEnv(num_players=3), UnoGymEnv(num_players=3)
    for env in (a, b):
        env.reset(seed=11)
    for _ in range(3):
        ra, na, _ = play_hand(a, 5)
        rb, nb, _ = play_hand(b, 5)
        assert (ra, na) == (rb, nb)
        oa, _ = a.reset()
        ob, _ = b.reset()
        np.testing.assert_array_equal(oa, ob)


@pytest.mark.parametrize(
    "options", [{"learner_seat": 9}, {"key": -1}, {"key": "text"}, {"learner_seat": True}]
)
def test_a_refused_reset_leaves_the_key_schedule_alone(options: dict[str, object]) -> None:
    a, b = UnoGymEnv(num_players=3), UnoGymEnv(num_players=3)
    for env in (a, b):
        env.reset(seed=11)
    with pytest.raises(ValueError):
        a.reset(seed=99, options=options)
    np.testing.assert_array_equal(a.reset()[0], b.reset()[0])
    assert int(a.tables.game_keys[0]) == int(b.tables.game_keys[0])


def test_explicit_key_and_seat() -> None:
    env = UnoGymEnv(num_players=3)
    env.reset(seed=0, options={"key": 1234, "learner_seat": 1})
    assert env.learner_seat == 1
    assert int(env.tables.game_keys[0]) == 1234
    assert int(env.tables.state.key[0]) == 1234


def test_illegal_actions() -> None:
    env = UnoGymEnv(num_players=2, illegal_action="raise")
    env.reset(seed=3)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    before = env.tables.state
    with pytest.raises(IllegalActionError, match="not legal"):
        env.step(illegal)
    np.testing.assert_array_equal(env.tables.state.hands, before.hands)
    forgiving = UnoGymEnv(num_players=2, illegal_reward=-3.0)
    forgiving.reset(seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, reward, terminated, truncated, info = forgiving.step(illegal)
    assert (reward, terminated, truncated, info["illegal"]) == (-3.0, True, False, True)
    with pytest.raises(RuntimeError, match="reset"):
        forgiving.step(int(np.flatnonzero(forgiving.action_masks())[0]))
    with pytest.raises(ValueError, match="illegal_action"):
        UnoGymEnv(illegal_action="skip")  # type: ignore[arg-type]


class CountingPolicy:
    """Plays the first legal action and counts the rows it was asked about."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.rows = 0

    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        assert observations.shape == (masks.shape[0], OBS_DIM)
        self.rows += masks.shape[0]
        return masks.argmax(axis=1)

    def reset(self, games: np.ndarray | None = None) -> None:
        """Stateless."""


def test_opponent_list_seats_and_pool() -> None:
    first, second = CountingPolicy("first"), CountingPolicy("second")
    env = UnoGymEnv(num_players=3, opponents=[first, second], learner_seat=0)
    play_hand(env, 0)
    assert first.rows > 0 and second.rows > 0
    with pytest.raises(ValueError, match="one policy per opponent seat"):
        UnoGymEnv(num_players=4, opponents=[first, second])
    pool = [CountingPolicy(f"p{i}") for i in range(3)]
    env = UnoGymEnv(num_players=4, opponents=OpponentPool(pool, weights=[1, 1, 0]))
    env.reset(seed=0)
    for seed in range(6):
        play_hand(env, seed)
    assert pool[0].rows > 0 and pool[1].rows > 0 and pool[2].rows == 0
    with pytest.raises(ValueError, match="weights"):
        OpponentPool(pool, weights=[1, -1, 0])


def test_named_and_callable_opponents() -> None:
    env = UnoGymEnv(num_players=2, opponents=resolve_opponents("greedy_points"))
    play_hand(env, 1)
    with pytest.raises(TypeError, match="resolve_opponents"):
        UnoGymEnv(num_players=2, opponents="greedy_points")

    def last_legal(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.asarray([np.flatnonzero(m)[-1] for m in masks])

    env = UnoGymEnv(num_players=2, opponents=last_legal)
    play_hand(env, 2)
    with pytest.raises(TypeError, match="opponent"):
        UnoGymEnv(num_players=2, opponents=42)


def test_an_illegal_opponent_move_names_the_opponent() -> None:
    class Cheater(CountingPolicy):
        def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
            return (~masks).argmax(axis=1)

    env = UnoGymEnv(num_players=2, opponents=Cheater("cheater"), learner_seat=0)
    with pytest.raises(IllegalActionError, match="cheater"):
        for seed in range(10):
            play_hand(env, seed)


def test_render_from_the_learners_seat(capsys: pytest.CaptureFixture[str]) -> None:
    env = UnoGymEnv(num_players=3, render_mode="ansi", colour=False)
    env.reset(seed=0)
    text = env.render()
    assert isinstance(text, str) and "you" in text and "legal:" in text
    human = UnoGymEnv(num_players=2, render_mode="human", colour=False)
    human.reset(seed=0)
    assert "you" in capsys.readouterr().out
