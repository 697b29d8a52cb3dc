"""The checks of a record's values: what each value a published page shows must be.

A spec (:class:`Spec`) checks one JSON value and raises :class:`Invalid` naming its key path
(``results[3].win_rate``) and the problem; the specs compose (:class:`Object` of
:class:`ListOf`...), and :mod:`docs_records` states with them what each record holds. Every
value a page shows is checked before any page is written, so a damaged record is one line,
never a traceback from the middle of a table.
"""

from __future__ import annotations

import abc
import datetime
import math
import re
from collections.abc import Callable, Iterable
from typing import Any

from uno_env.files import shown

MAX_COUNT = 10**12
"""The most hands, games, steps or repeats a record may state."""
MAX_SECONDS = 10.0**9
"""The most seconds (or milliseconds) a record may state."""
MAX_NAME = 200
"""The longest name a table cell shows (an agent, an opponent, a figure)."""


class Invalid(Exception):
    """A value against its spec: the key path and the problem (one line for the user)."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(where, problem)
        self.where = where
        self.problem = problem


def join_key(where: str, key: str | int) -> str:
    """The key path of ``key`` inside ``where`` (``results[3]``, ``figures.name``)."""
    if isinstance(key, int):
        return f"{where}[{key}]"
    return f"{where}.{key}" if where else key


class Spec(abc.ABC):
    """What a record's value must be; :meth:`check` raises ``Invalid`` naming the problem."""

    @abc.abstractmethod
    def check(self, value: Any, where: str) -> None:
        """Check ``value``, found at ``where`` in the record."""


class Text(Spec):
    """Text; a ``name`` (what a Markdown table cell shows) is plain: one line, not empty,
    at most :data:`MAX_NAME` characters, without ``|``; a ``line`` is one line of prose."""

    def __init__(self, name: bool = False, line: bool = False) -> None:
        self.name, self.line = name, line or name

    def check(self, value: Any, where: str) -> None:
        if not isinstance(value, str):
            raise Invalid(where, f"expected text, got {shown(value)}")
        if self.line and not value.isprintable():
            raise Invalid(where, f"expected one line of text, got {shown(value[:MAX_NAME])}")
        if self.name and not 0 < len(value) <= MAX_NAME:
            raise Invalid(where, f"expected a name of 1 to {MAX_NAME} characters, got {len(value)}")
        if self.name and "|" in value:
            raise Invalid(where, f"a name in a table has no '|', got {shown(value)}")


class Date(Spec):
    """A day, as a measurement writes it: ``YYYY-MM-DD``."""

    def check(self, value: Any, where: str) -> None:
        TEXT.check(value, where)
        try:
            ok = len(value) == 10 and bool(datetime.date.fromisoformat(value))
        except ValueError:
            ok = False
        if not ok:
            raise Invalid(where, f"expected a date YYYY-MM-DD, got {shown(value)}")


class Choice(Spec):
    """One of the names ``names()`` gives (read when checked: the installed ones)."""

    def __init__(self, what: str, names: Callable[[], Iterable[str]]) -> None:
        self.what, self.names = what, names

    def check(self, value: Any, where: str) -> None:
        TEXT.check(value, where)
        known = tuple(self.names())
        if value not in known:
            raise Invalid(
                where, f"{shown(value[:MAX_NAME])} is not {self.what} ({', '.join(known)})"
            )


class Flag(Spec):
    def check(self, value: Any, where: str) -> None:
        if not isinstance(value, bool):
            raise Invalid(where, f"expected true or false, got {shown(value)}")


class Number(Spec):
    """A finite number in ``[low, high]`` (an integer when ``whole``; above ``low`` when
    ``above``)."""

    def __init__(self, low: float, high: float, whole: bool = False, above: bool = False):
        self.low, self.high, self.whole, self.above = low, high, whole, above

    def check(self, value: Any, where: str) -> None:
        kinds = (int,) if self.whole else (int, float)
        what = "an integer" if self.whole else "a number"
        if isinstance(value, bool) or not isinstance(value, kinds):
            raise Invalid(where, f"expected {what}, got {shown(value)}")
        low_ok = value > self.low if self.above else value >= self.low
        if not (math.isfinite(value) and low_ok and value <= self.high):
            opening = "(" if self.above else "["
            raise Invalid(
                where,
                f"expected {what} in {opening}{self.low:g}, {self.high:g}], got {shown(value)}",
            )


class ListOf(Spec):
    """A list of ``item``s: ``size`` of them, or at least ``least``."""

    def __init__(self, item: Spec, size: int | None = None, least: int = 0) -> None:
        self.item, self.size, self.least = item, size, least

    def check(self, value: Any, where: str) -> None:
        if not isinstance(value, list):
            raise Invalid(where, f"expected a list, got {shown(value)}")
        if self.size is not None and len(value) != self.size:
            raise Invalid(where, f"expected a list of {self.size}, got {shown(value)}")
        if len(value) < self.least:
            raise Invalid(where, f"expected at least {self.least} item(s), got {shown(value)}")
        for i, item in enumerate(value):
            self.item.check(item, join_key(where, i))


class Either(Spec):
    """One of several specs (``None`` allowed when ``null``)."""

    def __init__(self, *options: Spec, null: bool = False) -> None:
        self.options, self.null = options, null

    def check(self, value: Any, where: str) -> None:
        if value is None and self.null:
            return
        if len(self.options) == 1:  # its own message, naming the key deep inside
            self.options[0].check(value, where)
            return
        problems = []
        for option in self.options:
            try:
                option.check(value, where)
                return
            except Invalid as bad:
                problems.append(bad.problem)
        raise Invalid(where, " or ".join(dict.fromkeys(problems)))


class Object(Spec):
    """A JSON object with required and optional keys (other keys are kept, unread)."""

    def __init__(self, required: dict[str, Spec], optional: dict[str, Spec] | None = None):
        self.required, self.optional = required, optional or {}

    def check(self, value: Any, where: str) -> None:
        if not isinstance(value, dict):
            raise Invalid(where, f"expected an object, got {shown(value)}")
        missing = [key for key in self.required if key not in value]
        if missing:
            raise Invalid(where, f"missing key(s) {', '.join(missing)}")
        for key, spec in (*self.required.items(), *self.optional.items()):
            if key in value:
                spec.check(value[key], join_key(where, key))


class All(Spec):
    """Every one of several specs, in turn."""

    def __init__(self, *specs: Spec) -> None:
        self.specs = specs

    def check(self, value: Any, where: str) -> None:
        for spec in self.specs:
            spec.check(value, where)


class Figures(Spec):
    """An object of figures by name; each name becomes a file name (``img/curves/NAME.png``)."""

    def __init__(self, item: Spec) -> None:
        self.item = item

    def check(self, value: Any, where: str) -> None:
        if not isinstance(value, dict):
            raise Invalid(where, f"expected an object of figures by name, got {shown(value)}")
        for name, figure in value.items():
            if not _PLAIN_NAME.fullmatch(name):
                raise Invalid(
                    join_key(where, name),
                    "a figure's name is its picture's file name: letters, digits, '_', '-' "
                    "and '.', not starting with '.'",
                )
            self.item.check(figure, join_key(where, name))


class Interval(Spec):
    """A row with ``win_rate`` inside ``[ci_low, ci_high]`` (already checked as rates), its
    ``games`` at least 1 (a rate of no game is none), and its ``wins`` and ``truncated``
    hands (where given) at most its ``games``."""

    def __init__(self, row: Object) -> None:
        self.row = row

    def check(self, value: Any, where: str) -> None:
        self.row.check(value, where)
        if value["games"] < 1:
            raise Invalid(
                join_key(where, "games"),
                f"{value['games']} games played, yet a win rate is stated; a measured row "
                "has at least 1 game",
            )
        if value["ci_low"] > value["ci_high"]:
            raise Invalid(
                join_key(where, "ci_low"),
                f"{value['ci_low']} is above ci_high {value['ci_high']}",
            )
        for part in ("wins", "truncated"):
            if value.get(part, 0) > value["games"]:
                raise Invalid(
                    join_key(where, part),
                    f"{value[part]} is more than the {value['games']} games played",
                )
        if not value["ci_low"] <= value["win_rate"] <= value["ci_high"]:
            raise Invalid(
                join_key(where, "win_rate"),
                f"{value['win_rate']} is outside its interval [{value['ci_low']}, "
                f"{value['ci_high']}]",
            )


class Range(Spec):
    """A range ``[low, high]`` of ``item``s, ``low`` at most ``high`` (shown as low-high)."""

    def __init__(self, item: Spec) -> None:
        self.pair = ListOf(item, 2)

    def check(self, value: Any, where: str) -> None:
        self.pair.check(value, where)
        if value[0] > value[1]:
            raise Invalid(where, f"a range runs from low to high, got {shown(value)}")


MAX_CELL = 4000
"""The longest cell of a measured experiment's table (a finding's result in words)."""
NUMBER_FORMATS = re.compile(r",?\.\d[f%]|,?d")
"""The formats a number in a table cell may state (Python's format specifications): fixed
decimals (``.4f``), a percentage (``.1%``), a whole number (``d``), each optionally with
thousands separators (``,d``)."""


class Cell(Spec):
    """A cell of a measured experiment's table: its text (one line, without ``|``, at most
    :data:`MAX_CELL` characters, maybe empty), or a number with the format it is shown in
    (``{"value": 0.0751, "format": ".4f"}``, :data:`NUMBER_FORMATS`)."""

    def check(self, value: Any, where: str) -> None:
        if isinstance(value, dict):
            _NUMBER_CELL.check(value, where)
            if not NUMBER_FORMATS.fullmatch(value["format"]):
                raise Invalid(
                    join_key(where, "format"),
                    f"{shown(value['format'][:MAX_NAME])} is not a number format a table "
                    "shows (such as .4f, .1%, d or ,d)",
                )
            if value["format"].endswith("d") and not isinstance(value["value"], int):
                raise Invalid(
                    join_key(where, "value"),
                    f"the format {value['format']!r} shows a whole number, got "
                    f"{shown(value['value'])}",
                )
            return
        if not isinstance(value, str):
            raise Invalid(where, f"expected text or a number with its format, got {shown(value)}")
        LINE.check(value, where)
        if "|" in value or len(value) > MAX_CELL:
            raise Invalid(
                where,
                f"a table cell is one line of at most {MAX_CELL} characters without '|', got "
                f"{shown(value[:MAX_NAME])}",
            )


_PLAIN_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,99}")

# The values most records hold: any text, a name a table cell shows, one line of prose, a
# day, a rate, a count of hands, a seed, a time, a win rate with its interval.
TEXT = Text()
NAME = Text(name=True)
LINE = Text(line=True)
DATE = Date()
RATE = Number(0, 1)
COUNT = Number(0, MAX_COUNT, whole=True)
SEED = Number(0, 2**64 - 1, whole=True)
SECONDS = Number(0, MAX_SECONDS)
RATES = {"win_rate": RATE, "ci_low": RATE, "ci_high": RATE}
_NUMBER_CELL = Object({"value": Number(-MAX_COUNT, MAX_COUNT), "format": Text(line=True)})
