"""The parameters of ``python_uno``: their defaults, their checks, the rules they give, the game
strings that spell them, and ``pyspiel.load_game`` with them checked first.

``preset`` (a rules preset or the path of a rules YAML file) and every field of
:class:`uno_env.rules.Rules` by its name, with the official default. A switch changes the
preset's rules only when it differs from the official default, because OpenSpiel fills every
parameter that is not given with its default. Every way in (the game class,
``pyspiel.load_game``, a serialized state) checks the parameters here, so that a bad one is
one ``ValueError`` naming it and its value, never OpenSpiel's words of C++ types.

The game puts :func:`load_game` (and its serialization functions) in ``pyspiel``'s place
with :func:`put_in_pyspiel`, which keeps OpenSpiel's own functions (:func:`openspiel_own`)
for every other game.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from uno_env.envs.openspiel_checks import require_pyspiel
from uno_env.envs.openspiel_views import GAME_NAME
from uno_env.files import shown
from uno_env.rules import Rules, load_rules

__all__ = [
    "PARAMETERS",
    "check_parameters",
    "load_game",
    "openspiel_own",
    "put_in_pyspiel",
    "rules_from_parameters",
    "string_parameters",
    "typed_parameters",
]

_RULE_DEFAULTS: dict[str, Any] = {
    field.name: getattr(Rules(), field.name) for field in dataclasses.fields(Rules)
}
# OpenSpiel parameters cannot be None: the rules' "auto" (None) is True here, and only
# False (off) is ever passed on (see rules_from_parameters).
_RULE_DEFAULTS["two_player_rules"] = True

PARAMETERS: dict[str, Any] = {"preset": "official", **_RULE_DEFAULTS}
"""The game's parameters and their defaults: ``preset`` and every field of ``Rules``."""

_KINDS = {bool: "True or False", int: "an integer", str: "a string"}


def check_parameters(params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` checked by name and type, as plain Python values (NumPy's too).

    One check for every way in (the class, ``pyspiel.load_game``, a serialized state):
    OpenSpiel's own would refuse a NumPy integer in words of C++ types.

    Raises:
        TypeError: for params that are not a mapping.
        ValueError: naming an unknown parameter, or a parameter and its value of the
            wrong type.
    """
    if not isinstance(params, Mapping):
        raise TypeError(
            f"{GAME_NAME}: params must be a mapping of parameter names to values, got "
            f"{shown(params)}"
        )
    checked: dict[str, Any] = {}
    for name, value in params.items():
        if name not in PARAMETERS:
            raise ValueError(
                f"{GAME_NAME}: unknown parameter {shown(name)}; parameters are "
                + ", ".join(PARAMETERS)
            )
        kind = type(PARAMETERS[name])
        if kind is bool and isinstance(value, (bool, np.bool_)):
            checked[name] = bool(value)
        elif kind is int and not isinstance(value, bool) and isinstance(value, (int, np.integer)):
            checked[name] = int(value)
        elif kind is str and isinstance(value, str):
            checked[name] = str(value)
        else:
            raise ValueError(
                f"{GAME_NAME}: parameter {name!r} must be {_KINDS[kind]}, got {shown(value)}"
            )
    return checked


def rules_from_parameters(params: Mapping[str, Any]) -> Rules:
    """The rules of a ``python_uno`` game from its parameters.

    The preset gives the rules; each switch that differs from its official default (see
    :data:`PARAMETERS`) then replaces the preset's value.

    Args:
        params: Any of :data:`PARAMETERS` (the others take their defaults); NumPy integers
            and booleans are taken as Python's.

    Returns:
        The validated rules.

    Raises:
        TypeError: for params that are not a mapping.
        ValueError: naming an unknown parameter, a value of the wrong type, an unknown
            preset or an invalid rule combination (:class:`uno_env.ConfigError`).
    """
    checked = check_parameters(params)
    changes = {
        name: value
        for name, value in checked.items()
        if name != "preset" and value != PARAMETERS[name]
    }
    return load_rules(str(checked.get("preset", PARAMETERS["preset"])), **changes)


_INTEGER = re.compile(r"[+-]?[0-9]+")
"""An integer parameter as OpenSpiel reads one from a game string."""
_MAX_DIGITS = 9
"""The most digits of an integer parameter read from a state's text (OpenSpiel's integer
parameters are 32-bit; every rule's bound is far below)."""


def _parameter(name: str, value: str, where: str) -> Any:
    """A parameter of a game string, typed like its default in :data:`PARAMETERS`."""
    default = PARAMETERS[name]
    if isinstance(default, bool):
        if value in ("True", "true", "False", "false"):
            return value in ("True", "true")
        raise ValueError(f"{where}: parameter {name} must be True or False, got {shown(value)}")
    if isinstance(default, int):
        if not _INTEGER.fullmatch(value) or len(value.lstrip("+-")) > _MAX_DIGITS:
            raise ValueError(
                f"{where}: parameter {name} must be an integer of at most {_MAX_DIGITS} "
                f"digits, got {shown(value)}"
            )
        return int(value)
    if value.endswith(")"):  # OpenSpiel would read it as a game
        raise ValueError(f"{where}: parameter {name} must be a string, got the game {shown(value)}")
    return value


def typed_parameters(items: list[str], where: str) -> dict[str, Any]:
    """The typed parameters of a game string's ``key=value`` items (each name once).

    Raises:
        ValueError: starting with ``where``, naming the item, the parameter or its value.
    """
    given: dict[str, Any] = {}
    for item in items:
        name, equals, value = item.partition("=")
        if not item:
            raise ValueError(f"{where}: an empty parameter (a comma too many)")
        if name not in PARAMETERS:
            raise ValueError(
                f"{where}: unknown parameter {shown(name)}; parameters are " + ", ".join(PARAMETERS)
            )
        if not equals or name in given:
            why = "has no value" if not equals else "is given twice"
            raise ValueError(f"{where}: parameter {name} {why}")
        given[name] = _parameter(name, value, where)
    return given


def _top_level_items(body: str) -> list[str] | None:
    """``body`` split at its commas outside brackets, as OpenSpiel splits the parameters of
    a game string; ``None`` for brackets that do not balance."""
    items: list[str] = []
    depth = start = 0
    for at, char in enumerate(body):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                return None
        elif char == "," and depth == 0:
            items.append(body[start:at])
            start = at + 1
    if depth:
        return None
    return [*items, body[start:]] if body else items


def string_parameters(text: str) -> dict[str, Any]:
    """The parameters given in a game string ``python_uno(key=value,...)``, typed.

    Raises:
        ValueError: naming the string, or the parameter and its value as written.
    """
    name, bracket, rest = text.partition("(")
    items = _top_level_items(rest[:-1]) if rest.endswith(")") else None
    if name != GAME_NAME or (bracket and items is None):
        raise ValueError(
            f"{GAME_NAME}: game string {shown(text)} is not {GAME_NAME}(key=value,...): its "
            "brackets must close, at the end"
        )
    return typed_parameters(items or [], f"{GAME_NAME}: game string")


_OPENSPIEL_FUNCTIONS: dict[str, Callable[..., Any]] = {}
"""OpenSpiel's own ``load_game``, ``serialize_game_and_state`` and
``deserialize_game_and_state``, kept when :func:`put_in_pyspiel` puts the game's in their
place."""
_OPENSPIEL_OWN = "openspiel_own"
"""The attribute of each function put in ``pyspiel``'s place that holds OpenSpiel's own: a
second registration (or a reload of the game's module) finds OpenSpiel's there, never ours."""


def openspiel_own(name: str) -> Callable[..., Any]:
    """OpenSpiel's own ``pyspiel`` function ``name``, also after ours took its place.

    Raises:
        ImportError: without OpenSpiel (saying how to install it).
    """
    spiel = require_pyspiel()
    own = _OPENSPIEL_FUNCTIONS.get(name)
    if own is None:
        current = getattr(spiel, name)
        own = getattr(current, _OPENSPIEL_OWN, current)
    return own


def put_in_pyspiel(functions: Mapping[str, Callable[..., Any]]) -> None:
    """Put each function in place of ``pyspiel``'s function of its name, keeping OpenSpiel's
    own (:func:`openspiel_own`): a second call, or one with a reloaded module's functions,
    keeps OpenSpiel's own as the ones called.

    Raises:
        ImportError: without OpenSpiel (saying how to install it).
    """
    spiel = require_pyspiel()
    for name, function in functions.items():
        current = getattr(spiel, name)
        own = getattr(current, _OPENSPIEL_OWN, current)  # ours already there: OpenSpiel's
        _OPENSPIEL_FUNCTIONS[name] = own
        setattr(function, _OPENSPIEL_OWN, own)
        setattr(spiel, name, function)


def load_game(game: Any, params: Mapping[str, Any] | None = None) -> Any:
    """``pyspiel.load_game``, with ``python_uno``'s parameters checked before OpenSpiel's.

    ``load_game("python_uno(num_players=3)")`` and ``load_game("python_uno", {...})`` check
    every parameter here (:func:`rules_from_parameters`; NumPy integers and booleans are
    taken as Python's), so that a bad one is one line naming it and its value, not
    OpenSpiel's C++ words (a 32-bit cast, a check of its parser). Every other game, and
    OpenSpiel's other forms of the call, go to OpenSpiel's own ``load_game`` unchanged.
    Registering the game (:func:`uno_env.envs.openspiel_game.register`) puts this function
    in ``pyspiel``'s place.

    Args:
        game: A game string, or a game's short name.
        params: The game's parameters, by name.

    Returns:
        The game (OpenSpiel's own ``load_game``'s).

    Raises:
        TypeError: for ``python_uno`` params that are not a mapping.
        ValueError: for a ``python_uno`` game string that is not ``python_uno(key=value,...)``,
            or naming a ``python_uno`` parameter and its bad value (:class:`uno_env.ConfigError`
            for a rule out of bounds).
    """
    own = openspiel_own("load_game")
    if params is None and isinstance(game, str) and game.partition("(")[0] == GAME_NAME:
        game, params = GAME_NAME, string_parameters(game)
    if params is None:
        return own(game)
    if not (isinstance(game, str) and game == GAME_NAME):
        return own(game, params)
    checked = check_parameters(params)
    rules_from_parameters(checked)  # bounds too: OpenSpiel's 32-bit cast fails in C++ words
    return own(GAME_NAME, checked)
