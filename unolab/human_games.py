"""Human games as data: the browser table's kept games, as an imitation data set and as
results against each agent.

``uno-lab serve --collect-human-games`` offers each player to keep their game as research
data; a kept game's record (:mod:`unolab.records`) carries ``keep_as_data: true``, each
human decision's thinking time (``think_ms``) and the agents' names (``agent_names``).
This module reads a folder of such records:

- :func:`export_demonstrations` (``uno-lab data export --games-dir DIR --out FILE``) replays
  each kept game and writes, for every decision a person took (not a forced one), the
  observation of that seat (:func:`uno_env.observation.encode`), the legal actions and the
  action taken, as a demonstrations file that ``uno-lab train imitate`` takes under
  ``include`` (:mod:`unolab.train.imitate.files`).
- :func:`human_results` counts, per agent, the finished matches people played against it
  and their win rate with a Wilson 95% interval (the Lab tab shows them).

A game its player declined (``keep_as_data: false``) or a record without the key (a server
that kept no games as data, ``uno-lab play --record``) is left out.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from uno_env import cards as C
from uno_env.core import legal_action_mask
from uno_env.game import UnoGame
from uno_env.observation import OBS_DIM, encode
from uno_env.rules import Rules, load_rules
from unolab.agents.arena import wilson_interval
from unolab.records import RecordError, load_record_data
from unolab.train.imitate.data import Demonstrations
from unolab.train.imitate.files import save_demonstrations

__all__ = [
    "HUMAN_TEACHER",
    "LAB_GAMES",
    "MAX_KEPT_GAMES",
    "KeptGame",
    "export_demonstrations",
    "human_results",
    "kept_games",
    "main",
]

HUMAN_TEACHER = "human"
"""The teacher name of people's decisions in an exported demonstrations file."""

MAX_KEPT_GAMES = 100_000
"""The most records :func:`export_demonstrations` reads from one folder (by file name)."""

LAB_GAMES = 5_000
"""The most records :func:`human_results` reads (by file name): the Lab answers in seconds."""


@dataclass(frozen=True)
class KeptGame:
    """A game its player kept as data.

    Attributes:
        path: Its record.
        rules: Its rules.
        seed: Its deal's seed.
        hands: The actions of each finished hand.
        agents: Each seat's agent id (``None`` for a person's seat).
        agent_names: Each seat's agent name (``None`` for a person's seat).
        think_ms: Per hand, per action, the person's thinking time (``None``: a move the
            server played).
        match_over: Whether the match was played to its end.
    """

    path: Path
    rules: Rules
    seed: int
    hands: list[list[str]]
    agents: list[str | None]
    agent_names: list[str | None]
    think_ms: list[list[int | None]]
    match_over: bool


def kept_games(folder: Path, limit: int = MAX_KEPT_GAMES, skip_bad: bool = False) -> list[KeptGame]:
    """The games kept as data among the first ``limit`` records (``*.json``, by file name)
    of ``folder``; with ``skip_bad``, a record that does not load is left out.

    Raises:
        ValueError: for a folder that does not exist, or a record that does not load (a
            :class:`~unolab.records.RecordError` naming the file).
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(
            f"--games-dir {folder}: not a folder; give the games folder of uno-lab serve "
            "(its --games-dir, runs/web_games by default)"
        )
    found = []
    for path in sorted(folder.glob("*.json"))[:limit]:
        try:
            rules, seed, _, hands, data = load_record_data(path)
        except (ValueError, OSError):
            if not skip_bad:
                raise
            continue
        if data.get("keep_as_data") is not True:
            continue
        n = rules.num_players
        agents = data.get("agents") or [None] * n
        names = data.get("agent_names") or list(agents)
        think = data.get("think_ms") or [[None] * len(hand) for hand in hands]
        found.append(
            KeptGame(path, rules, seed, hands, agents, names, think, data.get("match_over") is True)
        )
    return found


def _replay(game: KeptGame, on_decision: Any = None) -> UnoGame:
    """Replay ``game``; call ``on_decision(uno, hand, index)`` before each action a person
    took (timed), and return the game as it ends.

    Raises:
        RecordError: naming the file, for an action that is not legal where it stands.
    """
    uno = UnoGame(game.rules, seed=game.seed)
    for h, actions in enumerate(game.hands):
        if h > 0:
            uno.next_hand()
        for i, name in enumerate(actions):
            try:
                action = C.parse_action(name)
            except ValueError:
                action = -1
            if uno.over or action not in uno.legal_action_ids():
                raise RecordError(
                    f"{game.path}: hand {h + 1} action {i + 1} ({name!r}) is not legal there; "
                    "the record does not replay (edited by hand?)"
                )
            person = game.agents[uno.current_seat] is None and game.think_ms[h][i] is not None
            if person and on_decision is not None:
                on_decision(uno, h, i, action)
            uno.step(action)
    return uno


def export_demonstrations(
    folder: Path, out: Path, rules_spec: str | None = None
) -> tuple[int, int, Rules]:
    """Write the people's decisions of the kept games of ``folder`` to ``out``.

    Args:
        folder: The games folder of ``uno-lab serve``.
        out: The demonstrations file to write (``.npz``; its folder must exist).
        rules_spec: Keep only the games of these rules (a preset or a YAML file); ``None``:
            the kept games must all share one set of rules.

    Returns:
        ``(games, decisions, rules)`` written.

    Raises:
        ValueError: one line, for a missing folder, no kept game (of those rules), games of
            several rules without ``rules_spec``, or a bad record.
    """
    games = kept_games(folder)
    if rules_spec is not None:
        wanted = load_rules(rules_spec)
        games = [g for g in games if g.rules == wanted]
    if not games:
        raise ValueError(
            f"--games-dir {folder}: no game kept as data"
            + (f" under the rules {rules_spec!r}" if rules_spec else "")
            + " (uno-lab serve --collect-human-games keeps the games whose players agree)"
        )
    rules_seen = {g.rules for g in games}
    if len(rules_seen) > 1:
        raise ValueError(
            f"--games-dir {folder}: the kept games were played under {len(rules_seen)} "
            "different rules; choose one with --rules (a preset such as official, or a YAML "
            "file)"
        )
    rules = games[0].rules
    obs, masks, actions, phases, numbers = [], [], [], [], []
    forced = 0

    for number, game in enumerate(games):

        def take(uno: UnoGame, hand: int, index: int, action: int, number: int = number) -> None:
            nonlocal forced
            mask = legal_action_mask(rules, uno.state)[0]
            if int(mask.sum()) < 2:
                forced += 1
                return
            obs.append(encode(rules, uno.state)[0])
            masks.append(mask.astype(bool))
            actions.append(action)
            phases.append(int(uno.state.phase[0]))
            numbers.append(number)

        _replay(game, take)
    if out.parent and not out.parent.is_dir():
        raise ValueError(f"--out {out}: the folder {out.parent} does not exist; create it first")
    demos = Demonstrations(
        observations=np.array(obs, dtype=np.float32).reshape(len(obs), OBS_DIM),
        masks=np.array(masks, dtype=bool).reshape(len(masks), C.NUM_ACTIONS),
        actions=np.array(actions, dtype=np.int64),
        phases=np.array(phases, dtype=np.int8),
        teachers=np.zeros(len(actions), dtype=np.int16),
        games=np.array(numbers, dtype=np.int64),
        teacher_names=(HUMAN_TEACHER,),
        num_games=len(games),
        forced=forced,
        seconds=0.0,
    )
    save_demonstrations(out, demos, rules)
    return len(games), len(actions), rules


def human_results(folder: Path) -> list[dict[str, Any]]:
    """People against each agent, from the finished matches kept as data in ``folder``:
    per agent (by name), ``games``, ``human_wins``, ``win_rate`` and its Wilson 95%
    interval ``low``/``high``, most games first. A game with several agents counts once
    for each of them; a missing folder or an unreadable record counts nothing.
    """
    if not Path(folder).is_dir():
        return []
    games = kept_games(folder, LAB_GAMES, skip_bad=True)
    tally: dict[str, list[int]] = {}
    for game in games:
        if not game.match_over:
            continue
        try:
            scores = _replay(game).match_scores
        except ValueError:
            continue
        people = [seat for seat, agent in enumerate(game.agents) if agent is None]
        won = any(scores[seat] == max(scores) for seat in people)
        against = {game.agent_names[s] or a for s, a in enumerate(game.agents) if a is not None}
        for name in sorted(against):  # an agent in two seats counts once
            counts = tally.setdefault(name, [0, 0])
            counts[0] += 1
            counts[1] += int(won)
    results = []
    for name, (n, wins) in tally.items():
        low, high = wilson_interval(wins, n)
        results.append(
            {
                "agent": name,
                "games": n,
                "human_wins": wins,
                "win_rate": wins / n,
                "low": low,
                "high": high,
            }
        )
    return sorted(results, key=lambda r: (-r["games"], r["agent"]))


def main(argv: Sequence[str] | None = None, prog: str = "uno-lab data") -> int:
    """``uno-lab data export``: parse the options and write the demonstrations file.

    Raises:
        ValueError: one line, for bad input (the CLI prints it).
    """
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Human games as data: export the browser table's games kept as data "
        "(uno-lab serve --collect-human-games) as a demonstrations file for uno-lab train "
        "imitate (list it under include:).",
    )
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    export = sub.add_parser("export", help="write the kept games as imitation data (.npz)")
    export.add_argument(
        "--games-dir", type=Path, required=True, help="uno-lab serve's games folder"
    )
    export.add_argument("--out", type=Path, required=True, help="the file to write (.npz)")
    export.add_argument("--rules", help="keep only the games of these rules (preset or YAML)")
    args = parser.parse_args(argv)
    if args.out.is_dir():
        raise ValueError(f"--out {args.out}: is a folder; give a file name such as human.npz")
    if args.out.suffix != ".npz":
        raise ValueError(f"--out {args.out}: a demonstrations file ends in .npz")
    games, decisions, _ = export_demonstrations(args.games_dir, args.out, args.rules)
    print(
        f"exported {decisions:,} decisions of people from {games:,} kept game(s) to {args.out} "
        "(train on it: include it in an imitation config, docs/training.md)",
        file=sys.stdout,
    )
    return 0
