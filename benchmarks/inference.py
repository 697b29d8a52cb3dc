"""How much the search's determinizations know about the hidden hands.

``python -m unolab.benchmarks.inference`` plays games between bots (``--bot`` at every seat) and
stops at positions along the way (a seat about to play a card). At each it samples K
determinizations from the acting seat's view, as the search does
(:func:`unolab.agents.inference.sample_deals`), once per inference variant: the public facts
(``lack_facts``: none, the facts counted from the draws, and those with "no wild") with and
without the choice weights. For every other seat and every card face it compares the
weighted share of deals that give the seat that face with whether the seat really holds it,
and reports:

* the **Brier score** (mean squared error of those shares; 0 would be knowing the hands);
* the **log loss** (shares clipped to [1e-4, 1 - 1e-4]);
* a **reliability table**: in each tenth of the predicted share, the mean predicted and the
  observed frequency. A calibrated posterior has them equal.

The variant ``none`` without weights knows the hand sizes only, the baseline the public
record improves on. The real hands are read to score the shares and for nothing else.
Prints a table and writes JSON with ``--out``; docs/search.md quotes the figures.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from uno_env import cards as C
from uno_env import core
from uno_env.console import run_main
from uno_env.core import PLAY
from uno_env.play import Round, play_tables
from uno_env.policy import Policy
from uno_env.rng import derive_keys
from uno_env.rules import Rules, load_rules
from unolab.agents.bots import PLAIN_BOTS
from unolab.agents.inference import sample_deals
from unolab.agents.registry import make_agent
from unolab.benchmarks.options import add_out_option, check_out_option, int_in_range, write_figures

__all__ = [
    "VARIANTS",
    "InferenceScore",
    "build_parser",
    "hand_shares",
    "inference_scores",
    "main",
    "positions",
]

VARIANTS: tuple[tuple[str, bool], ...] = (
    ("none", False),
    ("drawn", False),
    ("drawn", True),
    ("drawn_wild", False),
    ("drawn_wild", True),
)
"""The (lack_facts, weigh_choices) pairs measured by default; ("drawn", True) is the search's."""
_CLIP = 1e-4
"""Shares are clipped to [_CLIP, 1 - _CLIP] for the log loss."""


@dataclass(frozen=True)
class InferenceScore:
    """How well one inference variant's shares predict the real hands."""

    lack_facts: str
    weigh_choices: bool
    predictions: int
    """(position, other seat, face) triples scored."""
    brier: float
    log_loss: float
    reliability: tuple[tuple[float, float, int], ...]
    """Per tenth of the predicted share: (mean predicted, observed frequency, count)."""

    @property
    def label(self) -> str:
        """``lack_facts``, with ``+weights`` when the choices are weighed."""
        return self.lack_facts + ("+weights" if self.weigh_choices else "")


def positions(
    rules: Rules, bot: str, games: int, seed: int, every: int = 6, share: float = 0.25
) -> list[core.UnoState]:
    """Positions from ``games`` games of ``bot`` at every seat: a seat about to play a card.

    Every ``every`` rounds of play, each live game in that phase is taken with probability
    ``share``, so that a game gives a few positions from its whole length.
    """
    rng = np.random.default_rng(seed)
    players: list[Policy | None] = [
        make_agent(bot, seed + seat) for seat in range(rules.num_players)
    ]
    lineups = np.tile(np.arange(rules.num_players, dtype=np.int64), (games, 1))
    taken: list[core.UnoState] = []
    rounds = 0

    def take(turn: Round) -> None:
        nonlocal rounds
        rounds += 1
        if rounds % every == 0:
            state = turn.state
            ready = (turn.acting >= 0) & (state.phase == PLAY)
            ready &= rng.random(state.batch_size) < share
            if ready.any():
                taken.append(state.select(np.flatnonzero(ready)))

    play_tables(rules, players, lineups, derive_keys(seed, games), on_round=take)
    return taken


def hand_shares(
    rules: Rules,
    state: core.UnoState,
    keys: npt.NDArray[np.uint64],
    lack_facts: str,
    weigh_choices: bool,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """Each other seat's predicted chance of holding each face, and whether it does.

    Args:
        rules: The rules of the games.
        state: B live games; the acting seat of each is the observer.
        keys: (B, K) keys of the determinizations.
        lack_facts: As :func:`unolab.agents.inference.sample_deals`.
        weigh_choices: As :func:`unolab.agents.inference.sample_deals`.

    Returns:
        (B, N - 1, 54) weighted shares of the deals that give the seat the face, and the
        (B, N - 1, 54) truth, the other seats in seat order.
    """
    n_games, per_game = keys.shape
    seats = state.current.astype(np.int64)
    dets, weights = sample_deals(
        rules, state, seats, keys, lack_facts=lack_facts, weigh_choices=weigh_choices
    )
    others = np.array([[k for k in range(rules.num_players) if k != s] for s in seats])
    rows = np.arange(n_games)[:, None]
    held = (dets.hands > 0).reshape(n_games, per_game, rules.num_players, C.NUM_FACES)
    held_others = held[rows, :, others]  # (B, N - 1, K, 54)
    share = np.einsum("bokf,bk->bof", held_others.astype(np.float64), weights / per_game)
    return share, state.hands[rows, others] > 0


def inference_scores(
    rules: Rules,
    bot: str,
    games: int,
    deals: int,
    seed: int,
    variants: Sequence[tuple[str, bool]] = VARIANTS,
) -> list[InferenceScore]:
    """Score each variant on the same positions and the same keys (module docstring)."""
    rng = np.random.default_rng(seed + 1)
    shares: dict[tuple[str, bool], list[npt.NDArray[np.float64]]] = {v: [] for v in variants}
    truths = []
    for state in positions(rules, bot, games, seed):
        keys = rng.integers(0, 2**63, size=(state.batch_size, deals), dtype=np.uint64)
        for lack_facts, weigh in variants:
            share, truth = hand_shares(rules, state, keys, lack_facts, weigh)
            shares[(lack_facts, weigh)].append(share.reshape(-1))
        truths.append(truth.reshape(-1))
    observed = np.concatenate(truths).astype(np.float64)
    scores = []
    for (lack_facts, weigh), parts in shares.items():
        predicted = np.concatenate(parts)
        clipped = np.clip(predicted, _CLIP, 1 - _CLIP)
        log_loss = -np.mean(observed * np.log(clipped) + (1 - observed) * np.log(1 - clipped))
        tenth = np.clip((predicted * 10).astype(np.int64), 0, 9)
        reliability = tuple(
            (float(predicted[tenth == b].mean()), float(observed[tenth == b].mean()), int(n))
            for b in range(10)
            if (n := int((tenth == b).sum()))
        )
        scores.append(
            InferenceScore(
                lack_facts=lack_facts,
                weigh_choices=weigh,
                predictions=int(predicted.size),
                brier=float(np.mean((predicted - observed) ** 2)),
                log_loss=float(log_loss),
                reliability=reliability,
            )
        )
    return scores


def build_parser(prog: str = "python -m unolab.benchmarks.inference") -> argparse.ArgumentParser:
    """The command line of the inference benchmark."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int_in_range(2, 10), default=4)
    parser.add_argument("--bot", choices=list(PLAIN_BOTS), default="random",
                        help="the bot at every seat (default: random)")  # fmt: skip
    parser.add_argument("--games", type=int_in_range(1, 100_000), default=500,
                        help="games played for positions (default 500)")  # fmt: skip
    parser.add_argument("--deals", type=int_in_range(1, 4096), default=256,
                        help="determinizations per position (default 256)")  # fmt: skip
    parser.add_argument("--seed", type=int_in_range(0, 2**63 - 1), default=11)
    add_out_option(parser)
    return parser


def main(
    argv: Sequence[str] | None = None, prog: str = "python -m unolab.benchmarks.inference"
) -> int:
    """Run the benchmark; print the table (and write JSON with ``--out``)."""
    args = build_parser(prog).parse_args(argv)
    check_out_option(args.out)  # before minutes of play, not after them
    rules = load_rules("official", num_players=args.players)
    start = time.perf_counter()
    scores = inference_scores(rules, args.bot, args.games, args.deals, args.seed)
    print(
        f"{args.players} players, {args.bot} at every seat, {args.games} games, "
        f"{args.deals} deals per position, {scores[0].predictions:,} predictions "
        f"({time.perf_counter() - start:.0f} s)"
    )
    # How much of the baseline's error (hand sizes only) each variant removes.
    baseline = scores[0].brier
    print(f"{'inference':<20} {'Brier':>8} {'vs none':>8} {'log loss':>9}  predicted/observed")
    for score in scores:
        table = " ".join(f"{p:.2f}/{o:.2f}" for p, o, _ in score.reliability)
        gain = 100 * (baseline - score.brier) / baseline
        print(f"{score.label:<20} {score.brier:8.5f} {gain:7.1f}% {score.log_loss:9.5f}  {table}")
    result: dict[str, Any] = {
        "players": args.players,
        "bot": args.bot,
        "games": args.games,
        "deals": args.deals,
        "seed": args.seed,
        "scores": [
            {
                "lack_facts": s.lack_facts,
                "weigh_choices": s.weigh_choices,
                "predictions": s.predictions,
                "brier": s.brier,
                "log_loss": s.log_loss,
                "reliability": [list(r) for r in s.reliability],
            }
            for s in scores
        ],
    }
    write_figures(args.out, result)
    return 0


if __name__ == "__main__":
    run_main(main, "python -m unolab.benchmarks.inference")
