"""Compiled forms of the random baselines, for play loops that run inside compiled code.

The random baselines of :mod:`uno_env.policy` (``random``, ``random_action``,
``random_any``) read only the legal-action masks, so compiled code can make their decisions
itself, one game at a time, with no Python per decision. :data:`COMPILED_BOTS` is the one
registry of such forms: a policy whose class is listed there (the class itself, not a
subclass, which may act otherwise) can be played by a compiled loop, such as the learner
tables' (:mod:`uno_env.envs.learner_tables`); any other policy is played through
:func:`uno_env.play.choose_actions`.

A compiled form decides exactly as the bot's ``act`` does, from the bot's own generator:
it draws the same uniforms, from the same NumPy bit generator (through its C entry
point, :func:`generator_pointers`), in the same order, when it is called on the same rows
in the same order. ``act`` draws one uniform per row for the first choice of a call, then
one per row that chose a wild for its colour (``random`` only); a compiled loop does the
same by making :func:`first_choice` for all the rows of a call before the
:func:`colour_choice` of the rows that need one.

The compiled code calls the bit generator without taking its lock: a generator must not be
drawn from by another thread while a compiled loop uses it.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, overload

from uno_env import cards as C
from uno_env.jit import jit_inline
from uno_env.policy import RandomActionBot, RandomAnyBot, RandomBot

__all__ = [
    "COMPILED_BOTS",
    "RANDOM_ACTION",
    "RANDOM_ANY",
    "RANDOM_CARD",
    "colour_choice",
    "compiled_bot",
    "first_choice",
    "generator_pointers",
    "needs_colour",
    "next_uniform",
]

RANDOM_ANY = 0
"""Code of :class:`~uno_env.policy.RandomAnyBot`: uniform over the legal actions."""
RANDOM_ACTION = 1
"""Code of :class:`~uno_env.policy.RandomActionBot`: uniform over the plays' action ids."""
RANDOM_CARD = 2
"""Code of :class:`~uno_env.policy.RandomBot`: a playable card uniformly, then a colour."""

COMPILED_BOTS: dict[type, int] = {
    RandomAnyBot: RANDOM_ANY,
    RandomActionBot: RANDOM_ACTION,
    RandomBot: RANDOM_CARD,
}
"""Policy class -> the code of its compiled form (:func:`first_choice`)."""

_UNIFORM_DRAW = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_void_p)
"""The C signature of a NumPy bit generator's ``next_double``."""


def compiled_bot(policy: object) -> int | None:
    """The code of ``policy``'s compiled form, or None if it has none.

    A policy has one when its class is in :data:`COMPILED_BOTS` (exactly: a subclass may
    override ``act``) and its ``rng`` is a NumPy generator.
    """
    code = COMPILED_BOTS.get(type(policy))
    if code is None or not isinstance(getattr(policy, "rng", None), np.random.Generator):
        return None
    return code


def generator_pointers(rng: np.random.Generator) -> tuple[int, int]:
    """The addresses of ``rng``'s ``next_double`` function and of its bit generator's state.

    :func:`next_uniform` draws from them; they stay valid while ``rng`` lives.
    """
    entry = rng.bit_generator.ctypes
    function = ctypes.cast(entry.next_double, ctypes.c_void_p).value
    assert function is not None
    return function, int(entry.state_address)


def next_uniform(function: int, state: int) -> float:
    """The next uniform in ``[0, 1)`` of a generator, as its ``random()`` draws it.

    Args:
        function: The address of the bit generator's ``next_double`` (:func:`generator_pointers`).
        state: The address of its state.
    """
    return float(_UNIFORM_DRAW(int(function))(int(state)))


def _next_double_intrinsic(typingctx: Any, function: Any, state: Any) -> Any:
    """Compiled: call ``next_double`` at address ``function`` on the state at ``state``."""
    del typingctx

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        del context, signature
        void_p = ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(ir.DoubleType(), [void_p])
        fn = builder.inttoptr(args[0], fnty.as_pointer())
        return builder.call(fn, [builder.inttoptr(args[1], void_p)])

    return types.float64(function, state), codegen


_call_next_double: Any = intrinsic(_next_double_intrinsic)


@overload(next_uniform)
def _next_uniform_compiled(function: Any, state: Any) -> Any:
    """In compiled code, :func:`next_uniform` is a direct call of the C function."""
    if isinstance(function, types.Integer) and isinstance(state, types.Integer):
        # numba wants the implementation's annotations to be the overload's.
        def impl(function: Any, state: Any) -> Any:
            return _call_next_double(function, state)

        return impl
    return None


@jit_inline
def _pick(row: np.ndarray, u: float) -> int:
    """The ``floor(u * n)``-th true entry of ``row`` (0 if none): ``uniform_legal_actions``."""
    count = 0
    for action in range(row.shape[0]):
        count += int(row[action])
    if count == 0:
        return 0
    target = int(u * count)
    for action in range(row.shape[0]):
        target -= int(row[action])
        if target < 0:
            return action
    return 0


@jit_inline
def _force_free_actions(mask: np.ndarray, options: np.ndarray) -> None:
    """Declaring and catching are free: take them whenever offered (catching last, so first)."""
    for forced in (C.UNO, C.CATCH):
        if mask[forced]:
            for action in range(C.NUM_ACTIONS):
                options[action] = False
            options[forced] = True


@jit_inline
def first_choice(code: int, mask: np.ndarray, options: np.ndarray, u: float) -> int:
    """Bot ``code``'s choice in one game, from its legal ``mask`` and the uniform ``u``.

    For ``random`` (:data:`RANDOM_CARD`) a wild's four colour choices count as one option
    (its first column is returned) and ``options`` keeps the row's options for
    :func:`colour_choice`; ``options`` is work space for the other bots.
    """
    for action in range(C.NUM_ACTIONS):
        options[action] = mask[action]
    if code == RANDOM_ANY:
        return _pick(options, u)
    can_play = False
    for action in range(C.NUM_PLAY_ACTIONS):
        can_play |= mask[action]
    if code == RANDOM_ACTION:
        if can_play:
            options[C.DRAW] = False
            options[C.KEEP] = False
        _force_free_actions(mask, options)
        return _pick(options, u)
    # RANDOM_CARD: in its own turn a playable card is always played.
    if can_play and not mask[C.PASS]:
        for action in range(C.NUM_PLAY_ACTIONS, C.NUM_ACTIONS):
            options[action] = False
    _force_free_actions(mask, options)
    # Each wild's block of colour choices counts as one option, its first column.
    wild = False
    wild_draw_four = False
    for c in range(C.NUM_COLOURS):
        wild |= options[C.PLAY_WILD + c]
        wild_draw_four |= options[C.PLAY_WILD_DRAW_FOUR + c]
    count = int(wild) + int(wild_draw_four)
    for action in range(C.PLAY_WILD):
        count += int(options[action])
    for action in range(C.NUM_PLAY_ACTIONS, C.NUM_ACTIONS):
        count += int(options[action])
    if count == 0:
        return 0
    target = int(u * count)
    for action in range(C.PLAY_WILD):  # the options in id order, as the Python bot counts
        target -= int(options[action])
        if target < 0:
            return action
    target -= int(wild)
    if target < 0:
        return C.PLAY_WILD
    target -= int(wild_draw_four)
    if target < 0:
        return C.PLAY_WILD_DRAW_FOUR
    for action in range(C.NUM_PLAY_ACTIONS, C.NUM_ACTIONS):
        target -= int(options[action])
        if target < 0:
            return action
    return 0


# The walk above takes the action ids in this order: the coloured plays, the two wilds'
# blocks, then the other actions.
assert C.PLAY_WILD_DRAW_FOUR == C.PLAY_WILD + C.NUM_COLOURS
assert C.NUM_PLAY_ACTIONS == C.PLAY_WILD_DRAW_FOUR + C.NUM_COLOURS


@jit_inline
def needs_colour(code: int, action: int) -> bool:
    """Whether bot ``code``'s first choice ``action`` still needs :func:`colour_choice`."""
    return code == RANDOM_CARD and (action == C.PLAY_WILD or action == C.PLAY_WILD_DRAW_FOUR)


@jit_inline
def colour_choice(options: np.ndarray, first: int, u: float) -> int:
    """The wild's play with a colour drawn uniformly among its options, from ``u``."""
    return first + _pick(options[first : first + C.NUM_COLOURS], u)
