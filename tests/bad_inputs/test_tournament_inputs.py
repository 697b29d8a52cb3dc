"""Bad input to tournaments: refused in one clear line, or played around with forfeits.

Every case is one bad input. Three kinds:

* ``file``: a run folder (played once per module, then copied) is damaged (a corrupt
  ``games.jsonl`` line, a corrupt or missing ``config.json``, a resume under another config,
  games of another run copied in, a FIFO or a device in place of a file, the folder held
  by another run) and ``python -m unolab.tournament`` is run on it (``unolab.tournament.cli.main`` in
  process, or a real process where the exit path itself is under test);
* ``cli``: a bad command line or input file (arguments, config, participant, agent file,
  override, output folder);
* ``agent``: a faulty agent (``act`` raises, ``reset`` raises, its factory raises, it
  returns floats, out-of-range actions or the wrong shape);

plus an interrupted run (Ctrl-C, in process and in a real process). For every refused input
the test checks that

(a) the exit status is 2 (130 when interrupted), never an exception escaping ``main``;
(b) the message on stderr names the bad input (the file, the line, the key or the value);
(c) neither stdout nor stderr holds a traceback, and the message is one line ``error: ...``;
(d) nothing was changed or lost: every file of the scratch folder (``games.jsonl``,
    ``config.json``, ``games.meta.json``, the agent files) is byte for byte as before, and
    the run still resumes afterwards once the damage is undone. (The folder's ``.lock``
    records the pid of the last run that held it, so it is left out of the comparison.)

For faulty agents the tournament completes: every planned game is in ``games.jsonl`` once,
the faulty agent's games are forfeits with the reason recorded, and the others are played.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from support import ROOT

from uno_env.files import FolderLock
from unolab.agents import make_agent
from unolab.tournament.cli import main as cli_main
from unolab.tournament.config import load_config
from unolab.tournament.runner import run_tournament

RUN = "base"
"""The run name of the module's played run folder."""

BASE_ARGV = (
    "--name", RUN,
    "--participants", "random", "greedy_points",
    "--deal-sets", "4",
    "--games-per-chunk", "4",
    "--bootstrap", "0",
    "--seed", "3",
    "--no-progress",
    "--no-plots",
)  # fmt: skip
"""The command line of the played run: 2 participants, 4 deal sets x 2 seatings = 8 games
in 2 chunks, so ``games.jsonl`` has 8 lines."""

SPRT_NAN_ARGV = (
    "--name", "x", "--format", "gauntlet", "--candidate", "random",
    "--participants", "mixbot", "--sprt", "nan", "20",
)  # fmt: skip
"""A gauntlet whose SPRT's ``elo0`` is NaN."""

Mutation = Callable[[Path], None]
"""Damages a scratch folder holding the played run folder ``<tmp>/base``."""


@dataclass(frozen=True)
class Case:
    """One bad input.

    Attributes:
        id: The test id.
        kind: ``file``, ``cli``, ``agent`` or ``interrupt`` (see the module docstring).
        bad: ``file``/``cli``: a mutation of the scratch folder (``None``: nothing to damage);
            ``agent``: the faulty participant's factory.
        argv: ``file``/``cli``: arguments added after (or, for ``cli``, instead of) the played
            run's; ``{tmp}`` is the scratch folder.
        names: What the message (or, for agents, the forfeit reason) must contain.
        process: Run ``python -m unolab.tournament`` in a real process instead of in process.
    """

    id: str
    kind: str
    bad: Any = None
    argv: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    process: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


# --- damage to the run folder -------------------------------------------------------------


def _games(tmp: Path) -> Path:
    return tmp / RUN / "games.jsonl"


def edit_line(number: int, change: Callable[[dict[str, Any]], Any]) -> Mutation:
    """Rewrite line ``number`` (from 1) of games.jsonl with ``change`` applied to its object."""

    def mutate(tmp: Path) -> None:
        lines = _games(tmp).read_text().splitlines(keepends=True)
        record = json.loads(lines[number - 1])
        out = change(record)
        lines[number - 1] = json.dumps(record if out is None else out) + "\n"
        _games(tmp).write_text("".join(lines))

    return mutate


def replace_line(number: int, raw: bytes) -> Mutation:
    """Replace line ``number`` of games.jsonl with raw bytes."""

    def mutate(tmp: Path) -> None:
        lines = _games(tmp).read_bytes().split(b"\n")
        lines[number - 1] = raw
        _games(tmp).write_bytes(b"\n".join(lines))

    return mutate


def replace_in_line(number: int, old: bytes, new: bytes) -> Mutation:
    """Replace ``old`` by ``new`` in line ``number`` of games.jsonl, as raw bytes (JSON's
    ``NaN``, ``Infinity`` and numbers Python would not write)."""

    def mutate(tmp: Path) -> None:
        lines = _games(tmp).read_bytes().split(b"\n")
        assert old in lines[number - 1]
        lines[number - 1] = lines[number - 1].replace(old, new, 1)
        _games(tmp).write_bytes(b"\n".join(lines))

    return mutate


def edit_meta(key: str, value: Any) -> Mutation:
    """Set ``key`` of games.meta.json to ``value``."""

    def mutate(tmp: Path) -> None:
        path = tmp / RUN / "games.meta.json"
        record = json.loads(path.read_text())
        record[key] = value
        path.write_text(json.dumps(record))

    return mutate


def write_file(name: str, text: str) -> Mutation:
    def mutate(tmp: Path) -> None:
        (tmp / RUN / name).write_text(text)

    return mutate


def delete(*names: str) -> Mutation:
    def mutate(tmp: Path) -> None:
        for name in names:
            (tmp / RUN / name).unlink()

    return mutate


def into_folder(name: str) -> Mutation:
    """Replace a file of the run folder by a folder of the same name (unreadable as a file)."""

    def mutate(tmp: Path) -> None:
        path = tmp / RUN / name
        saved = tmp / f"saved_{name}"
        path.rename(saved)
        path.mkdir()
        (path / "inside").write_text("x")

    return mutate


def both(*mutations: Mutation) -> Mutation:
    def mutate(tmp: Path) -> None:
        for m in mutations:
            m(tmp)

    return mutate


def make_file(name: str, data: bytes) -> Mutation:
    """A scratch file (a bad config or agent file) next to the run folder."""

    def mutate(tmp: Path) -> None:
        path = tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    return mutate


def another_seeds_log(tmp: Path) -> None:
    """Replace games.jsonl by the log of the same tournament played with seed 4."""
    data = {
        "name": RUN,
        "participants": ["random", "greedy_points"],
        "deal_sets": 4,
        "games_per_chunk": 4,
        "bootstrap": 0,
        "seed": 4,
        "output_dir": str(tmp / "other"),
    }
    run_tournament(load_config(data), progress=False, plots=False, print_table=False)
    shutil.copyfile(tmp / "other" / RUN / "games.jsonl", _games(tmp))


def append_changed_copy(number: int) -> Mutation:
    """Append line ``number`` again with another result (more turns): a conflicting copy."""

    def mutate(tmp: Path) -> None:
        record = json.loads(_games(tmp).read_text().splitlines()[number - 1])
        record["turns"] += 1
        with _games(tmp).open("a") as f:
            f.write(json.dumps(record, separators=(",", ":")) + "\n")

    return mutate


def into_fifo(name: str) -> Mutation:
    """Replace a file of the run folder by a FIFO (reading it would wait for a writer)."""

    def mutate(tmp: Path) -> None:
        (tmp / RUN / name).unlink()
        os.mkfifo(tmp / RUN / name)

    return mutate


def into_link(name: str, target: str) -> Mutation:
    """Replace a file of the run folder by a symbolic link (``/dev/zero`` never ends)."""

    def mutate(tmp: Path) -> None:
        (tmp / RUN / name).unlink()
        (tmp / RUN / name).symlink_to(target)

    return mutate


_HELD: list[FolderLock] = []
"""Locks held by a case's mutation for the length of the case (released after it)."""


def held_by_another_run(tmp: Path) -> None:
    """Hold the run folder's lock, as a run in progress does."""
    lock = FolderLock(tmp / RUN, "tournament run")
    lock.acquire()
    _HELD.append(lock)


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(record: dict[str, Any]) -> None:
        record[key] = value

    return change


def _drop(key: str) -> Callable[[dict[str, Any]], None]:
    def change(record: dict[str, Any]) -> None:
        del record[key]

    return change


def _three_seats(record: dict[str, Any]) -> None:
    for key in ("ranks", "points", "cards_left"):
        record[key] = [*record[key], record[key][-1]]
    record["seats"] = [*record["seats"], "random"]


def both_fields(**values: Any) -> Callable[[dict[str, Any]], None]:
    def change(record: dict[str, Any]) -> None:
        record.update(values)

    return change


def _swap_seats(record: dict[str, Any]) -> None:
    record["seats"] = record["seats"][::-1]


# --- faulty agents -------------------------------------------------------------------------


class _Faulty:
    """mixbot with one fault, chosen by ``mode``."""

    name = "faulty"

    def __init__(self, seed: int, mode: str) -> None:
        self.inner = make_agent("mixbot", seed)
        self.mode = mode

    def act(self, observations: npt.NDArray[np.float32], masks: npt.NDArray[np.bool_]) -> Any:
        actions = self.inner.act(observations, masks)
        if self.mode == "act_raises":
            raise RuntimeError("act exploded")
        if self.mode == "floats":
            return actions.astype(np.float64) + 0.5
        if self.mode == "out_of_range":
            return np.full(masks.shape[0], 999, dtype=np.int64)
        if self.mode == "negative":
            return np.full(masks.shape[0], -1, dtype=np.int64)
        if self.mode == "wrong_shape":
            return actions[:, None]
        if self.mode == "none":
            return None
        if self.mode == "illegal":
            return np.argmin(masks, axis=1)  # the first illegal action
        return actions

    def reset(self, games: npt.NDArray[np.bool_] | None = None) -> None:
        if self.mode == "reset_raises":
            raise RuntimeError("reset exploded")
        self.inner.reset(games)


@dataclass(frozen=True)
class FaultyFactory:
    """Builds a :class:`_Faulty`; ``raise_after`` builds succeed before the factory raises."""

    mode: str
    raise_after: int | None = None
    built: list[int] = field(default_factory=list)

    def __call__(self, seed: int) -> _Faulty:
        if self.raise_after is not None and len(self.built) >= self.raise_after:
            raise RuntimeError("factory exploded")
        self.built.append(seed)
        return _Faulty(seed, self.mode)


# --- the cases ------------------------------------------------------------------------------

CASES: list[Case] = [
    # corrupt games.jsonl lines
    Case("log_middle_line_garbage", "file", replace_line(3, b"{garbage"), names=("line 3",)),
    Case("log_middle_line_not_utf8", "file", replace_line(2, b"\xff\xfe{}"), names=("line 2",)),
    Case("log_line_is_a_list", "file", replace_line(4, b"[1, 2, 3]"), names=("line 4",)),
    Case("log_line_is_null", "file", replace_line(2, b"null"), names=("line 2",)),
    Case("log_deal_is_text", "file", edit_line(3, _set("deal", "x")), names=("line 3", "deal")),
    Case("log_deal_is_bool", "file", edit_line(3, _set("deal", True)), names=("line 3", "deal")),
    Case("log_deal_negative", "file", edit_line(2, _set("deal", -1)), names=("line 2", "deal")),
    Case("log_turns_float", "file", edit_line(5, _set("turns", 1.5)), names=("line 5", "turns")),
    Case("log_ranks_text", "file", edit_line(3, _set("ranks", "01")), names=("line 3", "ranks")),
    Case("log_seats_text", "file", edit_line(3, _set("seats", "ab")), names=("line 3", "seats")),
    Case("log_missing_seats", "file", edit_line(2, _drop("seats")), names=("line 2", "seats")),
    Case("log_bad_end", "file", edit_line(2, _set("end", "lost")), names=("line 2", "lost")),
    Case(
        "log_forfeit_seat_out_of_range",
        "file",
        edit_line(3, _set("forfeit_seat", 5)),
        names=("line 3", "forfeit_seat"),
    ),
    Case(
        "log_unknown_participant",
        "file",
        edit_line(3, lambda r: r["seats"].__setitem__(0, "ghost")),
        names=("line 3", "ghost"),
    ),
    Case("log_wrong_seat_count", "file", edit_line(3, _three_seats), names=("line 3", "3 seats")),
    Case("log_seats_swapped", "file", edit_line(2, _swap_seats), names=("line 2", "schedule")),
    Case(
        "log_seating_out_of_range",
        "file",
        edit_line(2, _set("seating", 7)),
        names=("line 2", "not part of this tournament"),
    ),
    Case(
        "log_last_line_complete_but_bad",
        "file",
        edit_line(8, _set("ranks", [0])),
        names=("line 8", "ranks"),
    ),
    Case("log_is_a_folder", "file", into_folder("games.jsonl"), names=("games.jsonl",)),
    # finishing orders the rules cannot give (the results would change silently)
    Case(
        "log_won_hand_with_two_winners",
        "file",
        edit_line(1, _set("ranks", [0, 0])),
        names=("games.jsonl: line 1", "won hand with ranks [0, 0]", "one winner"),
    ),
    Case(
        "log_ranks_no_finishing_order",
        "file",
        edit_line(2, _set("ranks", [1, 1])),
        names=("games.jsonl: line 2", "ranks [1, 1]", "no finishing order"),
    ),
    Case(
        "log_truncated_hand_with_a_winner",
        "file",
        edit_line(3, both_fields(end="truncated", ranks=[0, 1])),
        names=("games.jsonl: line 3", "truncated hand with ranks [0, 1]"),
    ),
    Case(
        "log_forfeit_seat_ranked_first",
        "file",
        edit_line(4, both_fields(end="forfeit", forfeit_seat=0, ranks=[0, 1])),
        names=("games.jsonl: line 4", "forfeiting seat 0 must rank last"),
    ),
    # games of another run, or two results for one game
    Case(
        "log_of_another_seed",
        "file",
        another_seeds_log,
        names=("games.jsonl: line 1", "seed 3", "another run", "--fresh"),
    ),
    Case(
        "log_one_foreign_line",
        "file",
        edit_line(5, _set("key", 12345)),
        names=("line 5", "key 12345", "another run"),
    ),
    Case(
        "log_one_foreign_line_process",
        "file",
        edit_line(2, _set("key", 2**64 - 1)),
        names=("line 2", f"key {2**64 - 1}"),
        process=True,
    ),
    Case(
        "log_deal_past_64_bits",
        "file",
        edit_line(3, _set("deal", 2**63)),
        names=("line 3", "'deal' must be below 9223372036854775808", "64-bit"),
    ),
    Case(
        "log_key_of_a_thousand_digits",
        "file",
        edit_line(4, _set("key", 10**1000)),
        names=("line 4", "key"),
    ),
    # numbers out of their bounds: one line naming the line and the field, never an
    # OverflowError from the columns they would fill
    Case(
        "log_turns_of_thirty_digits",
        "file",
        edit_line(3, _set("turns", 10**30)),
        names=("games.jsonl: line 3", "'turns' must be below 524288", "max_turns"),
    ),
    Case(
        "log_turns_of_thirty_digits_process",
        "file",
        edit_line(5, _set("turns", 10**30)),
        names=("games.jsonl: line 5", "'turns'"),
        process=True,
    ),
    Case(
        "log_turns_1e30",
        "file",
        replace_in_line(3, b'"turns":', b'"turns":1e30,"was":'),
        names=("games.jsonl: line 3", "'turns' must be a non-negative integer, got 1e+30"),
    ),
    Case(
        "log_turns_nan",
        "file",
        replace_in_line(4, b'"turns":', b'"turns":NaN,"was":'),
        names=("games.jsonl: line 4", "'turns'", "nan"),
    ),
    Case(
        "log_turns_infinity",
        "file",
        replace_in_line(4, b'"turns":', b'"turns":-Infinity,"was":'),
        names=("games.jsonl: line 4", "'turns'", "-inf"),
    ),
    Case(
        "log_turns_of_five_thousand_digits",
        "file",
        replace_in_line(2, b'"turns":', b'"turns":' + b"9" * 5000 + b',"was":'),
        names=("games.jsonl: line 2", "4300 digits"),
    ),
    Case(
        "log_points_past_32_bits",
        "file",
        edit_line(3, lambda r: r["points"].__setitem__(0, 2**31)),
        names=("line 3", "'points' must be below 2147483648"),
    ),
    Case(
        "log_points_negative",
        "file",
        edit_line(3, lambda r: r["points"].__setitem__(1, -5)),
        names=("line 3", "'points' must be a non-negative integer, got -5"),
    ),
    Case(
        "log_cards_left_past_the_deck",
        "file",
        edit_line(6, lambda r: r["cards_left"].__setitem__(1, 10**30)),
        names=("line 6", "'cards_left' must be below 109"),
    ),
    Case(
        "log_seating_of_thirty_digits",
        "file",
        edit_line(2, _set("seating", 10**30)),
        names=("line 2", "'seating' must be below"),
    ),
    Case(
        "log_variant_of_thirty_digits",
        "file",
        edit_line(2, _set("variant", 10**30)),
        names=("line 2", "'variant' must be below"),
    ),
    Case(
        "log_key_past_64_bits",
        "file",
        edit_line(7, _set("key", 2**64)),
        names=("line 7", "'key' must be below 18446744073709551616"),
    ),
    Case(
        "log_forfeit_seat_of_thirty_digits",
        "file",
        edit_line(3, both_fields(end="forfeit", forfeit_seat=10**30)),
        names=("line 3", "'forfeit_seat' must be below 2"),
    ),
    Case(
        "log_line_nested_too_deeply",
        "file",
        replace_line(3, b"[" * 100_000 + b"]" * 100_000),
        names=("line 3", "nested too deeply"),
    ),
    Case(
        "log_last_line_nested_too_deeply",
        "file",
        replace_line(8, b"[" * 100_000 + b"]" * 100_000),
        names=("line 8", "nested too deeply"),
    ),
    Case(
        "meta_deal_set_counts_of_thirty_digits",
        "file",
        edit_meta("deal_set_counts", [4, 10**30]),
        names=("games.meta.json", "deal_set_counts"),
    ),
    Case(
        "meta_deal_set_counts_infinite",
        "file",
        edit_meta("deal_set_counts", [float("inf")]),
        names=("games.meta.json", "deal_set_counts", "inf"),
    ),
    Case(
        "log_conflicting_copy_of_a_game",
        "file",
        append_changed_copy(2),
        names=("games.jsonl: line 9", "another result than line 2", "--fresh"),
    ),
    # files that are not regular files: refused at once, never read
    Case("log_is_a_fifo", "file", into_fifo("games.jsonl"), names=("games.jsonl", "regular")),
    Case(
        "log_is_dev_zero",
        "file",
        into_link("games.jsonl", "/dev/zero"),
        names=("games.jsonl", "regular"),
    ),
    Case(
        "config_json_is_a_fifo",
        "file",
        into_fifo("config.json"),
        names=("config.json", "regular"),
    ),
    Case(
        "meta_is_a_fifo_process",
        "file",
        into_fifo("games.meta.json"),
        names=("games.meta.json", "regular"),
        process=True,
    ),
    Case(
        "meta_is_dev_zero",
        "file",
        into_link("games.meta.json", "/dev/zero"),
        names=("games.meta.json", "regular"),
    ),
    # the folder held by a run in progress
    Case(
        "folder_in_use",
        "file",
        held_by_another_run,
        names=(f"in use by another process (pid {os.getpid()})",),
    ),
    Case(
        "folder_in_use_fresh_process",
        "file",
        held_by_another_run,
        ("--fresh",),
        names=(f"pid {os.getpid()}",),
        process=True,
    ),
    Case(
        "log_middle_line_garbage_process",
        "file",
        replace_line(3, b'{"deal": '),
        names=("line 3",),
        process=True,
    ),
    # config.json and games.meta.json
    Case(
        "config_json_corrupt",
        "file",
        write_file("config.json", "{not json"),
        names=("config.json",),
    ),
    Case(
        "config_json_not_a_record",
        "file",
        write_file("config.json", "[1, 2]"),
        names=("config.json",),
    ),
    Case("config_json_unreadable", "file", into_folder("config.json"), names=("config.json",)),
    Case(
        "meta_corrupt",
        "file",
        write_file("games.meta.json", '{"finger'),
        names=("games.meta.json",),
    ),
    Case(
        "config_json_corrupt_process",
        "file",
        write_file("config.json", "\x00\x01"),
        names=("config.json",),
        process=True,
    ),
    # resumed under another config
    Case("resume_other_seed", "file", None, ("--seed", "4"), ("config.json", "seed 3 -> 4")),
    Case("resume_other_rules", "file", None, ("--rules", "street"), ("config.json", "rules.")),
    Case(
        "resume_other_participants",
        "file",
        None,
        ("--participants", "random", "mixbot"),
        ("config.json", "participants [random, greedy_points] -> [random, mixbot]"),
    ),
    Case("resume_other_players_rule", "file", None, ("--no-seat-streams",), ("seat_draw_streams",)),
    Case(
        "config_json_deleted_other_seed",
        "file",
        delete("config.json"),
        ("--seed", "9"),
        ("games.meta.json", "seed 3 -> 9"),
    ),
    Case(
        "config_json_deleted_other_rules",
        "file",
        delete("config.json"),
        ("--set", "rules={uno_call: false}"),
        ("games.meta.json", "rules.uno_call"),
    ),
    Case(
        "config_json_deleted_other_chunking",
        "file",
        delete("config.json"),
        ("--games-per-chunk", "2"),
        ("games.meta.json", "games_per_chunk"),
    ),
    Case(
        "no_record_of_the_config",
        "file",
        delete("config.json", "games.meta.json"),
        names=("games.jsonl", "--fresh"),
    ),
    Case(
        "legacy_log_other_seed",
        "file",
        delete("games.meta.json"),
        ("--seed", "5"),
        ("config.json", "seed 3 -> 5"),
    ),
    # the command line and its files
    Case("missing_config_file", "cli", None, ("--config", "{tmp}/nope.yaml"), ("nope.yaml",)),
    Case(
        "config_not_yaml",
        "cli",
        make_file("bad.yaml", b"name: [unclosed\n  - x: {"),
        ("--config", "{tmp}/bad.yaml"),
        ("bad.yaml",),
    ),
    Case(
        "config_is_a_list",
        "cli",
        make_file("list.yaml", b"- random\n- mixbot\n"),
        ("--config", "{tmp}/list.yaml"),
        ("list.yaml",),
    ),
    Case(
        "config_not_utf8",
        "cli",
        make_file("latin.yaml", b"name: caf\xe9\x00\xff"),
        ("--config", "{tmp}/latin.yaml"),
        ("latin.yaml",),
    ),
    Case(
        "unknown_participant",
        "cli",
        None,
        ("--name", "x", "--participants", "random", "nobot"),
        ("nobot",),
    ),
    Case(
        "agent_file_garbage",
        "cli",
        both(
            make_file("agents/broken.safetensors", b"\x00garbage" * 10),
            make_file("agents/broken.json", b"{}"),
        ),
        ("--name", "x", "--participants", "random", "{tmp}/agents/broken.safetensors"),
        ("broken",),
    ),
    Case(
        "agent_file_missing",
        "cli",
        None,
        ("--name", "x", "--participants", "random", "{tmp}/agents/gone.safetensors"),
        ("gone.safetensors",),
    ),
    Case(
        "override_unknown_key",
        "cli",
        None,
        ("--name", "x", "--participants", "random", "mixbot", "--set", "nokey=1"),
        ("nokey",),
    ),
    Case(
        "override_without_value",
        "cli",
        None,
        ("--name", "x", "--participants", "random", "mixbot", "--set", "deal_sets"),
        ("deal_sets",),
    ),
    Case(
        "override_bad_value",
        "cli",
        None,
        ("--name", "x", "--participants", "random", "mixbot", "--set", "deal_sets=-3"),
        ("deal_sets",),
    ),
    Case(
        "zero_workers",
        "cli",
        None,
        ("--name", "x", "--participants", "random", "mixbot", "--workers", "0"),
        ("workers",),
    ),
    Case("players_not_a_number", "cli", None, ("--name", "x", "--players", "two"), ("two",)),
    Case(
        "one_agent_under_two_spellings",
        "cli",
        None,
        ("--name", "x", "--participants", "random", "pimc:4", "pimc:rollouts=4"),
        ("'pimc:4' and 'pimc:rollouts=4' are one agent", "pimc:rollouts=4"),
    ),
    Case(
        "sb3_zip_without_allow_pickle",
        "cli",
        make_file("agents/m.zip", b"PK\x03\x04junk"),
        ("--name", "x", "--participants", "random", "{tmp}/agents/m.zip"),
        ("agents/m.zip: an SB3 .zip checkpoint", "--allow-pickle if you trust it"),
    ),
    Case(
        "sprt_alpha_nan_in_the_config",
        "cli",
        make_file(
            "sprt.yaml",
            b"name: x\nformat: gauntlet\ncandidate: random\nparticipants: [mixbot]\n"
            b"sprt: {alpha: .nan}\n",
        ),
        ("--config", "{tmp}/sprt.yaml"),
        ("sprt.alpha: expected a number in (0, 0.5), got nan",),
    ),
    Case(
        "sprt_nan_on_the_command_line",
        "cli",
        None,
        SPRT_NAN_ARGV,
        ("sprt.elo0", "nan"),
    ),
    Case(
        "rules_file_as_the_config",
        "cli",
        None,
        ("--config", str(ROOT / "configs" / "rules" / "official.yaml")),
        ("official.yaml is a rules file, not a tournament config", "--rules"),
    ),
    Case(
        "rules_file_with_switches_as_the_config",
        "cli",
        None,
        ("--config", str(ROOT / "configs" / "rules" / "street.yaml"), "--name", "x"),
        ("street.yaml is a rules file", "--rules"),
    ),
    Case(
        "name_with_a_nul",
        "cli",
        make_file("nul.yaml", b'name: "t\\0x"\nparticipants: [random, mixbot]\n'),
        ("--config", "{tmp}/nul.yaml"),
        ("name", "control character"),
    ),
    Case(
        "output_dir_is_a_file",
        "cli",
        make_file("a_file.txt", b"keep me\n"),
        ("--name", "x", "--participants", "random", "mixbot", "--output-dir", "{tmp}/a_file.txt"),
        ("a_file.txt",),
    ),
    # faulty agents: the tournament completes with forfeits
    Case("agent_act_raises", "agent", FaultyFactory("act_raises"), names=("act exploded",)),
    Case(
        "agent_reset_raises",
        "agent",
        FaultyFactory("reset_raises"),
        names=("reset raised RuntimeError: reset exploded",),
    ),
    Case(
        "agent_factory_raises",
        "agent",
        FaultyFactory("ok", raise_after=0),
        names=("could not be built: RuntimeError: factory exploded",),
    ),
    Case(
        "agent_factory_raises_for_one_chunk",
        "agent",
        FaultyFactory("ok", raise_after=1),
        names=("factory exploded",),
        extra={"some_played": True},
    ),
    Case("agent_returns_floats", "agent", FaultyFactory("floats"), names=("float64",)),
    Case("agent_out_of_range", "agent", FaultyFactory("out_of_range"), names=("out of range",)),
    Case("agent_negative_action", "agent", FaultyFactory("negative"), names=("out of range",)),
    Case("agent_wrong_shape", "agent", FaultyFactory("wrong_shape"), names=("expected",)),
    Case("agent_returns_none", "agent", FaultyFactory("none"), names=("expected",)),
    Case("agent_illegal_action", "agent", FaultyFactory("illegal"), names=("not legal",)),
    # Ctrl-C
    Case("interrupted_in_process", "interrupt", names=("interrupted; rerun to resume",)),
    Case(
        "interrupted_process",
        "interrupt",
        names=("interrupted; rerun to resume",),
        process=True,
    ),
]


def _ids(kind: str) -> list[Case]:
    return [c for c in CASES if c.kind == kind]


# --- helpers -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scratch folder holding one complete run folder ``base`` (8 games in 2 chunks)."""
    tmp = tmp_path_factory.mktemp("played")
    assert cli_main([*BASE_ARGV, "--output-dir", str(tmp)]) == 0
    assert len(_games(tmp).read_text().splitlines()) == 8
    return tmp


@pytest.fixture(autouse=True)
def _release_held() -> Iterator[None]:
    yield
    while _HELD:
        _HELD.pop().release()


def _snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every path under ``folder`` with its bytes (``None`` for folders, FIFOs and devices),
    the run folders' ``.lock`` left out (it records the pid of the last run)."""
    return {
        str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(folder.rglob("*"))
        if p.name != FolderLock.LOCK_NAME
    }


def _run_cli(
    argv: list[str], process: bool, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    if process:
        done = subprocess.run(
            [sys.executable, "-m", "tournament", *argv],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        return done.returncode, done.stdout, done.stderr
    code = cli_main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def _assert_refused(code: int, out: str, err: str, names: tuple[str, ...]) -> None:
    assert code == 2, (code, out, err)
    assert "Traceback" not in out + err
    lines = err.strip().splitlines()
    for name in names:
        assert name in err, (name, err)
    # argparse prints its usage first; everything else is one line "error: ..."
    assert lines[-1].startswith(("error: ", "python -m unolab.tournament: error: ")), err
    assert len([x for x in lines if not x.startswith(("usage:", " "))]) == 1, err


# --- the tests -----------------------------------------------------------------------------


@pytest.mark.timeout(60)  # a FIFO or /dev/zero read would hang: refused at once instead
@pytest.mark.parametrize("case", _ids("file"), ids=lambda c: c.id)
def test_bad_run_folder_is_refused(
    case: Case, played: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(played, tmp_path, dirs_exist_ok=True)
    if case.bad is not None:
        case.bad(tmp_path)
    before = _snapshot(tmp_path)
    argv = [*BASE_ARGV, "--output-dir", str(tmp_path), *case.argv]
    code, out, err = _run_cli(argv, case.process, capsys)
    _assert_refused(code, out, err, case.names)
    assert _snapshot(tmp_path) == before, "the run folder is untouched"


@pytest.mark.parametrize("case", _ids("cli"), ids=lambda c: c.id)
def test_bad_command_line_is_refused(
    case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if case.bad is not None:
        case.bad(tmp_path)
    before = _snapshot(tmp_path)
    argv = [a.replace("{tmp}", str(tmp_path)) for a in case.argv]
    argv += ["--output-dir", str(tmp_path / "runs"), "--no-progress", "--no-plots"]
    if "--output-dir" in case.argv:  # the case's own output folder comes last and wins
        i = case.argv.index("--output-dir")
        argv += ["--output-dir", case.argv[i + 1].replace("{tmp}", str(tmp_path))]
    code, out, err = _run_cli(argv, case.process, capsys)
    _assert_refused(code, out, err, case.names)
    assert _snapshot(tmp_path) == before, "nothing written, nothing lost"


@pytest.mark.parametrize("case", _ids("agent"), ids=lambda c: c.id)
def test_faulty_agent_forfeits_and_the_tournament_completes(case: Case, tmp_path: Path) -> None:
    config = load_config(
        {
            "name": "faulty",
            "participants": ["random", "greedy_points", {"name": "faulty", "bot": "mixbot"}],
            "deal_sets": 4,
            "games_per_chunk": 8,
            "bootstrap": 0,
            "output_dir": str(tmp_path),
        }
    )
    factory = FaultyFactory(case.bad.mode, case.bad.raise_after)  # a fresh build counter
    summary = run_tournament(
        config, overrides={"faulty": factory}, progress=False, plots=False, print_table=False
    )
    planned = summary["schedule"]["games_planned"]
    assert summary["schedule"]["complete"] and planned == 3 * 4 * 2
    lines = [json.loads(x) for x in (tmp_path / "faulty" / "games.jsonl").read_text().splitlines()]
    units = {(x["deal"], x["seating"], x["variant"]) for x in lines}
    assert len(lines) == len(units) == planned, "no game lost, none duplicated"
    forfeits = [x for x in lines if x["end"] == "forfeit"]
    assert forfeits, "the faulty agent forfeits"
    assert all(x["seats"][x["forfeit_seat"]] == "faulty" for x in forfeits)
    for name in case.names:
        assert all(name in x["reason"] for x in forfeits), (name, forfeits[0]["reason"])
    with_faulty = [x for x in lines if "faulty" in x["seats"]]
    if case.extra.get("some_played"):
        assert 0 < len(forfeits) < len(with_faulty), "only the failing chunk forfeits"
    elif case.bad.mode not in ("illegal",):
        assert len(forfeits) == len(with_faulty), "every game of the faulty agent forfeits"
    assert all(x["end"] == "won" for x in lines if "faulty" not in x["seats"])
    rows = {r["name"]: r for r in summary["leaderboard"]}
    assert rows["faulty"]["forfeits"] == len(forfeits)
    assert summary["endings"]["forfeits"]["faulty"]["games"] == len(forfeits)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("case", _ids("interrupt"), ids=lambda c: c.id)
def test_interrupted_run_keeps_its_games_and_resumes(
    case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = [
        "--name", "stop",
        "--participants", "random", "greedy_points",
        "--deal-sets", "400" if case.process else "8",
        "--games-per-chunk", "20" if case.process else "4",
        "--bootstrap", "0",
        "--no-progress",
        "--no-plots",
        "--output-dir", str(tmp_path),
    ]  # fmt: skip
    log = tmp_path / "stop" / "games.jsonl"
    if case.process:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tournament", *argv],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            # A run started from a background job inherits SIGINT ignored; a terminal's
            # Ctrl-C reaches a process with the default handler, so give it that one.
            preexec_fn=_default_sigint,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if log.is_file() and log.stat().st_size > 0:
                break
            time.sleep(0.01)
        assert proc.poll() is None, "the run ended before it could be interrupted"
        os.kill(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=120)
        code = proc.returncode
    else:
        from unolab.tournament import runner

        real = runner.play_chunk
        calls: list[int] = []

        def interrupted(*args: Any) -> Any:
            calls.append(1)
            if len(calls) == 2:
                raise KeyboardInterrupt
            return real(*args)

        monkeypatch.setattr(runner, "play_chunk", interrupted)
        code = cli_main(argv)
        out, err = capsys.readouterr()
        monkeypatch.setattr(runner, "play_chunk", real)
    assert code == 130, (code, err)
    assert "Traceback" not in out + err
    assert err.strip().splitlines() == list(case.names)
    kept = log.read_text().splitlines()
    assert kept and all(json.loads(x)["seats"] for x in kept), "finished games are kept"
    if not case.process:
        assert cli_main(argv) == 0, "rerunning resumes"
        assert log.read_text().splitlines()[: len(kept)] == kept
        assert len(log.read_text().splitlines()) == 8 * 2, "every game, once"


@pytest.mark.parametrize(
    "command",
    [("unolab.cli", "tournament"), ("unolab.tournament",)],
    ids=["uno-lab-tournament", "python-m-unolab.tournament"],
)
def test_a_reader_that_goes_away_ends_the_run_quietly(
    command: tuple[str, ...], tmp_path: Path
) -> None:
    """``uno-lab tournament ... | head``: the leaderboard finds the pipe closed, and the run
    ends without a word with 141, as a command killed by SIGPIPE (not 1, a machine fault)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", *command, *BASE_ARGV, "--output-dir", str(tmp_path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the leaderboard is printed
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 141, err
    assert err == ""
    assert len(_games(tmp_path).read_text().splitlines()) == 8, "the games are kept"
