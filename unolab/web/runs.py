"""Tournament games replayed move by move.

A tournament's ``games.jsonl`` holds each game's deal key and seating, not its moves. To
replay game *n*, the chunk that played it is played again exactly as
:func:`tournament.runner.play_chunk` played it: the same entrants, each policy built from
:func:`tournament.runner.policy_seed` of the chunk, all the chunk's games in one batch
(randomised agents draw from one stream per batch), the dealer in the last seat. The moves
of game *n* are recorded on the way, and its result is compared with the logged one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from tournament.config import load_config
from tournament.design import deal_keys
from tournament.participants import entrants_for
from tournament.results import GameRecord, ResultStore
from tournament.runner import policy_seed, schedule_for
from uno_env import cards as C
from uno_env import core
from uno_env.play import choose_actions
from uno_env.policy import Policy
from uno_env.rules import Rules
from unolab.web.errors import Invalid, NotFound
from unolab.web.frames import Advisor, build_frames

__all__ = ["RunFinder"]

_DEPTH = 4
"""How deep under the runs folder a run folder may sit (``runs/tournaments/<name>``)."""


class RunFinder:
    """The tournament runs under one folder, by id (their path relative to it).

    Args:
        folder: The runs folder of ``serve --runs-dir``.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    def runs(self) -> dict[str, Path]:
        """Run id -> run folder, for every folder holding ``games.jsonl`` and ``config.json``."""
        found: dict[str, Path] = {}
        if not self.folder.is_dir():
            return found
        for depth in range(1, _DEPTH + 1):
            for log in sorted(self.folder.glob("/".join(["*"] * depth) + "/games.jsonl")):
                if (log.parent / "config.json").is_file():
                    found[log.parent.relative_to(self.folder).as_posix()] = log.parent
        return found

    def _folder(self, run_id: str) -> Path:
        folder = self.runs().get(run_id)
        if folder is None:
            raise NotFound(f"no tournament run {run_id!r} under the runs folder")
        return folder

    def records(self, run_id: str) -> list[GameRecord]:
        """The games of a run, in log order.

        Raises:
            NotFound: for an unknown run.
            Invalid: if its log cannot be read.
        """
        store = ResultStore(self._folder(run_id) / "games.jsonl")
        try:
            return list(store.load(repair=False).values())
        except ValueError as err:
            raise Invalid(f"run {run_id}: {err}") from None

    def summary(self, run_id: str) -> dict[str, Any]:
        """A run's participants and the number of its games."""
        return {"id": run_id, "games": len(self.records(run_id))}

    def replay(self, run_id: str, index: int) -> dict[str, Any]:
        """Game ``index`` (0-based, log order) of a run, replayed with every move.

        Raises:
            NotFound: for an unknown run or a game number out of range.
            Invalid: if the run's config or agents cannot be rebuilt.
        """
        folder = self._folder(run_id)
        records = self.records(run_id)
        if not 0 <= index < len(records):
            raise NotFound(f"run {run_id} has games 0..{len(records) - 1}, not {index}")
        record = records[index]
        try:
            stored = json.loads((folder / "config.json").read_text(encoding="utf-8"))
            config = load_config(stored["config"])
            entrants = entrants_for(config)
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise Invalid(f"run {run_id}: its agents cannot be rebuilt here: {err}") from None
        schedule = schedule_for(config, entrants)
        rules = config.game_rules()
        chunk = schedule.chunk_of(record.deal)
        units = schedule.units(chunk)
        if record.unit not in units:
            raise Invalid(f"run {run_id}: game {index} {record.unit} is not in its schedule")
        lineups = schedule.lineups(np.array(units, dtype=np.int64))
        policies: list[Policy | None] = [
            entrants[p].build(policy_seed(schedule.seed, chunk, p))
            if p in set(lineups.ravel().tolist())
            else None
            for p in range(len(entrants))
        ]
        row = units.index(record.unit)
        keys = deal_keys(schedule.seed, np.array([u[0] for u in units]))
        first, actions = _play_recording(rules, policies, lineups, keys, row)
        seated = lineups[row].tolist()
        advisors: dict[int, Advisor] = {}
        for seat, p in enumerate(seated):
            probs = getattr(policies[p], "action_probs", None)
            if probs is not None:
                advisors[seat] = probs
        names = [f"seat {s}: {schedule.names[p]}" for s, p in enumerate(seated)]
        labels: list[str | None] = [schedule.names[p] for p in seated]
        where = f"run {run_id}, game {index}"
        frames = build_frames(rules, first, [actions], names, labels, advisors, where=where)
        counts = [seat["count"] for seat in frames[-1]["table"]["seats"]]
        matches = len(actions) == record.turns and counts == list(record.cards_left)
        return {
            "title": where,
            "names": names,
            "seed": record.key,
            "frames": frames,
            "logged": {"turns": record.turns, "end": record.end, "ranks": list(record.ranks)},
            "matches_log": matches,
        }


def _play_recording(
    rules: Rules,
    policies: list[Policy | None],
    lineups: npt.NDArray[np.int64],
    keys: npt.NDArray[np.uint64],
    row: int,
) -> tuple[core.UnoState, list[str]]:
    """Play a chunk as the tournament did; return row ``row``'s deal and its moves.

    Raises:
        Invalid: if a policy cannot reset.
    """
    for policy in policies:
        if policy is not None:
            try:
                policy.reset()
            except Exception as err:  # the agent's own failure: reported, not raised
                raise Invalid(f"an agent of this run cannot play: {err}") from None
    state = core.init(rules, keys=keys, dealer=rules.num_players - 1)
    first = state.select(np.array([row]))
    ids = np.arange(state.batch_size)
    moves: list[str] = []
    live = state.live
    while live.any():
        acting = np.where(live, lineups[ids, state.current.astype(np.int64)], -1)
        actions, forfeits = choose_actions(
            rules, state, policies, acting, on_error="forfeit", game_ids=ids
        )
        here = np.flatnonzero(ids == row)
        if here.size and live[here[0]] and int(here[0]) not in forfeits:
            moves.append(C.action_name(int(actions[here[0]])))
        if forfeits:
            keep = np.setdiff1d(np.arange(state.batch_size), list(forfeits))
            state, ids, actions = state.select(keep), ids[keep], actions[keep]
            if state.batch_size == 0:
                break
        state = core.step(rules, state, actions)
        live = state.live
    return first, moves
