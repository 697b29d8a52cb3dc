"""ShardedUnoVecEnv: the same games whatever the worker count, errors raised once in the
parent, clean shutdown, and SB3's learners on it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import numpy.typing as npt
import pytest

from uno_env.core import IllegalActionError
from uno_env.envs.opponents import OpponentPool
from uno_env.envs.shared_vec_env import (
    OpponentsRecipe,
    ShardedUnoVecEnv,
    WorkerError,
    shard_bounds,
    shard_seed,
)
from uno_env.envs.table_inputs import ResetNeededError
from uno_env.envs.vec_env import UnoVecEnv
from uno_env.policy import PolicyFactory, RandomAnyBot, RandomBot


def random_actions(masks: npt.NDArray[np.bool_], rng: np.random.Generator) -> np.ndarray:
    scores = rng.random(masks.shape)
    scores[~masks] = -1.0
    return scores.argmax(axis=1)


def trajectory(env: object, steps: int = 25) -> list[np.ndarray]:
    """Everything an env returns over ``steps`` steps of seeded random legal actions."""
    rng = np.random.default_rng(5)
    out = [env.reset().copy(), env.action_masks()]  # type: ignore[attr-defined]
    for _ in range(steps):
        obs, rewards, dones, infos = env.step(  # type: ignore[attr-defined]
            random_actions(env.action_masks(), rng)  # type: ignore[attr-defined]
        )
        out += [obs.copy(), rewards.copy(), dones.copy(), env.action_masks()]  # type: ignore[attr-defined]
        for game in np.flatnonzero(dones):
            out.append(infos[game]["terminal_observation"])
            out.append(np.array(infos[game]["TimeLimit.truncated"]))
    return out


def same(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def mixed_pool() -> OpponentPool:
    """A pool of two bots, built in each worker (a recipe's function must be module-level)."""
    return OpponentPool(
        [PolicyFactory(RandomBot.name, RandomBot), PolicyFactory(RandomAnyBot.name, RandomAnyBot)],
        [0.5, 0.5],
    )


def failing_pool() -> OpponentPool:
    raise ValueError("no such opponent: nobody")


class IllegalBot:
    """An opponent that always plays action 79, which is rarely legal."""

    name = "illegal"

    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.full(len(masks), 79, dtype=np.int64)

    def reset(self, games: np.ndarray | None = None) -> None:
        """Stateless."""


class SlowBot:
    """An opponent that thinks for a while, then plays its first legal action."""

    name = "slow"

    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        time.sleep(0.3)
        return masks.argmax(axis=1)

    def reset(self, games: np.ndarray | None = None) -> None:
        """Stateless."""


def test_ctrl_c_during_a_step_asks_for_a_reset_and_the_env_goes_on_after_it() -> None:
    env = ShardedUnoVecEnv(4, seed=1, num_workers=2, opponents=SlowBot(), learner_seat=0)
    try:
        env.reset()
        timer = threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            env.step(env.action_masks().argmax(axis=1))
        timer.join()
        with pytest.raises(ResetNeededError, match="interrupted in the middle of a step"):
            env.step(env.action_masks().argmax(axis=1))
        assert env.reset().shape[0] == 4  # the workers' unread answers are collected first
        env.step(env.action_masks().argmax(axis=1))
    finally:
        env.close()


def test_shards_cut_evenly_and_seeds_keep_the_first_shard() -> None:
    assert shard_bounds(10, 3) == [(0, 4), (4, 7), (7, 10)]
    assert shard_bounds(4, 4) == [(0, 1), (1, 2), (2, 3), (3, 4)]
    assert shard_seed(7, 0) == 7
    assert shard_seed(7, 4) != shard_seed(7, 5) != 7
    assert 0 <= shard_seed(2**63 - 1, 3) < 2**63


def test_one_two_and_three_workers_play_the_same_games() -> None:
    runs = []
    for workers in (1, 2, 3):
        env = ShardedUnoVecEnv(
            12,
            "official",
            opponents=OpponentsRecipe(mixed_pool),
            seed=11,
            num_workers=workers,
            num_shards=6,
        )
        try:
            assert env.worker_tables[0][0] == 0 and env.worker_tables[-1][1] == 12
            runs.append(trajectory(env))
        finally:
            env.close()
    assert same(runs[0], runs[1]) and same(runs[0], runs[2])
    assert any(np.any(x) for x in runs[0][3::4])  # some hand ended with a reward


def test_one_shard_plays_the_hands_of_the_in_process_env() -> None:
    env = ShardedUnoVecEnv(6, "official", seed=4, num_workers=1, learner_seat=1)
    try:
        assert same(trajectory(env), trajectory(UnoVecEnv(6, "official", seed=4, learner_seat=1)))
    finally:
        env.close()


def test_shared_observations_stay_valid_for_one_more_step_and_seed_restarts() -> None:
    env = ShardedUnoVecEnv(8, seed=2, num_workers=2, shared_observations=True)
    try:
        first = env.reset()
        kept = first.copy()
        rng = np.random.default_rng(0)
        second, *_ = env.step(random_actions(env.action_masks(), rng))
        assert np.array_equal(first, kept)  # the step wrote the other buffer
        assert not np.shares_memory(first, second)
        env.seed(2)
        assert np.array_equal(env.reset(), kept)  # the same seed deals the same hands
        masks = env.env_method("action_masks")
        assert len(masks) == 8 and np.array_equal(np.stack(masks), env.action_masks())
        order = [7, *range(7)]  # all the rows, in another order
        assert np.array_equal(
            np.stack(env.env_method("action_masks", indices=order)), env.action_masks()[order]
        )
        with pytest.raises(TypeError, match=r"action_masks takes no arguments, got \(1,\)"):
            env.env_method("action_masks", 1)
        with pytest.raises(ValueError, match="method_name: the env has no attribute 'nope'"):
            env.env_method("nope")
        with pytest.raises(TypeError, match="wrapper_class: expected a wrapper class"):
            env.env_is_wrapped("Monitor")  # type: ignore[arg-type]
        assert env.get_attr("num_workers", [0, 1]) == [2, 2]
        assert env.env_is_wrapped(object, 3) == [False]  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="cannot be set"):
            env.set_attr("rules", None)
    finally:
        env.close()


def test_an_illegal_learner_action_is_refused_before_any_worker_plays() -> None:
    env = ShardedUnoVecEnv(4, seed=3, num_workers=2)
    try:
        obs = env.reset()
        masks = env.action_masks()
        actions = masks.argmax(axis=1)
        actions[3] = int(np.flatnonzero(~masks[3])[0])
        with pytest.raises(IllegalActionError, match="env 3"):
            env.step(actions)
        actions[3] = masks[3].argmax()
        # Nothing was played: the same step from the same position gives what a fresh env gives.
        again = ShardedUnoVecEnv(4, seed=3, num_workers=2)
        try:
            assert np.array_equal(again.reset(), obs)
            assert np.array_equal(env.step(actions)[0], again.step(actions)[0])
        finally:
            again.close()
    finally:
        env.close()


def test_an_opponents_error_is_raised_once_and_stops_the_env_until_reset() -> None:
    env = ShardedUnoVecEnv(8, seed=0, num_workers=2, opponents=IllegalBot(), learner_seat=0)
    try:
        with pytest.raises(IllegalActionError, match="policy 'illegal'"):
            env.reset()
            for _ in range(50):
                env.step(env.action_masks().argmax(axis=1))
        with pytest.raises(ResetNeededError, match=r"stopped after an error.*call reset"):
            env.step(env.action_masks().argmax(axis=1))
    finally:
        env.close()


def test_a_recipe_that_fails_in_the_worker_raises_its_error_and_leaves_nothing() -> None:
    with pytest.raises(ValueError, match="no such opponent: nobody"):
        ShardedUnoVecEnv(4, num_workers=2, opponents=OpponentsRecipe(failing_pool))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_workers": 5}, "num_workers: expected an integer in 1..4, got 5"),
        ({"num_workers": 2, "num_shards": 1}, "num_shards: expected an integer in 2..4"),
        ({"start_method": "thread"}, "start_method: 'thread'"),
        ({"timeout": 0}, "timeout: expected a number of seconds > 0"),
    ],
)
def test_bad_arguments_name_themselves(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        ShardedUnoVecEnv(4, **kwargs)  # type: ignore[arg-type]


def test_a_dead_worker_is_one_clear_error_without_a_hang() -> None:
    env = ShardedUnoVecEnv(4, seed=0, num_workers=2, timeout=30)
    env.reset()
    victim = env._workers.processes[1]
    os.kill(victim.pid, signal.SIGKILL)
    victim.join(10)
    start = time.monotonic()
    with pytest.raises(WorkerError, match=r"worker 1 \(tables 2\.\.3\) exited with code -9"):
        env.step(env.action_masks().argmax(axis=1))
    assert time.monotonic() - start < 10
    assert env.closed
    with pytest.raises(ValueError, match="closed"):
        env.reset()
    env.close()  # twice is fine


def test_an_env_never_closed_is_shut_down_at_exit() -> None:
    script = textwrap.dedent(
        """
        from uno_env.envs.shared_vec_env import ShardedUnoVecEnv

        if __name__ == "__main__":
            env = ShardedUnoVecEnv(4, seed=0, num_workers=2)
            env.reset()
            print("pids", *[p.pid for p in env._workers.processes.values()], flush=True)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "leaked" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    pids = [int(p) for p in done.stdout.split()[1:]]
    time.sleep(0.5)
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
