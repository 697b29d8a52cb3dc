"""The learner tables' compiled loop against the general path: same seed, same trajectories.

Opponents with a compiled form (the random baselines) are played inside one compiled call
per step; any other policy through the batched play loop. A subclass of a random bot acts
the same but has no compiled form (the registry lists exact classes), so it runs the very
same games through the general path: every observation, mask, reward, end flag and
terminal observation must agree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from uno_env.core import IllegalActionError
from uno_env.envs.gym_env import UnoGymEnv
from uno_env.envs.learner_tables import LearnerTables, TablesStoppedError
from uno_env.envs.opponents import OpponentPool
from uno_env.envs.vec_env import UnoVecEnv
from uno_env.learner_kernel import compiled_bot, generator_pointers, next_uniform
from uno_env.observation import OBS_DIM
from uno_env.policy import (
    PolicyFactory,
    RandomActionBot,
    RandomAnyBot,
    RandomBot,
    policy_name,
)
from uno_env.rules import load_rules
from uno_env.sampling import uniform_legal_actions


class PlainRandomBot(RandomBot):
    """``random``, played through the general path."""


class PlainRandomActionBot(RandomActionBot):
    """``random_action``, played through the general path."""


class PlainRandomAnyBot(RandomAnyBot):
    """``random_any``, played through the general path."""


PLAIN: dict[type, type] = {
    RandomBot: PlainRandomBot,
    RandomActionBot: PlainRandomActionBot,
    RandomAnyBot: PlainRandomAnyBot,
}


def factories(kinds: list[type], plain: bool) -> list[PolicyFactory]:
    """One factory per opponent seat, of the bot or of its general-path twin."""
    return [PolicyFactory(policy_name(kind), PLAIN[kind] if plain else kind) for kind in kinds]


def trajectory(tables: LearnerTables, steps: int, seed: int = 5) -> list[Any]:
    """Everything the tables hand out over ``steps`` random learner steps."""
    rng = np.random.default_rng(seed)
    out: list[Any] = [tables.reset().copy(), tables.action_masks().copy()]
    for _ in range(steps):
        if not tables.autoreset and tables.over.any():
            out.append(tables.reset().copy())
        result = tables.step(uniform_legal_actions(tables.action_masks(), rng))
        out += [
            result.observations.copy(),
            result.rewards,
            result.terminated,
            result.truncated,
            result.finished,
            result.terminal_observations.copy(),
            tables.action_masks().copy(),
            tables.learner_seats,
            tables.game_keys,
        ]
    return out


def assert_same(first: list[Any], second: list[Any]) -> None:
    assert len(first) == len(second)
    for i, (a, b) in enumerate(zip(first, second, strict=True)):
        np.testing.assert_array_equal(a, b, err_msg=f"item {i}")


CASES: list[tuple[str, dict[str, Any], Callable[[int], list[type]]]] = [
    ("official", {}, lambda n: [RandomBot] * (n - 1)),
    ("official 4p mixed", {"num_players": 4}, lambda n: [RandomBot, RandomActionBot, RandomAnyBot]),
    ("street 3p", {"preset": "street", "num_players": 3}, lambda n: [RandomBot] * (n - 1)),
    ("seven_zero 3p", {"preset": "seven_zero", "num_players": 3}, lambda n: [RandomBot] * 2),
    ("rlcard", {"preset": "rlcard"}, lambda n: [RandomActionBot]),
    ("short hands", {"max_turns": 12}, lambda n: [RandomAnyBot]),
    ("teams", {"num_players": 4, "teams": True}, lambda n: [RandomBot] * 3),
    (
        "house rules",
        {"num_players": 3, "jump_in": True, "stack_draw_two": True, "stack_draw_four": True},
        lambda n: [RandomBot, RandomAnyBot],
    ),
]


@pytest.mark.parametrize(("label", "spec", "lineup"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("num_games", [1, 7])
@pytest.mark.parametrize("autoreset", [True, False])
def test_compiled_and_general_paths_play_the_same_games(
    label: str,
    spec: dict[str, Any],
    lineup: Callable[[int], list[type]],
    num_games: int,
    autoreset: bool,
) -> None:
    del label
    rules = load_rules(spec)
    kinds = lineup(rules.num_players)
    runs = []
    for plain in (False, True):
        tables = LearnerTables(
            rules, num_games, factories(kinds, plain), autoreset=autoreset, seed=11
        )
        assert tables.compiled is not plain
        runs.append(trajectory(tables, 60))
    assert_same(*runs)


def test_one_policy_in_every_seat_and_the_default_opponents() -> None:
    rules = load_rules({"num_players": 4})
    compiled = LearnerTables(rules, 5, None, seed=3)
    general = LearnerTables(rules, 5, PolicyFactory("random", PlainRandomBot), seed=3)
    assert compiled.compiled and not general.compiled
    assert_same(trajectory(compiled, 50), trajectory(general, 50))
    # A policy object (not a factory) is used as it is, generator included.
    shared = LearnerTables(rules, 3, RandomBot(9), seed=4)
    plain = LearnerTables(rules, 3, PlainRandomBot(9), seed=4)
    assert shared.compiled
    assert_same(trajectory(shared, 50), trajectory(plain, 50))


def test_a_replaced_generator_is_followed() -> None:
    rules = load_rules(None)
    bots = [RandomBot(1), PlainRandomBot(1)]
    runs = []
    for bot in bots:
        tables = LearnerTables(rules, 4, bot, seed=2)
        first = trajectory(tables, 10)
        bot.rng = np.random.default_rng(77)  # the tables must draw from the new generator
        runs.append(first + trajectory(tables, 30))
    assert_same(*runs)


def test_which_opponents_are_compiled() -> None:
    rules = load_rules({"num_players": 3})
    assert LearnerTables(rules, 2, [RandomBot(0), RandomAnyBot(1)], seed=0).compiled
    assert not LearnerTables(rules, 2, [RandomBot(0), PlainRandomBot(1)], seed=0).compiled
    pool = OpponentPool([RandomBot(0), RandomActionBot(1)])
    assert not LearnerTables(rules, 2, pool, seed=0).compiled
    assert compiled_bot(RandomBot(0)) is not None
    assert compiled_bot(PlainRandomBot(0)) is None
    no_generator = RandomBot(0)
    no_generator.rng = None  # type: ignore[assignment]
    assert compiled_bot(no_generator) is None


def test_the_compiled_draw_is_the_generators_own() -> None:
    rng = np.random.default_rng(123)
    function, state = generator_pointers(rng)
    drawn = [next_uniform(function, state) for _ in range(5)]
    np.testing.assert_array_equal(drawn, np.random.default_rng(123).random(5))
    assert rng.random() == np.random.default_rng(123).random(6)[5]


def test_an_illegal_learner_action_changes_nothing() -> None:
    rules = load_rules(None)
    tables = LearnerTables(rules, 3, None, seed=0)
    tables.reset()
    assert tables.compiled
    before = tables.state
    masks = tables.action_masks()
    actions = uniform_legal_actions(masks, np.random.default_rng(0))
    illegal = int(np.flatnonzero(~masks[1])[0])
    actions[1] = illegal
    with pytest.raises(IllegalActionError, match="learner action refused: game 1"):
        tables.step(actions)
    after = tables.state
    for name, arr in before.array_fields().items():
        np.testing.assert_array_equal(arr, getattr(after, name), err_msg=name)
    actions[1] = 99
    with pytest.raises(IllegalActionError, match="out of range"):
        tables.step(actions)
    # Not stopped: the next legal step plays.
    tables.step(uniform_legal_actions(masks, np.random.default_rng(0)))


def test_handed_out_observations_are_never_overwritten() -> None:
    """SB3 stores the previous step's observations after the next step: each step's
    arrays must be new ones."""
    vec = UnoVecEnv(4, None, seed=0)
    handed: list[np.ndarray] = [vec.reset()]
    rng = np.random.default_rng(0)
    for _ in range(20):
        handed.append(np.asarray(vec.step(uniform_legal_actions(vec.action_masks(), rng))[0]))
    kept = [obs.copy() for obs in handed]
    for _ in range(5):
        vec.step(uniform_legal_actions(vec.action_masks(), rng))
    assert_same(handed, kept)
    assert len({id(obs) for obs in handed}) == len(handed)
    assert not vec.tables.action_masks().flags.writeable


def test_gym_env_runs_on_the_compiled_path() -> None:
    env = UnoGymEnv()
    twin = UnoGymEnv(opponents=PolicyFactory("random", PlainRandomBot))
    assert env.tables.compiled and not twin.tables.compiled
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        twin_obs, _ = twin.reset(seed=seed)
        np.testing.assert_array_equal(obs, twin_obs)
        rng = np.random.default_rng(seed)
        done = False
        while not done:
            action = int(uniform_legal_actions(env.action_masks()[None], rng)[0])
            obs, reward, terminated, truncated, _ = env.step(action)
            twin_obs, twin_reward, *_ = twin.step(action)
            np.testing.assert_array_equal(obs, twin_obs)
            assert reward == twin_reward
            done = terminated or truncated


@pytest.mark.parametrize("reward", ["win_loss", "points", "place"])
@pytest.mark.parametrize("learner_seat", ["random", 1])
def test_the_compiled_autoreset_pays_and_deals_as_the_general_path(
    reward: str, learner_seat: int | str
) -> None:
    """With a reward scheme it knows, the compiled loop pays the ended hands and deals the
    next ones itself; with another, the tables do it in Python: the same games either way."""
    rules = load_rules({"num_players": 3, "max_turns": 40})
    runs = []
    for kind in (RandomBot, PlainRandomBot):
        tables = LearnerTables(
            rules,
            6,
            PolicyFactory("random", kind),
            learner_seat=learner_seat,  # type: ignore[arg-type]
            reward=reward,
            seed=8,
        )
        runs.append(trajectory(tables, 120))
    assert_same(*runs)
    assert sum(item.size for item in runs[0][6::9]) > 10  # hands ended (``finished``)


@pytest.mark.parametrize("kind", [RandomBot, PlainRandomBot])
def test_too_many_silent_redeals_stop_the_tables(
    monkeypatch: pytest.MonkeyPatch, kind: type
) -> None:
    """A game whose hands keep ending before its learner decides is an error, on both paths."""
    monkeypatch.setattr("uno_env.envs.learner_tables.MAX_SILENT_REDEALS", 0)
    tables = LearnerTables(load_rules(None), 3, PolicyFactory("random", kind), seed=0)
    tables.reset()
    rng = np.random.default_rng(0)
    with pytest.raises(RuntimeError, match="hands in a row ended before the learner's first"):
        for _ in range(500):  # the first hand that ends is one deal too many
            tables.step(uniform_legal_actions(tables.action_masks(), rng))
    with pytest.raises(TablesStoppedError, match="RuntimeError"):
        tables.action_masks()
    tables.reset()


def test_an_interruption_when_hands_end_stops_the_compiled_tables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ctrl-C while the ended hands are dealt again, between two compiled calls (a reward
    scheme the compiled loop does not pay: the tables deal in Python)."""
    tables = LearnerTables(load_rules(None), 4, None, reward="points", seed=0)
    tables.reset()
    assert tables.compiled

    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    rng = np.random.default_rng(0)
    with monkeypatch.context() as patch:
        patch.setattr(tables, "_redeal", interrupted)
        with pytest.raises(KeyboardInterrupt):
            for _ in range(500):
                tables.step(uniform_legal_actions(tables.action_masks(), rng))
    with pytest.raises(TablesStoppedError, match="reset"):
        tables.action_masks()
    with pytest.raises(TablesStoppedError, match="reset"):
        tables.step(np.zeros(4, dtype=np.int64))
    tables.reset()
    tables.step(uniform_legal_actions(tables.action_masks(), rng))


@pytest.mark.parametrize("kind", [RandomBot, PlainRandomBot])
def test_a_step_can_write_into_given_arrays(kind: type) -> None:
    """``step(actions, out=...)`` (a shared block's rows) gives what a plain step gives."""
    rules = load_rules({"num_players": 3, "max_turns": 40})
    plain = LearnerTables(rules, 5, PolicyFactory("random", kind), seed=1)
    into = LearnerTables(rules, 5, PolicyFactory("random", kind), seed=1)
    plain.reset()
    into.reset()
    block = np.zeros((2, 5, OBS_DIM), dtype=np.float32)
    masks = np.zeros((5, 80), dtype=bool)
    rng = np.random.default_rng(0)
    ended = 0
    for i in range(80):
        actions = uniform_legal_actions(plain.action_masks(), rng)
        expected = plain.step(actions)
        got = into.step(actions, out=(block[i % 2], masks[:]))
        assert np.shares_memory(got.observations, block[i % 2])
        np.testing.assert_array_equal(block[i % 2], expected.observations)
        np.testing.assert_array_equal(masks, plain.action_masks())
        assert np.shares_memory(into.action_masks(), masks)
        assert not into.action_masks().flags.writeable
        np.testing.assert_array_equal(got.rewards, expected.rewards)
        np.testing.assert_array_equal(got.terminal_observations, expected.terminal_observations)
        ended += got.finished.size
    assert ended > 3
