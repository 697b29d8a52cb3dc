"""The states of ``python_uno``: the 8 chance nodes that draw the game's key, then the
decisions of one hand, played in place by the batched core (B = 1).

A state keeps a :class:`~uno_env.envs.openspiel_views.PublicTable` (the core state and the
record of every step) and applies OpenSpiel's Python-game methods to it: the legal actions
are the core's mask, the returns its win/loss rewards, a resampling its determinization.
It writes itself as text (:mod:`uno_env.envs.openspiel_serialization`) and is read back by
replaying that text (:func:`state_from_text`, :func:`load_state`). The game that makes the
states, and registers them with OpenSpiel, is :mod:`uno_env.envs.openspiel_game`.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from uno_env import cards as C
from uno_env import core
from uno_env.core import IllegalActionError, UnoState
from uno_env.envs.openspiel_checks import (
    CHANCE_PLAYER,
    TERMINAL_PLAYER,
    CheckedState,
    action_id,
    require_pyspiel,
)
from uno_env.envs.openspiel_parameters import PARAMETERS, load_game
from uno_env.envs.openspiel_serialization import (
    check_named_preset,
    game_parameters,
    line_resampling,
    read_line,
    state_lines,
    state_text,
    where,
)
from uno_env.envs.openspiel_views import (
    GAME_NAME,
    PublicTable,
    check_player,
    colour_text,
    hand_text,
    step_of,
)
from uno_env.files import shown
from uno_env.rules import Rules

if TYPE_CHECKING:
    from uno_env.envs.openspiel_game import UnoOpenSpielGame

__all__ = [
    "CHANCE_OUTCOMES",
    "KEY_BYTES",
    "UnoOpenSpielState",
    "key_actions",
    "key_of",
    "load_state",
    "state_from_text",
]

KEY_BYTES = 8
"""Chance nodes at the root: one byte of the game's 64-bit key each."""
CHANCE_OUTCOMES = 256
"""Outcomes of each chance node: the 256 values of a byte, uniform."""
_CHANCE_PROBABILITIES = [(byte, 1.0 / CHANCE_OUTCOMES) for byte in range(CHANCE_OUTCOMES)]


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
        if not 0 <= byte < CHANCE_OUTCOMES:
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


def _uniform(sampler: Any) -> float:
    """One draw of a probability sampler: a number in [0, 1).

    Raises:
        TypeError: naming the sampler or what it returned, for a sampler that is not
            callable or returns no real number.
        ValueError: naming the number, for one outside [0, 1) (``nan`` included).
    """
    at = f"{GAME_NAME}: resample_from_infostate"
    if not callable(sampler):
        raise TypeError(f"{at}: the probability sampler must be callable, got {shown(sampler)}")
    value = sampler()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{at}: the probability sampler returned {shown(value)}; it must return a "
            "number in [0, 1)"
        )
    if not 0 <= value < 1:  # type: ignore[operator]  # every Real compares with 0 and 1
        raise ValueError(f"{at}: the probability sampler returned {shown(value)}, outside [0, 1)")
    return float(value)


class UnoOpenSpielState(CheckedState):
    """A state of ``python_uno``: the key's chance nodes, then the decisions of a hand.

    Every public method of OpenSpiel's ``State`` checks its arguments as given
    (:class:`~uno_env.envs.openspiel_checks.CheckedState`).

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
            return CHANCE_PLAYER
        last = steps[-1]
        return TERMINAL_PLAYER if last.phase == core.OVER else last.current

    def is_terminal(self) -> bool:
        """Whether the hand is over: won, or truncated at ``max_turns``."""
        steps = self._table.steps
        return bool(steps) and steps[-1].phase == core.OVER

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
        if player == CHANCE_PLAYER:
            if not 0 <= action < CHANCE_OUTCOMES:
                raise ValueError(f"{GAME_NAME}: a chance outcome is a byte 0..255, got {action}")
            return f"key byte 0x{action:02x}"
        check_player(player, self.rules.num_players)
        return C.action_name(action)

    # ---- acting -------------------------------------------------------------------------

    def apply_action(self, action: Any) -> None:
        """Apply a key byte (chance) or a decision of the acting seat: OpenSpiel's
        ``apply_action``, the action checked as given (NumPy integers too).

        Raises:
            TypeError: for an action that is no integer (a bool, a float, text).
            IllegalActionError: naming the action as given, for one that is out of range or
                not legal here (the state is unchanged).
        """
        action = action_id(action)
        if not 0 <= action < CHANCE_OUTCOMES:
            # Out of every range (OpenSpiel would refuse -1, or an int64 overflow, in its
            # own words): the checks of _apply_action name it, and nothing changes.
            self._apply_action(action)
        super().apply_action(action)

    def _apply_action(self, action: int) -> None:
        """Apply a key byte (chance) or a decision of the acting seat.

        Raises:
            IllegalActionError: naming the action, for an id that is not legal here (the
                state is unchanged).
        """
        table = self._table
        if table.state is None:
            if isinstance(action, bool) or not 0 <= action < CHANCE_OUTCOMES:
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
        return state_text(str(self.get_game()), self.history(), self._table.resamples)

    def __reduce__(self) -> tuple[Callable[[str], UnoOpenSpielState], tuple[str]]:
        # pickle and copy write the text, not OpenSpiel's pickle of the state's attributes.
        return load_state, (self.serialize(),)

    def __copy__(self) -> UnoOpenSpielState:
        return self.clone()

    def __deepcopy__(self, memo: dict[int, Any]) -> UnoOpenSpielState:
        return self.clone()

    def _replay_action(self, token: str, at: str) -> None:
        """Apply an action id read from a serialized state (as :func:`read_line` gives it)."""
        if self.is_terminal():
            raise ValueError(f"{at}: action {shown(token)} after the hand ended")
        chance = self._table.state is None
        limit = CHANCE_OUTCOMES if chance else C.NUM_ACTIONS
        if token.startswith("-") or len(token.lstrip("0")) > 3 or int(token) >= limit:
            what = "a key byte is 0..255" if chance else f"an action is 0..{C.NUM_ACTIONS - 1}"
            raise ValueError(f"{at}: {shown(token)} is out of range: {what}")
        try:
            self.apply_action(int(token))
        except IllegalActionError as err:
            raise ValueError(f"{at}: {str(err).removeprefix(f'{GAME_NAME}: ')}") from None

    def _replay_resample(self, seat: str, key: str, at: str) -> None:
        """Apply ``resample SEAT KEY`` read from a serialized state."""
        if self._table.state is None or self.is_terminal():
            when = "before the deal" if self._table.state is None else "after the hand ended"
            raise ValueError(f"{at}: a resampling {when}; only a hand in play is resampled")
        self._resample(*line_resampling(seat, key, self.rules.num_players, at))

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


def state_from_text(game: UnoOpenSpielGame, text: str) -> UnoOpenSpielState:
    """The state of ``game`` that ``text`` (from :meth:`UnoOpenSpielState.serialize`)
    describes, rebuilt by replaying its lines from the root (see
    :meth:`~uno_env.envs.openspiel_game.UnoOpenSpielGame.deserialize_state`).

    Raises:
        TypeError: for a ``text`` that is not a ``str``.
        ValueError: naming the line of the text and what is wrong with it.
    """
    if not isinstance(text, str):
        raise TypeError(f"{GAME_NAME}: a serialized state is a str, got {type(text).__name__}")
    lines = state_lines(text)
    theirs = game_parameters(lines[0])
    ours = dict(game.get_parameters())
    for name in PARAMETERS:
        if theirs[name] != ours[name]:
            raise ValueError(
                f"{where(1)}: the state's game has {name}={shown(theirs[name])} where "
                f"this game has {name}={shown(ours[name])} (load_state(text) reads a "
                "state in its own game)"
            )
    state = game.new_initial_state()
    for number, line in enumerate(lines[1:], start=2):
        read = read_line(line, where(number))
        if isinstance(read, str):
            state._replay_action(read, where(number))
        else:
            state._replay_resample(*read, where(number))
    return state


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
    require_pyspiel()
    if not isinstance(text, str):
        raise TypeError(f"{GAME_NAME}: a serialized state is a str, got {type(text).__name__}")
    params = game_parameters(text.split("\n", 1)[0])
    check_named_preset(params["preset"], where(1))
    try:
        game = load_game(GAME_NAME, params)
    except ValueError as err:  # the rules' own check, naming the parameter
        raise ValueError(f"{where(1)}: {err}") from None
    state: UnoOpenSpielState = game.deserialize_state(text)
    return state
