"""A peer's algorithm on the lab's engine: OpenSpiel's ISMCTS against the lab's, same budgets.

``python -m unolab.benchmarks.openspiel_crosscheck`` plays, at 2 players and official rules,
on the same deals (keys from ``--seed``), with the searcher's seat alternated:

* OpenSpiel's own ``ISMCTSBot`` (its Python code, random rollouts, UCT with c = 2) on the
  ``python_uno`` game against the lab's ``random`` player (the UNO papers' random player);
* the same bot with the lab's ``fast`` heuristic as its rollout evaluator
  (``--rollouts fast``): the trees compared with the rollouts made equal, and a rollout of
  about 60 steps instead of about 1,200 (uniformly random play draws voluntarily and makes
  long hands);
* the lab's ``ismcts`` at the same iteration budget against ``random``.

It reports both win rates with Wilson 95% intervals and the median time per decision of each
searcher. Equal budgets should give strengths within their intervals of each other, or a
difference the two algorithms explain (the lab's tree shares statistics across the
determinizations and its rollouts play a heuristic, not uniformly random moves); a large
unexplained gap is a bug in one of the two. Results are written as JSON with ``--out``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from uno_env import Rules, load_rules
from uno_env.console import path_argument, run_main
from uno_env.core import hand_rewards
from uno_env.envs.openspiel_checks import INSTALL_HINT
from uno_env.files import check_writable_target, read_regular_text, write_atomically
from uno_env.observation import encode
from uno_env.play import Round, play_tables
from uno_env.rng import derive_keys
from unolab.agents import make_agent
from unolab.agents.arena import wilson_interval
from unolab.agents.progress import progress_bar
from unolab.agents.rollout import FAST_ROLLOUT, play_out
from unolab.benchmarks.options import int_in_range

__all__ = ["ROLLOUTS", "lab_ismcts", "main", "openspiel_ismcts"]


def _rate(wins: int, games: int) -> dict[str, float | int]:
    low, high = wilson_interval(wins, games)
    return {"games": games, "wins": wins, "win_rate": wins / games, "ci_low": low, "ci_high": high}


ROLLOUTS = ("random", "fast")
"""OpenSpiel's bot's evaluators: its own uniformly random rollouts, or the lab's heuristic."""


def _heuristic_evaluator(rules: Rules) -> Any:
    """An OpenSpiel MCTS evaluator: one rollout of the lab's compiled ``fast`` heuristic."""
    from open_spiel.python.algorithms import mcts

    class HeuristicRolloutEvaluator(mcts.Evaluator):
        def evaluate(self, state: Any) -> np.ndarray:
            final = play_out(rules, state.uno_state.copy(), FAST_ROLLOUT)
            return np.asarray(hand_rewards(rules, final)[0], dtype=np.float64)

        def prior(self, state: Any) -> list[tuple[int, float]]:
            legal = state.legal_actions()
            return [(action, 1.0 / len(legal)) for action in legal]

    return HeuristicRolloutEvaluator()


def openspiel_ismcts(
    keys: np.ndarray,
    iterations: int,
    seed: int,
    rollouts: str = "random",
    progress: bool = True,
    voluntary_draw: bool = True,
) -> dict[str, Any]:
    """OpenSpiel's ISMCTSBot against ``random`` on ``python_uno``, seats alternated.

    Args:
        keys: The deals.
        iterations: The bot's ``max_simulations``.
        seed: Seeds the bot and ``random``.
        rollouts: One of :data:`ROLLOUTS`.
        progress: Show a progress bar (plain lines off a terminal).
        voluntary_draw: The house rule: off, a seat draws only when nothing plays.
    """
    import pyspiel
    from open_spiel.python.algorithms import ismcts, mcts

    from uno_env.envs.openspiel_game import register
    from uno_env.envs.openspiel_state import key_actions

    register()
    game = pyspiel.load_game("python_uno", {"num_players": 2, "voluntary_draw": voluntary_draw})
    rules = load_rules("official", num_players=2, voluntary_draw=voluntary_draw)
    rng = np.random.RandomState(seed)
    evaluator = (
        mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng)
        if rollouts == "random"
        else _heuristic_evaluator(rules)
    )
    bot = ismcts.ISMCTSBot(game, evaluator, uct_c=2.0, max_simulations=iterations, random_state=rng)
    opponent = make_agent("random", seed)
    wins, seconds = 0, []
    label = f"openspiel ismcts {iterations} ({rollouts} rollouts)"
    with progress_bar(label, len(keys), unit="hands", enabled=progress) as bar:
        for game_no, key in enumerate(keys.tolist()):
            searcher = game_no % 2
            state = game.new_initial_state()
            for byte in key_actions(int(key)):
                state.apply_action(byte)
            while not state.is_terminal():
                player = state.current_player()
                if player == searcher:
                    start = time.perf_counter()
                    action = bot.step(state)
                    seconds.append(time.perf_counter() - start)
                else:
                    core_state = state.uno_state
                    mask = np.zeros((1, 80), dtype=bool)
                    mask[0, state.legal_actions()] = True
                    action = int(opponent.act(encode(rules, core_state), mask)[0])
                state.apply_action(action)
            wins += int(state.returns()[searcher] > 0)
            bar.advance()
    return {**_rate(wins, len(keys)), "median_ms_per_decision": 1000 * statistics.median(seconds)}


def lab_ismcts(
    keys: np.ndarray, iterations: int, seed: int, voluntary_draw: bool = True
) -> dict[str, Any]:
    """The lab's ``ismcts`` at ``iterations`` against ``random``, on the same deals."""
    return lab_agent(keys, f"ismcts:{iterations}", seed, voluntary_draw)


def lab_agent(
    keys: np.ndarray, spec: str, seed: int, voluntary_draw: bool = True
) -> dict[str, Any]:
    """A lab agent (by its registry spec) against ``random``, on the same deals."""
    rules = load_rules("official", num_players=2, voluntary_draw=voluntary_draw)
    searcher = make_agent(spec, seed)
    opponent = make_agent("random", seed)
    lineups = np.array([[0, 1] if g % 2 == 0 else [1, 0] for g in range(len(keys))])
    seconds: list[float] = []
    timer: dict[str, float] = {}

    def timed(turn: Round) -> None:  # the search's time per decision, per round
        now = time.perf_counter()
        if "last" in timer:
            searched = int(np.count_nonzero(turn.acting == 0))
            if searched:
                seconds.extend([(now - timer["last"]) / searched] * searched)
        timer["last"] = now

    out = play_tables(rules, [searcher, opponent], lineups, keys, on_error="raise", on_round=timed)
    seat = np.where(lineups[:, 0] == 0, 0, 1)
    wins = int(np.count_nonzero(out.winners == seat))
    return {
        **_rate(wins, len(keys)),
        "median_ms_per_decision": 1000 * statistics.median(seconds) if seconds else None,
        "note": "time per decision: a round's time shared by the rows where the agent acts",
    }


SEARCHERS = ("lab", "openspiel-random", "openspiel-fast")
"""``--searchers``: the lab's ismcts, OpenSpiel's bot with random or with heuristic rollouts."""
BASELINE = "random_any"
"""``--baseline``: the lab's bot uniform over the legal actions, a row of 0 iterations: what
a search with too few iterations to tell its actions apart plays like."""


def _run(
    searcher: str, keys: np.ndarray, budget: int, seed: int, voluntary_draw: bool
) -> dict[str, Any]:
    if searcher == "lab":
        return lab_ismcts(keys, budget, seed, voluntary_draw=voluntary_draw)
    rollouts = searcher.split("-", 1)[1]
    return openspiel_ismcts(keys, budget, seed, rollouts=rollouts, voluntary_draw=voluntary_draw)


def _row_key(row: dict[str, Any]) -> tuple[str, int, str]:
    return (row.get("rules", OFFICIAL), row["iterations"], row["searcher"])


OFFICIAL = "official"
NO_VOLUNTARY_DRAW = "official, voluntary_draw off"
"""The rules of a row: official, or official with the house rule that a seat draws only
when nothing plays (``--no-voluntary-draw``)."""


def _merged(path: Path | None, record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with the rows of an earlier run in ``path`` with the same seed kept (the
    searchers can run in parallel processes; the deals of a shorter run are the first deals
    of a longer one)."""
    if path is None or not path.exists():
        return record
    text = read_regular_text(path, 16 << 20, "--out")
    try:
        old = json.loads(text)
    except (ValueError, RecursionError):
        raise ValueError(f"--out {str(path)!r} is not JSON: give a new file") from None
    if not (isinstance(old, dict) and isinstance(old.get("results"), list)):
        raise ValueError(
            f"--out {str(path)!r} is not a cross-check record (no 'results' list): give a new file"
        )
    if old.get("seed") != record["seed"]:
        return record
    done = {_row_key(row) for row in record["results"]}
    kept = [row for row in old["results"] if _row_key(row) not in done]
    rows = sorted(kept + record["results"], key=_row_key)
    return {**record, "results": rows}


def _record(seed: int, rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "description": (
            "Searchers against the papers' random player at 2 players, on "
            "the same deals with the searcher's seat alternated; Wilson 95% intervals. "
            "lab: the lab's ismcts; openspiel-random: OpenSpiel's ISMCTSBot (uct_c 2) with "
            "its random rollouts; openspiel-fast: the same bot with the lab's fast heuristic "
            "as its rollout; random_any (0 iterations): the lab's bot uniform over the legal "
            "actions, no search. Rules: official, or official with voluntary draws off (a seat "
            "draws only when nothing plays). The deals of a row with fewer games are the first of the others'."
        ),
        "seed": seed,
        "date": datetime.date.today().isoformat(),
        "results": rows,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the cross-check; print a table and write (or add to) ``--out``."""
    parser = argparse.ArgumentParser(
        prog="python -m unolab.benchmarks.openspiel_crosscheck", description=__doc__
    )
    parser.add_argument(
        "--budgets",
        type=int_in_range(2, 100_000),
        nargs="+",
        default=[4, 16],
        help="iterations (OpenSpiel's bot needs 2 or more)",
    )
    parser.add_argument(
        "--searchers", choices=SEARCHERS, nargs="+", default=list(SEARCHERS), help="who searches"
    )
    parser.add_argument("--hands", type=int_in_range(2, 1_000_000), default=1000)
    parser.add_argument(
        "--no-voluntary-draw",
        action="store_true",
        help="the house rule: a seat draws only when nothing plays (both searchers)",
    )
    parser.add_argument("--seed", type=int_in_range(0, 2**62), default=3232)
    parser.add_argument(
        "--out",
        type=path_argument,
        default=None,
        help="write the results as JSON (rows of other "
        "searchers and budgets already there, on the same deals, are kept)",
    )
    parser.add_argument(
        "--baseline",
        action="store_true",
        help=f"also play {BASELINE} (uniform over the legal actions), as 0 iterations",
    )
    args = parser.parse_args(argv)
    if args.out is not None:  # checked before the games, not after the first row
        try:
            check_writable_target(args.out, "--out")
            _merged(args.out, _record(args.seed, []))
        except ValueError as err:
            parser.error(str(err))
    if any(searcher.startswith("openspiel") for searcher in args.searchers):
        try:
            import pyspiel  # noqa: F401
        except ImportError:
            print(f"{parser.prog}: {INSTALL_HINT}", file=sys.stderr)
            return 2
    keys = derive_keys(args.seed, args.hands)
    rows = []
    runs = [(budget, searcher) for budget in args.budgets for searcher in args.searchers]
    for budget, searcher in ([(0, BASELINE)] if args.baseline else []) + runs:
        if searcher == BASELINE:
            result = lab_agent(keys, BASELINE, args.seed, not args.no_voluntary_draw)
        else:
            result = _run(searcher, keys, budget, args.seed, not args.no_voluntary_draw)
        rules = NO_VOLUNTARY_DRAW if args.no_voluntary_draw else OFFICIAL
        rows.append({"rules": rules, "iterations": budget, "searcher": searcher, **result})
        if args.out is not None:  # after each row: a long run keeps what it finished
            record = _record(args.seed, rows)
            write_atomically(args.out, json.dumps(_merged(args.out, record), indent=2) + "\n")
        ms = result["median_ms_per_decision"]
        print(
            f"{budget:>6} iterations  {searcher:<17} {result['win_rate']:.1%} "
            f"[{result['ci_low']:.1%}, {result['ci_high']:.1%}]  "
            f"{'-' if ms is None else f'{ms:.2f} ms'} per decision",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    run_main(main, "python -m unolab.benchmarks.openspiel_crosscheck")
