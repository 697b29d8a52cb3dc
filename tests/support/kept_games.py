"""Hand-made records of browser games kept as data: a person in seat 0 against agents."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from uno_env import cards as C
from uno_env.game import UnoGame
from uno_env.rules import Rules
from unolab.records import RECORD_FORMAT


def kept_record(
    rules: Rules, seed: int, agents: list[str], keep: bool | None = True, match: bool = True
) -> tuple[dict[str, Any], bool]:
    """A record of random legal moves (one hand, or the whole match), as the web table saves
    a game its player kept (``keep``), and whether the person (seat 0) won the match."""
    rng = random.Random(seed)
    game = UnoGame(rules, seed=seed)
    hands: list[list[str]] = [[]]
    think: list[list[int | None]] = [[]]
    while True:
        if game.over:
            if game.match_over or not match:
                break
            game.next_hand()
            hands.append([])
            think.append([])
        seat = game.current_seat
        action = rng.choice(game.legal_action_ids())
        hands[-1].append(C.action_name(action))
        think[-1].append(rng.randrange(200, 9000) if seat == 0 else None)
        game.step(action)
    scores = game.match_scores
    record: dict[str, Any] = {
        "format": RECORD_FORMAT,
        "rules": rules.to_dict(),
        "seed": seed,
        "names": ["you", *(f"player_{s} ({a})" for s, a in enumerate(agents, 1))],
        "hands": hands,
        "agents": [None, *agents],
        "match_over": game.match_over,
        "saved": "2026-01-31T12:00:00+00:00",
    }
    if keep is not None:
        record["keep_as_data"] = keep
    if keep:
        record["think_ms"] = think
        record["agent_names"] = [None, *agents]
    return record, game.match_over and scores[0] == max(scores)


def write_kept_games(folder: Path, records: list[dict[str, Any]]) -> None:
    """Write ``records`` into ``folder`` as the web table names them (22-character ids)."""
    folder.mkdir(parents=True, exist_ok=True)
    for number, record in enumerate(records):
        (folder / f"{number:022d}.json").write_text(json.dumps(record))
