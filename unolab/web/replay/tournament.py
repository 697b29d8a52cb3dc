"""Tournament games replayed move by move.

A tournament's ``games.jsonl`` holds each game's deal key and seating, not its moves. To
replay game *n*, the chunk that played it is played again exactly as
:func:`unolab.tournament.chunks.play_chunk` played it: the same entrants, each policy built from
:func:`unolab.tournament.chunks.policy_seed` of the chunk, all the chunk's games in one batch
(randomised agents draw from one stream per batch), the dealer in the last seat. The moves
of game *n* are recorded on the way, and its result is compared with the logged one.

A language model's seat is not asked again: it plays the moves recorded in the run's
``decisions/<participant>/chunk-<n>.jsonl`` (:class:`~unolab.web.replay.decisions.RecordedPlayer`),
and each of its frames shows what the model wrote there. Its spec file is never read: a
replay sends no request to any endpoint, whatever the run folder names.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from uno_env import cards as C
from uno_env import core
from uno_env.play import Round, play_tables
from uno_env.policy import ActionProbabilities, Policy
from uno_env.rules import Rules
from unolab.tournament.chunks import policy_seed, schedule_for
from unolab.tournament.design import deal_keys
from unolab.tournament.participants import entrants_for
from unolab.tournament.results import GameRecord, Unit
from unolab.tournament.telemetry import decisions_file
from unolab.web.guard import Invalid, NotFound, one_line, read_bytes
from unolab.web.lab.files import find_runs
from unolab.web.replay.decisions import (
    DecisionBook,
    RecordedPlayer,
    decision_note,
    place_of,
    record_place,
)
from unolab.web.replay.records import (
    PAGE_FRAMES,
    Advisor,
    build_frames,
    check_offset,
    frame_count,
    frame_page,
)
from unolab.web.replay.run_config import SafeRunConfig

__all__ = ["MAX_LOG_BYTES", "RunFinder"]

MAX_LOG_BYTES = 512 * 2**20
"""The largest ``games.jsonl`` read (about three million games)."""


class RunFinder:
    """The tournament runs under one folder, by id (their path relative to it).

    A run folder is data, never code, whoever wrote it: its ``config.json`` may name
    only bots and exported agents (``.safetensors``, loaded without unpickling) that lie
    in the runs folder (the run's own folder or any other under it, such as a training
    run's), among the shipped agents or in ``--agents-dir``; its rules may be a preset, a
    mapping of switches or a YAML file inside the run folder. A stored ``allow_pickle`` is
    ignored. A participant that is a Python class (``my_bots.py:MyBot``) is code: it is
    rebuilt only when its file or module is one the server was told to trust
    (``--trust-code``). A seat that a policy given in code took (the run's ``overrides``)
    cannot be rebuilt: its games are refused, naming the seat. Messages name files by run
    id, never by server path.

    Args:
        folder: The runs folder of ``serve --runs-dir``.
        agents_dir: The folder of ``serve --agents-dir`` (its agents may play in a replay).
        shipped_dir: The shipped agents (default: ``agents/pretrained``).
        trusted_code: The Python files (by path) and modules (by name, a package covering
            its modules) whose classes may play in a replay (``serve --trust-code``).
    """

    def __init__(
        self,
        folder: Path,
        agents_dir: Path | None = None,
        shipped_dir: Path | None = None,
        trusted_code: Sequence[str] = (),
    ) -> None:
        if shipped_dir is None:
            from unolab.agents.registry import SHIPPED_DIR

            shipped_dir = SHIPPED_DIR
        self.folder = Path(folder)
        self.safe = SafeRunConfig(self.folder, Path(shipped_dir), agents_dir, trusted_code)
        """Rebuilds a run's config as it may be replayed, and names files by run id."""

    def runs(self) -> dict[str, Path]:
        """Run id -> run folder, for every folder holding ``games.jsonl`` and ``config.json``.

        The runs are those of the Lab tab's walk (:func:`~unolab.web.lab.files.find_runs`):
        both files must be regular files inside their folder and the runs folder (a pipe
        or a link elsewhere is no run: it is not listed), a folder reached through a
        symbolic link is none, runs do not nest, and the id must be one a request can name
        (text without control characters, at most
        :data:`~unolab.web.lab.files.MAX_ID_CHARS` long).
        """
        found = find_runs(self.folder).replayable
        return {run_id: run.folder for run_id, run in sorted(found.items())}

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
        folder = self._folder(run_id)
        raw = read_bytes(folder / "games.jsonl", MAX_LOG_BYTES, "game log", f"{run_id}/games.jsonl")
        return _parse_log(raw, f"run {run_id}: games.jsonl")

    def summary(self, run_id: str) -> dict[str, Any]:
        """A run's participants and the number of its games."""
        return {"id": run_id, "games": len(self.records(run_id))}

    def replay(
        self, run_id: str, index: int, offset: int = 0, limit: int = PAGE_FRAMES
    ) -> dict[str, Any]:
        """Game ``index`` (0-based, log order) of a run, replayed with every move: a page of
        its frames from ``offset`` (:func:`unolab.web.replay.records.build_frames`).

        Raises:
            NotFound: for an unknown run, a game number out of range or an ``offset`` past
                the game's last frame.
            Invalid: if the run's config or agents cannot be rebuilt, or its config names
                an SB3 ``.zip``, or a file outside the folders a replay may read.
        """
        folder = self._folder(run_id)
        records = self.records(run_id)
        if not 0 <= index < len(records):
            raise NotFound(f"run {run_id} has games 0..{len(records) - 1}, not {index}")
        try:
            return self._replay(folder, run_id, records[index], index, offset, limit)
        except Invalid as err:
            raise Invalid(self.safe.scrub(str(err), folder, run_id)) from None

    def _replay(
        self,
        folder: Path,
        run_id: str,
        record: GameRecord,
        index: int,
        offset: int = 0,
        limit: int = PAGE_FRAMES,
    ) -> dict[str, Any]:
        where = f"run {run_id}, game {index}"
        models: set[str] = set()
        config = self.safe.rebuilt_config(folder, run_id, where, record.seats, models)
        try:
            entrants = entrants_for(config)
        except (ValueError, TypeError, OSError, RecursionError) as err:
            raise Invalid(f"run {run_id}: its agents cannot be rebuilt here: {err}") from None
        schedule = schedule_for(config, entrants)
        rules = config.game_rules()
        chunk = schedule.chunk_of(record.deal)
        units = schedule.units(chunk)
        if record.unit not in units:
            raise Invalid(f"run {run_id}: game {index} {record.unit} is not in its schedule")
        lineups = schedule.lineups(np.array(units, dtype=np.int64))
        row = units.index(record.unit)
        rebuilt = [schedule.names[p] for p in lineups[row].tolist()]
        if rebuilt != list(record.seats):  # the game the config gives is not the one logged
            raise Invalid(
                f"run {run_id}: game {index}: its config.json and its games.jsonl disagree: "
                f"the log seats {len(record.seats)} players ({', '.join(record.seats)}), the "
                f"config {len(rebuilt)} ({', '.join(rebuilt)}); the run's files were changed "
                "after it was played"
            )
        seated_here = set(lineups.ravel().tolist())
        players: dict[int, RecordedPlayer] = {}
        for p in sorted(seated_here):
            name = schedule.names[p]
            if name in models:
                players[p] = RecordedPlayer(
                    name, self._decisions(folder, run_id, where, name, chunk)
                )
        policies: list[Policy | None] = [
            players[p]
            if p in players
            else entrants[p].build(policy_seed(schedule.seed, chunk, p))
            if p in seated_here
            else None
            for p in range(len(entrants))
        ]
        keys = deal_keys(schedule.seed, np.array([u[0] for u in units]))
        first, actions, notes = _play_recording(rules, policies, lineups, keys, row, players)
        seated = lineups[row].tolist()
        advisors: dict[int, Advisor] = {}
        for seat, p in enumerate(seated):
            policy = policies[p]
            if isinstance(policy, ActionProbabilities):
                advisors[seat] = policy.action_probs
        names = [f"seat {s}: {schedule.names[p]}" for s, p in enumerate(seated)]
        labels: list[str | None] = [schedule.names[p] for p in seated]
        total = frame_count([actions])
        check_offset(total, offset, where)
        frames = build_frames(
            rules,
            first,
            [actions],
            names,
            labels,
            advisors,
            where=where,
            notes=lambda hand, move, state: notes[move] if move < len(notes) else None,
            offset=offset,
            limit=limit,
        )
        last = first
        for action in actions:  # the end of the game, whatever page is pictured
            last = core.step(rules, last, np.array([C.parse_action(action)]))
        counts = [int(n) for n in last.hand_size[0]]
        matches = len(actions) == record.turns and counts == list(record.cards_left)
        return {
            "title": where,
            "names": names,
            "seed": str(record.key),  # as digits: a JSON number loses a 64-bit key
            **frame_page(total, offset, frames),
            "logged": {"turns": record.turns, "end": record.end, "ranks": list(record.ranks)},
            "matches_log": matches,
        }

    def _decisions(
        self, folder: Path, run_id: str, where: str, name: str, chunk: int
    ) -> DecisionBook:
        """The decision records of a language model's participant in one chunk.

        Raises:
            Invalid: when the chunk's decisions were not recorded, or cannot be read.
        """
        path = decisions_file(folder, name, chunk)
        shown_as = f"{run_id}/{path.relative_to(folder).as_posix()}"
        if not path.exists() and not path.is_symlink():
            raise Invalid(
                f"{where} cannot be shown: participant {name!r} is a language model, and its "
                f"decisions of the game's chunk were not recorded ({shown_as} is missing); a "
                "replay plays a model's recorded moves and never asks the model again"
            )
        return DecisionBook.read(path, shown_as)


def _parse_log(raw: bytes, where: str) -> list[GameRecord]:
    """The games of a ``games.jsonl``, in log order, as the tournament reads them back: a
    torn last line is dropped, a repeated game keeps its first line.

    Raises:
        Invalid: naming the first corrupt line.
    """
    lines = raw.split(b"\n")
    tail = lines.pop()  # the bytes after the last newline: empty unless torn
    records: dict[Unit, GameRecord] = {}
    for number, line in enumerate(lines, start=1):
        try:
            record = GameRecord.from_json(line.decode())
        except (ValueError, UnicodeDecodeError, RecursionError) as err:
            if number == len(lines) and not tail and _incomplete_json(line):
                break  # a torn last line that happens to end at a newline
            raise Invalid(
                f"{where}: line {number} is corrupt ({one_line(str(err), 160)})"
            ) from None
        records.setdefault(record.unit, record)
    return list(records.values())


def _incomplete_json(line: bytes) -> bool:
    """Whether a line is JSON cut short (a torn write), not a complete value."""
    try:
        json.loads(line.decode())
    except (ValueError, UnicodeDecodeError, RecursionError):
        return True
    return False


def _play_recording(
    rules: Rules,
    policies: list[Policy | None],
    lineups: npt.NDArray[np.int64],
    keys: npt.NDArray[np.uint64],
    row: int,
    players: dict[int, RecordedPlayer] | None = None,
) -> tuple[core.UnoState, list[str], list[dict[str, Any] | None]]:
    """Play a chunk as the tournament did; return row ``row``'s deal, its moves and, for
    each move, what the language model that made it wrote (``None`` for other seats)."""
    moves: list[str] = []
    notes: list[dict[str, Any] | None] = []
    players = players or {}

    def note_move(turn: Round) -> None:
        mine: Any = None
        for p, player in players.items():
            used, player.consumed = player.consumed, []
            rows = np.flatnonzero(turn.acting == p).tolist()
            # The records used this round, in the order of the rows they were taken for
            # (a row that forfeited took none): matched by their place.
            j = 0
            for r in rows:
                if j >= len(used):
                    break
                place = place_of(turn.state, r, int(turn.state.current[r]))
                if record_place(used[j]) != place:
                    continue
                if int(turn.games[r]) == row:
                    mine = decision_note(used[j])
                j += 1
        here = np.flatnonzero(turn.games == row)
        if here.size and turn.acting[here[0]] >= 0:
            moves.append(C.action_name(int(turn.actions[here[0]])))
            notes.append(mine)

    dealer = rules.num_players - 1
    play_tables(rules, policies, lineups, keys, dealer=dealer, on_round=note_move)
    return core.init(rules, keys=keys[[row]], dealer=dealer), moves, notes
