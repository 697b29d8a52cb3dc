"""The summary of a tournament: everything ``summary.json`` holds, from the game records.

Everything but the ``run`` section (timing of this invocation) and the participants' own
reports (each leaderboard row's ``telemetry``: counts and latencies of a language model's
answers, over every chunk played) is a pure function of the games, computed on them sorted by ``(deal, seating, variant)``, so a run, a resumed run and a
run with more workers give the same summary. When the SPRT stopped a run, only the deal sets
up to the deciding one are used (games of later chunks already in flight are kept on disk
but left out, and counted).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from unolab.tournament.analysis import (
    GameTable,
    deal_set_scores,
    endings,
    pairwise_table,
    participant_stats,
    seat_advantage,
)
from unolab.tournament.config import TournamentConfig
from unolab.tournament.design import Schedule
from unolab.tournament.stats import (
    SprtResult,
    ab_variance,
    bootstrap_elo,
    openskill_ratings,
    score_to_elo,
    variance_reduction,
)

__all__ = ["build_summary"]


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _ab_section(table: GameTable, tables_of_deal: np.ndarray) -> dict[str, Any]:
    """Candidate (id 0, B) against incumbent (id 1, A) on the same deals and seats."""
    _, x = deal_set_scores(table, 0, 1)
    n = int(x.size)
    mean = float(x.mean()) if n else math.nan
    half = 1.96 * float(x.std(ddof=1)) / math.sqrt(n) if n >= 2 else math.nan
    diff = 2.0 * (mean - 0.5)
    return {
        "deal_sets": n,
        "score": _finite(mean),
        "score_low": _finite(mean - half),
        "score_high": _finite(mean + half),
        "score_diff": _finite(diff),
        "elo": _finite(score_to_elo(mean)) if n else None,
        "elo_low": _finite(score_to_elo(mean - half)) if n >= 2 else None,
        "elo_high": _finite(score_to_elo(mean + half)) if n >= 2 else None,
        "variance": ab_variance(table, 0, 1, tables_of_deal),
        "note": (
            "score = 0.5 + (B's mean game score - A's) / 2 per deal set, B the candidate "
            "and A the incumbent on the same deals and seats; 95% normal interval over deal "
            "sets; elo maps the score as if B had played A"
        ),
    }


def build_summary(
    config: TournamentConfig,
    schedule: Schedule,
    games: GameTable,
    sprt: SprtResult | None,
    stop: int | None,
    run: dict[str, Any],
    telemetry: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """Assemble the summary.

    Args:
        config: The tournament.
        schedule: Its layout.
        games: Every game on disk, sorted by unit.
        sprt: The SPRT state (``None`` without a test).
        stop: Deal sets used when the SPRT stopped the run (``None``: all).
        run: Timing of this invocation (the only part that is not reproducible).
        telemetry: What the participants reported over every chunk played
            (:func:`unolab.tournament.telemetry.merge_telemetry`): each leaderboard row of a
            participant that reported carries it as ``telemetry``.
    """
    limit = schedule.num_deal_sets if stop is None else min(stop, schedule.num_deal_sets)
    table = games.subset(games.deal < limit)
    tables_of_deal = table.deal % len(schedule.tables)
    elo = bootstrap_elo(table, config.bootstrap, config.seed)
    skill = openskill_ratings(table)
    stats = participant_stats(table)
    rows = []
    for pid, entry in enumerate(stats):
        rows.append(
            {
                **entry,
                "elo": elo["elo"][pid],
                "elo_low": _finite(elo["low"][pid]),
                "elo_high": _finite(elo["high"][pid]),
                "mu": skill["mu"][pid],
                "sigma": skill["sigma"][pid],
                "ordinal": skill["ordinal"][pid],
            }
        )
    for row in rows:
        if telemetry and row["name"] in telemetry:
            row["telemetry"] = dict(telemetry[row["name"]])
    rows.sort(key=lambda r: (-r["elo"], r["name"]))
    for place, row in enumerate(rows, start=1):
        row["rank"] = place
    complete_deals = np.unique(table.deal).size
    summary: dict[str, Any] = {
        "name": config.name,
        "format": config.format,
        "fingerprint": config.fingerprint(),
        "config": config.to_dict(),
        "rules": config.game_rules().to_dict(),
        "schedule": {
            "participants": list(schedule.names),
            "tables": len(schedule.tables),
            "seatings": schedule.seatings.tolist(),
            "variants": len(schedule.variants),
            "deal_sets_planned": schedule.num_deal_sets,
            "games_planned": schedule.num_games,
            "deal_sets_played": int(complete_deals),
            "games_used": table.num_games,
            "games_ignored": games.num_games - table.num_games,
            "complete": table.num_games == schedule.num_games,
            "dealer_seat": schedule.num_players - 1,
        },
        "leaderboard": rows,
        "ratings": {
            "elo_method": (
                "Bradley-Terry maximum likelihood on pairwise results (ties half), Elo scale, "
                "mean 0; 95% percentile bootstrap over whole deal sets"
            ),
            "bootstrap_resamples": elo["resamples"],
            "bootstrap_blocks": elo["blocks"],
            "openskill_model": skill["model"],
        },
        "pairwise": pairwise_table(table),
        "seats": seat_advantage(table),
        "endings": endings(table),
        "variance": variance_reduction(table, tables_of_deal),
        "sprt": None if sprt is None else sprt.to_dict(),
        "run": run,
    }
    if config.format == "ab":
        summary["ab"] = _ab_section(table, tables_of_deal)
    if config.format in ("gauntlet", "ab"):
        summary["candidate"] = schedule.names[0]
    if config.format == "ab":
        summary["incumbent"] = schedule.names[1]
    return summary
