"""
# UNO (OpenSpiel)

UNO as an OpenSpiel game, ``python_uno``. One game is one hand of UNO, played by the batched
uno-lab core (B = 1); this module only adapts it: every rule comes from :mod:`uno_env.core`.

| Import             | `import uno_env.envs.openspiel_game` registers `python_uno`      |
|--------------------|------------------------------------------------------------------|
| Load               | `pyspiel.load_game("python_uno", {"num_players": 3})`            |
| Players            | 2 to 10                                                          |
| Dynamics           | sequential                                                       |
| Chance mode        | explicit stochastic: 8 chance nodes of 256 outcomes at the root  |
| Information        | imperfect                                                        |
| Utility            | zero-sum, terminal rewards in [-1, 1]                            |
| Actions            | 80 ids (`docs/engine.md`), named by `uno_env.cards.action_name`  |
| Observation tensor | (OBS_DIM,) float32: `uno_env.observation.encode`, named slices   |
| Information state  | a perfect-recall string (no information-state tensor)            |
| Max game length    | the rules' `max_turns` decisions (then the hand is truncated)    |

Needs OpenSpiel: ``pip install 'uno-lab[openspiel]'``. The module imports without it; using
it then raises an ``ImportError`` that says so. See ``docs/openspiel.md``.

### Parameters

``preset`` (default ``"official"``): a rules preset of :data:`uno_env.rules.PRESETS` (or the
path of a rules YAML file), and every field of :class:`uno_env.rules.Rules` by its name, with
the official default (``num_players`` 2). A switch changes the preset's rules only when it
differs from the official default, because OpenSpiel fills every parameter that is not given
with its default (and ``game.to_string()`` lists them all): ``python_uno(preset=street)``
keeps the street rules. ``two_player_rules`` is a bool here (OpenSpiel parameters cannot be
``None``): ``True``, the default, is the rules' default (the two-player rules exactly at a
two-player table); ``False`` turns them off. An unknown parameter, a value of the wrong type
or out of bounds, or an invalid combination is one ``ValueError`` naming the parameter and
its value: the module puts :func:`load_game` in ``pyspiel.load_game``'s place, which checks
``python_uno``'s parameters (in a game string or a mapping; NumPy integers are taken as
ints) before OpenSpiel's own ``load_game`` sees them, and passes every other game on.

### Chance

Every random event of a hand (the deal, the dealer, the starter, each reshuffle, the random
rules) is a function of the game's 64-bit key (:mod:`uno_env.rng`). The key is drawn at the
root by 8 explicit chance nodes, one byte each (most significant first), uniform over 0-255:
the key is uniform over 2**64, exactly the lab's distribution of deals, and after the eighth
byte the game is deterministic given the players' actions. :func:`key_actions` gives the
chance outcomes of a given key, so ``UnoGame(seed=s)`` is the state reached with
``key_actions(UnoGame(seed=s).key)``.

### Observations

The observation tensor is the lab's :func:`uno_env.observation.encode` from the observing
seat (one dict entry per field of :data:`uno_env.observation.OBS_FIELDS`); the observation
string renders the same vector as text. The information-state string has perfect recall: the
seat, the deal's public facts, every step's public action and its public result (card counts,
top card and colour, draw pile, the seat to act and its phase, the events of
:mod:`uno_env.core.events`), the seat's own hand whenever it changed, and the current
observation. Nothing hidden from the seat is in either.

### Resampling

``state.resample_from_infostate(player, sampler)`` returns a state the seat cannot tell from
this one, drawn by :func:`uno_env.core.determinize` with a key from ``sampler`` (the other
hands, the draw pile, a card another seat just drew, a pending Wild Draw Four's legality).
Its ``history()`` is this state's (including the original key bytes): replaying the history
gives the original game, while ``clone()`` and ``serialize()`` keep the sample. In a sample
the other seats' own cards before the resampling are not known (their information-state
strings say so).

### Serialization

``state.serialize()`` writes text, never a pickle: the game's string (its parameters) on
the first line, then the history, one action per line (the 8 key bytes, then the
decisions), OpenSpiel's convention for its C++ games; a state drawn by
``resample_from_infostate`` also has a line ``resample SEAT KEY`` where it was drawn.
``game.deserialize_state(text)`` (and :func:`load_state`, which takes the game from the
text) rebuilds the state by replaying the lines, each action checked against the legal ones
at its point: no code runs, no file is opened (a text's preset must be a named one), and
anything else is one ``ValueError`` naming the line. The module puts
:func:`serialize_game_and_state` and :func:`deserialize_game_and_state` in ``pyspiel``'s
place, so that ``pyspiel``'s functions of those names use this format for ``python_uno``
and OpenSpiel's for its own C++ games; a serialized state of any other game written in
Python is refused, because OpenSpiel's own path for Python games unpickles it.
``pickle`` writes the text too (``copy`` and ``clone()`` copy the state directly).
"""

from __future__ import annotations

import dataclasses
import numbers
import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

import numpy as np

from uno_env import cards as C
from uno_env import core
from uno_env.core import IllegalActionError, UnoState
from uno_env.envs.openspiel_views import (
    GAME_NAME,
    InfoStateObserver,
    ObservationObserver,
    PublicTable,
    check_player,
    colour_text,
    hand_text,
    step_of,
)
from uno_env.files import shown
from uno_env.rules import PRESETS, Rules, load_rules

try:
    import pyspiel
except ImportError:  # optional: the module still imports, and says how to install it
    pyspiel = None

__all__ = [
    "INSTALL_HINT",
    "KEY_BYTES",
    "PARAMETERS",
    "UnoOpenSpielGame",
    "UnoOpenSpielState",
    "deserialize_game_and_state",
    "key_actions",
    "key_of",
    "load_game",
    "load_state",
    "register",
    "rules_from_parameters",
    "serialize_game_and_state",
]

INSTALL_HINT = "OpenSpiel is not installed: pip install 'uno-lab[openspiel]'"
"""What a use of the module without OpenSpiel says."""
KEY_BYTES = 8
"""Chance nodes at the root: one byte of the game's 64-bit key each."""
_CHANCE_OUTCOMES = 256
_CHANCE_PROBABILITIES = [(byte, 1.0 / _CHANCE_OUTCOMES) for byte in range(_CHANCE_OUTCOMES)]
_CHANCE_PLAYER = -1
"""``pyspiel.PlayerId.CHANCE`` (checked against pyspiel in the tests)."""
_TERMINAL_PLAYER = -4
"""``pyspiel.PlayerId.TERMINAL`` (checked against pyspiel in the tests)."""

_RULE_DEFAULTS: dict[str, Any] = {
    field.name: getattr(Rules(), field.name) for field in dataclasses.fields(Rules)
}
# OpenSpiel parameters cannot be None: the rules' "auto" (None) is True here, and only
# False (off) is ever passed on (see rules_from_parameters).
_RULE_DEFAULTS["two_player_rules"] = True

PARAMETERS: dict[str, Any] = {"preset": "official", **_RULE_DEFAULTS}
"""The game's parameters and their defaults: ``preset`` and every field of ``Rules``."""


def _require_pyspiel() -> Any:
    """The pyspiel module, or an ImportError that says how to install it."""
    if pyspiel is None:
        raise ImportError(INSTALL_HINT)
    return pyspiel


_KINDS = {bool: "True or False", int: "an integer", str: "a string"}


def _checked_parameters(params: Mapping[str, Any]) -> dict[str, Any]:
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
    checked = _checked_parameters(params)
    changes = {
        name: value
        for name, value in checked.items()
        if name != "preset" and value != PARAMETERS[name]
    }
    return load_rules(str(checked.get("preset", PARAMETERS["preset"])), **changes)


def key_of(key_bytes: list[int]) -> int:
    """The 64-bit game key spelled by the 8 chance outcomes (most significant byte first).

    Raises:
        TypeError: for key bytes that are not a list of integers.
        ValueError: for a list of other than 8 bytes, or a byte outside 0..255, naming it.
    """
    if isinstance(key_bytes, (str, bytes)) or not isinstance(key_bytes, (list, tuple)):
        raise TypeError(
            f"key_bytes must be a list of {KEY_BYTES} bytes (0..255), got {shown(key_bytes)}"
        )
    for byte in key_bytes:
        if isinstance(byte, bool) or not isinstance(byte, (int, np.integer)):
            raise TypeError(f"key_bytes: a byte is an integer in 0..255, got {shown(byte)}")
        if not 0 <= byte < _CHANCE_OUTCOMES:
            raise ValueError(f"key_bytes: a byte is an integer in 0..255, got {shown(byte)}")
    if len(key_bytes) != KEY_BYTES:
        raise ValueError(
            f"key_bytes must be {KEY_BYTES} bytes, got {len(key_bytes)}: {shown(key_bytes)}"
        )
    return int.from_bytes(bytes(int(byte) for byte in key_bytes), "big")


def key_actions(key: int) -> list[int]:
    """The 8 chance outcomes that deal the game of ``key``: its bytes, most significant first.

    Raises:
        ValueError: for a key outside 0..2**64 - 1.
    """
    if isinstance(key, bool) or not isinstance(key, (int, np.integer)) or not 0 <= key < 2**64:
        raise ValueError(f"a game key is an integer in 0..2**64 - 1, got {key!r}")
    return list(int(key).to_bytes(KEY_BYTES, "big"))


def _exact(reward: float, num_players: int) -> float:
    """A float32 reward of the core as the exact fraction it stands for (denominator < N).

    The win/loss rewards are multiples of 1/(N-1); read back exactly, they sum to zero in
    double precision, as OpenSpiel's zero-sum checks require.
    """
    return float(Fraction(float(reward)).limit_denominator(max(num_players - 1, 1)))


_GAME_LINE = re.compile(r"([A-Za-z0-9_]+)\(([^()\n]*)\)")
"""A flat game string, ``name(key=value,...)``: how a state's text names its game."""
_NUMBER = re.compile(r"-?[0-9]+")
_INTEGER = re.compile(r"[+-]?[0-9]+")
"""An integer parameter as OpenSpiel reads one from a game string."""
_DIGITS = re.compile(r"[0-9]+")
_RESAMPLE = re.compile(r"resample (\S+) (\S+)")
_MAX_DIGITS = 9
"""The most digits of an integer parameter read from a state's text (OpenSpiel's integer
parameters are 32-bit; every rule's bound is far below)."""


def _where(line: int) -> str:
    return f"{GAME_NAME}: serialized state, line {line}"


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


def _named_values(items: list[str], where: str) -> dict[str, Any]:
    """The typed parameters of a game string's ``key=value`` items (each name once)."""
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


def _game_parameters(line: str) -> dict[str, Any]:
    """Every parameter (typed, defaults filled in) of a state's first line, ``python_uno(...)``.

    Raises:
        ValueError: naming the line, for a line that is no ``python_uno`` game string.
    """
    if line.startswith("history="):
        raise ValueError(
            f"{_where(1)}: this is OpenSpiel's pickled form of a Python state, which "
            f"{GAME_NAME} never reads (unpickling it could run code); write states with "
            "state.serialize()"
        )
    match = _GAME_LINE.fullmatch(line)
    if match is None:
        raise ValueError(
            f"{_where(1)}: the first line must be the game, {GAME_NAME}(...), got {shown(line)}"
        )
    if match[1] != GAME_NAME:
        raise ValueError(f"{_where(1)}: a state of the game {shown(match[1])}, not {GAME_NAME}")
    given = _named_values(match[2].split(",") if match[2] else [], _where(1))
    return {**PARAMETERS, **given}


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


def _string_parameters(text: str) -> dict[str, Any]:
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
    return _named_values(items or [], f"{GAME_NAME}: game string")


def _action_id(action: Any) -> int:
    """An action as given to a state's method, as an int: NumPy's integers too, never a bool,
    a float or text (OpenSpiel's bindings would refuse those in several lines, or take a
    bool as 0 or 1).

    Raises:
        TypeError: naming the action as given.
    """
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        raise TypeError(f"{GAME_NAME}: an action is an integer, got {shown(action)}")
    return int(action)


def _seat_or_chance(player: Any, num_players: int) -> int:
    """A player as given to a state's method: a seat of the table or the chance player (-1).

    Raises:
        TypeError: for a player that is no integer (a bool, text, an array).
        ValueError: for a player outside the table.
    """
    if (
        isinstance(player, (int, np.integer))
        and not isinstance(player, (bool, np.bool_))
        and player == _CHANCE_PLAYER
    ):
        return _CHANCE_PLAYER
    check_player(player, num_players)
    return int(player)


def _described_state(state: Any) -> str:
    """A state for a one-line message: OpenSpiel's states by their game (their text spans
    lines), anything else as itself."""
    get_game = getattr(state, "get_game", None)
    if callable(get_game) and pyspiel is not None and isinstance(state, pyspiel.State):
        return f"a state of {shown(str(get_game()))}"
    return shown(state)


def _uniform(sampler: Any) -> float:
    """One draw of a probability sampler: a number in [0, 1).

    Raises:
        TypeError: naming the sampler or what it returned, for a sampler that is not
            callable or returns no real number.
        ValueError: naming the number, for one outside [0, 1) (``nan`` included).
    """
    where = f"{GAME_NAME}: resample_from_infostate"
    if not callable(sampler):
        raise TypeError(f"{where}: the probability sampler must be callable, got {shown(sampler)}")
    value = sampler()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{where}: the probability sampler returned {shown(value)}; it must return a "
            "number in [0, 1)"
        )
    if not 0 <= value < 1:  # type: ignore[operator]  # every Real compares with 0 and 1
        raise ValueError(
            f"{where}: the probability sampler returned {shown(value)}, outside [0, 1)"
        )
    return float(value)


_GameBase: Any = object if pyspiel is None else pyspiel.Game
_StateBase: Any = object if pyspiel is None else pyspiel.State


def _game_type() -> Any:
    spiel = _require_pyspiel()
    return spiel.GameType(
        short_name=GAME_NAME,
        long_name="Python UNO (uno-lab)",
        dynamics=spiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=spiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=spiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=spiel.GameType.Utility.ZERO_SUM,
        reward_model=spiel.GameType.RewardModel.TERMINAL,
        max_num_players=C.MAX_PLAYERS,
        min_num_players=2,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        provides_factored_observation_string=False,
        parameter_specification=dict(PARAMETERS),
    )


class UnoOpenSpielGame(_GameBase):
    """The OpenSpiel game ``python_uno``: one hand of UNO under the given rules.

    Args:
        params: Game parameters (see :data:`PARAMETERS` and the module docstring).

    Raises:
        ImportError: without OpenSpiel (saying how to install it).
        TypeError: for params that are not a mapping.
        ValueError: naming an unknown parameter or an invalid value.
    """

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        spiel = _require_pyspiel()
        if params is not None and not isinstance(params, Mapping):
            raise TypeError(
                f"{GAME_NAME}: params must be a mapping of parameter names to values, got "
                f"{shown(params)}"
            )
        given = _checked_parameters(params or {})
        rules = rules_from_parameters(given)
        info = spiel.GameInfo(
            num_distinct_actions=C.NUM_ACTIONS,
            max_chance_outcomes=_CHANCE_OUTCOMES,
            num_players=rules.num_players,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=rules.max_turns,
        )
        super().__init__(_game_type(), info, {**PARAMETERS, **given})
        self.rules: Rules = rules
        """The rules every state of the game plays by."""

    def new_initial_state(self, struct: Any = None) -> UnoOpenSpielState:
        """The root: a chance node that draws the first byte of the game's key."""
        if struct is not None:
            raise ValueError(f"{GAME_NAME} builds no state from a struct, got {shown(struct)}")
        return UnoOpenSpielState(self)

    def deserialize_state(self, text: str) -> UnoOpenSpielState:
        """The state that ``text`` (from :meth:`UnoOpenSpielState.serialize`) describes.

        The text is read as data: its first line must be this game's string, and the
        state is rebuilt by replaying its lines from the root, each action checked against
        the legal actions at its point (each resampling against the seats and keys there
        are). Nothing is unpickled and no code from the text runs.

        Args:
            text: The serialized state (a closing newline is optional).

        Returns:
            A state equal to the one serialized: the same history, observations, returns,
            legal actions and continuation.

        Raises:
            TypeError: for a ``text`` that is not a ``str``.
            ValueError: one line naming the line of the text and what is wrong with it: no
                game string or another game's (naming the first parameter that differs),
                OpenSpiel's pickled form of a Python state, an action that is not a number,
                out of range or illegal at its point, one after the hand ended, a bad
                resampling.
        """
        if not isinstance(text, str):
            raise TypeError(f"{GAME_NAME}: a serialized state is a str, got {type(text).__name__}")
        # A closing newline is optional, and a line may end in "\r" (a text saved on Windows).
        lines = [line.removesuffix("\r") for line in text.split("\n")]
        if len(lines) > 1 and not lines[-1]:
            lines.pop()
        theirs = _game_parameters(lines[0])
        ours = dict(self.get_parameters())
        for name in PARAMETERS:
            if theirs[name] != ours[name]:
                raise ValueError(
                    f"{_where(1)}: the state's game has {name}={shown(theirs[name])} where "
                    f"this game has {name}={shown(ours[name])} (load_state(text) reads a "
                    "state in its own game)"
                )
        state = self.new_initial_state()
        for number, line in enumerate(lines[1:], start=2):
            resample = _RESAMPLE.fullmatch(line)
            if _NUMBER.fullmatch(line):
                state._replay_action(line, _where(number))
            elif resample is not None:
                state._replay_resample(resample[1], resample[2], _where(number))
            else:
                raise ValueError(
                    f"{_where(number)}: {shown(line)} is neither an action id nor "
                    "'resample SEAT KEY'"
                )
        return state

    def max_chance_nodes_in_history(self) -> int:
        """The 8 chance nodes of the key (no later event is a chance node)."""
        return KEY_BYTES

    def make_py_observer(
        self, iig_obs_type: Any = None, params: Mapping[str, Any] | None = None
    ) -> ObservationObserver | InfoStateObserver:
        """The observer of an observation type: the default observation or the info state.

        Raises:
            ValueError: for observer parameters or an observation type other than the
                default (one seat, no perfect recall) and the information state (one seat,
                perfect recall).
            TypeError: for an observation type that is no ``pyspiel.IIGObservationType``,
                or parameters that are no mapping.
        """
        if isinstance(iig_obs_type, Mapping):  # called with the parameters alone
            iig_obs_type, params = None, iig_obs_type
        if params is not None and not isinstance(params, Mapping):
            raise TypeError(
                f"{GAME_NAME}: observer parameters are a dict (python_uno takes none), got "
                f"{shown(params)}"
            )
        if params:
            raise ValueError(f"{GAME_NAME} observers take no parameters, got {shown(dict(params))}")
        if iig_obs_type is None:
            return ObservationObserver(self.rules)
        spiel = _require_pyspiel()
        if not isinstance(iig_obs_type, spiel.IIGObservationType):
            raise TypeError(
                f"{GAME_NAME}: iig_obs_type: expected a pyspiel.IIGObservationType or None, "
                f"got {shown(iig_obs_type)}"
            )
        single = iig_obs_type.private_info == spiel.PrivateInfoType.SINGLE_PLAYER
        if single and iig_obs_type.public_info:
            if iig_obs_type.perfect_recall:
                return InfoStateObserver(self.rules)
            return ObservationObserver(self.rules)
        raise ValueError(
            f"{GAME_NAME} observes from one seat with public information (perfect recall or "
            f"not), got {iig_obs_type}"
        )


class UnoOpenSpielState(_StateBase):
    """A state of ``python_uno``: the key's chance nodes, then the decisions of a hand.

    Args:
        game: The game it belongs to.
    """

    def __init__(self, game: UnoOpenSpielGame) -> None:
        super().__init__(game)
        self._table = PublicTable(game.rules)

    # ---- reading ------------------------------------------------------------------------

    @property
    def rules(self) -> Rules:
        """The rules of the hand."""
        return self._table.rules

    @property
    def uno_state(self) -> UnoState | None:
        """The core state (B = 1) after the deal, ``None`` before it.

        Treat it as read-only. It is this state's own and changes as actions are applied
        (clones copy it): ``.copy()`` it to keep a snapshot.
        """
        return self._table.state

    @property
    def key(self) -> int | None:
        """The game key of the state's core state (``None`` before the deal)."""
        state = self._table.state
        return None if state is None else int(state.key[0])

    def current_player(self) -> int:
        """The seat to act, ``CHANCE`` before the deal, ``TERMINAL`` when the hand is over."""
        # From the last step's record, not the arrays: OpenSpiel's bridge asks this several
        # times per action.
        steps = self._table.steps
        if not steps:
            return _CHANCE_PLAYER
        last = steps[-1]
        return _TERMINAL_PLAYER if last.phase == core.OVER else last.current

    def is_terminal(self) -> bool:
        """Whether the hand is over: won, or truncated at ``max_turns``."""
        steps = self._table.steps
        return bool(steps) and steps[-1].phase == core.OVER

    def legal_actions(self, player: Any = None) -> list[int]:
        """The legal actions of ``player`` (default: the one to act; a seat not to act has
        none): OpenSpiel's ``legal_actions``, the seat checked as given.

        Raises:
            TypeError: for a seat that is no integer.
            ValueError: for a seat outside the table.
        """
        if player is None:
            actions: list[int] = super().legal_actions()
            return actions
        actions = super().legal_actions(_seat_or_chance(player, self.rules.num_players))
        return actions

    def legal_actions_mask(self, player: Any = None) -> list[int]:
        """OpenSpiel's ``legal_actions_mask``, the seat checked as given (default: the one to
        act; a seat not to act has none).

        Raises:
            TypeError: for a seat that is no integer.
            ValueError: for a seat outside the table.
        """
        if player is None:
            mask: list[int] = super().legal_actions_mask()
            return mask
        mask = super().legal_actions_mask(_seat_or_chance(player, self.rules.num_players))
        return mask

    def action_to_string(self, *args: Any) -> str:
        """OpenSpiel's ``action_to_string(player, action)`` (or ``(action)`` for the player to
        act), both checked as given (NumPy integers too): a key byte's text for the chance
        player, else the action's name (``G7``, ``W:B``...).

        Raises:
            TypeError: for a player or an action that is no integer, or another number of
                arguments.
            ValueError: for a player outside the table, or an action out of range.
        """
        if len(args) == 1:
            player, action = self.current_player(), args[0]
        elif len(args) == 2:
            player, action = args
        else:
            raise TypeError(
                f"{GAME_NAME}: action_to_string takes (action) or (player, action), got "
                f"{len(args)} arguments"
            )
        seat = _seat_or_chance(player, self.rules.num_players)
        return self._action_to_string(seat, _action_id(action))

    def string_to_action(self, *args: Any) -> int:
        """OpenSpiel's ``string_to_action(text)`` (or ``(player, text)``), checked as given.

        Raises:
            TypeError: for a text that is no ``str``, a player that is no integer, or
                another number of arguments.
            ValueError: for a player outside the table; OpenSpiel's error (one line) for a
                text that names no legal action.
        """
        if len(args) not in (1, 2):
            raise TypeError(
                f"{GAME_NAME}: string_to_action takes (text) or (player, text), got "
                f"{len(args)} arguments"
            )
        text = args[-1]
        if not isinstance(text, str):
            raise TypeError(f"{GAME_NAME}: an action's text is a str, got {shown(text)}")
        if len(args) == 1:
            action: int = super().string_to_action(text)
            return action
        seat = _seat_or_chance(args[0], self.rules.num_players)
        action = super().string_to_action(seat, text)
        return action

    def player_return(self, player: Any) -> float:
        """The return of ``player`` (see :meth:`returns`), the seat checked as given.

        Raises:
            TypeError: for a seat that is no integer.
            ValueError: for a seat outside the table.
        """
        check_player(player, self.rules.num_players)
        return self.returns()[int(player)]

    def player_reward(self, player: Any) -> float:
        """The reward of ``player`` (see :meth:`rewards`), the seat checked as given.

        Raises:
            TypeError: for a seat that is no integer.
            ValueError: for a seat outside the table.
        """
        check_player(player, self.rules.num_players)
        return self.rewards()[int(player)]

    def _legal_actions(self, player: int) -> list[int]:
        """The legal action ids of the acting seat: the core's mask, ascending."""
        state = self._table.state
        assert state is not None and player == int(state.current[0])
        legal: list[int] = np.flatnonzero(core.legal_action_mask(self.rules, state)[0]).tolist()
        return legal

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The next byte of the game key: 0-255, uniform."""
        if self._table.state is not None:
            raise ValueError(f"{GAME_NAME}: chance_outcomes() called at a decision node")
        return list(_CHANCE_PROBABILITIES)

    def returns(self) -> list[float]:
        """The lab's win/loss rewards (:func:`uno_env.core.hand_rewards`) at the end of the
        hand, zeros before it and for a truncated hand."""
        n_players = self.rules.num_players
        state = self._table.state
        if state is None or not self.is_terminal():
            return [0.0] * n_players
        rewards = core.hand_rewards(self.rules, state)[0]
        return [_exact(r, n_players) for r in rewards]

    def rewards(self) -> list[float]:
        """Rewards come only at the end: the returns at a terminal state, else zeros."""
        return self.returns()

    def _action_to_string(self, player: int, action: int) -> str:
        """A key byte for the chance player, else the action's name (``G7``, ``W:B``...)."""
        if player == _CHANCE_PLAYER:
            if not 0 <= action < _CHANCE_OUTCOMES:
                raise ValueError(f"{GAME_NAME}: a chance outcome is a byte 0..255, got {action}")
            return f"key byte 0x{action:02x}"
        check_player(player, self.rules.num_players)
        return C.action_name(action)

    def _seat_view(self, name: str, player: Any) -> Any:
        """OpenSpiel's ``name`` view for ``player`` (``None``: the seat to act), seat checked."""
        view = getattr(super(), name)
        if player is None:
            if self.current_player() < 0:  # OpenSpiel's own check would fail in C++ words
                where = "the deal (a chance node)" if not self._table.steps else "the end"
                raise ValueError(
                    f"{GAME_NAME}: {name}() without a player at {where}: no seat acts "
                    "there; give the player"
                )
            return view()
        check_player(player, self.rules.num_players)
        return view(int(player))

    def observation_string(self, player: Any = None) -> str:
        """The observation of ``player`` (default: the seat to act) as text.

        Raises:
            TypeError: for a seat that is no integer.
            ValueError: for a seat outside the table.
        """
        text: str = self._seat_view("observation_string", player)
        return text

    def observation_tensor(self, player: Any = None) -> list[float]:
        """The observation tensor of ``player`` (default: the seat to act).

        Raises:
            TypeError: for a seat that is no integer.
            ValueError: for a seat outside the table.
        """
        values: list[float] = self._seat_view("observation_tensor", player)
        return values

    def information_state_string(self, player: Any = None) -> str:
        """The perfect-recall information state of ``player`` (default: the seat to act).

        Raises:
            TypeError: for a seat that is no integer.
            ValueError: for a seat outside the table.
        """
        text: str = self._seat_view("information_state_string", player)
        return text

    def information_state_tensor(self, player: Any = None) -> list[float]:
        """Not provided: ``python_uno``'s information state is a string.

        Raises:
            ValueError: always, naming what to use instead.
        """
        del player
        raise ValueError(
            f"{GAME_NAME} provides no information_state_tensor (its game type says "
            "provides_information_state_tensor=False): use information_state_string, or "
            "observation_tensor"
        )

    # ---- acting -------------------------------------------------------------------------

    def apply_action(self, action: Any) -> None:
        """Apply a key byte (chance) or a decision of the acting seat: OpenSpiel's
        ``apply_action``, the action checked as given (NumPy integers too).

        Raises:
            TypeError: for an action that is no integer (a bool, a float, text).
            IllegalActionError: naming the action as given, for one that is out of range or
                not legal here (the state is unchanged).
        """
        action = _action_id(action)
        if not 0 <= action < _CHANCE_OUTCOMES:
            # Out of every range (OpenSpiel would refuse -1, or an int64 overflow, in its
            # own words): the checks of _apply_action name it, and nothing changes.
            self._apply_action(action)
        super().apply_action(action)

    def child(self, action: Any) -> UnoOpenSpielState:
        """A copy of the state with ``action`` applied (checked as :meth:`apply_action`)."""
        _action_id(action)  # refused before the copy is made
        state = self.clone()
        state.apply_action(action)
        return state

    def apply_actions(self, actions: Any) -> None:
        """Not available: ``python_uno`` is a sequential game, one seat acting at a time.

        Raises:
            ValueError: always, naming what to use instead.
        """
        raise ValueError(
            f"{GAME_NAME} is a sequential game: apply_actions (one action per player at once) "
            f"is for simultaneous-move games; apply one action with apply_action, got "
            f"{shown(actions)}"
        )

    def _apply_action(self, action: int) -> None:
        """Apply a key byte (chance) or a decision of the acting seat.

        Raises:
            IllegalActionError: naming the action, for an id that is not legal here (the
                state is unchanged).
        """
        table = self._table
        if table.state is None:
            if isinstance(action, bool) or not 0 <= action < _CHANCE_OUTCOMES:
                raise IllegalActionError(
                    f"{GAME_NAME}: illegal chance outcome {action}: a key byte is 0..255"
                )
            table.key_bytes.append(int(action))
            if len(table.key_bytes) == KEY_BYTES:
                keys = np.array([key_of(table.key_bytes)], dtype=np.uint64)
                table.state = core.init(self.rules, keys=keys)
                table.steps.append(step_of(-1, -1, table.state))
            return
        if self.is_terminal():
            raise IllegalActionError(f"{GAME_NAME}: action {action} applied after the hand ended")
        legal = core.legal_action_mask(self.rules, table.state)[0]
        if not 0 <= action < C.NUM_ACTIONS or not legal[action]:
            name = f" ({C.ACTION_NAMES[action]})" if 0 <= action < C.NUM_ACTIONS else ""
            raise IllegalActionError(
                f"{GAME_NAME}: illegal action {action}{name} for player "
                f"{int(table.state.current[0])}; legal: "
                + ", ".join(f"{a} ({C.ACTION_NAMES[a]})" for a in np.flatnonzero(legal))
            )
        seat = int(table.state.current[0])
        # In place: the core state is this OpenSpiel state's own (a clone copies it), and
        # OpenSpiel's states change as actions apply; a copy per step was a third of a
        # rollout's time.
        state = core.step(
            self.rules, table.state, np.array([action], dtype=np.int64), in_place=True
        )
        table.steps.append(step_of(seat, int(action), state))

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> Any:
        """A state ``player_id`` cannot tell from this one (:func:`uno_env.core.determinize`).

        Args:
            player_id: The seat whose information is kept.
            probability_sampler: A callable giving uniform numbers in [0, 1), such as
                ``pyspiel.UniformProbabilitySampler``; it draws the sample's key.

        Returns:
            The sampled state (before the deal: a root with key bytes drawn afresh).

        Raises:
            TypeError: for a seat that is no integer, a sampler that is not callable or
                returns no real number (naming what it returned).
            ValueError: for a seat outside the table, a finished hand, or a sampler that
                returns a number outside [0, 1) (naming it).
        """
        table = self._table
        check_player(player_id, self.rules.num_players)

        def word() -> int:
            return min(int(_uniform(probability_sampler) * 2**32), 2**32 - 1)

        if table.state is None:  # nobody has seen a key byte: any bytes are as likely
            fresh = self.get_game().new_initial_state()
            for _ in table.key_bytes:
                fresh.apply_action(min(int(_uniform(probability_sampler) * 256), 255))
            return fresh
        if self.is_terminal():
            raise ValueError(f"{GAME_NAME}: the hand is over: there is nothing to resample")
        key = (word() << 32) | word()
        sample = self.clone()
        sample._resample(int(player_id), key)
        return sample

    def _resample(self, player: int, key: int) -> None:
        """Replace the hidden cards by a determinization for ``player`` (a live hand)."""
        table = self._table
        assert table.state is not None
        table.state = core.determinize(
            self.rules, table.state, player, np.array([key], dtype=np.uint64)
        )
        for seat in range(self.rules.num_players):
            if seat != player:
                table.known_from[seat] = max(table.known_from[seat], len(table.steps))
        # Actions applied so far: the key bytes and every decision (steps[0] is the deal).
        table.resamples.append((KEY_BYTES + len(table.steps) - 1, player, key))

    # ---- serialization ------------------------------------------------------------------

    def serialize(self) -> str:
        """The state as text: the game's string, then one action per line from the root.

        A resampled state also has ``resample SEAT KEY`` where each resampling was drawn.
        :meth:`UnoOpenSpielGame.deserialize_state` (or :func:`load_state`) reads it back.
        """
        history = self.history()
        lines = [str(self.get_game())]
        done = 0
        for moves, seat, key in self._table.resamples:
            lines.extend(map(str, history[done:moves]))
            lines.append(f"resample {seat} {key}")
            done = moves
        lines.extend(map(str, history[done:]))
        return "\n".join(lines) + "\n"

    def __reduce__(self) -> tuple[Callable[[str], UnoOpenSpielState], tuple[str]]:
        # pickle and copy write the text, not OpenSpiel's pickle of the state's attributes.
        return load_state, (self.serialize(),)

    def __copy__(self) -> UnoOpenSpielState:
        return self.clone()

    def __deepcopy__(self, memo: dict[int, Any]) -> UnoOpenSpielState:
        return self.clone()

    def _replay_action(self, token: str, where: str) -> None:
        """Apply an action id read from a serialized state (``token`` matches ``_NUMBER``)."""
        if self.is_terminal():
            raise ValueError(f"{where}: action {shown(token)} after the hand ended")
        chance = self._table.state is None
        limit = _CHANCE_OUTCOMES if chance else C.NUM_ACTIONS
        if token.startswith("-") or len(token.lstrip("0")) > 3 or int(token) >= limit:
            what = "a key byte is 0..255" if chance else f"an action is 0..{C.NUM_ACTIONS - 1}"
            raise ValueError(f"{where}: {shown(token)} is out of range: {what}")
        try:
            self.apply_action(int(token))
        except IllegalActionError as err:
            raise ValueError(f"{where}: {str(err).removeprefix(f'{GAME_NAME}: ')}") from None

    def _replay_resample(self, seat: str, key: str, where: str) -> None:
        """Apply ``resample SEAT KEY`` read from a serialized state."""
        if self._table.state is None or self.is_terminal():
            when = "before the deal" if self._table.state is None else "after the hand ended"
            raise ValueError(f"{where}: a resampling {when}; only a hand in play is resampled")
        n_players = self.rules.num_players
        if not _DIGITS.fullmatch(seat) or len(seat) > 2 or int(seat) >= n_players:
            raise ValueError(f"{where}: resample seat {shown(seat)}: a seat is 0..{n_players - 1}")
        if not _DIGITS.fullmatch(key) or len(key) > 20 or int(key) >= 2**64:
            raise ValueError(f"{where}: resample key {shown(key)}: a key is 0..2**64 - 1")
        self._resample(int(seat), int(key))

    def __str__(self) -> str:
        """The whole state, hidden cards included (for debugging)."""
        table = self._table
        state = table.state
        if state is None:
            drawn = " ".join(f"{b:02x}" for b in table.key_bytes) or "-"
            return f"before the deal: key bytes {drawn} ({len(table.key_bytes)} of {KEY_BYTES})"
        n_players = self.rules.num_players
        lines = [
            f"key {int(state.key[0]):016x} | dealer {int(state.dealer[0])} | turn "
            f"{int(state.turn[0])} | "
            + ("over" if self.is_terminal() else f"{int(state.current[0])} to act")
            + f" | phase {core.PHASE_NAMES[int(state.phase[0])]}",
            f"top {C.FACE_NAMES[int(state.top[0])]} {colour_text(int(state.colour[0]))} | "
            f"direction {int(state.direction[0]):+d} | pile "
            f"{C.DECK_SIZE - int(state.draw_pos[0])} | discards {int(state.discard_len[0])}",
        ]
        hands = state.hands[0].tobytes()
        for seat in range(n_players):
            lines.append(f"seat {seat}: {hand_text(hands, seat) or '-'}")
        if self.is_terminal():
            winner = int(state.winner[0])
            lines.append("truncated" if winner < 0 else f"winner {winner}")
        return "\n".join(lines)


def _check_named_preset(preset: Any, where: str) -> None:
    """Refuse a preset that is not a named one: a text handed over must not make the lab
    open a file (or quote one in an error)."""
    if preset not in PRESETS:
        raise ValueError(
            f"{where}: preset {shown(preset)} is no named preset ({', '.join(PRESETS)}); a "
            "state whose rules come from a file is read by loading that game yourself and "
            "calling game.deserialize_state(text)"
        )


def load_state(text: str) -> UnoOpenSpielState:
    """The state a text of :meth:`UnoOpenSpielState.serialize` describes, in its own game.

    The game is loaded from the text's first line (its parameters alone: no other game can
    be named), then :meth:`UnoOpenSpielGame.deserialize_state` replays the rest.

    Raises:
        ImportError: without OpenSpiel (saying how to install it).
        TypeError: for a ``text`` that is not a ``str``.
        ValueError: naming the line and what is wrong (see ``deserialize_state``) or the
            game's bad parameter.
    """
    _require_pyspiel()
    if not isinstance(text, str):
        raise TypeError(f"{GAME_NAME}: a serialized state is a str, got {type(text).__name__}")
    params = _game_parameters(text.split("\n", 1)[0])
    _check_named_preset(params["preset"], _where(1))
    try:
        game = load_game(GAME_NAME, params)
    except ValueError as err:  # the rules' own check, naming the parameter
        raise ValueError(f"{_where(1)}: {err}") from None
    state: UnoOpenSpielState = game.deserialize_state(text)
    return state


_SERIALIZED_HEADER = "# Automatically generated by OpenSpiel SerializeGameAndState\n[Meta]\n"
_SECTIONS = {"[Meta]": 0, "[Game]": 1, "[State]": 2}
_SERIALIZED_VERSION = "Version: 1"
"""The [Meta] section :func:`serialize_game_and_state` writes (OpenSpiel's format version)."""
_SPIEL_FUNCTIONS: dict[str, Callable[..., Any]] = {}
"""OpenSpiel's own ``load_game``, ``serialize_game_and_state`` and
``deserialize_game_and_state``, kept when :func:`register` puts this module's in their place."""
_OPENSPIEL_OWN = "openspiel_own"
"""The attribute of each function put in ``pyspiel``'s place that holds OpenSpiel's own: a
second :func:`register` (or a reload of this module) finds OpenSpiel's there, never ours."""


def _spiel_function(name: str) -> Callable[..., Any]:
    spiel = _require_pyspiel()
    own = _SPIEL_FUNCTIONS.get(name)
    if own is None:
        current = getattr(spiel, name)
        own = getattr(current, _OPENSPIEL_OWN, current)
    return own


def load_game(game: Any, params: Mapping[str, Any] | None = None) -> Any:
    """``pyspiel.load_game``, with ``python_uno``'s parameters checked before OpenSpiel's.

    ``load_game("python_uno(num_players=3)")`` and ``load_game("python_uno", {...})`` check
    every parameter here (:func:`rules_from_parameters`; NumPy integers and booleans are
    taken as Python's), so that a bad one is one line naming it and its value, not
    OpenSpiel's C++ words (a 32-bit cast, a check of its parser). Every other game, and
    OpenSpiel's other forms of the call, go to OpenSpiel's own ``load_game`` unchanged.
    :func:`register` puts this function in ``pyspiel``'s place.

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
    own = _spiel_function("load_game")
    if params is None and isinstance(game, str) and game.partition("(")[0] == GAME_NAME:
        game, params = GAME_NAME, _string_parameters(game)
    if params is None:
        return own(game)
    if not (isinstance(game, str) and game == GAME_NAME):
        return own(game, params)
    checked = _checked_parameters(params)
    rules_from_parameters(checked)  # bounds too: OpenSpiel's 32-bit cast fails in C++ words
    return own(GAME_NAME, checked)


def serialize_game_and_state(game: Any, state: Any) -> str:
    """``pyspiel.serialize_game_and_state``, with ``python_uno`` states written as text.

    For a ``python_uno`` state the layout is OpenSpiel's (``[Meta]``, ``[Game]``,
    ``[State]``), its state section :meth:`UnoOpenSpielState.serialize`'s text; every other
    state is OpenSpiel's own. :func:`register` puts this function in ``pyspiel``'s place.

    Raises:
        TypeError: for a ``game`` or a ``state`` that is none (``None``, a string), or a
            ``python_uno`` game or state paired with another game's.
        ValueError: for a ``python_uno`` state of another ``python_uno`` game (other
            parameters: the text would not read back).
    """
    ours, our_game = isinstance(state, UnoOpenSpielState), _is_uno_game(game)
    if ours and not our_game:
        raise TypeError(
            f"serialize_game_and_state: game: expected the {GAME_NAME} game of the state, "
            f"got {shown(game)}"
        )
    if our_game and not ours:
        raise TypeError(
            f"serialize_game_and_state: state: expected a {GAME_NAME} state of this game, "
            f"got {_described_state(state)}"
        )
    if ours:
        own, given = state.get_game().get_parameters(), game.get_parameters()
        differ = {
            k: (own.get(k), given.get(k))
            for k in sorted({*own, *given})
            if own.get(k) != given.get(k)
        }
        if differ:
            raise ValueError(
                "serialize_game_and_state: the state is of another python_uno game than the "
                f"game given; differing parameters (the state's, the game's): {shown(differ, 200)}"
            )
        return (
            f"{_SERIALIZED_HEADER}{_SERIALIZED_VERSION}\n\n[Game]\n{game.serialize()}\n"
            f"[State]\n{state.serialize()}\n"
        )
    spiel = _require_pyspiel()
    if not isinstance(game, spiel.Game) or not isinstance(state, spiel.State):
        raise TypeError(
            f"serialize_game_and_state: expected a game and one of its states, got "
            f"{shown(game)} and {_described_state(state)}"
        )
    return str(_spiel_function("serialize_game_and_state")(game, state))


def _game_and_state_sections(text: str) -> tuple[str, str, str]:
    """The ``[Meta]``, ``[Game]`` and ``[State]`` sections of ``text``, read exactly as
    OpenSpiel's ``DeserializeGameAndState`` reads them (blank and ``#`` lines skipped).

    Raises:
        ValueError: naming the line, where OpenSpiel would refuse the layout (it says so
            in several lines of its C++ source).
    """
    found: list[list[str]] = [[], [], []]
    current = -1
    where = "deserialize_game_and_state: not a serialized game and state"
    order = "the sections are [Meta], [Game] and [State], in that order"
    for number, line in enumerate(text.split("\n"), start=1):
        if not line or line[0] == "#":
            continue
        header = _SECTIONS.get(line)
        if header is not None and current != header - 1:
            raise ValueError(f"{where}: line {number}, {shown(line)}, is out of order; {order}")
        if header is not None:
            current = header
        elif current < 0:
            ending = " (lines end with \\n alone, not \\r\\n)" if line.endswith("\r") else ""
            raise ValueError(
                f"{where}: line {number}, {shown(line)}, comes before [Meta]; {order}{ending}"
            )
        else:
            found[current].append(line)
    if current != _SECTIONS["[State]"]:
        raise ValueError(f"{where}: it ends before its [State] section; {order}")
    return "\n".join(found[0]), "\n".join(found[1]), "\n".join(found[2])


_NAMED_PRESET = re.compile("(?:" + "|".join(map(re.escape, PRESETS)) + ")[,)]")


def _check_game_names_no_file(game_text: str) -> None:
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


def _is_python_game(game: Any) -> bool:
    """Whether ``game`` is a game written in Python (OpenSpiel's own games are in pyspiel)."""
    return str(type(game).__module__).partition(".")[0] != "pyspiel"


def _is_uno_game(game: Any) -> bool:
    """Whether ``game`` is this module's game (by name: a reloaded module has a new class)."""
    kind = type(game)
    return kind.__module__ == __name__ and kind.__qualname__ == UnoOpenSpielGame.__qualname__


def deserialize_game_and_state(text: str) -> tuple[Any, Any]:
    """``pyspiel.deserialize_game_and_state``, replaying ``python_uno`` states (no pickle).

    A ``python_uno`` game of the ``[Game]`` section is read here (its parameters checked, a
    named preset only: the text never makes the lab open a file), and its state by
    :meth:`UnoOpenSpielGame.deserialize_state`. A state of any other game written in Python
    is refused: OpenSpiel's own path for Python games unpickles the text, which can run any
    code. OpenSpiel's own C++ games go to OpenSpiel's own function. :func:`register` puts
    this function in ``pyspiel``'s place.

    Raises:
        TypeError: for a ``text`` that is not a ``str``.
        ValueError: for a text whose sections OpenSpiel would not read, a ``python_uno``
            game or state naming its bad parameter or line (see ``deserialize_state``), a
            rules file named in the text, or a state of another game written in Python;
            OpenSpiel's errors (``pyspiel.SpielError``, in one line) otherwise.
    """
    spiel = _require_pyspiel()
    if not isinstance(text, str):
        raise TypeError(
            f"deserialize_game_and_state: a serialized game and state is a str, got "
            f"{type(text).__name__}"
        )
    meta, game_text, state_text = _game_and_state_sections(text)
    if game_text.partition("(")[0] == GAME_NAME:
        if meta != _SERIALIZED_VERSION:  # written by serialize_game_and_state: Version: 1
            raise ValueError(
                f"deserialize_game_and_state: the [Meta] section reads {shown(meta)}; a "
                f"{GAME_NAME} game and state is written as {_SERIALIZED_VERSION!r}"
            )
        params = _string_parameters(game_text)
        _check_named_preset(params.get("preset", PARAMETERS["preset"]), f"{GAME_NAME}: [Game]")
        game = load_game(GAME_NAME, params)
        if not _is_uno_game(game):  # never handed to the unpickling path
            raise ValueError(f"{GAME_NAME}: the game {shown(game_text)} cannot be read here")
        return game, game.deserialize_state(state_text)
    _check_game_names_no_file(game_text)
    try:
        game = spiel.deserialize_game(game_text)
    except spiel.SpielError as err:
        raise _one_line(err) from None
    if _is_python_game(game):
        raise ValueError(
            f"deserialize_game_and_state: {shown(game.get_type().short_name)} is a game "
            "written in Python, whose serialized states are pickles (unpickling one can run "
            "any code): they are not loaded; rebuild the state by applying its history() to "
            "game.new_initial_state()"
        )
    try:
        game_and_state: tuple[Any, Any] = _spiel_function("deserialize_game_and_state")(text)
    except ValueError as err:  # a C++ parse of a number, which says no more than "stol"
        raise ValueError(
            f"deserialize_game_and_state: OpenSpiel cannot read this state of the game "
            f"{shown(game_text)} ({shown(str(err).strip())})"
        ) from None
    except spiel.SpielError as err:
        raise _one_line(err) from None
    return game_and_state


def _one_line(err: Exception) -> Exception:
    """An OpenSpiel error in one line: its checks speak in several lines of C++ (the file,
    the condition, the values)."""
    return type(err)("; ".join(str(err).strip().split("\n")))


def register() -> None:
    """Register ``python_uno`` with OpenSpiel (done on import when OpenSpiel is there).

    Also puts :func:`load_game`, :func:`serialize_game_and_state` and
    :func:`deserialize_game_and_state` in place of ``pyspiel``'s functions of those names
    (which they call for every other game), so that ``python_uno``'s parameters are checked
    first and no text given to ``pyspiel`` is unpickled for a game written in Python. A
    second call, or a reload of this module, keeps OpenSpiel's own functions as the ones
    called.

    Raises:
        ImportError: without OpenSpiel (saying how to install it).
    """
    spiel = _require_pyspiel()
    if GAME_NAME not in spiel.registered_names():
        spiel.register_game(_game_type(), UnoOpenSpielGame)
    ours = {
        "load_game": load_game,
        "serialize_game_and_state": serialize_game_and_state,
        "deserialize_game_and_state": deserialize_game_and_state,
    }
    for name, function in ours.items():
        current = getattr(spiel, name)
        own = getattr(current, _OPENSPIEL_OWN, current)  # ours already there: OpenSpiel's
        _SPIEL_FUNCTIONS[name] = own
        setattr(function, _OPENSPIEL_OWN, own)
        setattr(spiel, name, function)


if pyspiel is not None:
    register()
