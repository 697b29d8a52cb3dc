"""Environment throughput: the AEC env, the VecEnv and MaskablePPO training, in one run.

Run ``python -m unolab.benchmarks.envs``. It measures, side by side on the same machine:

* **AEC turns/s**: ``uno_env.env()`` (with PettingZoo's wrappers) under random masked play
  (``agent_iter`` / ``last`` / a uniformly random legal action / ``step``; a new hand with
  ``reset`` when one ends), against RLCard 1.2.0's bare ``env.step`` loop
  (:func:`unolab.benchmarks.rlcard.rlcard_steps_per_second`);
* **VecEnv learner-steps/s** of :class:`~uno_env.envs.vec_env.UnoVecEnv` at several sizes,
  with a uniformly random legal learner and the default ``random`` opponents (each step
  includes the opponents' replies and the autoresets), against RLCard's loop and against the
  core's random legal play at the same batch size
  (:func:`unolab.benchmarks.core.engine_steps_per_second`, every seat random, no
  observations encoded), printed as ratios;
* **ShardedUnoVecEnv learner-steps/s** (``--sharded-workers``) at each VecEnv size, the same
  loop on :class:`~uno_env.envs.shared_vec_env.ShardedUnoVecEnv` with that many workers (your
  process and the others), with its observations shared as training takes them and copied
  as the env's default gives them, against ``UnoVecEnv`` at the same size;
* **MaskablePPO ``.learn()`` steps/s** on ``UnoVecEnv(n)`` and on a zero-cost dummy VecEnv
  with the same spaces and masks (the ceiling set by PPO itself), both under ``VecMonitor``,
  with the same settings (default: n_steps 128, batch 8192, 4 epochs, one torch thread).

Each figure is the median of its repeats; the repeats of the different figures are
interleaved so that load on a shared machine hits them alike. A table and a JSON line are
printed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from stable_baselines3.common.vec_env import VecEnv, VecMonitor
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices, VecEnvStepReturn

from uno_env.console import run_main
from uno_env.envs.pettingzoo_env import env as make_aec_env
from uno_env.envs.shared_vec_env import ShardedUnoVecEnv
from uno_env.envs.vec_env import MaskedVecEnv, UnoVecEnv
from uno_env.rules import Rules
from uno_env.sampling import uniform_legal_actions
from unolab.benchmarks.core import engine_steps_per_second
from unolab.benchmarks.options import (
    MAX_BATCH,
    add_speed_options,
    int_in_range,
    parse_speed_args,
)
from unolab.benchmarks.rlcard import rlcard_peer

__all__ = [
    "ZeroCostVecEnv",
    "aec_turns_per_second",
    "build_parser",
    "main",
    "ppo_steps_per_second",
    "vec_steps_per_second",
]


def aec_turns_per_second(rules: Rules, seconds: float, seed: int = 0) -> float:
    """Random masked play through ``uno_env.env()``; return decisions per second.

    Only decisions are counted (not the ``step(None)`` of agents whose hand is over), but the
    timed window contains everything a rollout loop does: ``last()``, the choice, ``step``,
    the end-of-hand bookkeeping and ``reset``.
    """
    aec = make_aec_env(rules)
    rng = np.random.default_rng(seed)
    aec.reset(seed=seed)
    turns = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for agent in aec.agent_iter():
            obs, _, terminated, truncated, _ = aec.last()
            if terminated or truncated:
                aec.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            aec.step(int(legal[rng.integers(legal.size)]))
            turns += 1
            del agent
        if time.perf_counter() >= deadline:
            break
        aec.reset()
    return turns / (time.perf_counter() - start)


def vec_steps_per_second(
    rules: Rules, num_envs: int, seconds: float, seed: int = 0, vec: MaskedVecEnv | None = None
) -> float:
    """Random masked learners on ``UnoVecEnv(num_envs)`` (or on ``vec``, an env of that size
    and rules, dealt again from ``seed``); return learner-steps per second."""
    if vec is None:
        vec = UnoVecEnv(num_envs, rules, seed=seed)
    else:
        vec.seed(seed)
    rng = np.random.default_rng(seed)
    vec.reset()
    vec.step(uniform_legal_actions(vec.action_masks(), rng))  # warm-up
    steps = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        vec.step(uniform_legal_actions(vec.action_masks(), rng))
        steps += num_envs
    return steps / (time.perf_counter() - start)


class ZeroCostVecEnv(VecEnv):
    """A VecEnv that costs nothing: fixed observations and masks, zero rewards, no ends.

    It has the spaces of the env it imitates, so a policy trained on it does exactly the
    work of one trained on the real env, minus the env: its PPO throughput is the ceiling.

    Args:
        template: The env whose spaces, first observations and masks are copied.
    """

    def __init__(self, template: UnoVecEnv) -> None:
        self.render_mode = None
        self._obs = template.reset()
        self._masks = template.action_masks()
        self._rewards = np.zeros(template.num_envs, dtype=np.float32)
        self._dones = np.zeros(template.num_envs, dtype=bool)
        self._infos: list[dict[str, Any]] = [{} for _ in range(template.num_envs)]
        super().__init__(template.num_envs, template.observation_space, template.action_space)

    def reset(self) -> npt.NDArray[np.float32]:
        """The fixed observations."""
        return self._obs

    def step_async(self, actions: np.ndarray) -> None:
        """Ignore the actions."""

    def step_wait(self) -> VecEnvStepReturn:
        """The fixed observations, zero rewards, no dones."""
        return self._obs, self._rewards, self._dones, self._infos

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """The fixed masks."""
        return self._masks

    def close(self) -> None:
        """Nothing to release."""

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The attribute, once per requested env."""
        return [getattr(self, attr_name) for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set the attribute."""
        setattr(self, attr_name, value)

    def env_method(
        self,
        method_name: str,
        *method_args: Any,
        indices: VecEnvIndices = None,
        **method_kwargs: Any,
    ) -> list[Any]:
        """``action_masks`` per env (as ``UnoVecEnv`` does); other methods once per env."""
        idx = list(self._get_indices(indices))
        if method_name == "action_masks":
            return list(self._masks[idx])
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        return [result for _ in idx]

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        """Not wrapped."""
        return [False for _ in self._get_indices(indices)]


def _make_ppo(venv: VecEnv, n_steps: int, batch_size: int, n_epochs: int, seed: int) -> Any:
    from sb3_contrib import MaskablePPO

    return MaskablePPO(
        "MlpPolicy",
        VecMonitor(venv),
        n_steps=n_steps,
        batch_size=batch_size,
        n_epochs=n_epochs,
        seed=seed,
        device="cpu",
        verbose=0,
    )


def ppo_steps_per_second(model: Any, iterations: int) -> float:
    """Time ``model.learn`` over ``iterations`` rollouts + updates; return env-steps/s."""
    steps = iterations * model.n_steps * model.n_envs
    start = time.perf_counter()
    model.learn(total_timesteps=steps, reset_num_timesteps=False)
    return steps / (time.perf_counter() - start)


def _median_row(label: str, rates: Sequence[float]) -> tuple[str, float, str]:
    return label, statistics.median(rates), ", ".join(f"{r:,.0f}" for r in rates)


def build_parser(prog: str = "python -m unolab.benchmarks.envs") -> argparse.ArgumentParser:
    """The benchmark's options; every numeric one is checked by argparse (one line, exit 2).

    Args:
        prog: The command shown in the usage line (``uno-lab bench envs`` passes its own).
    """
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    add_speed_options(parser)
    parser.add_argument(
        "--vec-sizes",
        type=int_in_range(1, MAX_BATCH),
        nargs="+",
        default=[1, 64, 256],
        help=f"UnoVecEnv sizes, each 1-{MAX_BATCH:,}",
    )
    parser.add_argument(
        "--no-core",
        action="store_true",
        help="skip the core's random play at each VecEnv size (the VecEnv's peer)",
    )
    parser.add_argument(
        "--sharded-workers",
        type=int_in_range(2, 256),
        nargs="+",
        default=[],
        help="also time ShardedUnoVecEnv with these worker counts (each 2-256) at each size",
    )
    parser.add_argument("--no-ppo", action="store_true", help="skip the MaskablePPO figures")
    parser.add_argument(
        "--ppo-envs", type=int_in_range(1, MAX_BATCH), default=256, help="envs of the PPO figures"
    )
    # SB3's PPO needs a rollout buffer and a minibatch of at least 2 samples.
    parser.add_argument(
        "--ppo-n-steps",
        type=int_in_range(2, 100_000),
        default=128,
        help="rollout steps per env (>= 2)",
    )
    parser.add_argument(
        "--ppo-batch", type=int_in_range(2, 1_000_000), default=8192, help="minibatch (>= 2)"
    )
    parser.add_argument("--ppo-epochs", type=int_in_range(1, 1000), default=4, help="epochs (>= 1)")
    parser.add_argument(
        "--ppo-iterations",
        type=int_in_range(1, 1000),
        default=2,
        help="timed rollouts per repeat (>= 1)",
    )
    parser.add_argument(
        "--ppo-repeats",
        type=int_in_range(1, 1000),
        default=2,
        help="repeats of the PPO figures (>= 1)",
    )
    return parser


def _sharded_label(workers: int, n: int, shared: bool) -> str:
    return f"Sharded w={workers} n={n} {'shared' if shared else 'copied'}"


def _time_envs(
    args: argparse.Namespace,
    rules: Rules,
    rlcard: Callable[[float, int], float] | None,
    sharded: dict[tuple[int, int, bool], ShardedUnoVecEnv],
    samples: dict[str, list[float]],
) -> None:
    """Every figure but PPO's, their repeats interleaved, into ``samples`` by label."""
    per_figure = args.seconds / args.repeats
    for rep in range(args.repeats):
        seed = args.seed + rep
        if rlcard is not None:
            samples.setdefault("RLCard 1.2.0 env.step loop", []).append(rlcard(per_figure, seed))
        samples.setdefault("AEC env() turns", []).append(
            aec_turns_per_second(rules, per_figure, seed)
        )
        for n in args.vec_sizes:
            samples.setdefault(f"UnoVecEnv n={n} learner-steps", []).append(
                vec_steps_per_second(rules, n, per_figure, seed)
            )
            if not args.no_core:
                samples.setdefault(f"core B={n} random play", []).append(
                    engine_steps_per_second(rules, n, per_figure, seed)
                )
            for (workers, size, shared), env in sharded.items():
                if size == n:
                    samples.setdefault(_sharded_label(workers, n, shared), []).append(
                        vec_steps_per_second(rules, n, per_figure, seed, env)
                    )


def main(
    argv: Sequence[str] | None = None, *, prog: str = "python -m unolab.benchmarks.envs"
) -> dict[str, float]:
    """Time the envs (and RLCard, the peer), and PPO on UnoVecEnv; print a table and a JSON line; return the figures (``argv``: the options,
    default the command line; ``prog``: the command named in the usage and error lines)."""
    args, rules = parse_speed_args(build_parser(prog), argv)

    samples: dict[str, list[float]] = {}
    rlcard = rlcard_peer(args.no_rlcard)
    sharded = {  # started once: a worker process takes a second or two to start
        (workers, n, shared): ShardedUnoVecEnv(
            n, rules, seed=args.seed, num_workers=workers, shared_observations=shared
        )
        for workers in args.sharded_workers
        for n in args.vec_sizes
        if workers <= n
        for shared in (True, False)
    }
    try:
        _time_envs(args, rules, rlcard, sharded, samples)
    finally:
        for env in sharded.values():
            env.close()
    if not args.no_ppo:
        template = UnoVecEnv(args.ppo_envs, rules, seed=args.seed)
        models = {
            "PPO on zero-cost VecEnv": _make_ppo(
                ZeroCostVecEnv(template), args.ppo_n_steps, args.ppo_batch, args.ppo_epochs, 0
            ),
            f"PPO on UnoVecEnv n={args.ppo_envs}": _make_ppo(
                UnoVecEnv(args.ppo_envs, rules, seed=args.seed),
                args.ppo_n_steps,
                args.ppo_batch,
                args.ppo_epochs,
                0,
            ),
        }
        for model in models.values():  # warm-up: one rollout + update each
            ppo_steps_per_second(model, 1)
        for _ in range(args.ppo_repeats):
            for label, model in models.items():
                samples.setdefault(label, []).append(
                    ppo_steps_per_second(model, args.ppo_iterations)
                )

    rows = [_median_row(label, rates) for label, rates in samples.items()]
    medians = {label: median for label, median, _ in rows}
    figures: dict[str, float] = {}
    peer = medians.get("RLCard 1.2.0 env.step loop")
    if peer is not None:
        figures["rlcard_steps_per_s"] = peer
    figures["aec_turns_per_s"] = medians["AEC env() turns"]
    if peer is not None:
        figures["aec_vs_rlcard"] = figures["aec_turns_per_s"] / peer
    for n in args.vec_sizes:
        vec = figures[f"vec_n{n}_steps_per_s"] = medians[f"UnoVecEnv n={n} learner-steps"]
        if peer is not None:
            figures[f"vec_n{n}_vs_rlcard"] = vec / peer
        if not args.no_core:
            core = figures[f"core_B{n}_steps_per_s"] = medians[f"core B={n} random play"]
            figures[f"vec_n{n}_vs_core"] = vec / core
        for workers, size, shared in sharded:
            if size == n:
                key = f"sharded_w{workers}_n{n}_{'shared' if shared else 'copied'}"
                rate = figures[f"{key}_steps_per_s"] = medians[_sharded_label(workers, n, shared)]
                figures[f"{key}_vs_vec"] = rate / vec
    if not args.no_ppo:
        dummy = medians["PPO on zero-cost VecEnv"]
        real = medians[f"PPO on UnoVecEnv n={args.ppo_envs}"]
        figures["ppo_dummy_steps_per_s"] = dummy
        figures["ppo_uno_steps_per_s"] = real
        figures["ppo_uno_vs_dummy"] = real / dummy

    print(
        f"Env throughput, {rules.num_players} players, rules {args.rules!r}; "
        f"PPO: n_steps {args.ppo_n_steps}, batch {args.ppo_batch}, {args.ppo_epochs} epochs, "
        "1 torch thread"
    )
    print(f"{'figure':<34}{'per second (median)':>20}   repeats")
    for label, median, reps in rows:
        print(f"{label:<34}{median:>20,.0f}   [{reps}]")
    if peer is not None:
        print(f"AEC vs RLCard: {figures['aec_vs_rlcard']:.2f}x")
    for n in args.vec_sizes:
        against = [
            f"{figures[key]:.2f}x {label}"
            for key, label in (
                (f"vec_n{n}_vs_rlcard", "RLCard"),
                (f"vec_n{n}_vs_core", f"core B={n}"),
            )
            if key in figures
        ]
        if against:
            print(f"UnoVecEnv n={n} vs " + ", vs ".join(against))
        for workers, size, shared in sharded:
            if size == n:
                key = f"sharded_w{workers}_n{n}_{'shared' if shared else 'copied'}_vs_vec"
                print(
                    f"ShardedUnoVecEnv {workers} workers, n={n}, observations "
                    f"{'shared' if shared else 'copied'}: {figures[key]:.2f}x UnoVecEnv n={n}"
                )
    if not args.no_ppo:
        print(f"PPO on UnoVecEnv vs zero-cost ceiling: {figures['ppo_uno_vs_dummy']:.2f}x")
    print(json.dumps({k: round(v, 3) for k, v in figures.items()}))
    return figures


if __name__ == "__main__":
    run_main(main, "python -m unolab.benchmarks.envs")
