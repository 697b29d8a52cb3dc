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
its value: the module puts :func:`~uno_env.envs.openspiel_parameters.load_game` in
``pyspiel.load_game``'s place, which checks ``python_uno``'s parameters (in a game string
or a mapping; NumPy integers are taken as ints) before OpenSpiel's own ``load_game`` sees
them, and passes every other game on.

### Chance

Every random event of a hand (the deal, the dealer, the starter, each reshuffle, the random
rules) is a function of the game's 64-bit key (:mod:`uno_env.rng`). The key is drawn at the
root by 8 explicit chance nodes, one byte each (most significant first), uniform over 0-255:
the key is uniform over 2**64, exactly the lab's distribution of deals, and after the eighth
byte the game is deterministic given the players' actions.
:func:`~uno_env.envs.openspiel_state.key_actions` gives the chance outcomes of a given key,
so ``UnoGame(seed=s)`` is the state reached with ``key_actions(UnoGame(seed=s).key)``.

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
``game.deserialize_state(text)`` (and :func:`~uno_env.envs.openspiel_state.load_state`,
which takes the game from the text) rebuilds the state by replaying the lines, each action
checked against the legal ones at its point: no code runs, no file is opened (a text's
preset must be a named one), and anything else is one ``ValueError`` naming the line. The module puts
:func:`serialize_game_and_state` and :func:`deserialize_game_and_state` in ``pyspiel``'s
place, so that ``pyspiel``'s functions of those names use this format for ``python_uno``
and OpenSpiel's for its own C++ games; a serialized state of any other game written in
Python is refused, because OpenSpiel's own path for Python games unpickles it.
``pickle`` writes the text too (``copy`` and ``clone()`` copy the state directly).

### Modules

This module holds the game (:class:`UnoOpenSpielGame`) and its registration; beside it,
:mod:`~uno_env.envs.openspiel_state` the states (with ``key_actions`` and ``load_state``),
:mod:`~uno_env.envs.openspiel_parameters` the parameters and the checked ``load_game``,
:mod:`~uno_env.envs.openspiel_serialization` the text formats,
:mod:`~uno_env.envs.openspiel_views` what each seat sees, and
:mod:`~uno_env.envs.openspiel_checks` the checks of what Python hands a state.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from uno_env import cards as C
from uno_env.envs.openspiel_checks import GameBase, installed_pyspiel, require_pyspiel
from uno_env.envs.openspiel_parameters import (
    PARAMETERS,
    check_parameters,
    load_game,
    openspiel_own,
    put_in_pyspiel,
    rules_from_parameters,
    string_parameters,
)
from uno_env.envs.openspiel_serialization import (
    SERIALIZED_VERSION,
    check_game_names_no_file,
    check_named_preset,
    game_and_state_sections,
    game_and_state_text,
)
from uno_env.envs.openspiel_state import (
    CHANCE_OUTCOMES,
    KEY_BYTES,
    UnoOpenSpielState,
    state_from_text,
)
from uno_env.envs.openspiel_views import (
    GAME_NAME,
    InfoStateObserver,
    ObservationObserver,
)
from uno_env.files import shown
from uno_env.rules import Rules

__all__ = [
    "UnoOpenSpielGame",
    "deserialize_game_and_state",
    "game_type",
    "register",
    "serialize_game_and_state",
]


def game_type() -> Any:
    spiel = require_pyspiel()
    """The game type ``python_uno`` is registered with (its parameters: ``PARAMETERS``)."""
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


class UnoOpenSpielGame(GameBase):
    """The OpenSpiel game ``python_uno``: one hand of UNO under the given rules.

    Args:
        params: Game parameters (see :data:`~uno_env.envs.openspiel_parameters.PARAMETERS` and
            the module docstring).

    Raises:
        ImportError: without OpenSpiel (saying how to install it).
        TypeError: for params that are not a mapping.
        ValueError: naming an unknown parameter or an invalid value.
    """

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        spiel = require_pyspiel()
        given = check_parameters({} if params is None else params)
        rules = rules_from_parameters(given)
        info = spiel.GameInfo(
            num_distinct_actions=C.NUM_ACTIONS,
            max_chance_outcomes=CHANCE_OUTCOMES,
            num_players=rules.num_players,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=rules.max_turns,
        )
        super().__init__(game_type(), info, {**PARAMETERS, **given})
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
        return state_from_text(self, text)

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
        spiel = require_pyspiel()
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
        return game_and_state_text(game.serialize(), state.serialize())
    spiel = require_pyspiel()
    if not isinstance(game, spiel.Game) or not isinstance(state, spiel.State):
        raise TypeError(
            f"serialize_game_and_state: expected a game and one of its states, got "
            f"{shown(game)} and {_described_state(state)}"
        )
    return str(openspiel_own("serialize_game_and_state")(game, state))


def _described_state(state: Any) -> str:
    """A state for a one-line message: OpenSpiel's states by their game (their text spans
    lines), anything else as itself."""
    get_game, spiel = getattr(state, "get_game", None), installed_pyspiel()
    if callable(get_game) and spiel is not None and isinstance(state, spiel.State):
        return f"a state of {shown(str(get_game()))}"
    return shown(state)


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
    spiel = require_pyspiel()
    if not isinstance(text, str):
        raise TypeError(
            f"deserialize_game_and_state: a serialized game and state is a str, got "
            f"{type(text).__name__}"
        )
    meta, game_text, state_text = game_and_state_sections(text)
    if game_text.partition("(")[0] == GAME_NAME:
        if meta != SERIALIZED_VERSION:  # written by serialize_game_and_state: Version: 1
            raise ValueError(
                f"deserialize_game_and_state: the [Meta] section reads {shown(meta)}; a "
                f"{GAME_NAME} game and state is written as {SERIALIZED_VERSION!r}"
            )
        params = string_parameters(game_text)
        check_named_preset(params.get("preset", PARAMETERS["preset"]), f"{GAME_NAME}: [Game]")
        game = load_game(GAME_NAME, params)
        if not _is_uno_game(game):  # never handed to the unpickling path
            raise ValueError(f"{GAME_NAME}: the game {shown(game_text)} cannot be read here")
        return game, game.deserialize_state(state_text)
    check_game_names_no_file(game_text)
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
        game_and_state: tuple[Any, Any] = openspiel_own("deserialize_game_and_state")(text)
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

    Also puts :func:`~uno_env.envs.openspiel_parameters.load_game`,
    :func:`serialize_game_and_state` and :func:`deserialize_game_and_state` in place of
    ``pyspiel``'s functions of those names (which they call for every other game), so that
    ``python_uno``'s parameters are checked first and no text given to ``pyspiel`` is
    unpickled for a game written in Python. A second call, or a reload of this module, keeps
    OpenSpiel's own functions as the ones called.

    Raises:
        ImportError: without OpenSpiel (saying how to install it).
    """
    spiel = require_pyspiel()
    if GAME_NAME not in spiel.registered_names():
        spiel.register_game(game_type(), UnoOpenSpielGame)
    put_in_pyspiel(
        {
            "load_game": load_game,
            "serialize_game_and_state": serialize_game_and_state,
            "deserialize_game_and_state": deserialize_game_and_state,
        }
    )


if installed_pyspiel() is not None:
    register()
