"""The records the generated pages are made from: where they are, how they are read, and
what each holds.

Every record and page is read bounded, as a regular UTF-8 file, and checked against its spec
(:mod:`record_checks`) before any page is written. A damaged record (truncated, empty, not
UTF-8, a folder, a FIFO or a link loop in its place, a list where an object belongs, NaN, a
key missing...) is a :class:`RecordError`: one line naming the file and the key or the line,
and what to do.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from record_checks import (
    COUNT,
    DATE,
    LINE,
    MAX_COUNT,
    NAME,
    RATE,
    RATES,
    SECONDS,
    SEED,
    TEXT,
    All,
    Cell,
    Choice,
    Either,
    Figures,
    Flag,
    Interval,
    Invalid,
    ListOf,
    Number,
    Object,
    Range,
    Spec,
    join_key,
)

from uno_env.cards import MAX_PLAYERS
from uno_env.files import UnreadableFileError, read_regular_file
from uno_env.rules import MAX_TURNS_LIMIT, PRESETS
from unolab.agents.registry import shipped_agent_names

ROOT = Path(__file__).resolve().parent.parent
"""The repository's root (the docs are not part of the installed package)."""
COMMAND = "python tools/published.py"
"""The command that writes the generated pages, as the pages and its messages name it."""

STRENGTH_RECORDS = (
    "pretrained_strength.json",
    "search_strength.json",
    "bot_strength.json",
    "bot_strength_vs_random_action.json",
    "search_budgets.json",
)
"""The strength records under docs/, in the order of results.md."""
CROSSCHECK = Path("data") / "openspiel_crosscheck.json"
"""The OpenSpiel cross-check's record, under docs/."""
CURVES = Path("data") / "training_curves.json"
"""The learning curves' record, under docs/."""
CURVE_PICTURES = Path("img") / "curves"
"""Where the curves' pictures go, under docs/."""
MAX_RECORD_BYTES = 16 * 2**20
"""The largest record or page read (the committed ones are a few kilobytes)."""


class RecordError(ValueError):
    """A record (or a page) cannot be read or holds what no measurement writes.

    The message is one line naming the file, the key (``results[3].win_rate``) or the line,
    and what to do.
    """


def shown_path(path: Path, root: Path) -> str:
    """``path`` as the user knows it: relative to the checkout when inside it."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def read_text(path: Path, root: Path, what: str = "record") -> str:
    """The UTF-8 text of a record or a page, read bounded and as a regular file.

    Raises:
        RecordError: naming the file, when it is missing, a folder, a link loop, not a
            regular file, too large or not UTF-8 text.
    """
    where = shown_path(path, root)
    try:
        raw = read_regular_file(path, MAX_RECORD_BYTES, what)
    except UnreadableFileError as err:
        reason = str(err).replace(f"{what} {str(path)!r}", "").strip()
        raise RecordError(
            f"{where}: {reason}; restore it from git (git checkout -- {where})"
        ) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise RecordError(
            f"{where}: line {line}: not UTF-8 text (byte 0x{raw[err.start]:02x}); restore it "
            f"from git (git checkout -- {where})"
        ) from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number a measurement writes")


def parse_json(text: str) -> Any:
    """The JSON value of ``text``, refusing NaN and the infinities (no measurement writes them).

    Raises:
        ValueError: for text that is not JSON (a :class:`json.JSONDecodeError`), NaN or an
            infinity, or an integer past Python's digit limit.
        RecursionError: for JSON nested too deeply.
    """
    return json.loads(text, parse_constant=_reject_constant)


def load_json(path: Path, root: Path) -> Any:
    """The JSON value of a record file, without NaN or infinities.

    Raises:
        RecordError: naming the file (and the line of a syntax error).
    """
    where = shown_path(path, root)
    text = read_text(path, root)
    if not text.strip():
        raise RecordError(
            f"{where}: the file is empty; restore it from git (git checkout -- {where})"
        )
    try:
        return parse_json(text)
    except json.JSONDecodeError as err:
        raise RecordError(
            f"{where}: line {err.lineno} column {err.colno}: not valid JSON ({err.msg}); "
            f"restore it from git (git checkout -- {where})"
        ) from None
    except ValueError as err:  # a rejected constant, or an integer past Python's digit limit
        raise RecordError(f"{where}: {' '.join(str(err).split())}; fix the record") from None
    except RecursionError:
        raise RecordError(f"{where}: the JSON is nested too deeply; fix the record") from None


_STRENGTH_ROW = Interval(
    Object(
        {
            "candidate": NAME,
            "num_players": Number(2, MAX_PLAYERS, whole=True),
            "opponent": NAME,
            **RATES,
            "games": COUNT,
        },
        {
            "wins": COUNT,
            "truncated": COUNT,
            "seat_games": ListOf(COUNT),
            "seat_wins": ListOf(COUNT),
            "seed": SEED,
            "date": DATE,
            "fair_share": RATE,
            "mean_turns": Number(0, MAX_TURNS_LIMIT),
            "budget": Either(NAME, null=True),
            "rollouts": COUNT,
            "ms_per_decision": Either(SECONDS, Range(SECONDS), null=True),
            "note": LINE,
            "headline": Flag(),
        },
    )
)
_STRENGTH_HEAD = {
    "description": LINE,
    "preset": Choice("a rules preset", lambda: PRESETS),
    "games_per_pairing": Number(1, MAX_COUNT, whole=True),
    "seed": SEED,
    "seconds": SECONDS,
    "date": DATE,
    "python": LINE,
    "opponent": NAME,
    "opponents": ListOf(NAME),
}
"""What a strength record states beside its rows."""
STRENGTH = Object({"results": ListOf(_STRENGTH_ROW, least=1)}, _STRENGTH_HEAD)
"""A strength record (``bot_strength.json`` and the others of :data:`STRENGTH_RECORDS`)."""


class _Budgeted(Spec):
    """A search's row: its budget in words, or its rollouts per action."""

    def check(self, value: Any, where: str) -> None:
        _STRENGTH_ROW.check(value, where)
        if not value.get("budget") and "rollouts" not in value:
            raise Invalid(where, "missing key(s) budget or rollouts (the search's budget)")


SEARCHES = Object({"results": ListOf(_Budgeted(), least=1)}, _STRENGTH_HEAD)
"""A search strength record, as its ``searches`` table reads it."""

PRETRAINED = All(
    STRENGTH,
    Object(
        {"results": ListOf(Object({"candidate": Choice("a shipped agent", shipped_agent_names)}))}
    ),
)
"""``pretrained_strength.json``: a strength record of the shipped agents."""

BENCHMARKS = Object(
    {
        "description": LINE,
        "machine": LINE,
        "date": DATE,
        "figures": ListOf(
            Object(
                {
                    "figure": NAME,
                    "ratio": Number(0, 10.0**6, above=True),
                    "peer": NAME,
                    "repeats": Number(1, MAX_COUNT, whole=True),
                },
                {"headline": Flag()},
            ),
            least=1,
        ),
    }
)
"""The speed record (``benchmarks.json``)."""

CROSSCHECK_RECORD = Object(
    {
        "description": LINE,
        "seed": SEED,
        "date": DATE,
        "results": ListOf(
            Interval(
                Object(
                    {"iterations": COUNT, "searcher": NAME, **RATES, "games": COUNT},
                    {"rules": NAME, "median_ms_per_decision": Either(SECONDS, null=True)},
                )
            )
        ),
    }
)
"""The OpenSpiel cross-check's record."""

CURVES_RECORD = Object(
    {
        "description": TEXT,
        "figures": Figures(
            Object(
                {
                    "title": LINE,
                    "description": LINE,
                    "command": LINE,
                    "date": DATE,
                    "machine": LINE,
                    "lines": ListOf(
                        Object(
                            {
                                "label": NAME,
                                "points": ListOf(
                                    Interval(
                                        Object(
                                            {
                                                "steps": COUNT,
                                                "opponent": NAME,
                                                **RATES,
                                                "games": COUNT,
                                            }
                                        )
                                    )
                                ),
                            },
                            {"seconds": SECONDS},
                        )
                    ),
                },
                {"fair_share": RATE},
            )
        ),
    }
)
"""The learning curves' record."""

_SIGNED = Number(-1, 1)
_ESTIMATED = {
    "hands": COUNT,
    "seconds": SECONDS,
    "estimate": Object(
        {
            **RATES,
            "exploitability": _SIGNED,
            "exploitability_low": _SIGNED,
            "exploitability_high": _SIGNED,
        }
    ),
}
"""What both estimates of an exploit result state: the fresh hands, their time, the estimate."""
_PPO_PART = Object(
    {**_ESTIMATED, "steps": COUNT, "init_from": NAME},
    {"curve": ListOf(Object({"steps": COUNT, "win_rate": RATE, "games": COUNT}))},
)
_SEARCH_PART = Object({**_ESTIMATED, "rollouts": COUNT})
EXPLOIT_RESULT = Object(
    {"agent": NAME, "num_players": Number(2, MAX_PLAYERS, whole=True)},
    {"ppo": Either(_PPO_PART, null=True), "search": Either(_SEARCH_PART, null=True)},
)
"""One result of ``uno-lab exploit --out``: what a row of the exploitability table shows."""
EXPLOIT_RECORD = Object({"results": ListOf(EXPLOIT_RESULT)})
"""The exploitability table's data (``docs/data/exploitability.json``)."""


class _Measured(Spec):
    """A measured experiment's table: what it shows, what it was measured with (at least one
    of the command, the method, the machine and the date), its columns, and rows of as many
    cells as there are columns."""

    _SHAPE = Object(
        {
            "description": LINE,
            "measured_with": Object(
                {}, {"command": LINE, "method": LINE, "machine": LINE, "date": DATE}
            ),
            "columns": ListOf(Cell(), least=1),
            "rows": ListOf(ListOf(Cell()), least=1),
        }
    )

    def check(self, value: Any, where: str) -> None:
        self._SHAPE.check(value, where)
        facts = ("command", "method", "machine", "date")
        if not any(fact in value["measured_with"] for fact in facts):
            raise Invalid(
                join_key(where, "measured_with"),
                f"state at least one of {', '.join(facts)}: what the figures were measured with",
            )
        columns = len(value["columns"])
        for i, row in enumerate(value["rows"]):
            if len(row) != columns:
                raise Invalid(
                    join_key(join_key(where, "rows"), i),
                    f"{len(row)} cell(s) in a table of {columns} columns; give one per column",
                )


MEASURED = _Measured()
"""A measured one-off experiment's table (``docs/data/<experiment>.json``), shown as it
states it: the ``measured`` kind of marked table."""


def checked(path: Path, root: Path, spec: Spec) -> dict[str, Any]:
    """The record at ``path``, checked against ``spec``.

    Raises:
        RecordError: one line naming the file and the key.
    """
    data = load_json(path, root)
    where = shown_path(path, root)
    if not isinstance(data, dict):
        raise RecordError(
            f"{where}: a record is a JSON object, found a {type(data).__name__}; restore it "
            f"from git (git checkout -- {where})"
        )
    try:
        spec.check(data, "")
    except Invalid as bad:
        raise RecordError(
            f"{where}: {bad.where or 'the record'}: {bad.problem}; fix the record, or restore "
            f"it from git (git checkout -- {where})"
        ) from None
    return data


def present(path: Path) -> bool:
    """Whether anything is at ``path`` (a folder or a broken link too: those are refused
    when read, never taken for a missing optional record)."""
    return path.exists() or path.is_symlink()


_RECORD_SPECS: dict[str, Spec] = {"pretrained_strength.json": PRETRAINED}
"""What a strength record holds beyond :data:`STRENGTH`, by its name under docs/."""


def load_record(root: Path, name: str | Path, spec: Spec | None = None) -> dict[str, Any]:
    """The record ``docs/<name>``, checked against ``spec`` (by default, what its name holds:
    :data:`_RECORD_SPECS`, else a strength record)."""
    if spec is None:
        spec = _RECORD_SPECS.get(Path(name).as_posix(), STRENGTH)
    return checked(root / "docs" / name, root, spec)
