"""Bad input to the envs and the engine's Python API: one clear error, the env still usable.

Each case builds an env (or calls the API) with one bad input and checks that the error is
a domain exception (``ValueError`` and its subclasses, or ``TypeError`` for an argument of
the wrong kind, as Python does), that its message names the bad input, and that what was
there before is intact: the env still plays after ``reset()``, a refused action leaves the
state as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from uno_env import ConfigError, IllegalActionError, UnoGame, core, load_rules
from uno_env.envs.gym_env import UnoGymEnv
from uno_env.envs.learner_tables import TablesStoppedError
from uno_env.envs.opponents import OpponentPool
from uno_env.envs.pettingzoo_env import raw_env
from uno_env.envs.vec_env import UnoVecEnv
from uno_env.observation import encode
from uno_env.play import PolicyError
from unolab.agents import make_agent, resolve_opponents


class _Faulty:
    """An opponent that misbehaves once when armed, and otherwise plays legally."""

    def __init__(self, name: str, fault: Callable[[np.ndarray], Any]) -> None:
        self.name = name
        self.fault = fault
        self.armed = False

    def act(self, observations: np.ndarray, masks: np.ndarray) -> Any:
        if self.armed:
            self.armed = False
            return self.fault(masks)
        return masks.argmax(axis=1)

    def reset(self, games: np.ndarray | None = None) -> None:
        """Stateless."""


def _raise(masks: np.ndarray) -> Any:
    raise ValueError("the network exploded")


FAULTS: dict[str, Callable[[np.ndarray], Any]] = {
    "illegal": lambda masks: (~masks).argmax(axis=1),
    "out_of_range": lambda masks: np.full(masks.shape[0], 999),
    "negative": lambda masks: np.full(masks.shape[0], -3),
    "floats": lambda masks: np.zeros(masks.shape[0]) + 0.5,
    "wrong_shape": lambda masks: np.zeros((masks.shape[0], 2), dtype=np.int64),
    "raises": _raise,
}


@dataclass(frozen=True)
class Case:
    """One bad input: what to run, the error expected, a text its message must contain."""

    id: str
    run: Callable[[], object]
    error: type[Exception] | tuple[type[Exception], ...]
    names: str


def _gym(**kwargs: Any) -> Callable[[], object]:
    return lambda: UnoGymEnv(**kwargs)


def _vec(num_envs: Any, **kwargs: Any) -> Callable[[], object]:
    return lambda: UnoVecEnv(num_envs, **kwargs)


def _vec_step(actions: Any) -> Callable[[], object]:
    def run() -> object:
        env = UnoVecEnv(4, seed=0)
        env.reset()
        return env.step(actions)

    return run


def _gym_reset(options: dict[str, Any]) -> Callable[[], object]:
    def run() -> object:
        return UnoGymEnv(num_players=2).reset(seed=0, options=options)

    return run


def _encode_seat(seat: int) -> Callable[[], object]:
    def run() -> object:
        rules = load_rules("official", num_players=3)
        return encode(rules, core.init(rules, 2, seed=0), np.array([0, seat]))

    return run


def _aec_reset(options: dict[str, Any]) -> Callable[[], object]:
    def run() -> object:
        return raw_env(num_players=2).reset(seed=0, options=options)

    return run


def _core_init(*args: Any, **kwargs: Any) -> Callable[[], object]:
    return lambda: core.init(load_rules("official", num_players=2), *args, **kwargs)


def _game_step(action: str) -> Callable[[], object]:
    return lambda: UnoGame("official", seed=0, num_players=2).step(action)


CASES: list[Case] = [
    Case("opponent_by_name", _gym(opponents="mixbot"), TypeError, "resolve_opponents"),
    Case("opponent_not_a_policy", _gym(opponents=42), TypeError, "42"),
    Case(
        "opponent_list_too_long",
        _gym(num_players=2, opponents=[make_agent("random")] * 3),
        ValueError,
        "got 3",
    ),
    Case("opponent_unknown_bot", lambda: resolve_opponents(["nobot"]), ValueError, "nobot"),
    Case(
        "opponent_missing_file",
        lambda: resolve_opponents("no/such/agent.safetensors"),
        ValueError,
        "no/such/agent",
    ),
    Case("pool_empty", lambda: OpponentPool([]), ValueError, "at least one"),
    Case(
        "pool_negative_weight",
        lambda: OpponentPool([make_agent("random")], [-1.0]),
        ValueError,
        "-1.0",
    ),
    Case(
        "pool_nan_weight",
        lambda: OpponentPool([make_agent("random")], [float("nan")]),
        ValueError,
        "nan",
    ),
    Case(
        "pool_weights_count",
        lambda: OpponentPool([make_agent("random")], [1.0, 2.0]),
        ValueError,
        "2.0",
    ),
    Case("learner_seat_out_of_range", _gym(num_players=2, learner_seat=5), ValueError, "5"),
    Case("learner_seat_word", _gym(learner_seat="first"), ValueError, "first"),
    Case("reward_unknown", _gym(reward="money"), ValueError, "money"),
    Case("rules_unknown_preset", _gym(rules="no_such_preset"), ConfigError, "no_such_preset"),
    Case("players_too_many", _gym(num_players=11), ConfigError, "11"),
    Case("players_too_few", _gym(num_players=1), ConfigError, "1"),
    Case("vec_zero_envs", _vec(0), ValueError, "0"),
    Case("vec_float_envs", _vec(2.5), ValueError, "2.5"),
    Case("vec_actions_wrong_size", _vec_step(np.zeros(3, dtype=np.int64)), ValueError, "(3,)"),
    Case("vec_actions_illegal", _vec_step(np.full(4, 79)), IllegalActionError, "79"),
    Case("reset_learner_seat", _gym_reset({"learner_seat": 9}), ValueError, "9"),
    Case("reset_learner_seat_bool", _gym_reset({"learner_seat": True}), ValueError, "got True"),
    Case("reset_learner_seat_list", _gym_reset({"learner_seat": [0, 1]}), ValueError, "[0, 1]"),
    Case("learner_seat_bool", _gym(num_players=2, learner_seat=True), ValueError, "got True"),
    Case("learner_seat_list", _gym(num_players=2, learner_seat=[0, 1]), ValueError, "[0, 1]"),
    Case("vec_learner_seat_bool", _vec(2, learner_seat=False), ValueError, "got False"),
    Case("vec_bool_envs", _vec(True), ValueError, "got True"),
    Case("core_init_bool_batch", _core_init(True), ValueError, "got True"),
    # Game keys are integers in [0, 2**64): no wrapping of -1, no overflow at 2**64.
    *(
        Case(f"{where}_key_{label}", run(key), ValueError, f"[0, 2**64), got {key!r}")
        for label, key in [
            ("negative", -1),
            ("too_large", 2**64),
            ("bool", True),
            ("float", 1.5),
            ("text", "7"),
        ]
        for where, run in [
            ("gym", lambda k: _gym_reset({"key": k})),
            ("aec", lambda k: _aec_reset({"key": k})),
            ("core_init", lambda k: _core_init(keys=[3, k])),
        ]
    ),
    Case("encode_seat", _encode_seat(7), ValueError, "7"),
    Case("game_unknown_card", _game_step("X9"), ValueError, "X9"),
    Case("game_illegal_card", _game_step("W+4:Q"), ValueError, "W+4:Q"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_gets_one_clear_error(case: Case) -> None:
    with pytest.raises(case.error) as info:
        case.run()
    message = str(info.value)
    assert case.names in message, message
    assert "\n" not in message.strip(), message


@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("kind", ["gym", "vec"])
def test_a_failing_opponent_stops_the_env_until_reset(fault: str, kind: str) -> None:
    """The failure names the opponent; nothing plays on from the half-played round."""
    opponent = _Faulty(f"faulty_{fault}", FAULTS[fault])
    env: Any
    if kind == "gym":
        env = UnoGymEnv(num_players=2, opponents=opponent, learner_seat=0)
        env.reset(seed=1)
        step: Callable[[], object] = lambda: env.step(int(env.action_masks().argmax()))  # noqa: E731
    else:
        env = UnoVecEnv(4, opponents=opponent, learner_seat=0, seed=1)
        env.reset()
        step = lambda: env.step(env.action_masks().argmax(axis=1))  # noqa: E731
    opponent.armed = True
    with pytest.raises(PolicyError, match=f"faulty_{fault}"):
        for _ in range(50):
            result = step()
            if kind == "gym" and (result[2] or result[3]):  # type: ignore[index]
                env.reset()
    for call in (step, env.action_masks):
        with pytest.raises(TablesStoppedError, match="reset"):
            call()
    # reset() deals again and the env plays on (the opponent now plays legally).
    if kind == "gym":
        env.reset(seed=2)
    else:
        env.reset()
    for _ in range(20):
        result = step()
        if kind == "gym" and (result[2] or result[3]):  # type: ignore[index]
            env.reset()


def test_a_refused_learner_action_leaves_the_env_as_it_was() -> None:
    env = UnoVecEnv(4, seed=3)
    env.reset()
    before = env.tables.state
    with pytest.raises(IllegalActionError):
        env.step(np.full(4, 79))
    after = env.tables.state
    for name in ("hands", "deck", "draw_pos", "current", "phase"):
        assert np.array_equal(getattr(before, name), getattr(after, name)), name
    env.step(env.action_masks().argmax(axis=1))


def test_the_catalogue_is_large_enough() -> None:
    assert len(CASES) + len(FAULTS) * 2 >= 30
