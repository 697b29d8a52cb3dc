"""Table-driven scenarios for the house rules and RLCard switches (docs/rules.md §15-16).

Every scenario follows the section "House rules (rules.md §15-16) and the RLCard compatibility
switches" of ``docs/engine.md``: it stacks a deck (hands per seat, the starter, the top of the
draw pile), plays a script of action names through :class:`uno_env.UnoGame` and checks the
table at checkpoints. A script item is an action name (played) or a dict of expectations
(checked). After every step the cards are checked to be conserved.

Expectation keys (see :func:`check`): ``current``, ``top``, ``colour``, ``direction``,
``phase``, ``legal`` (exact set), ``legal_has``, ``legal_lacks``, ``hands`` ({seat: cards}),
``sizes``, ``exposed``, ``drawn``, ``draw_top``, ``discard``, ``done``, ``winner``,
``hand_scores``, ``match_scores``, ``match_over``, ``pending``, ``penalty_kind``,
``effect`` ((face, seat) or (None, None)), ``finish_rank``, ``wd4_seat``, ``declared``.

Standalone tests cover what a table does not fit: random colours recomputed from the
documented streams, the reshuffle of the whole discard pile, the presets and the validation
of rule configurations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest
from support.scenarios import Scenario, Script, assert_conserved, by_face, run, stack
from support.scenarios import scen as _scen

from uno_env import UnoGame
from uno_env import cards as C
from uno_env.config_values import ConfigError
from uno_env.rng import keyed_permutation, keyed_randint
from uno_env.rules import PRESETS, Rules, load_rules

WILDS = ["W:R", "W:Y", "W:G", "W:B"]
WD4S = ["W+4:R", "W+4:Y", "W+4:G", "W+4:B"]
NAME_COLOURS = ["colour:R", "colour:Y", "colour:G", "colour:B"]
PILE = ["G1", "G2", "G3", "G4", "G6", "G7", "G8", "B6"]
"""Unplayable filler for the top of the draw pile (drawn cards are predictable)."""

TURN_STREAM_OFFSET = 2**19
"""docs: RLCard's random wild colour uses stream ``hand * 2**20 + 2**19 + turn``."""


# ---------------------------------------------------------------------------------------
# Stacked decks, scenarios, checks
# ---------------------------------------------------------------------------------------


def scen(
    name: str, hands: Sequence[Sequence[str]], starter: str, script: Script, **kw: Any
) -> Scenario:
    """A scenario with the house-rule default draw pile (``PILE``) after the starter."""
    kw.setdefault("pile", PILE)
    return _scen(name, hands, starter, script, **kw)


# ---------------------------------------------------------------------------------------
# The scenarios. Dealer 0 and seat 1 first unless said otherwise; starter R9 is red.
# ---------------------------------------------------------------------------------------

# Three seats: seat 1 holds a Draw Two, seat 2 an answer to it (stacking scenarios).
H_STACK2 = [["B1", "B3", "B5"], ["R+2", "G5", "G6"], ["Y+2", "Y3", "Y4"]]
# Three seats: seat 1 holds a legal Wild Draw Four (no red), seat 2 another one.
H_STACK4 = [["B1", "B3", "B5"], ["W+4", "G5", "G6"], ["W+4", "Y3", "Y4"]]
# Two seats, dealer 1 so that seat 0 starts; seat 0 gets down to a lone Draw Two.
H_LAST = [["R4", "R7", "Y+2"], ["R5", "R+2", "R6"]]
# Four seats for jump-in: three Wilds in seats 0, 1 and 3.
H_JUMP_W = [["W", "B1", "B2"], ["W", "G5", "G6"], ["Y1", "Y2", "Y3"], ["W", "B3", "B4"]]

STACKING: list[Scenario] = [
    scen(
        "stack-draw-two-non-cumulative-original-penalty-passes-on",
        H_STACK2,
        "R9",
        [
            {"legal": ["R+2", "draw"], "phase": "play", "pending": 0, "penalty_kind": 0},
            "R+2",
            {"phase": "stack", "current": 2, "pending": 2, "penalty_kind": 2, "top": "R+2"},
            # any colour of Draw Two; no challenge (not a Wild Draw Four)
            {"legal": ["Y+2", "draw"], "wd4_seat": -1, "sizes": [3, 2, 3]},
            "Y+2",
            # a victim without an answer still faces the STACK phase (a property of the rules)
            {"phase": "stack", "current": 0, "pending": 2, "penalty_kind": 2, "colour": "Y"},
            {"legal": ["draw"]},
            "draw",
            {"phase": "play", "current": 1, "pending": 0, "penalty_kind": 0},
            {"hands": {0: ["B1", "B3", "B5", "G1", "G2"], 1: ["G5", "G6"], 2: ["Y3", "Y4"]}},
        ],
        stack_draw_two=True,
    ),
    scen(
        "stack-draw-two-cumulative-penalties-add-up",
        H_STACK2,
        "R9",
        [
            "R+2",
            {"phase": "stack", "current": 2, "pending": 2},
            "Y+2",
            {"phase": "stack", "current": 0, "pending": 4, "penalty_kind": 2},
            "draw",
            {"current": 1, "phase": "play", "sizes": [7, 2, 2]},
            {"hands": {0: ["B1", "B3", "B5", "G1", "G2", "G3", "G4"]}},
        ],
        stack_draw_two=True,
        stack_cumulative=True,
    ),
    scen(
        "stack-draw-two-victim-takes-the-penalty-at-once",
        H_STACK2,
        "R9",
        [
            "R+2",
            "draw",
            # the victim draws the pending 2 and loses its turn: next is 1 ahead of it
            {"phase": "play", "current": 0, "pending": 0, "penalty_kind": 0},
            {"hands": {2: ["Y+2", "Y3", "Y4", "G1", "G2"]}},
        ],
        stack_draw_two=True,
    ),
    scen(
        "stack-draw-four-on-draw-four-cumulative-last-names-colour",
        H_STACK4,
        "R9",
        [
            "W+4:G",
            {"phase": "stack", "current": 2, "pending": 4, "penalty_kind": 4, "wd4_seat": 1},
            {"legal": [*WD4S, "draw", "challenge"], "colour": "G"},
            "W+4:B",
            {"phase": "stack", "current": 0, "pending": 8, "penalty_kind": 4, "wd4_seat": 2},
            {"legal": ["draw", "challenge"], "colour": "B", "top": "W+4"},
            "draw",
            {"current": 1, "phase": "play", "pending": 0, "wd4_seat": -1},
            {"hands": {0: ["B1", "B3", "B5", *PILE]}},
        ],
        stack_draw_four=True,
        stack_cumulative=True,
    ),
    scen(
        "stack-draw-four-non-cumulative-passes-four",
        H_STACK4,
        "R9",
        [
            "W+4:G",
            "W+4:B",
            {"phase": "stack", "current": 0, "pending": 4},
            "draw",
            {"current": 1, "hands": {0: ["B1", "B3", "B5", "G1", "G2", "G3", "G4"]}},
        ],
        stack_draw_four=True,
    ),
    scen(
        "stack-draw-two-of-named-colour-on-draw-four-victim-without-response-draws",
        [["B1", "B3", "B5"], ["W+4", "G5", "G6"], ["G+2", "Y+2", "Y4"]],
        "R9",
        [
            "W+4:G",
            # only the Draw Two of the colour just named answers a Wild Draw Four
            {"phase": "stack", "current": 2, "legal": ["G+2", "draw", "challenge"]},
            "G+2",
            # nothing answers a Draw Two under these rules: seat 0 draws the passed-on 4 at
            # once and the turn goes 2 ahead of seat 2
            {"phase": "play", "current": 1, "top": "G+2", "colour": "G", "pending": 0},
            {"hands": {0: ["B1", "B3", "B5", "G1", "G2", "G3", "G4"]}},
        ],
        stack_draw_two_on_four=True,
    ),
    scen(
        "stack-draw-two-on-four-then-no-challenge-against-the-draw-two",
        [["B1", "B3", "B5"], ["W+4", "G5", "G6"], ["G+2", "Y+2", "Y4"]],
        "R9",
        [
            "W+4:G",
            "G+2",
            {"phase": "stack", "current": 0, "pending": 6, "penalty_kind": 2},
            {"legal": ["draw"]},  # the top card is a Draw Two: nothing to challenge
            "draw",
            {"current": 1, "sizes": [9, 2, 2]},
        ],
        stack_draw_two_on_four=True,
        stack_draw_two=True,
        stack_cumulative=True,
    ),
    scen(
        "stack-draw-four-on-two-without-challenge-victim-draws-the-sum",
        [["B1", "B3", "B5"], ["R+2", "G5", "G6"], ["W+4", "Y3", "Y4"]],
        "R9",
        [
            "R+2",
            {"phase": "stack", "current": 2, "legal": [*WD4S, "draw"]},
            "W+4:Y",
            {"phase": "play", "current": 1, "colour": "Y", "pending": 0, "penalty_kind": 0},
            {"hands": {0: ["B1", "B3", "B5", "G1", "G2", "G3", "G4", "G6", "G7"]}},
        ],
        stack_draw_four_on_two=True,
        stack_cumulative=True,
        wd4_challenge=False,
    ),
    scen(
        "stack-draw-four-on-two-then-challenge-phase-faces-the-whole-stack",
        [["B1", "B3", "B5"], ["R+2", "G5", "G6"], ["W+4", "Y3", "Y4"]],
        "R9",
        [
            "R+2",
            "W+4:Y",
            # nothing answers a Wild Draw Four: the official challenge, facing pending 2 + 4
            {"phase": "challenge", "current": 0, "pending": 6, "wd4_seat": 2},
            {"legal": ["challenge", "accept"]},
            "accept",
            {"phase": "play", "current": 1, "sizes": [9, 2, 2]},
        ],
        stack_draw_four_on_two=True,
        stack_cumulative=True,
    ),
    scen(
        "stack-challenge-guilty-bluffer-draws-4-chain-ends-challenger-plays",
        [["B1", "B3", "B5"], ["W+4", "R5", "G6"], ["Y3", "Y4", "Y5"]],
        "R9",
        [
            "W+4:G",
            {"phase": "stack", "current": 2, "legal": ["draw", "challenge"], "pending": 4},
            "challenge",
            {"phase": "play", "current": 2, "pending": 0, "penalty_kind": 0, "colour": "G"},
            {"hands": {1: ["R5", "G6", "G1", "G2", "G3", "G4"], 2: ["Y3", "Y4", "Y5"]}},
        ],
        stack_draw_four=True,
    ),
    scen(
        "stack-challenge-innocent-challenger-draws-pending-plus-2",
        H_STACK4,
        "R9",
        [
            "W+4:G",
            "W+4:B",  # seat 2 holds no green: a legal Wild Draw Four
            {"phase": "stack", "current": 0, "pending": 8},
            "challenge",
            {"phase": "play", "current": 1, "pending": 0},
            {"sizes": [13, 2, 2]},
        ],
        stack_draw_four=True,
        stack_cumulative=True,
    ),
    scen(
        "stack-challenge-judges-the-stacked-wild-draw-four",
        [["B1", "B3", "B5"], ["W+4", "G5", "G6"], ["W+4", "G3", "Y4"]],
        "R9",
        [
            "W+4:G",
            "W+4:B",  # seat 2 held G3 while green was current: guilty
            {"phase": "stack", "current": 0, "wd4_seat": 2, "pending": 8},
            "challenge",
            {"phase": "play", "current": 0, "pending": 0, "colour": "B"},
            {"hands": {2: ["G3", "Y4", "G1", "G2", "G3", "G4"], 0: ["B1", "B3", "B5"]}},
        ],
        stack_draw_four=True,
        stack_cumulative=True,
    ),
    scen(
        "deflect-3p-penalty-goes-back-to-who-played-it",
        [["B1", "B3", "B5"], ["R+2", "G5", "G6"], ["RR", "YR", "Y4"]],
        "R9",
        [
            "R+2",
            # only a Reverse of the current colour deflects
            {"phase": "stack", "current": 2, "legal": ["RR", "draw"]},
            "RR",
            {"phase": "stack", "current": 1, "direction": -1, "pending": 2, "penalty_kind": 2},
            {"legal": ["draw", "uno"], "top": "RR"},
            "draw",
            {"phase": "play", "current": 0, "direction": -1, "pending": 0},
            {"hands": {1: ["G5", "G6", "G1", "G2"], 2: ["YR", "Y4"]}},
        ],
        reverse_deflects=True,
    ),
    scen(
        "deflect-2p-penalty-goes-back-not-play-again",
        [["RR", "B3", "B5"], ["R+2", "G5", "G6"]],
        "R9",
        [
            "R+2",
            {"phase": "stack", "current": 0, "legal": ["RR", "draw"]},
            "RR",
            {"phase": "stack", "current": 1, "direction": -1, "pending": 2},
            "draw",
            {"phase": "play", "current": 0, "hands": {1: ["G5", "G6", "G1", "G2"]}},
        ],
        reverse_deflects=True,
    ),
    scen(
        "deflect-wild-draw-four-then-no-challenge",
        [["B1", "B3", "B5"], ["W+4", "G5", "G6"], ["GR", "Y3", "Y4"]],
        "R9",
        [
            "W+4:G",
            {"phase": "stack", "current": 2, "legal": ["GR", "draw", "challenge"]},
            "GR",
            {"phase": "stack", "current": 1, "pending": 4, "penalty_kind": 4, "wd4_seat": -1},
            {"legal": ["draw", "uno"]},  # the top card is the Reverse: nothing to challenge
            "draw",
            {"current": 0, "phase": "play", "sizes": [3, 6, 2]},
        ],
        reverse_deflects=True,
    ),
    scen(
        "stack-with-the-last-card-ends-the-hand-victim-draws-the-stack",
        H_LAST,
        "R9",
        [
            {"current": 0},
            "R4",
            "R5",
            "uno",
            "R7",
            {"current": 1, "hands": {0: ["Y+2"]}},
            "R+2",  # seat 1 goes down to one card without declaring
            {"phase": "stack", "current": 0, "pending": 2, "exposed": 1},
            {"legal": ["Y+2", "draw", "catch"]},
            "Y+2",
            {"done": True, "winner": 0, "phase": "over", "pending": 0, "penalty_kind": 0},
            {"hands": {1: ["R6", "G1", "G2", "G3", "G4"]}, "hand_scores": [16, 0]},
        ],
        dealer=1,
        stack_draw_two=True,
        stack_cumulative=True,
    ),
    scen(
        "stack-with-the-last-card-non-cumulative-victim-draws-the-original-penalty",
        H_LAST,
        "R9",
        ["R4", "R5", "uno", "R7", "R+2", "Y+2", {"done": True, "sizes": [0, 3]}],
        dealer=1,
        stack_draw_two=True,
    ),
    scen(
        "deflect-with-the-last-card-ends-the-hand-the-penalty-goes-back",
        [["R4", "R7", "RR"], ["R5", "R+2", "R6"]],
        "R9",
        [
            "R4",
            "R5",
            "uno",
            "R7",
            "R+2",
            {"phase": "stack", "current": 0, "legal": ["RR", "draw", "catch"]},
            "RR",
            # a stacking card that is the last card: the victim it would send the penalty to
            # draws it; a final Reverse keeps the direction
            {"done": True, "winner": 0, "direction": 1, "hands": {1: ["R6", "G1", "G2"]}},
        ],
        dealer=1,
        reverse_deflects=True,
    ),
]

JUMP_IN: list[Scenario] = [
    scen(
        "jump-in-window-in-turn-order-passes-then-closes",
        H_JUMP_W,
        "R9",
        [
            "W:B",
            # holders of W in turn order from seat 2: seat 3, then seat 0
            {"phase": "jump_in", "current": 3, "effect": ("W", 1), "colour": "B", "top": "W"},
            {"legal": [*WILDS, "pass"]},
            "pass",
            {"phase": "jump_in", "current": 0, "effect": ("W", 1)},
            "pass",
            # the window closes: the Wild's effect resolves from seat 1
            {"phase": "play", "current": 2, "effect": (None, None), "colour": "B"},
        ],
        jump_in=True,
    ),
    scen(
        "jump-in-identical-wild-play-continues-from-the-jumper",
        H_JUMP_W,
        "R9",
        [
            "W:B",
            "W:G",
            # a new window for the remaining holders, in turn order after the jumper
            {"phase": "jump_in", "current": 0, "effect": ("W", 3), "colour": "G"},
            "pass",
            {"phase": "play", "current": 0, "effect": (None, None)},
            {"hands": {3: ["B3", "B4"], 1: ["G5", "G6"], 0: ["W", "B1", "B2"]}},
        ],
        jump_in=True,
    ),
    scen(
        "jump-in-on-a-skip-escapes-it",
        [["B1", "B2", "B3"], ["GS", "G5", "G6"], ["GS", "Y3", "Y4"]],
        "G9",
        [
            "GS",
            {"phase": "jump_in", "current": 2, "effect": ("GS", 1), "legal": ["GS", "pass"]},
            "GS",
            # seat 1's Skip is cancelled; seat 2's Skip skips seat 0
            {"phase": "play", "current": 1, "top": "GS", "hands": {2: ["Y3", "Y4"]}},
            {"skipped": 0},
        ],
        jump_in=True,
    ),
    scen(
        "jump-in-pass-on-a-skip-the-skip-resolves",
        [["B1", "B2", "B3"], ["GS", "G5", "G6"], ["GS", "Y3", "Y4"]],
        "G9",
        [
            "GS",
            {"skipped": None},  # the skip waits for the window to close
            "pass",
            {"phase": "play", "current": 0, "effect": (None, None), "skipped": 2},
        ],
        jump_in=True,
    ),
    scen(
        "jump-in-cancels-the-draw-two-jumped-on",
        [["B1", "B2", "B3"], ["R+2", "G5", "G6"], ["Y1", "Y2", "Y3"], ["R+2", "B4", "B5"]],
        "R9",
        [
            "R+2",
            {"phase": "jump_in", "current": 3, "effect": ("R+2", 1), "legal": ["R+2", "pass"]},
            "R+2",
            # seat 2 is spared; the jumper's Draw Two hits seat 0, turn 2 ahead of seat 3
            {"phase": "play", "current": 1, "sizes": [5, 2, 3, 2]},
            {"hands": {0: ["B1", "B2", "B3", "G1", "G2"], 2: ["Y1", "Y2", "Y3"]}},
        ],
        jump_in=True,
    ),
    scen(
        "jump-in-reverse-flips-once",
        [["B1", "B2", "B3"], ["RR", "G5", "G6"], ["Y1", "Y2", "Y3"], ["RR", "B4", "B5"]],
        "R9",
        ["RR", {"current": 3, "direction": 1}, "RR", {"current": 2, "direction": -1}],
        jump_in=True,
    ),
    scen(
        "jump-in-no-window-on-the-starter",
        [["B1", "B2", "B3"], ["R3", "G6", "Y7"], ["G5", "Y3", "Y4"]],
        "G5",
        [{"phase": "play", "current": 1, "effect": (None, None)}],
        jump_in=True,
    ),
    scen(
        "jump-in-never-with-a-wild-draw-four",
        [["B1", "B2", "B3"], ["W+4", "G5", "G6"], ["W+4", "Y3", "Y4"]],
        "R9",
        ["W+4:G", {"phase": "challenge", "current": 2, "effect": (None, None)}],
        jump_in=True,
    ),
    scen(
        "jump-in-no-window-when-nobody-else-holds-the-card",
        [["B1", "B2", "B3"], ["R3", "G6", "Y7"], ["G5", "Y3", "Y4"]],
        "R9",
        ["R3", {"phase": "play", "current": 2}],
        jump_in=True,
    ),
    scen(
        "jump-in-window-allows-uno-and-the-jumper-is-not-exposed",
        [["B1", "B2"], ["G5", "G7"], ["G5", "Y3"]],
        "G9",
        [
            "uno",
            "G5",
            {"phase": "jump_in", "current": 2, "declared": False, "exposed": None},
            {"legal": ["G5", "pass", "uno"]},
            "uno",
            "G5",
            {"phase": "play", "current": 0, "exposed": None, "hands": {2: ["Y3"]}},
        ],
        jump_in=True,
    ),
    scen(
        "jump-in-a-jumper-without-uno-is-exposed-to-the-next-seat",
        [["B1", "B2"], ["G5", "G7"], ["G5", "Y3"]],
        "G9",
        ["uno", "G5", "G5", {"current": 0, "exposed": 2, "legal_has": ["catch"]}],
        jump_in=True,
    ),
]

SEVEN_ZERO: list[Scenario] = [
    scen(
        "zero-rotates-hands-clockwise",
        [["B1", "B2", "B3"], ["G0", "G5", "G6"], ["Y1", "Y2", "Y3"]],
        "G9",
        [
            "G0",
            {"hands": {0: ["Y1", "Y2", "Y3"], 1: ["B1", "B2", "B3"], 2: ["G5", "G6"]}},
            {"current": 2, "phase": "play", "sizes": [3, 3, 2], "events": {"hands_moved"}},
        ],
        seven_zero=True,
    ),
    scen(
        "zero-rotates-hands-counter-clockwise",
        [["G0", "B2", "B3"], ["R1", "R2", "R3"], ["Y1", "Y2", "Y3"]],
        "GR",
        [
            {"current": 0, "direction": -1},
            "G0",
            {"hands": {2: ["B2", "B3"], 1: ["Y1", "Y2", "Y3"], 0: ["R1", "R2", "R3"]}},
            {"current": 2},
        ],
        seven_zero=True,
    ),
    scen(
        "seven-swaps-hands-with-the-chosen-seat",
        [["B1", "B2", "B3"], ["G7", "G5", "G6"], ["Y1", "Y2", "Y3"], ["R1", "R2", "R3"]],
        "G9",
        [
            "G7",
            {"phase": "swap_target", "current": 1, "effect": ("G7", 1), "events": set()},
            {"legal": ["swap:1", "swap:2", "swap:3"]},
            "swap:2",
            {"hands": {1: ["R1", "R2", "R3"], 3: ["G5", "G6"], 0: ["B1", "B2", "B3"]}},
            {"events": {"hands_moved"}, "step_drawn": [0, 0, 0, 0]},
            {"phase": "play", "current": 2, "effect": (None, None)},
        ],
        seven_zero=True,
    ),
    scen(
        "seven-swap-target-counts-in-seat-order-whatever-the-direction",
        [["G7", "B2", "B3"], ["R1", "R2", "R3"], ["Y1", "Y2", "Y3"]],
        "GR",
        [
            "G7",
            {"phase": "swap_target", "current": 0, "legal": ["swap:1", "swap:2"]},
            "swap:1",
            {"hands": {0: ["R1", "R2", "R3"], 1: ["B2", "B3"], 2: ["Y1", "Y2", "Y3"]}},
            {"current": 2, "direction": -1},
        ],
        seven_zero=True,
    ),
    scen(
        "seven-as-last-card-ends-the-hand-without-a-swap",
        [["B1"], ["G7"], ["Y1"]],
        "G9",
        ["G7", {"done": True, "winner": 1, "hands": {0: ["B1"], 2: ["Y1"]}}],
        seven_zero=True,
    ),
    scen(
        "zero-as-last-card-ends-the-hand-without-a-rotation",
        [["B1"], ["G0"], ["Y2"]],
        "G9",
        ["G0", {"done": True, "winner": 1, "hands": {0: ["B1"], 2: ["Y2"]}}],
        seven_zero=True,
    ),
    scen(
        "zero-clears-the-uno-exposure",
        [["B1", "B2"], ["G0", "G5"], ["Y1", "Y2"]],
        "G9",
        ["G0", {"exposed": None, "current": 2, "legal_lacks": ["catch"]}],
        seven_zero=True,
    ),
    scen(
        "seven-swap-clears-the-uno-exposure",
        [["B1", "B2"], ["G7", "G5"], ["Y1", "Y2"]],
        "G9",
        [
            "G7",
            # the exposed seat is the one choosing: nobody can catch it now
            {"phase": "swap_target", "exposed": 1, "legal": ["swap:1", "swap:2"]},
            "swap:1",
            {"exposed": None, "current": 2, "hands": {1: ["Y1", "Y2"], 2: ["G5"]}},
        ],
        seven_zero=True,
    ),
    scen(
        "seven-after-a-jump-in-window-declared-belongs-to-the-seat-that-acts",
        [["B1", "B2"], ["G7", "G5"], ["G7", "Y2"]],
        "G9",
        [
            "uno",
            "G7",
            {"phase": "jump_in", "current": 2, "declared": False, "legal": ["G7", "pass", "uno"]},
            "uno",
            {"declared": True},
            "pass",
            # the window closes: seat 1 chooses whom to swap with; current changed, so
            # `declared` (seat 2's declaration) is reset
            {"phase": "swap_target", "current": 1, "declared": False, "effect": ("G7", 1)},
            "swap:1",
            {"phase": "play", "current": 2, "hands": {1: ["G7", "Y2"], 2: ["G5"]}},
        ],
        pile=["B6", "B8"],
        jump_in=True,
        seven_zero=True,
    ),
    scen(
        "seven-without-seven-zero-is-a-number",
        [["B1", "B2", "B3"], ["G7", "G5", "G6"], ["Y1", "Y2", "Y3"]],
        "G9",
        ["G7", {"phase": "play", "current": 2}],
    ),
]

DRAWING: list[Scenario] = [
    scen(
        "until-playable-draws-until-a-playable-card",
        [["G1", "G2", "G3"], ["B1", "B2", "Y3"], ["Y1", "Y2", "Y4"]],
        "R9",
        [
            "draw",
            {"phase": "after_draw", "current": 1, "drawn": "G9", "legal": ["G9", "keep"]},
            {"hands": {1: ["B1", "B2", "Y3", "B7", "Y5", "G9"]}, "draw_top": ["R2"]},
        ],
        pile=["B7", "Y5", "G9", "R2"],
        draw_rule="until_playable",
        draw_cap=5,
    ),
    scen(
        "until-playable-stops-at-draw-cap",
        [["G1", "G2", "G3"], ["B1", "B2", "Y3"], ["Y1", "Y2", "Y4"]],
        "R9",
        [
            "draw",
            {"phase": "play", "current": 2, "drawn": None, "draw_top": ["G9"]},
            {"hands": {1: ["B1", "B2", "Y3", "B7", "Y5"]}},
        ],
        pile=["B7", "Y5", "G9", "R2"],
        draw_rule="until_playable",
        draw_cap=2,
    ),
    scen(
        "until-playable-voluntary-draw-while-holding-a-playable-card",
        [["G1", "G2", "G3"], ["R5", "B2", "Y3"], ["Y1", "Y2", "Y4"]],
        "R9",
        ["draw", {"phase": "after_draw", "drawn": "R2", "sizes": [3, 5, 3]}],
        pile=["B7", "R2"],
        draw_rule="until_playable",
    ),
    scen(
        "voluntary-draw-off-draw-only-when-stuck",
        [["G1", "G2", "G3"], ["R5", "B1", "B2"], ["Y1", "Y2", "Y3"]],
        "R9",
        [
            {"legal": ["R5"]},
            "R5",
            {"current": 2, "legal": ["draw"]},
            "draw",
            {"current": 0, "phase": "play"},
        ],
        voluntary_draw=False,
    ),
    scen(
        "voluntary-draw-off-a-wild-is-a-play",
        [["G1", "G2", "G3"], ["W", "B1", "B2"], ["Y1", "Y2", "Y3"]],
        "R9",
        [{"legal": WILDS}],
        voluntary_draw=False,
    ),
    scen(
        "rlcard-after-draw-current-colour-card-played-at-once",
        [["G1", "G2", "G3"], ["B1", "B2", "Y3"], ["Y1", "Y2", "Y4"]],
        "R9",
        [
            "draw",
            {"top": "R7", "discard": ["R9", "R7"], "current": 2, "phase": "play"},
            {"hands": {1: ["B1", "B2", "Y3"]}, "drawn": None},
        ],
        pile=["R7"],
        after_draw="rlcard",
    ),
    scen(
        "rlcard-after-draw-action-card-played-with-its-effect",
        [["G1", "G2", "G3"], ["B1", "B2", "Y3"], ["Y1", "Y2", "Y4"]],
        "R9",
        ["draw", {"top": "R+2", "current": 0, "hands": {2: ["Y1", "Y2", "Y4", "G1", "G2"]}}],
        pile=["R+2", "G1", "G2"],
        after_draw="rlcard",
    ),
    scen(
        "rlcard-after-draw-skip-played-with-its-effect",
        [["G1", "G2", "G3"], ["B1", "B2", "Y3"], ["Y1", "Y2", "Y4"]],
        "R9",
        ["draw", {"top": "RS", "current": 0, "hands": {1: ["B1", "B2", "Y3"]}}],
        pile=["RS"],
        after_draw="rlcard",
    ),
    scen(
        "rlcard-after-draw-number-match-only-is-kept",
        [["G1", "G2", "G3"], ["B1", "B2", "Y3"], ["Y1", "Y2", "Y4"]],
        "R9",
        [
            "draw",
            {"top": "R9", "current": 2, "phase": "play", "drawn": None},
            {"hands": {1: ["B1", "B2", "Y3", "G9"]}},
        ],
        pile=["G9"],
        after_draw="rlcard",
    ),
    scen(
        "wd4-last-resort-not-while-a-wild-is-playable",
        [["G1", "G2", "G3"], ["W+4", "W", "B3"], ["Y1", "Y2", "Y3"]],
        "R9",
        [{"legal": [*WILDS, "draw"]}],
        wd4_challenge=False,
        wd4_last_resort=True,
    ),
    scen(
        "wd4-last-resort-not-while-a-number-matches",
        [["G1", "G2", "G3"], ["W+4", "B9", "B3"], ["Y1", "Y2", "Y3"]],
        "R9",
        [{"legal": ["B9", "draw"]}],
        wd4_challenge=False,
        wd4_last_resort=True,
    ),
    scen(
        "wd4-last-resort-legal-when-nothing-else-is",
        [["G1", "G2", "G3"], ["W+4", "B1", "B3"], ["Y1", "Y2", "Y3"]],
        "R9",
        [{"legal": [*WD4S, "draw"]}, "W+4:G", {"phase": "play", "current": 0, "sizes": [3, 2, 7]}],
        wd4_challenge=False,
        wd4_last_resort=True,
    ),
    scen(
        "colours-in-circle-wild-names-the-next-colour",
        [["G1", "W", "G3"], ["W", "W+4", "B3"], ["B1", "W", "B2"]],
        "R9",
        [
            {"legal": ["W:Y", "W+4:Y", "draw"]},
            "W:Y",
            {"colour": "Y", "current": 2, "legal": ["W:G", "draw"]},
            "W:G",
            {"colour": "G", "current": 0, "legal": ["G1", "G3", "W:B", "draw"]},
            "W:B",
            {"colour": "B", "current": 1, "legal": ["B3", "W+4:R", "draw", "uno"]},
        ],
        colours_in_circle=True,
    ),
    scen(
        "colours-in-circle-wild-starter-still-named-freely",
        [["G1", "G2", "G3"], ["W", "B1", "B2"], ["Y1", "Y2", "Y3"]],
        "W",
        [
            {"phase": "choose_colour", "legal": NAME_COLOURS},
            "colour:B",
            {"phase": "play", "legal": ["B1", "B2", "W:R", "draw"]},
        ],
        colours_in_circle=True,
    ),
    scen(
        "starter-draw-two-no-skip-first-player-draws-and-plays",
        [["G1", "G2", "G3"], ["B1", "Y2", "Y3"], ["Y1", "R2", "B4"]],
        "Y+2",
        [
            {"current": 1, "phase": "play", "hands": {1: ["B1", "Y2", "Y3", "B7", "G2"]}},
            {"legal": ["Y2", "Y3", "draw"]},
        ],
        pile=["B7", "G2"],
        starter_draw_two_skips=False,
    ),
]

SCORING: list[Scenario] = [
    scen(
        "play-to-last-full-finishing-order-3p",
        [["B7"], ["R3"], ["R4"]],
        "R9",
        [
            "R3",
            {"done": False, "phase": "play", "current": 2, "finish_rank": [-1, 0, -1]},
            "R4",
            {"done": True, "phase": "over", "winner": 1, "finish_rank": [2, 0, 1]},
            {"hand_scores": [0, 11, 0], "match_scores": [0, 11, 0]},
        ],
        play_to_last=True,
    ),
    scen(
        "play-to-last-finished-seats-leave-the-turn-order",
        [["B7"], ["RS"], ["R1"], ["R5"]],
        "R9",
        [
            "RS",  # seat 1 goes out; its Skip still skips seat 2
            {"finish_rank": [-1, 0, -1, -1], "current": 3, "done": False},
            "R5",
            {"finish_rank": [-1, 0, -1, 1], "current": 0},
            "draw",  # G1 is not playable: the turn passes over finished seat 1 to seat 2
            {"current": 2, "phase": "play"},
            "R1",
            {"done": True, "finish_rank": [3, 0, 2, 1], "winner": 1},
            # the first seat out scored the points left when it went out: 7 + 1 + 5
            {"hand_scores": [0, 13, 0, 0]},
        ],
        play_to_last=True,
    ),
    scen(
        "play-to-last-final-draw-two-still-hits-and-the-hand-goes-on",
        [["B7"], ["R+2"], ["Y1"], ["R5"]],
        "R9",
        [
            "R+2",
            {"finish_rank": [-1, 0, -1, -1], "current": 3, "phase": "play", "done": False},
            {"hands": {2: ["Y1", "G1", "G2"]}},
        ],
        play_to_last=True,
    ),
    scen(
        "play-to-last-last-but-one-out-with-a-draw-two-the-last-seat-still-draws",
        [["B7"], ["R3"], ["R+2"]],
        "R9",
        [
            "R3",
            "R+2",
            # "its penalty effects (a final Draw Two / W+4) still apply": seat 0 draws 2
            {"done": True, "finish_rank": [2, 0, 1], "hands": {0: ["B7", "G1", "G2"]}},
            {"hand_scores": [0, 27, 0]},
        ],
        play_to_last=True,
    ),
    scen(
        "play-to-last-penalty-points-every-seat-scores-its-own-hand",
        [["B7"], ["R3"], ["R4"]],
        "R9",
        ["R3", "R4", {"done": True, "hand_scores": [7, 0, 0], "match_scores": [7, 0, 0]}],
        play_to_last=True,
        scoring="penalty_points",
    ),
    scen(
        "teams-partners-score-both-opposing-hands",
        [["B7"], ["R3"], ["Y4"], ["G5"]],
        "R9",
        [
            "R3",
            {"done": True, "winner": 1, "hand_scores": [0, 11, 0, 11]},
            {"match_scores": [0, 11, 0, 11]},
        ],
        teams=True,
    ),
    scen(
        "teams-seat-0-and-2-are-partners",
        [["B7"], ["Y3"], ["R4"], ["G5"]],
        "R9",
        # seat 2 wins: seats 0 and 2 score seat 1 (Y3 G1) and seat 3 (G5)
        [{"current": 1}, "draw", {"current": 2}, "R4", {"hand_scores": [9, 0, 9, 0]}],
        pile=["G1"],
        teams=True,
    ),
    scen(
        "penalty-points-every-seat-scores-its-own-cards-match-ends",
        [["B7"], ["R3"], ["Y+2"]],
        "R9",
        [
            "R3",
            {"done": True, "winner": 1, "hand_scores": [7, 0, 20], "match_scores": [7, 0, 20]},
            {"match_over": True},
        ],
        scoring="penalty_points",
        target_score=20,
    ),
    scen(
        "penalty-points-below-target-match-goes-on",
        [["B7"], ["R3"], ["Y+2"]],
        "R9",
        ["R3", {"done": True, "match_scores": [7, 0, 20], "match_over": False}],
        scoring="penalty_points",
        target_score=21,
    ),
    scen(
        "zero-scores-fifty-a-lone-zero",
        [["B0"], ["R3"], ["Y1"]],
        "R9",
        ["R3", {"hand_scores": [0, 51, 0]}],
        zero_scores_fifty=True,
    ),
    scen(
        "zero-scores-fifty-off-a-zero-is-zero",
        [["B0"], ["R3"], ["Y1"]],
        "R9",
        ["R3", {"hand_scores": [0, 1, 0]}],
    ),
    scen(
        "zero-scores-fifty-not-with-other-cards",
        [["B0", "B1"], ["RS", "R3"]],
        "R9",
        ["uno", "RS", "R3", {"done": True, "winner": 1, "hand_scores": [0, 1]}],
        zero_scores_fifty=True,
    ),
    scen(
        "zero-scores-fifty-with-penalty-points",
        [["B0"], ["R3"], ["Y1"]],
        "R9",
        ["R3", {"hand_scores": [50, 0, 1]}],
        zero_scores_fifty=True,
        scoring="penalty_points",
    ),
]

SCENARIOS = STACKING + JUMP_IN + SEVEN_ZERO + DRAWING + SCORING


def test_scenario_names_are_unique() -> None:
    names = [sc.name for sc in SCENARIOS]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("sc", SCENARIOS, ids=[sc.name for sc in SCENARIOS])
def test_scenario(sc: Scenario) -> None:
    run(sc)


# ---------------------------------------------------------------------------------------
# Random colours (recomputed from the documented streams) and the RLCard drawn wilds
# ---------------------------------------------------------------------------------------


def expected_randint(game: UnoGame, stream: int) -> str:
    keys = np.array([game.key], dtype=np.uint64)
    return C.COLOURS[int(keyed_randint(keys, stream, 4)[0])]


@pytest.mark.parametrize("seed", range(6))
def test_starter_wild_colour_random(seed: int) -> None:
    deck = stack([["G1", "G2", "G3"], ["W", "B1", "B2"], ["Y1", "Y2", "Y3"]], "W", PILE)
    game = UnoGame(
        seed=seed, dealer=0, deck=deck, num_players=3, hand_size=3, starter_wild_colour="random"
    )
    assert game.phase == "play" and game.current_seat == 1 and game.top_card == "W"
    assert game.current_colour == expected_randint(game, 2**19 - 1)
    assert game.hand(1) == by_face(["B1", "B2", "W"])


def test_starter_wild_colour_random_varies_with_the_key() -> None:
    colours = set()
    for seed in range(12):
        deck = stack([["G1"], ["W"], ["Y1"]], "W", PILE)
        game = UnoGame(
            seed=seed, dealer=0, deck=deck, num_players=3, hand_size=1, starter_wild_colour="random"
        )
        colours.add(game.current_colour)
    assert len(colours) > 1  # the colour is drawn, not fixed


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("wild", ["W", "W+4"])
def test_rlcard_after_draw_wild_played_at_once_with_random_colour(wild: str, seed: int) -> None:
    hands = [["G1", "G2", "G3"], ["B1", "B2", "Y3"], ["Y1", "Y2", "Y4"]]
    deck = stack(hands, "R9", [wild, "G4", "G6", "G7", "G8"])
    game = UnoGame(seed=seed, dealer=0, deck=deck, num_players=3, hand_size=3, after_draw="rlcard")
    game.step("draw")
    assert game.top_card == wild and game.discard_pile == ["R9", wild]
    # colour from stream hand * 2**20 + 2**19 + turn (the turn before the step: 0)
    assert game.current_colour == expected_randint(game, TURN_STREAM_OFFSET + 0)
    assert game.hand(1) == by_face(["B1", "B2", "Y3"])
    # a drawn Wild Draw Four acts as a Wild: no penalty, no challenge, next seat plays
    assert game.phase == "play" and game.current_seat == 2
    assert game.hand(2) == by_face(["Y1", "Y2", "Y4"])
    assert game.draw_pile[:2] == ["G4", "G6"]
    assert_conserved(game)


def test_rlcard_after_draw_random_colour_depends_on_the_turn() -> None:
    hands = [["G1", "G2", "G3"], ["B1", "B2", "Y3"], ["Y1", "Y2", "Y4"]]
    deck = stack(hands, "R9", ["G4", "W", "B6"])
    game = UnoGame(seed=3, dealer=0, deck=deck, num_players=3, hand_size=3, after_draw="rlcard")
    game.step("draw")  # seat 1 keeps G4 (turn 0 -> 1)
    assert game.current_seat == 2 and game.top_card == "R9"
    game.step("draw")  # seat 2 draws the Wild at turn 1
    assert game.top_card == "W"
    assert game.current_colour == expected_randint(game, TURN_STREAM_OFFSET + 1)
    assert game.current_seat == 0


# ---------------------------------------------------------------------------------------
# reshuffle_top: the whole discard pile, top card included, becomes the draw pile
# ---------------------------------------------------------------------------------------


def full_deck(fixed: Mapping[int, str]) -> list[str]:
    """A complete 108-card deck with the given positions, the rest in canonical order."""
    rest = [C.FACE_NAMES[int(f)] for f in C.CANONICAL_DECK]
    for name in fixed.values():
        rest.remove(name)
    return [fixed[pos] if pos in fixed else rest.pop(0) for pos in range(C.DECK_SIZE)]


@pytest.mark.parametrize("reshuffle_top", [False, True])
def test_reshuffle_top_takes_the_whole_discard_pile(reshuffle_top: bool) -> None:
    # 9 players x 11 cards leave 8 cards in the draw pile after the R5 starter.
    pile = ["B7", "G7", "Y7", "B8", "G8", "Y8", "B6", "G6"]
    fixed = {0: "R1", 1: "R2", 2: "R3", 99: "R5"} | {100 + i: c for i, c in enumerate(pile)}
    game = UnoGame(
        seed=5,
        dealer=0,
        deck=full_deck(fixed),
        num_players=9,
        hand_size=11,
        reshuffle_top=reshuffle_top,
    )
    for card in ["R1", "R2", "R3"]:  # seats 1, 2, 3 play their first card
        game.step(card)
    while game.draw_pile_size:
        game.step("keep" if game.phase == "after_draw" else "draw")
        assert_conserved(game)
    assert game.discard_pile == ["R5", "R1", "R2", "R3"]
    seat = game.current_seat
    before = game.hand(seat)
    game.step("draw")
    assert_conserved(game)
    keys = np.array([game.key], dtype=np.uint64)
    old = ["R5", "R1", "R2", "R3"] if reshuffle_top else ["R5", "R1", "R2"]
    perm = keyed_permutation(keys, 1, len(old))[0]
    new_pile = [old[i] for i in perm]
    assert int(game.state.shuffles[0]) == 1
    assert game.discard_pile == ([] if reshuffle_top else ["R3"])
    assert int(game.state.discard_len[0]) == (0 if reshuffle_top else 1)
    # the card to match is unchanged
    assert game.top_card == "R3" and game.current_colour == "R"
    assert game.hand(seat) == by_face([*before, new_pile[0]])
    assert game.draw_pile == new_pile[1:]
    assert game.phase == "after_draw" and game.drawn_card == new_pile[0]
    game.step(new_pile[0])  # every card of the new pile is red: playable
    assert game.discard_pile == ([new_pile[0]] if reshuffle_top else ["R3", new_pile[0]])
    assert_conserved(game)


# ---------------------------------------------------------------------------------------
# Presets and the validation of rule configurations
# ---------------------------------------------------------------------------------------

PRESET_FIELDS: dict[str, dict[str, Any]] = {
    "official": {},
    "street": {
        "stack_draw_two": True,
        "stack_draw_four": True,
        "stack_cumulative": True,
        "draw_rule": "until_playable",
        "jump_in": True,
    },
    "seven_zero": {"seven_zero": True},
    "rlcard": {
        "voluntary_draw": False,
        "after_draw": "rlcard",
        "wd4_last_resort": True,
        "wd4_challenge": False,
        "uno_call": False,
        "two_player_rules": False,
        "starter_draw_two_skips": False,
        "starter_wild_colour": "random",
        "reshuffle_top": True,
    },
}


@pytest.mark.parametrize("name", sorted(PRESET_FIELDS))
def test_preset_fields(name: str) -> None:
    default = Rules().to_dict()
    got = PRESETS[name].to_dict()
    changed = {k: v for k, v in got.items() if v != default[k]}
    assert changed == PRESET_FIELDS[name]
    assert load_rules(name) == PRESETS[name]


def test_house_switch_defaults_are_the_official_rules() -> None:
    rules = Rules()
    for name in (
        "stack_draw_two",
        "stack_draw_four",
        "stack_draw_two_on_four",
        "stack_draw_four_on_two",
        "stack_cumulative",
        "jump_in",
        "seven_zero",
        "reverse_deflects",
        "colours_in_circle",
        "play_to_last",
        "teams",
        "zero_scores_fifty",
        "wd4_last_resort",
        "reshuffle_top",
    ):
        assert getattr(rules, name) is False, name
    assert rules.voluntary_draw is True and rules.starter_draw_two_skips is True
    assert rules.after_draw == "choose" and rules.starter_wild_colour == "choose"
    assert rules.draw_rule == "one" and rules.scoring == "winner_takes"


@pytest.mark.parametrize("preset", ["street", "seven_zero", "rlcard"])
def test_presets_play_a_game_to_the_end(preset: str) -> None:
    game = UnoGame(preset, seed=4)
    rng = np.random.default_rng(4)
    for _ in range(3000):
        if game.over:
            break
        legal = game.legal_actions()
        game.step(legal[int(rng.integers(len(legal)))])
        assert_conserved(game)
    assert game.over


INVALID: list[tuple[dict[str, Any], list[str]]] = [
    ({"stack_draw_2": True}, ["stack_draw_2", "unknown"]),
    ({"jump_ins": True}, ["jump_ins"]),
    ({"teams": True, "num_players": 3}, ["teams", "4"]),
    ({"teams": True, "num_players": 4, "play_to_last": True}, ["teams", "play_to_last"]),
    ({"wd4_last_resort": True}, ["wd4_last_resort", "wd4_challenge"]),
    (
        {"wd4_last_resort": True, "wd4_challenge": False, "wd4_anytime": True},
        ["wd4_last_resort", "wd4_anytime"],
    ),
    ({"stack_cumulative": True}, ["stack_cumulative"]),
    ({"after_draw": "rlcard", "draw_rule": "until_playable"}, ["rlcard", "draw_rule"]),
    ({"after_draw": "auto"}, ["after_draw", "auto"]),
    ({"draw_rule": "forever"}, ["draw_rule", "forever"]),
    ({"starter_wild_colour": "blue"}, ["starter_wild_colour", "blue"]),
    ({"scoring": "lowest"}, ["scoring", "lowest"]),
    ({"draw_cap": 0}, ["draw_cap"]),
    ({"jump_in": "yes"}, ["jump_in"]),
    ({"seven_zero": 1}, ["seven_zero"]),
]


@pytest.mark.parametrize(
    ("fields", "words"), INVALID, ids=["-".join(map(str, f)) for f, _ in INVALID]
)
def test_invalid_rules_are_rejected_naming_the_problem(
    fields: dict[str, Any], words: list[str]
) -> None:
    for build in (lambda: load_rules(fields), lambda: Rules.from_dict(fields)):
        with pytest.raises(ConfigError) as info:
            build()
        message = str(info.value)
        for word in words:
            assert word in message, f"{word!r} not in {message!r}"
    with pytest.raises(ConfigError):
        UnoGame(seed=0, **fields)


def test_presets_reject_impossible_overrides() -> None:
    with pytest.raises(ConfigError, match="teams"):
        load_rules("rlcard", teams=True)  # two players
    with pytest.raises(ConfigError, match="wd4"):
        load_rules("rlcard", wd4_challenge=True)  # wd4_last_resort is on
    assert load_rules("street", num_players=3).jump_in
