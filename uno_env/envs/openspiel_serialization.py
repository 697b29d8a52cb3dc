"""The text of a serialized ``python_uno`` state, and OpenSpiel's game-and-state layout around it.

A state is written as text, never a pickle: the game's string (its parameters) on the first
line, then the history, one action per line (the 8 key bytes, then the decisions), and a line
``resample SEAT KEY`` where a resampling was drawn. ``pyspiel.serialize_game_and_state``'s
layout wraps it in ``[Meta]``, ``[Game]`` and ``[State]`` sections. This module writes both
and reads them into checked pieces, each error one ``ValueError`` naming the line; the state
replays the pieces (:meth:`~uno_env.envs.openspiel_classes.UnoOpenSpielGame.deserialize_state`).
A text read here never makes the lab open a file: its preset must be a named one.
"""

from __future__ import annotations

import re
from typing import Any

from uno_env.envs.openspiel_parameters import PARAMETERS, typed_parameters
from uno_env.envs.openspiel_views import GAME_NAME
from uno_env.files import shown
from uno_env.rules import PRESETS

__all__ = [
    "SERIALIZED_VERSION",
    "check_game_names_no_file",
    "check_named_preset",
    "game_and_state_sections",
    "game_and_state_text",
    "game_parameters",
    "line_resampling",
    "read_line",
    "state_lines",
    "state_text",
    "where",
]

_GAME_LINE = re.compile(r"([A-Za-z0-9_]+)\(([^()\n]*)\)")
"""A flat game string, ``name(key=value,...)``: how a state's text names its game."""
_NUMBER = re.compile(r"-?[0-9]+")
_DIGITS = re.compile(r"[0-9]+")
_RESAMPLE = re.compile(r"resample (\S+) (\S+)")


def where(line: int) -> str:
    """How an error names line ``line`` (from 1) of a serialized state."""
    return f"{GAME_NAME}: serialized state, line {line}"


def state_text(game: str, history: list[int], resamples: list[tuple[int, int, int]]) -> str:
    """A state's text: the game string, then one action per line from the root.

    Args:
        game: The game's string (``str(game)``).
        history: Every action applied from the root.
        resamples: ``(actions applied before it, seat, key)`` of each resampling, in order.
    """
    lines = [game]
    done = 0
    for moves, seat, key in resamples:
        lines.extend(map(str, history[done:moves]))
        lines.append(f"resample {seat} {key}")
        done = moves
    lines.extend(map(str, history[done:]))
    return "\n".join(lines) + "\n"


def state_lines(text: str) -> list[str]:
    """The lines of a state's text: a closing newline is optional, and a line may end in
    ``\\r`` (a text saved on Windows)."""
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    if len(lines) > 1 and not lines[-1]:
        lines.pop()
    return lines


def game_parameters(line: str) -> dict[str, Any]:
    """Every parameter (typed, defaults filled in) of a state's first line, ``python_uno(...)``.

    Raises:
        ValueError: naming the line, for a line that is no ``python_uno`` game string.
    """
    if line.startswith("history="):
        raise ValueError(
            f"{where(1)}: this is OpenSpiel's pickled form of a Python state, which "
            f"{GAME_NAME} never reads (unpickling it could run code); write states with "
            "state.serialize()"
        )
    match = _GAME_LINE.fullmatch(line)
    if match is None:
        raise ValueError(
            f"{where(1)}: the first line must be the game, {GAME_NAME}(...), got {shown(line)}"
        )
    if match[1] != GAME_NAME:
        raise ValueError(f"{where(1)}: a state of the game {shown(match[1])}, not {GAME_NAME}")
    given = typed_parameters(match[2].split(",") if match[2] else [], where(1))
    return {**PARAMETERS, **given}


def read_line(line: str, at: str) -> str | tuple[str, str]:
    """A line after the first: an action id as written, or a resampling's seat and key.

    Raises:
        ValueError: starting with ``at``, for a line that is neither.
    """
    resample = _RESAMPLE.fullmatch(line)
    if _NUMBER.fullmatch(line):
        return line
    if resample is not None:
        return resample[1], resample[2]
    raise ValueError(f"{at}: {shown(line)} is neither an action id nor 'resample SEAT KEY'")


def line_resampling(seat: str, key: str, num_players: int, at: str) -> tuple[int, int]:
    """The seat and key of a line ``resample SEAT KEY``, checked.

    Raises:
        ValueError: starting with ``at``, for a seat off the table or a key out of range.
    """
    if not _DIGITS.fullmatch(seat) or len(seat) > 2 or int(seat) >= num_players:
        raise ValueError(f"{at}: resample seat {shown(seat)}: a seat is 0..{num_players - 1}")
    if not _DIGITS.fullmatch(key) or len(key) > 20 or int(key) >= 2**64:
        raise ValueError(f"{at}: resample key {shown(key)}: a key is 0..2**64 - 1")
    return int(seat), int(key)


def check_named_preset(preset: Any, at: str) -> None:
    """Refuse a preset that is not a named one: a text handed over must not make the lab
    open a file (or quote one in an error)."""
    if preset not in PRESETS:
        raise ValueError(
            f"{at}: preset {shown(preset)} is no named preset ({', '.join(PRESETS)}); a "
            "state whose rules come from a file is read by loading that game yourself and "
            "calling game.deserialize_state(text)"
        )


_SERIALIZED_HEADER = "# Automatically generated by OpenSpiel SerializeGameAndState\n[Meta]\n"
_SECTIONS = {"[Meta]": 0, "[Game]": 1, "[State]": 2}
SERIALIZED_VERSION = "Version: 1"
"""The [Meta] section of a game and state written here (OpenSpiel's format version)."""


def game_and_state_text(game: str, state: str) -> str:
    """OpenSpiel's layout of a serialized game (``game.serialize()``) and state (its text)."""
    return f"{_SERIALIZED_HEADER}{SERIALIZED_VERSION}\n\n[Game]\n{game}\n[State]\n{state}\n"


def game_and_state_sections(text: str) -> tuple[str, str, str]:
    """The ``[Meta]``, ``[Game]`` and ``[State]`` sections of ``text``, read exactly as
    OpenSpiel's ``DeserializeGameAndState`` reads them (blank and ``#`` lines skipped).

    Raises:
        ValueError: naming the line, where OpenSpiel would refuse the layout (it says so
            in several lines of its C++ source).
    """
    found: list[list[str]] = [[], [], []]
    current = -1
    what = "deserialize_game_and_state: not a serialized game and state"
    order = "the sections are [Meta], [Game] and [State], in that order"
    for number, line in enumerate(text.split("\n"), start=1):
        if not line or line[0] == "#":
            continue
        header = _SECTIONS.get(line)
        if header is not None and current != header - 1:
            raise ValueError(f"{what}: line {number}, {shown(line)}, is out of order; {order}")
        if header is not None:
            current = header
        elif current < 0:
            ending = " (lines end with \\n alone, not \\r\\n)" if line.endswith("\r") else ""
            raise ValueError(
                f"{what}: line {number}, {shown(line)}, comes before [Meta]; {order}{ending}"
            )
        else:
            found[current].append(line)
    if current != _SECTIONS["[State]"]:
        raise ValueError(f"{what}: it ends before its [State] section; {order}")
    return "\n".join(found[0]), "\n".join(found[1]), "\n".join(found[2])


_NAMED_PRESET = re.compile("(?:" + "|".join(map(re.escape, PRESETS)) + ")[,)]")


def check_game_names_no_file(game_text: str) -> None:
    """Refuse a game string in which a ``python_uno`` game (within another game, such as
    ``misere(game=python_uno(...))``) could take its rules from a file.

    OpenSpiel reads a parameter ``preset`` only where ``preset=`` is written, its value up
    to the next ``,`` or ``)``: each ``preset=`` must be followed by a named preset there.
    """
    if GAME_NAME not in game_text:
        return
    for found in re.finditer("preset=", game_text):
        if not _NAMED_PRESET.match(game_text, found.end()):
            preset = re.split("[,)]", game_text[found.end() :], maxsplit=1)[0]
            raise ValueError(
                f"deserialize_game_and_state: the [Game] gives {GAME_NAME} the preset "
                f"{shown(preset)}, which is no named preset ({', '.join(PRESETS)}); a "
                "serialized state never makes the lab open a rules file"
            )
