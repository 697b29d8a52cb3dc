"""Ctrl-C while an opponent decides: the env stops until reset, never plays for a wrong seat."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from uno_env.envs.gym_env import UnoGymEnv
from uno_env.envs.learner_tables import TablesStoppedError
from uno_env.envs.vec_env import UnoVecEnv


class _InterruptedAt:
    """A legal opponent whose ``call``-th decision is interrupted (as by Ctrl-C)."""

    name = "interrupted"

    def __init__(self, call: int, error: type[BaseException] = KeyboardInterrupt) -> None:
        self.call = call
        self.error = error
        self.calls = 0

    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        self.calls += 1
        if self.calls == self.call:
            raise self.error()
        return masks.argmax(axis=1)

    def reset(self, games: np.ndarray | None = None) -> None:
        """Stateless."""


def _make(kind: str, opponent: _InterruptedAt, learner_seat: int) -> tuple[Any, Any, Any]:
    """The env, a step with a legal learner action, and a reset."""
    if kind == "gym":
        gym = UnoGymEnv(num_players=3, opponents=opponent, learner_seat=learner_seat)

        def gym_step() -> object:
            result = gym.step(int(gym.action_masks().argmax()))
            if result[2] or result[3]:
                gym.reset()
            return result

        return gym, gym_step, lambda: gym.reset(seed=5)
    vec = UnoVecEnv(4, {"num_players": 3}, opponents=opponent, learner_seat=learner_seat, seed=5)
    return vec, lambda: vec.step(vec.action_masks().argmax(axis=1)), vec.reset


def _arrays(env: Any) -> dict[str, np.ndarray]:
    state = env.tables._state  # the live state, without the stopped tables' refusal
    return {name: arr.copy() for name, arr in state.array_fields().items()}


@pytest.mark.parametrize("error", [KeyboardInterrupt, SystemExit])
@pytest.mark.parametrize("kind", ["gym", "vec"])
def test_an_interrupted_step_stops_the_env_until_reset(
    kind: str, error: type[BaseException]
) -> None:
    opponent = _InterruptedAt(call=7, error=error)
    env, step, reset = _make(kind, opponent, learner_seat=0)
    reset()
    with pytest.raises(error):
        for _ in range(50):
            step()
    assert opponent.calls == 7
    half_played = _arrays(env)
    # The round was cut while an opponent's seat was to act: no later call may go on.
    for call in (step, env.action_masks, lambda: env.tables.observations()):
        with pytest.raises(TablesStoppedError, match=r"interrupted.*call reset\(\)") as info:
            call()
        assert "\n" not in str(info.value)
        assert error.__name__ in str(info.value)
    for name, arr in _arrays(env).items():  # the refused step played nothing
        np.testing.assert_array_equal(arr, half_played[name], err_msg=name)
    reset()
    state = env.tables.state
    np.testing.assert_array_equal(state.current, env.tables.learner_seats)
    for _ in range(30):  # plays on, the learner always at its own seat
        step()
        state = env.tables.state
        live = state.live
        np.testing.assert_array_equal(state.current[live], env.tables.learner_seats[live])


@pytest.mark.parametrize("kind", ["gym", "vec"])
def test_an_interrupted_reset_stops_the_env_until_reset(kind: str) -> None:
    """The learner sits after the opponents: its first reset lets them act, and is cut."""
    opponent = _InterruptedAt(call=1)
    _, step, reset = _make(kind, opponent, learner_seat=2)
    with pytest.raises(KeyboardInterrupt):
        reset()
    with pytest.raises(TablesStoppedError, match="KeyboardInterrupt"):
        step()
    reset()
    step()


@pytest.mark.parametrize("kind", ["gym", "vec"])
def test_an_interruption_before_the_opponents_play_stops_the_env(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C right after the learner's action, before any opponent was asked."""
    env, step, reset = _make(kind, _InterruptedAt(call=0), learner_seat=0)
    reset()

    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(env.tables, "_advance", interrupted)
        with pytest.raises(KeyboardInterrupt):
            step()
    with pytest.raises(TablesStoppedError, match="reset"):
        step()
    reset()
    step()


def test_a_refused_learner_action_does_not_stop_the_env() -> None:
    """Only a half-played round stops the tables: a refused action changed nothing."""
    env = UnoVecEnv(2, seed=0)
    env.reset()
    with pytest.raises(ValueError, match="one action per env"):
        env.step(np.zeros(3, dtype=np.int64))
    with pytest.raises(Exception, match="learner action refused"):
        env.tables.step(np.full(2, 79))
    env.step(env.action_masks().argmax(axis=1))
