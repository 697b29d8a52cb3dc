"""Golden results: fixed seeds, and the games and ratings they produce.

The figures in ``tests/golden/golden.json`` are fixed: they must never change unless the
rules or a bot change on purpose; then regenerate them with
``python tests/test_golden.py --write`` and say why in the commit.
They cover the three batched play paths (evaluation, tournaments, the envs' opponent
tables), the AEC env, and the ratings a tournament computes from its games.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

GOLDEN = Path(__file__).resolve().parent / "golden" / "golden.json"


def _digest(*arrays: npt.ArrayLike) -> str:
    h = hashlib.sha256()
    for array in arrays:
        a = np.ascontiguousarray(np.asarray(array))
        h.update(str(a.dtype).encode())
        h.update(str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()[:24]


def _opponents(names: list[str], seed: int) -> list[Any]:
    """Opponent policies for the learner envs, built from bot names."""
    from unolab.agents import make_agent

    return [make_agent(name, seed + i) for i, name in enumerate(names)]


def _named_opponents(names: list[str]) -> Any:
    """Opponents given by bot name, resolved (and then seeded by the env) by ``agents``."""
    from unolab.agents import resolve_opponents  # the envs take policies, not names

    return resolve_opponents(names)


def _arena_cases() -> dict[str, Any]:
    from uno_env import load_rules
    from unolab.agents import make_agent
    from unolab.agents.arena import evaluate_vs, play_games

    out: dict[str, Any] = {}
    for preset, players, names, batch in (
        ("official", 2, ["random", "mixbot"], 64),
        ("official", 4, ["random", "greedy_points", "card_ranking", "random_any"], 4096),
        ("street", 3, ["mixbot", "random", "mixbot"], 50),
        ("seven_zero", 4, ["random", "random", "mixbot", "card_ranking"], 128),
    ):
        rules = load_rules(preset, num_players=players)
        policies = [make_agent(name, 7 + i) for i, name in enumerate(names)]
        res = play_games(rules, policies, 300, seed=5, batch_size=batch, progress=False)
        out[f"play_games/{preset}/{players}p"] = {
            "wins": res.wins().tolist(),
            "turns": int(res.turns.sum()),
            "digest": _digest(res.winners, res.turns, res.truncated, res.rewards, res.points),
        }
    rules = load_rules("official", num_players=3)
    ev = evaluate_vs(rules, make_agent("card_ranking"), "random", 600, seed=3, progress=False)
    out["evaluate_vs/official/3p"] = ev.to_dict()
    return out


def _tournament_cases(tmp: Path) -> dict[str, Any]:
    from unolab.tournament.config import load_config
    from unolab.tournament.runner import run_tournament

    out: dict[str, Any] = {}
    for name, extra in (
        ("rr2", {"participants": ["random", "greedy_points", "mixbot"], "num_players": 2}),
        (
            "gauntlet4",
            {
                "format": "gauntlet",
                "candidate": "mixbot",
                "participants": ["random", "card_ranking", "random_any"],
                "num_players": 4,
                "rules": "street",
            },
        ),
    ):
        data = {
            "name": name,
            "deal_sets": 30,
            "games_per_chunk": 40,
            "bootstrap": 50,
            "seed": 11,
            "output_dir": str(tmp),
            **extra,
        }
        summary = run_tournament(load_config(data), progress=False, plots=False, print_table=False)
        # Ratings are fitted numerically: their last bits vary with the numpy/BLAS build, so
        # they are compared to 9 significant digits (the games themselves are hashed exactly).
        summary = _rounded(json.loads(json.dumps(summary)))
        for key in ("run", "config"):
            summary.pop(key, None)
        lines = sorted((tmp / name / "games.jsonl").read_text().splitlines())
        out[f"tournament/{name}"] = {
            "games": hashlib.sha256("\n".join(lines).encode()).hexdigest()[:24],
            "num_games": len(lines),
            "summary": hashlib.sha256(json.dumps(summary, sort_keys=True).encode()).hexdigest()[
                :24
            ],
            "leaderboard": summary.get("leaderboard"),
        }
    return out


def _rounded(value: Any) -> Any:
    """``value`` with every float rounded to 9 significant digits, recursively."""
    if isinstance(value, float):
        return float(f"{value:.9g}")
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_rounded(item) for item in value]
    return value


def _env_cases() -> dict[str, Any]:
    from uno_env import load_rules
    from uno_env.envs.gym_env import UnoGymEnv
    from uno_env.envs.opponents import OpponentPool
    from uno_env.envs.vec_env import UnoVecEnv
    from uno_env.sampling import uniform_legal_actions

    out: dict[str, Any] = {}
    rng = np.random.default_rng(1)
    rules = load_rules("official", num_players=3)
    for label, opponents in (
        ("random", _opponents(["random"], 0)[0]),
        ("list", _opponents(["mixbot", "random"], 0)),
        ("pool", OpponentPool(_opponents(["random", "card_ranking", "mixbot"], 0), [1, 2, 1])),
        ("default", None),
        ("named", _named_opponents(["random", "random"])),
        ("named_pool", OpponentPool(_named_opponents(["random", "mixbot"]), [3, 1])),
    ):
        vec = UnoVecEnv(8, rules=rules, opponents=opponents, seed=4)
        obs = vec.reset()
        parts: list[npt.ArrayLike] = [obs]
        for _ in range(150):
            actions = uniform_legal_actions(vec.action_masks(), rng)
            obs, rewards, dones, _infos = vec.step(actions)
            parts += [obs, rewards, dones]
        out[f"vec_env/{label}"] = _digest(*parts)
        vec.close()
    gym_env = UnoGymEnv(rules="street", num_players=4, opponents=_opponents(["mixbot"] * 3, 9))
    gym_obs, _ = gym_env.reset(seed=2)
    gparts: list[npt.ArrayLike] = [gym_obs]
    total = 0.0
    for _ in range(400):
        mask = gym_env.action_masks()
        action = int(uniform_legal_actions(mask[None], rng)[0])
        gym_obs, reward, terminated, truncated, _ = gym_env.step(action)
        total += float(reward)
        gparts.append(gym_obs)
        if terminated or truncated:
            gym_obs, _ = gym_env.reset()
            gparts.append(gym_obs)
    out["gym_env/street/4p"] = {"digest": _digest(*gparts), "reward": round(total, 6)}
    from uno_env import env as aec_env

    aec = aec_env(rules="official", num_players=2)
    aec.reset(seed=3)
    aparts: list[npt.ArrayLike] = []
    for _agent in aec.agent_iter(max_iter=500):
        observation, reward, termination, truncation, _ = aec.last()
        aparts += [observation["observation"], np.float32(reward)]
        if termination or truncation:
            aec.step(None)
            continue
        legal = observation["action_mask"]
        aec.step(int(uniform_legal_actions(legal[None].astype(bool), rng)[0]))
    out["aec_env/official/2p"] = _digest(*aparts)
    return out


def compute_golden(tmp: Path) -> dict[str, Any]:
    """Every golden figure, computed now."""
    return {**_arena_cases(), **_tournament_cases(tmp), **_env_cases()}


def test_golden_games_and_ratings(tmp_path: Path) -> None:
    want = json.loads(GOLDEN.read_text())
    got = json.loads(json.dumps(compute_golden(tmp_path)))
    assert set(got) == set(want)
    for key in want:
        assert got[key] == want[key], key


if __name__ == "__main__":
    import tempfile

    # Run as a script, tests/ comes first on sys.path, where tests/agents would hide the
    # agents package: put the repository root first.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

    if "--write" not in sys.argv:
        sys.exit(
            "usage: python tests/test_golden.py --write  (re-records tests/golden/golden.json)"
        )
    with tempfile.TemporaryDirectory() as tmp:
        figures = compute_golden(Path(tmp))
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}")
