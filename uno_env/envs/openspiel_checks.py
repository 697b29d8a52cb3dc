"""The checks at ``python_uno``'s door: that OpenSpiel is installed, and that what Python hands
a state is what OpenSpiel's API means.

OpenSpiel's bindings refuse a bad argument in several lines of C++ words, or take it for
something else (a bool as 0 or 1); :class:`CheckedState`'s public methods check every seat
and action as given first, each refusal one line naming it. The game's own state
(:class:`~uno_env.envs.openspiel_classes.UnoOpenSpielState`) builds on it. The module, like
every ``python_uno`` module, imports without OpenSpiel; using the game then raises an
``ImportError`` that says how to install it.
"""

from __future__ import annotations

from typing import Any, Self

import numpy as np

from uno_env.envs.openspiel_views import GAME_NAME, check_player
from uno_env.files import shown

try:
    import pyspiel
except ImportError:  # optional: the module still imports, and says how to install it
    pyspiel = None

__all__ = [
    "CHANCE_PLAYER",
    "INSTALL_HINT",
    "TERMINAL_PLAYER",
    "CheckedState",
    "GameBase",
    "action_id",
    "installed_pyspiel",
    "require_pyspiel",
    "seat_or_chance",
]

INSTALL_HINT = "OpenSpiel is not installed: pip install 'uno-lab[openspiel]'"
"""What a use of the game without OpenSpiel says."""
CHANCE_PLAYER = -1
"""``pyspiel.PlayerId.CHANCE`` (checked against pyspiel in the tests)."""
TERMINAL_PLAYER = -4
"""``pyspiel.PlayerId.TERMINAL`` (checked against pyspiel in the tests)."""

GameBase: Any = object if pyspiel is None else pyspiel.Game
"""``pyspiel.Game``, or ``object`` without OpenSpiel (the game then refuses to be built)."""
_StateBase: Any = object if pyspiel is None else pyspiel.State


def installed_pyspiel() -> Any:
    """The pyspiel module, or ``None`` without OpenSpiel."""
    return pyspiel


def require_pyspiel() -> Any:
    """The pyspiel module, or an ImportError that says how to install it."""
    if pyspiel is None:
        raise ImportError(INSTALL_HINT)
    return pyspiel


def action_id(action: Any) -> int:
    """An action as given to a state's method, as an int: NumPy's integers too, never a bool,
    a float or text (OpenSpiel's bindings would refuse those in several lines, or take a
    bool as 0 or 1).

    Raises:
        TypeError: naming the action as given.
    """
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        raise TypeError(f"{GAME_NAME}: an action is an integer, got {shown(action)}")
    return int(action)


def seat_or_chance(player: Any, num_players: int) -> int:
    """A player as given to a state's method: a seat of the table or the chance player (-1).

    Raises:
        TypeError: for a player that is no integer (a bool, text, an array).
        ValueError: for a player outside the table.
    """
    if (
        isinstance(player, (int, np.integer))
        and not isinstance(player, (bool, np.bool_))
        and player == CHANCE_PLAYER
    ):
        return CHANCE_PLAYER
    check_player(player, num_players)
    return int(player)


class CheckedState(_StateBase):
    """``pyspiel.State`` whose public methods check each seat and action as given.

    A subclass gives OpenSpiel's Python-game methods (``current_player``, ``_legal_actions``,
    ``_action_to_string``, ``returns``...); these check what a caller hands them first.
    """

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
        actions = super().legal_actions(seat_or_chance(player, self.num_players()))
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
        mask = super().legal_actions_mask(seat_or_chance(player, self.num_players()))
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
        seat = seat_or_chance(player, self.num_players())
        text: str = self._action_to_string(seat, action_id(action))
        return text

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
        seat = seat_or_chance(args[0], self.num_players())
        action = super().string_to_action(seat, text)
        return action

    def player_return(self, player: Any) -> float:
        """The return of ``player`` (see ``returns``), the seat checked as given.

        Raises:
            TypeError: for a seat that is no integer.
            ValueError: for a seat outside the table.
        """
        check_player(player, self.num_players())
        value: float = self.returns()[int(player)]
        return value

    def player_reward(self, player: Any) -> float:
        """The reward of ``player`` (see ``rewards``), the seat checked as given.

        Raises:
            TypeError: for a seat that is no integer.
            ValueError: for a seat outside the table.
        """
        check_player(player, self.num_players())
        value: float = self.rewards()[int(player)]
        return value

    def _seat_view(self, name: str, player: Any) -> Any:
        """OpenSpiel's ``name`` view for ``player`` (``None``: the seat to act), seat checked."""
        view = getattr(super(), name)
        if player is None:
            current = self.current_player()
            if current < 0:  # OpenSpiel's own check would fail in C++ words
                where = "the deal (a chance node)" if current == CHANCE_PLAYER else "the end"
                raise ValueError(
                    f"{GAME_NAME}: {name}() without a player at {where}: no seat acts "
                    "there; give the player"
                )
            return view()
        check_player(player, self.num_players())
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

    def child(self, action: Any) -> Self:
        """A copy of the state with ``action`` applied (checked as ``apply_action``)."""
        action_id(action)  # refused before the copy is made
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
