"""Table-driven rule scenarios on stacked decks (docs/rules.md §1-14, docs/engine.md).

Each scenario stacks a deck (hands given per seat, then the starter, then the top of the draw
pile), plays a script of action names through :class:`uno_env.UnoGame`, and checks the table
at checkpoints. A script is a sequence whose items are either an action name (played) or a
dict of expectations (checked against the game at that point). After every step the cards
are checked to be conserved (hands + draw pile + discard pile = the 108-card deck).

Expectation keys (see :func:`check`): ``current``, ``top``, ``colour``, ``direction``,
``phase``, ``legal`` (exact set), ``legal_has``, ``legal_lacks``, ``hands`` ({seat: cards}),
``sizes``, ``exposed``, ``drawn``, ``draw_top`` (first cards of the draw pile), ``discard``
(bottom first), ``done``, ``truncated``, ``winner``, ``hand_scores``, ``match_scores``,
``shuffles``.

Standalone tests below cover what a table does not fit: deck composition, reshuffled
starters (the expected new starter is recomputed from the documented random streams),
running out of cards, a match over several hands, and refused actions.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pytest
from support.scenarios import (
    Scenario,
    assert_conserved,
    by_face,
    points,
    raw_scen,
    run,
    scen,
    stack,
)

from uno_env import IllegalActionError, UnoGame, core
from uno_env import cards as C
from uno_env.core.history import NO_MARK
from uno_env.game import stacked_deck
from uno_env.rng import keyed_permutation

WILDS_R_TO_B = ["W:R", "W:Y", "W:G", "W:B"]
WD4_R_TO_B = ["W+4:R", "W+4:Y", "W+4:G", "W+4:B"]
NAME_COLOURS = ["colour:R", "colour:Y", "colour:G", "colour:B"]


# ---------------------------------------------------------------------------------------
# Building stacked decks and scenarios
# ---------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------
# The scenarios
# ---------------------------------------------------------------------------------------

# Three seats, three cards: the usual table for starter scenarios (dealer 0, seat 1 first).
H3 = [["B1", "B2", "R2"], ["R3", "G4", "Y7"], ["Y5", "Y6", "G8"]]
# Three seats, seat 1 to move with a red card on a red starter, for drawing scenarios.
HD = [["G1", "G2", "G3"], ["R5", "B1", "B2"], ["Y1", "Y2", "Y3"]]
# Three seats, two cards each: UNO scenarios (seat 1 holds two cards at its first turn).
HU = [["B1", "B2"], ["R3", "B5"], ["R4", "G6"]]

SCENARIOS: list[Scenario] = [
    # ---- §2 set-up: deal order and the first turned card -------------------------------
    raw_scen(
        "deal-order-2p-dealer0-raw-deck",
        [*(f"R{i}" for i in range(1, 10)), *(f"G{i}" for i in range(1, 6)), "Y0", "B4", "B5"],
        [
            {
                "hands": {
                    1: ["R1", "R3", "R5", "R7", "R9", "G2", "G4"],
                    0: ["R2", "R4", "R6", "R8", "G1", "G3", "G5"],
                },
                "top": "Y0",
                "discard": ["Y0"],
                "draw_top": ["B4", "B5"],
                "current": 1,
                "dealer": 0,
                "direction": 1,
                "phase": "play",
            }
        ],
        num_players=2,
    ),
    raw_scen(
        "deal-order-3p-dealer1-raw-deck",
        ["R1", "R2", "R3", "R4", "R5", "R6", "G7", "B1", "B2"],
        [
            {
                # position i -> seat (1 + 1 + i) % 3: 2, 0, 1, 2, 0, 1
                "hands": {2: ["R1", "R4"], 0: ["R2", "R5"], 1: ["R3", "R6"]},
                "top": "G7",
                "colour": "G",
                "draw_top": ["B1", "B2"],
                "current": 2,
                "dealer": 1,
                "sizes": [2, 2, 2],
            }
        ],
        num_players=3,
        hand_size=2,
        dealer=1,
    ),
    scen(
        "starter-number-left-of-dealer-plays-first",
        H3,
        "R9",
        [
            {
                "current": 1,
                "top": "R9",
                "colour": "R",
                "direction": 1,
                "phase": "play",
                "legal": ["R3", "draw"],
                "discard": ["R9"],
                "sizes": [3, 3, 3],
                "shuffles": 0,
            },
            "R3",
            {"current": 2, "top": "R3", "hands": {1: ["G4", "Y7"]}},
        ],
    ),
    scen(
        "starter-number-dealer2-seat0-first",
        H3,
        "R9",
        [{"current": 0, "dealer": 2, "legal": ["R2", "draw"]}, "R2", {"current": 1}],
        dealer=2,
    ),
    scen(
        "starter-skip-first-player-skipped",
        H3,
        "GS",
        [
            {"current": 2, "colour": "G", "direction": 1, "legal": ["G8", "draw"]},
            {"sizes": [3, 3, 3], "discard": ["GS"], "skipped": 1, "events": set()},
            "G8",
            {"current": 0, "skipped": None, "step_drawn": [0, 0, 0]},
        ],
    ),
    scen(
        "starter-reverse-dealer-first-counterclockwise",
        H3,
        "RR",
        [
            {"current": 0, "direction": -1, "colour": "R", "legal": ["R2", "draw"]},
            {"events": {"direction"}, "skipped": None},
            "R2",
            {"current": 2, "direction": -1, "events": set()},
        ],
    ),
    scen(
        "starter-reverse-2p-dealer-first",
        [["R1", "B1"], ["G1", "G2"]],
        "RR",
        [{"current": 0, "direction": -1}, "R1", {"current": 1}],
    ),
    scen(
        "starter-draw-two-first-player-draws-2-and-loses-turn",
        H3,
        "Y+2",
        [
            {
                "current": 2,
                "colour": "Y",
                "hands": {1: ["R3", "G4", "Y7", "B7", "G2"], 0: H3[0], 2: H3[2]},
                "legal": ["Y5", "Y6", "draw"],
                "phase": "play",
            },
            "Y5",
            {"current": 0},
        ],
        pile=["B7", "G2"],
    ),
    scen(
        "starter-draw-two-2p-dealer-plays-after-draw",
        [["B1", "B2"], ["R1", "R2"]],
        "B+2",
        [
            {
                "current": 0,
                "hands": {1: ["R1", "R2", "Y3", "Y4"]},
                "legal": ["B1", "B2", "draw", "uno"],
            }
        ],
        pile=["Y3", "Y4"],
    ),
    scen(
        "starter-wild-first-player-names-colour-then-plays",
        H3,
        "W",
        [
            {"phase": "choose_colour", "current": 1, "colour": None, "top": "W"},
            {"legal": NAME_COLOURS},
            "colour:G",
            {"phase": "play", "current": 1, "colour": "G", "top": "W", "legal": ["G4", "draw"]},
            "G4",
            {"current": 2, "top": "G4", "colour": "G", "legal": ["G8", "draw"]},
        ],
    ),
    # ---- §3 a turn: matching, wilds, drawing --------------------------------------------
    scen(
        "match-colour-number-and-wild",
        [
            ["B1", "B2", "B3", "B4", "B5"],
            ["R5", "G9", "B6", "YS", "W"],
            ["Y1", "Y2", "Y3", "Y4", "Y5"],
        ],
        "R9",
        [
            {"legal": ["R5", "G9", *WILDS_R_TO_B, "draw"]},
            {"legal_lacks": ["B6", "YS", *WD4_R_TO_B, "keep", "uno", "catch"]},
            "G9",
            {"current": 2, "top": "G9", "colour": "G", "hands": {1: ["R5", "B6", "YS", "W"]}},
        ],
    ),
    scen(
        "match-symbol-skip-on-skip-3p",
        [["GS", "G+2", "R4"], ["RS", "B1", "B2"], ["Y1", "Y2", "Y3"]],
        "R9",
        [
            "RS",
            # seat 2 is skipped; on a Skip, a Skip of any colour matches, a Draw Two does not
            {"current": 0, "top": "RS", "colour": "R", "legal": ["GS", "R4", "draw"]},
            {"hands": {2: ["Y1", "Y2", "Y3"]}},
            "GS",
            {"current": 2, "colour": "G", "top": "GS"},
        ],
    ),
    scen(
        "wild-always-playable-may-name-current-colour",
        [["B1", "B2", "B3"], ["W", "B4", "Y4"], ["R1", "G1", "Y+2"]],
        "R9",
        [
            {"legal": [*WILDS_R_TO_B, "draw"]},
            "W:R",
            # a Wild has no number: nothing matches it but the named colour (or another wild)
            {"current": 2, "top": "W", "colour": "R", "legal": ["R1", "draw"]},
        ],
    ),
    scen(
        "wild-draw-four-bluff-offered-when-challenge-on",
        [["B1", "B2", "B3"], ["W+4", "R3", "B5"], ["Y1", "Y2", "Y3"]],
        "R9",
        [{"legal": ["R3", *WD4_R_TO_B, "draw"]}],
    ),
    scen(
        "voluntary-draw-with-playable-card-unplayable-draw-passes",
        HD,
        "R9",
        [
            {"legal": ["R5", "draw"]},
            "draw",
            {"current": 2, "phase": "play", "drawn": None, "hands": {1: ["R5", "B1", "B2", "B7"]}},
            {"top": "R9", "colour": "R"},
        ],
        pile=["B7"],
    ),
    scen(
        "draw-playable-then-play-only-that-card",
        HD,
        "R9",
        [
            "draw",
            {"phase": "after_draw", "current": 1, "drawn": "R7", "legal": ["R7", "keep"]},
            {"legal_lacks": ["R5", "draw"]},
            "R7",
            {"current": 2, "top": "R7", "drawn": None, "hands": {1: ["R5", "B1", "B2"]}},
        ],
        pile=["R7"],
    ),
    scen(
        "draw-playable-then-keep",
        HD,
        "R9",
        [
            "draw",
            "keep",
            {"current": 2, "phase": "play", "drawn": None, "top": "R9"},
            {"hands": {1: ["R5", "R7", "B1", "B2"]}},
        ],
        pile=["R7"],
    ),
    scen(
        "draw-card-matching-by-number",
        HD,
        "R9",
        ["draw", {"phase": "after_draw", "drawn": "G9", "legal": ["G9", "keep"]}],
        pile=["G9"],
    ),
    scen(
        "draw-wild-then-play-it",
        HD,
        "R9",
        [
            "draw",
            {"phase": "after_draw", "drawn": "W", "legal": [*WILDS_R_TO_B, "keep"]},
            "W:B",
            {"current": 2, "top": "W", "colour": "B"},
        ],
        pile=["W"],
    ),
    scen(
        "draw-wild-draw-four-playable-with-challenge",
        HD,
        "R9",
        ["draw", {"phase": "after_draw", "drawn": "W+4", "legal": [*WD4_R_TO_B, "keep"]}],
        pile=["W+4"],
    ),
    scen(
        "draw-wild-draw-four-unplayable-without-challenge-while-holding-colour",
        HD,
        "R9",
        ["draw", {"current": 2, "phase": "play", "hands": {1: ["R5", "B1", "B2", "W+4"]}}],
        pile=["W+4"],
        wd4_challenge=False,
    ),
    scen(
        "draw-wild-draw-four-playable-without-challenge-when-no-colour",
        [["G1", "G2", "G3"], ["B5", "B1", "B2"], ["Y1", "Y2", "Y3"]],
        "R8",
        ["draw", {"phase": "after_draw", "current": 1, "legal": [*WD4_R_TO_B, "keep"]}],
        pile=["W+4"],
        wd4_challenge=False,
    ),
    # ---- §4 action cards with 3+ players ---------------------------------------------
    scen(
        "reverse-3p-changes-direction",
        [["R1", "B2", "B3"], ["RR", "B1", "B4"], ["Y1", "R2", "Y3"]],
        "R9",
        [
            "RR",
            {"direction": -1, "current": 0, "top": "RR", "events": {"direction"}},
            {"skipped": None},
            "R1",
            {"current": 2, "direction": -1},
            "R2",
            {"current": 1},
        ],
    ),
    scen(
        "draw-two-3p-next-draws-2-and-is-skipped",
        [["B3", "B4", "B5"], ["R+2", "B1", "B2"], ["Y5", "Y6", "G8"]],
        "R9",
        [
            "R+2",
            {"current": 0, "top": "R+2", "colour": "R", "phase": "play"},
            {"hands": {2: ["Y1", "Y2", "Y5", "Y6", "G8"], 0: ["B3", "B4", "B5"]}},
            {"skipped": 2, "step_drawn": [0, 0, 2]},
        ],
        pile=["Y1", "Y2"],
    ),
    scen(
        "reverse-skip-draw-two-4p-counterclockwise",
        [["RS", "B2", "B4"], ["RR", "B1", "B3"], ["G5", "G6", "R+2"], ["Y3", "Y4", "Y5"]],
        "R9",
        [
            "RR",
            {"current": 0, "direction": -1},
            "RS",
            {"current": 2, "direction": -1, "hands": {3: ["Y3", "Y4", "Y5"]}, "skipped": 3},
            "R+2",
            # seat 1 (next counter-clockwise) draws 2 and is skipped
            {"current": 0, "hands": {1: ["B1", "B3", "Y1", "Y2"]}},
            {"skipped": 1, "step_drawn": [0, 2, 0, 0], "events": set()},
        ],
        pile=["Y1", "Y2"],
    ),
    scen(
        "wild-draw-four-without-challenge-next-draws-4-3p",
        [["B1", "B2", "B3"], ["W+4", "B9", "W"], ["Y5", "Y6", "Y7"]],
        "R9",
        [
            # legal: holds no red; a same-number card or another wild does not forbid it
            {"legal": ["B9", *WILDS_R_TO_B, *WD4_R_TO_B, "draw"]},
            "W+4:Y",
            {"current": 0, "phase": "play", "colour": "Y", "top": "W+4"},
            {"hands": {2: ["Y5", "Y6", "Y7", "G1", "G2", "G3", "G4"], 1: ["B9", "W"]}},
            {"skipped": 2, "step_drawn": [0, 0, 4]},
        ],
        pile=["G1", "G2", "G3", "G4"],
        wd4_challenge=False,
    ),
    scen(
        "wild-draw-four-anytime-legal-while-holding-colour",
        [["B1", "B2", "B3"], ["W+4", "R3", "B5"], ["Y5", "Y6", "Y7"]],
        "R9",
        [
            {"legal": ["R3", *WD4_R_TO_B, "draw"]},
            "W+4:G",
            {"current": 0, "phase": "play", "colour": "G"},
            {"hands": {2: ["Y5", "Y6", "Y7", "G1", "G2", "G3", "G4"]}},
        ],
        pile=["G1", "G2", "G3", "G4"],
        wd4_challenge=False,
        wd4_anytime=True,
    ),
    # ---- §4 two players ----------------------------------------------------------------
    scen(
        "2p-reverse-acts-as-skip",
        [["B1", "B2", "B3"], ["RR", "R1", "B4"]],
        "R9",
        [
            "RR",
            {"current": 1, "direction": -1, "phase": "play", "legal": ["R1", "draw", "uno"]},
            {"skipped": 0, "events": {"direction"}},
            "R1",
            {"current": 0, "skipped": None},
        ],
    ),
    scen(
        "2p-skip-player-plays-again",
        [["B1", "B2", "B3"], ["RS", "R1", "B4"]],
        "R9",
        [
            "RS",
            {"current": 1, "direction": 1, "legal": ["R1", "draw", "uno"], "skipped": 0},
            "R1",
            {"current": 0},
        ],
    ),
    scen(
        "2p-draw-two-opponent-draws-player-plays-again",
        [["B1", "B2", "B3"], ["R+2", "R1", "B4"]],
        "R9",
        [
            "R+2",
            {"current": 1, "phase": "play", "hands": {0: ["B1", "B2", "B3", "G1", "G2"]}},
            "R1",
            {"current": 0},
        ],
        pile=["G1", "G2"],
    ),
    scen(
        "2p-wild-draw-four-accept-player-plays-again",
        [["B1", "B2", "B3"], ["W+4", "B4", "B5"]],
        "R9",
        [
            "W+4:B",
            {"phase": "challenge", "current": 0, "legal": ["challenge", "accept"]},
            "accept",
            {"current": 1, "phase": "play", "colour": "B"},
            {"hands": {0: ["B1", "B2", "B3", "G1", "G2", "G3", "G4"]}},
        ],
        pile=["G1", "G2", "G3", "G4"],
    ),
    scen(
        "2p-two-player-rules-off-reverse-passes-turn",
        [["R1", "B2", "B3"], ["RR", "R2", "B4"]],
        "R9",
        ["RR", {"current": 0, "direction": -1}, "R1", {"current": 1}],
        two_player_rules=False,
    ),
    scen(
        "2p-two-player-rules-off-skip-still-returns-to-player",
        [["R1", "B2", "B3"], ["RS", "R2", "B4"]],
        "R9",
        ["RS", {"current": 1, "direction": 1}],
        two_player_rules=False,
    ),
    # ---- §5 challenging a Wild Draw Four ------------------------------------------------
    scen(
        "challenge-illegal-wd4-bluffer-draws-4-challenger-plays",
        [["B1", "B2", "B3"], ["W+4", "R3", "B5"], ["G1", "G2", "Y3"]],
        "R9",
        [
            "W+4:G",
            {"phase": "challenge", "current": 2, "top": "W+4", "colour": "G"},
            {"legal": ["challenge", "accept"]},
            "challenge",
            {"phase": "play", "current": 2, "colour": "G", "legal": ["G1", "G2", "draw"]},
            {"hands": {1: ["R3", "B5", "Y4", "Y5", "Y6", "Y7"], 2: ["G1", "G2", "Y3"]}},
            {"events": {"bluff_caught"}, "step_drawn": [0, 4, 0], "skipped": None},
            "G1",
            {"current": 0},
        ],
        pile=["Y4", "Y5", "Y6", "Y7"],
    ),
    scen(
        "challenge-legal-wd4-same-number-and-wilds-held-challenger-draws-6",
        [
            ["B1", "B2", "B3", "B4"],
            ["W+4", "W+4", "B9", "W"],
            ["Y1", "Y2", "Y3", "Y4"],
        ],
        "R9",
        [
            "W+4:B",
            {"phase": "challenge", "current": 2},
            "challenge",
            {
                "phase": "play",
                "current": 0,
                "colour": "B",
                "legal": ["B1", "B2", "B3", "B4", "draw"],
            },
            {
                "hands": {
                    2: ["Y1", "Y2", "Y3", "Y4", "G1", "G2", "G3", "G4", "G5", "G7"],
                    1: ["W+4", "B9", "W"],
                }
            },
            {"events": {"bluff_cleared"}, "step_drawn": [0, 0, 6], "skipped": None},
        ],
        pile=["G1", "G2", "G3", "G4", "G5", "G7"],
    ),
    scen(
        "accept-wd4-draw-4-lose-turn",
        [["B1", "B2", "B3"], ["W+4", "R3", "B5"], ["G1", "G2", "Y3"]],
        "R9",
        [
            "W+4:Y",
            {"skipped": None, "step_drawn": [0, 0, 0]},
            "accept",
            {"phase": "play", "current": 0, "colour": "Y", "step_drawn": [0, 0, 4]},
            {"hands": {2: ["G1", "G2", "Y3", "Y4", "Y5", "Y6", "Y7"], 1: ["R3", "B5"]}},
        ],
        pile=["Y4", "Y5", "Y6", "Y7"],
    ),
    scen(
        "wd4-legality-judged-against-colour-before-play",
        [["B5", "B6", "B7"], ["W", "R1", "B1"], ["W+4", "R4", "Y2"]],
        "R9",
        [
            "W:G",
            # seat 2 holds red but no green: naming red is still a legal Wild Draw Four
            "W+4:R",
            {"phase": "challenge", "current": 0, "colour": "R"},
            "challenge",
            {"phase": "play", "current": 1, "colour": "R"},
            {"hands": {0: ["B5", "B6", "B7", *(f"G{i}" for i in range(1, 7))], 2: ["R4", "Y2"]}},
        ],
        pile=["G1", "G2", "G3", "G4", "G5", "G6"],
    ),
    scen(
        "wd4-legality-uses-named-wild-colour-without-challenge",
        [["B5", "B6", "B7"], ["W", "R1", "B1"], ["W+4", "R4", "Y2"]],
        "R9",
        [
            "W:G",
            {"current": 2, "legal": [*WD4_R_TO_B, "draw"]},
            "W+4:R",
            {"phase": "play", "current": 1, "colour": "R"},
            {"hands": {0: ["B5", "B6", "B7", "G1", "G2", "G3", "G4"]}},
        ],
        pile=["G1", "G2", "G3", "G4"],
        wd4_challenge=False,
    ),
    scen(
        "wd4-challenge-off-illegal-one-masked-out",
        [["B1", "B2", "B3"], ["W+4", "R3", "B5"], ["Y5", "Y6", "Y7"]],
        "R9",
        [{"legal": ["R3", "draw"]}, {"legal_lacks": [*WD4_R_TO_B, "challenge"]}],
        wd4_challenge=False,
    ),
    scen(
        "2p-challenge-illegal-wd4-challenger-plays",
        [["B1", "G2", "B3"], ["W+4", "R3", "B5"]],
        "R9",
        [
            "W+4:G",
            {"phase": "challenge", "current": 0},
            "challenge",
            {"phase": "play", "current": 0, "colour": "G", "legal": ["G2", "draw"]},
            {"hands": {1: ["R3", "B5", "Y1", "Y2", "Y3", "Y4"], 0: ["B1", "G2", "B3"]}},
        ],
        pile=["Y1", "Y2", "Y3", "Y4"],
    ),
    # ---- §6 UNO -----------------------------------------------------------------------
    scen(
        "uno-declared-not-exposed",
        HU,
        "R9",
        [
            {"legal": ["R3", "draw", "uno"], "exposed": None},
            "uno",
            {"current": 1, "phase": "play", "legal": ["R3", "draw"]},
            "R3",
            {"exposed": None, "current": 2, "legal": ["R4", "draw", "uno"]},
        ],
    ),
    scen(
        "uno-not-declared-next-seat-catches-then-plays",
        HU,
        "R9",
        [
            "R3",
            {"exposed": 1, "current": 2, "legal": ["R4", "draw", "uno", "catch"]},
            {"events": {"uno_exposed"}},
            "catch",
            {"exposed": None, "current": 2, "phase": "play", "legal": ["R4", "draw", "uno"]},
            {"events": set(), "step_drawn": [0, 2, 0]},
            {"hands": {1: ["B5", "Y1", "Y2"]}, "top": "R3"},
            "R4",
            # seat 2 did not declare either: now it is exposed to seat 0
            {"current": 0, "exposed": 2, "legal": ["draw", "uno", "catch"]},
        ],
        pile=["Y1", "Y2", "Y3"],
    ),
    scen(
        "uno-penalty-setting-catch-draws-3",
        HU,
        "R9",
        ["R3", "catch", {"hands": {1: ["B5", "Y1", "Y2", "Y3"]}, "current": 2}],
        pile=["Y1", "Y2", "Y3"],
        uno_penalty=3,
    ),
    scen(
        "uno-exposure-ends-when-next-seat-acts",
        HU,
        "R9",
        [
            "R3",
            {"exposed": 1},
            "draw",
            {"exposed": None, "current": 0, "legal": ["draw", "uno"]},
            {"hands": {1: ["B5"], 2: ["R4", "G6", "Y1"]}},
        ],
        pile=["Y1"],
    ),
    scen(
        "uno-declaring-does-not-end-anothers-exposure",
        HU,
        "R9",
        [
            "R3",
            "uno",
            {"exposed": 1, "current": 2, "legal": ["R4", "draw", "catch"]},
            "catch",
            {"hands": {1: ["B5", "Y1", "Y2"]}},
            "R4",
            {"exposed": None, "current": 0, "legal": ["draw", "uno"]},
        ],
        pile=["Y1", "Y2"],
    ),
    scen(
        "uno-declare-after-drawing-to-two-cards",
        [["G1"], ["B5"], ["Y1"]],
        "R9",
        [
            {"legal": ["draw"]},
            "draw",
            {"phase": "after_draw", "legal": ["R7", "keep", "uno"]},
            "uno",
            {"phase": "after_draw", "legal": ["R7", "keep"]},
            "R7",
            {"exposed": None, "current": 2, "hands": {1: ["B5"]}},
        ],
        pile=["R7"],
    ),
    scen(
        "uno-catch-in-challenge-phase-then-decide",
        [["B1", "B2"], ["W+4", "B5"], ["R4", "G6"]],
        "R9",
        [
            "W+4:B",
            {"exposed": 1, "phase": "challenge", "current": 2},
            {"legal": ["challenge", "accept", "catch"]},
            "catch",
            {"phase": "challenge", "current": 2, "legal": ["challenge", "accept"]},
            {"hands": {1: ["B5", "Y1", "Y2", "Y3"]}, "exposed": None},
            "accept",
            {"current": 0, "phase": "play", "hands": {2: ["R4", "G6", "Y4", "Y5", "Y6", "Y7"]}},
        ],
        pile=["Y1", "Y2", "Y3", "Y4", "Y5", "Y6", "Y7"],
        uno_penalty=3,
    ),
    scen(
        "uno-call-off-no-uno-no-catch",
        HU,
        "R9",
        [
            {"legal": ["R3", "draw"]},
            "R3",
            {"exposed": None, "current": 2, "legal": ["R4", "draw"]},
            "R4",
            {"exposed": None, "legal": ["draw"]},
        ],
        uno_call=False,
    ),
    scen(
        "uno-2p-after-skip-exposed-player-plays-again-cannot-be-caught",
        [["B1", "B2"], ["RS", "R4"]],
        "R9",
        [
            "RS",
            {"current": 1, "exposed": 1, "legal": ["R4", "draw"]},
            "draw",
            {"current": 0, "exposed": None, "legal": ["draw", "uno"]},
            {"hands": {1: ["R4", "G7"]}},
        ],
        pile=["G7"],
    ),
    # ---- §7 end of a hand and scoring ---------------------------------------------------
    scen(
        "hand-ends-on-last-card-winner-takes-opponent-points",
        [["R6", "B+2"], ["R3", "R5"], ["R4", "W"]],
        "R9",
        [
            "uno",
            "R3",
            "R4",
            {"exposed": 2, "current": 0},
            "R6",
            {"exposed": 0, "current": 1, "legal_has": ["R5", "catch"]},
            "R5",
            {"done": True, "winner": 1, "phase": "over", "truncated": False, "legal": []},
            {"exposed": None, "hand_scores": [0, 70, 0], "match_scores": [0, 70, 0]},
            {"hands": {1: [], 0: ["B+2"], 2: ["W"]}},
        ],
    ),
    scen(
        "final-draw-two-next-draws-and-cards-count",
        [["B7"], ["R+2"], ["Y1"]],
        "R9",
        [
            "R+2",
            {"done": True, "winner": 1, "hands": {2: ["Y1", "G5", "W"]}},
            {"hand_scores": [0, 1 + 5 + 50 + 7, 0]},
        ],
        pile=["W", "G5"],
    ),
    scen(
        "final-wild-draw-four-no-challenge-next-draws-4-and-cards-count",
        [["B7"], ["W+4"], ["Y1"]],
        "R9",
        [
            "W+4:B",
            {"done": True, "winner": 1, "phase": "over", "legal": []},
            {"hands": {2: ["Y1", "Y+2", "GS", "BR", "W"]}},
            {"hand_scores": [0, 1 + 20 + 20 + 20 + 50 + 7, 0], "match_scores": [0, 118, 0]},
        ],
        pile=["Y+2", "GS", "BR", "W"],
    ),
    scen(
        "2p-action-chain-then-win-scores-every-card-kind",
        [["R0", "Y9", "GS", "W", "W+4"], ["RS", "RS", "RR", "R+2", "R5"]],
        "R9",
        [
            "RS",
            {"current": 1},
            "RS",
            {"current": 1},
            "RR",
            {"current": 1, "direction": -1},
            "uno",
            "R+2",
            {"current": 1, "hands": {0: ["R0", "Y9", "GS", "W", "W+4", "B+2", "G8"]}},
            "R5",
            {"done": True, "winner": 1, "hand_scores": [0, 0 + 9 + 20 + 50 + 50 + 20 + 8]},
            {"match_scores": [0, 157]},
        ],
        pile=["B+2", "G8"],
    ),
    scen(
        "win-on-the-last-allowed-decision-is-a-win",
        [["B7"], ["R3"], ["Y1"]],
        "R9",
        ["R3", {"done": True, "truncated": False, "winner": 1, "hand_scores": [0, 8, 0]}],
        max_turns=1,
    ),
    # ---- §9 limits -------------------------------------------------------------------
    scen(
        "max-turns-truncates-without-winner-or-points",
        HD,
        "R9",
        [
            "draw",
            "draw",
            {"phase": "play", "truncated": False, "current": 0},
            "draw",
            {"truncated": True, "done": False, "winner": None, "phase": "over", "legal": []},
            {"hand_scores": [0, 0, 0], "match_scores": [0, 0, 0], "exposed": None},
        ],
        pile=["B7", "B8", "B9"],
        max_turns=3,
    ),
]


def test_scenario_names_are_unique() -> None:
    names = [sc.name for sc in SCENARIOS]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("sc", SCENARIOS, ids=[sc.name for sc in SCENARIOS])
def test_scenario(sc: Scenario) -> None:
    run(sc)


# ---------------------------------------------------------------------------------------
# §1 the deck
# ---------------------------------------------------------------------------------------


def test_deck_composition_and_points() -> None:
    deck = C.CANONICAL_DECK
    assert deck.shape == (108,)
    assert C.NUM_FACES == 54 and len(C.FACE_NAMES) == 54 and len(set(C.FACE_NAMES)) == 54
    counts = np.bincount(deck, minlength=54)
    for colour in "RYGB":
        assert counts[C.parse_card(f"{colour}0")] == 1
        for rank in [*"123456789", "S", "R", "+2"]:
            assert counts[C.parse_card(f"{colour}{rank}")] == 2
        assert sum(counts[C.parse_card(f"{colour}{r}")] for r in C.RANK_NAMES) == 25
    assert counts[C.parse_card("W")] == 4 and counts[C.parse_card("W+4")] == 4
    assert points(["R0", "Y5", "G9", "B1"]) == 15
    assert points(["RS"]) == points(["YR"]) == points(["B+2"]) == 20
    assert points(["W"]) == points(["W+4"]) == 50
    assert int(C.FACE_POINTS[deck].sum()) == 4 * (2 * 45 + 6 * 20) + 8 * 50


def test_dealt_game_holds_the_whole_deck() -> None:
    game = UnoGame(seed=3, num_players=4)
    assert_conserved(game)
    assert game.hand_sizes == [7, 7, 7, 7]
    assert game.draw_pile_size == 108 - 28 - len(game.discard_pile)


# ---------------------------------------------------------------------------------------
# §2 reshuffled starters (W+4 always; any wild with starter_redraw_wilds)
# ---------------------------------------------------------------------------------------


def expected_redraw(game: UnoGame, deck: list[str], n_dealt: int, redraw: set[str]):
    """Replay the documented starter reshuffles: the new starter, draw pile and count."""
    full = stacked_deck(deck, game.key)
    pile = full[n_dealt:]
    keys = np.array([game.key], dtype=np.uint64)
    shuffles = 0
    while C.FACE_NAMES[int(pile[0])] in redraw:
        pile = pile[keyed_permutation(keys, shuffles + 1, pile.shape[0])[0]]
        shuffles += 1
    names = [C.FACE_NAMES[int(f)] for f in pile]
    return names[0], names[1:], shuffles


def first_seat(starter: str, dealer: int, n: int) -> tuple[int, int]:
    """(seat to act, direction) after turning ``starter`` (docs/engine.md, set-up)."""
    if starter.endswith("+2") or starter[1:] == "S":
        return (dealer + 2) % n, 1
    if starter[1:] == "R":
        return dealer, -1
    return (dealer + 1) % n, 1


@pytest.mark.parametrize(
    ("starter", "redraw_wilds"),
    [("W+4", False), ("W+4", True), ("W", True)],
    ids=["wd4-starter", "wd4-starter-redraw-wilds", "wild-starter-redraw-wilds"],
)
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_wild_starter_is_reshuffled(starter: str, redraw_wilds: bool, seed: int) -> None:
    hands = [["B1", "B2", "B3"], ["R3", "G4", "Y7"], ["Y5", "Y6", "G8"]]
    deck = stack(hands, starter)
    game = UnoGame(
        seed=seed,
        dealer=0,
        deck=deck,
        num_players=3,
        hand_size=3,
        starter_redraw_wilds=redraw_wilds,
    )
    redraw = {"W+4", "W"} if redraw_wilds else {"W+4"}
    top, pile, shuffles = expected_redraw(game, deck, 9, redraw)
    assert shuffles >= 1
    assert game.top_card == top not in redraw
    assert game.discard_pile == [top]
    assert game.draw_pile == pile
    assert starter in pile  # the wild went back into the draw pile
    assert int(game.state.shuffles[0]) == shuffles
    assert "reshuffled" in core.event_names(int(game.state.step_events[0]))
    for seat in range(3):
        assert game.hand(seat) == by_face(hands[seat])
    assert_conserved(game)
    if top == "W":  # only possible without starter_redraw_wilds
        assert game.phase == "choose_colour" and game.current_seat == 1
    else:
        seat, direction = first_seat(top, 0, 3)
        assert (game.current_seat, game.direction) == (seat, direction)
        assert game.current_colour == top[0]


def test_wild_starter_without_redraw_wilds_is_not_reshuffled() -> None:
    game = UnoGame(dealer=0, deck=stack(H3, "W", ["B9"]), num_players=3, hand_size=3)
    assert game.top_card == "W"
    assert game.phase == "choose_colour"
    assert int(game.state.shuffles[0]) == 0
    assert game.draw_pile[0] == "B9"


# ---------------------------------------------------------------------------------------
# §3 running out of cards (9 players x 11 cards leave an 8-card draw pile; the rules
# validator refuses 10 x 10, which would leave only 7 cards)
# ---------------------------------------------------------------------------------------


def full_deck(fixed: Mapping[int, str]) -> list[str]:
    """A complete 108-card stacked deck with the given positions, the rest in canonical order."""
    rest = [C.FACE_NAMES[int(f)] for f in C.CANONICAL_DECK]
    for name in fixed.values():
        rest.remove(name)
    deck = []
    for pos in range(C.DECK_SIZE):
        deck.append(fixed[pos] if pos in fixed else rest.pop(0))
    return deck


def draw_or_keep(game: UnoGame) -> None:
    game.step("keep" if game.phase == "after_draw" else "draw")
    assert_conserved(game)


def test_draw_pile_runs_out_discards_reshuffled_top_stays() -> None:
    pile = ["B7", "G7", "Y7", "B8", "G8", "Y8", "B6", "G6"]
    fixed = {0: "R1", 1: "R2", 2: "R3", 99: "R5"} | {100 + i: c for i, c in enumerate(pile)}
    deck = full_deck(fixed)
    game = UnoGame(seed=5, dealer=0, deck=deck, num_players=9, hand_size=11)
    assert game.draw_pile == pile and game.top_card == "R5" and game.current_seat == 1
    for card in ["R1", "R2", "R3"]:  # seats 1, 2, 3 play their first card
        game.step(card)
    assert game.discard_pile == ["R5", "R1", "R2", "R3"]
    while game.draw_pile_size:
        draw_or_keep(game)
    assert game.phase == "play" and int(game.state.shuffles[0]) == 0
    seat = game.current_seat
    before = game.hand(seat)
    game.step("draw")
    assert_conserved(game)
    # The discard pile but its top card, bottom first, shuffled with stream 0 * 2**20 + 1.
    perm = keyed_permutation(np.array([game.key], dtype=np.uint64), 1, 3)[0]
    new_pile = [["R5", "R1", "R2"][i] for i in perm]
    assert int(game.state.shuffles[0]) == 1
    assert game.state.step_events[0] & core.EVENT_RESHUFFLED  # the step reports it
    assert game.state.step_drawn[0, seat] == 1
    assert game.discard_pile == ["R3"] and game.top_card == "R3" and game.current_colour == "R"
    assert game.draw_pile == new_pile[1:]
    assert game.hand(seat) == by_face([*before, new_pile[0]])
    # Everyone saw those discards go into the pile: the state keeps their faces (public).
    pile_faces = game.state.pile_faces[0]
    assert {C.FACE_NAMES[f]: int(pile_faces[f]) for f in np.flatnonzero(pile_faces)} == {
        "R5": 1,
        "R1": 1,
        "R2": 1,
    }
    # the drawn red card is playable on R3
    assert game.phase == "after_draw" and game.drawn_card == new_pile[0]
    assert game.current_seat == seat


def test_both_piles_empty_draw_does_nothing_and_turn_passes() -> None:
    pile = ["B7", "G7", "Y7", "B8", "G8", "Y8", "B6", "G6"]
    fixed = {99: "R5"} | {100 + i: c for i, c in enumerate(pile)}
    game = UnoGame(seed=9, dealer=0, deck=full_deck(fixed), num_players=9, hand_size=11)
    assert game.top_card == "R5" and game.draw_pile == pile
    for _ in range(8):  # everyone draws; the drawn cards are unplayable on R5
        seat = game.current_seat
        game.step("draw")
        assert game.current_seat == (seat + 1) % 9
        assert_conserved(game)
    assert game.draw_pile == [] and game.discard_pile == ["R5"]
    for _ in range(12):
        seat = game.current_seat
        sizes = game.hand_sizes
        assert "draw" in game.legal_actions()
        game.step("draw")
        assert_conserved(game)
        assert game.hand_sizes == sizes  # nothing could be drawn
        assert game.current_seat == (seat + 1) % 9
        assert game.phase == "play" and game.drawn_card is None
        assert game.draw_pile == [] and game.discard_pile == ["R5"]
    assert not game.over


# ---------------------------------------------------------------------------------------
# §7 a match across hands
# ---------------------------------------------------------------------------------------


def first_legal_policy(game: UnoGame) -> str:
    return game.legal_actions()[0]  # plays come first (lowest ids), then draw, keep, ...


def test_match_to_small_target_across_hands_dealer_rotates() -> None:
    target = 60
    game = UnoGame(
        seed=11,
        dealer=0,
        deck=stack([["B7"], ["R+2"], ["Y1"]], "R9", ["G5", "G6"]),
        num_players=3,
        hand_size=1,
        target_score=target,
    )
    game.step("R+2")
    assert game.done and game.winner == 1
    assert game.hand_scores == [0, 1 + 5 + 6 + 7, 0] == game.match_scores
    assert not game.match_over
    with pytest.raises(IllegalActionError):
        game.step("draw")

    totals = game.match_scores
    dealer = 0
    hands_played = 1
    for _ in range(60):
        if game.match_over:
            break
        game.next_hand()
        hands_played += 1
        dealer = (dealer + 1) % 3
        assert game.dealer == dealer
        assert game.match_scores == totals and game.hand_scores == [0, 0, 0]
        assert not game.over and game.hand_sizes.count(1) >= 1
        top = game.top_card
        if top == "W":
            assert game.phase == "choose_colour" and game.current_seat == (dealer + 1) % 3
        else:
            assert (game.current_seat, game.direction) == first_seat(top, dealer, 3)
        while not game.over:
            game.step(first_legal_policy(game))
            assert_conserved(game)
        if game.done:
            others = [points(game.hand(s)) for s in range(3) if s != game.winner]
            expected = [0, 0, 0]
            expected[game.winner] = sum(others)
            assert game.hand_scores == expected
        else:
            assert game.hand_scores == [0, 0, 0]
        totals = [t + p for t, p in zip(totals, game.hand_scores, strict=True)]
        assert game.match_scores == totals
        assert game.match_over == (max(totals) >= target)
    assert game.match_over and hands_played >= 2
    with pytest.raises(ValueError, match="over"):
        game.next_hand()


def test_next_hand_refused_while_hand_is_live() -> None:
    game = UnoGame(seed=1, num_players=3)
    with pytest.raises(ValueError, match="still being played"):
        game.next_hand()


# ---------------------------------------------------------------------------------------
# §9 refused actions leave the game unchanged
# ---------------------------------------------------------------------------------------


def snapshot(game: UnoGame) -> dict[str, np.ndarray]:
    return {k: v.copy() for k, v in game.state.array_fields().items()}


def assert_unchanged(game: UnoGame, before: Mapping[str, np.ndarray]) -> None:
    after = game.state.array_fields()
    assert after.keys() == before.keys()
    for name, arr in before.items():
        np.testing.assert_array_equal(after[name], arr, err_msg=f"state field {name} changed")


ILLEGAL = [
    # (setup scenario script prefix, illegal action)
    ("play", [], "B1"),  # held but does not match R9
    ("play", [], "G7"),  # not held
    ("play", [], "W:R"),  # no wild held
    ("play", [], "keep"),
    ("play", [], "challenge"),
    ("play", [], "accept"),
    ("play", [], "catch"),
    ("play", [], "uno"),  # three cards held
    ("play", [], "colour:R"),
    ("play", [], "pass"),
    ("play", [], "swap:1"),
    ("after_draw", ["draw"], "R5"),  # only the drawn card may be played
    ("after_draw", ["draw"], "draw"),
    ("challenge", ["W+4:G"], "draw"),
    ("challenge", ["W+4:G"], "B3"),
    ("choose_colour", [], "draw"),
    ("wd4_masked", [], "W+4:G"),
]


def illegal_setup(kind: str) -> UnoGame:
    if kind == "challenge":
        hands = [["B1", "B2", "B3"], ["W+4", "R3", "B5"], ["G1", "G2", "Y3"]]
        return UnoGame(dealer=0, deck=stack(hands, "R9"), num_players=3, hand_size=3)
    if kind == "choose_colour":
        return UnoGame(dealer=0, deck=stack(H3, "W"), num_players=3, hand_size=3)
    if kind == "wd4_masked":
        hands = [["B1", "B2", "B3"], ["W+4", "R3", "B5"], ["Y5", "Y6", "Y7"]]
        deck = stack(hands, "R9")
        return UnoGame(dealer=0, deck=deck, num_players=3, hand_size=3, wd4_challenge=False)
    return UnoGame(dealer=0, deck=stack(HD, "R9", ["R7"]), num_players=3, hand_size=3)


@pytest.mark.parametrize(
    ("kind", "prefix", "action"), ILLEGAL, ids=[f"{k}-{a}" for k, _, a in ILLEGAL]
)
def test_illegal_action_refused_state_unchanged(kind: str, prefix: list[str], action: str) -> None:
    game = illegal_setup(kind)
    for a in prefix:
        game.step(a)
    legal = game.legal_actions()
    assert action not in legal
    before, history = snapshot(game), list(game.history)
    with pytest.raises(IllegalActionError) as info:
        game.step(action)
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    assert repr(action) in message
    assert "legal actions" in message
    for name in legal:
        assert repr(name) in message
    assert_unchanged(game, before)
    assert game.history == history
    assert game.legal_actions() == legal
    game.step(legal[0])  # the game is still playable


def test_out_of_range_action_id_refused() -> None:
    game = illegal_setup("play")
    before = snapshot(game)
    with pytest.raises(IllegalActionError, match="out of range"):
        game.step(80)
    assert_unchanged(game, before)


def test_action_after_hand_over_refused() -> None:
    game = UnoGame(dealer=0, deck=stack([["B7"], ["R3"], ["Y1"]], "R9"), num_players=3, hand_size=1)
    game.step("R3")
    assert game.done
    before = snapshot(game)
    with pytest.raises(IllegalActionError):
        game.step("draw")
    assert_unchanged(game, before)


def test_illegal_action_error_is_a_value_error() -> None:
    assert issubclass(IllegalActionError, ValueError)


@pytest.mark.parametrize("name", ["X9", "R10", "W:Q", "W+4", "fly", "", "swap:0", "colour:P"])
def test_unknown_action_name_raises_value_error(name: str) -> None:
    game = illegal_setup("play")
    before = snapshot(game)
    with pytest.raises(ValueError, match="unknown action"):
        game.step(name)
    assert_unchanged(game, before)


@pytest.mark.parametrize(
    "deck",
    [["R0", "R0"], ["W"] * 5, ["W+4"] * 5, ["B5", "G1", "B5", "B5"], ["R1"] * 109],
    ids=["two-R0", "five-W", "five-W+4", "three-B5", "109-cards"],
)
def test_over_listed_stacked_deck_raises(deck: list[str]) -> None:
    with pytest.raises(ValueError, match="too many"):
        UnoGame(deck=deck)


def test_unknown_card_in_stacked_deck_raises() -> None:
    with pytest.raises(ValueError, match="unknown card"):
        UnoGame(deck=["R10"])


@pytest.mark.parametrize(("holds_red", "marked"), [(False, True), (True, False)])
def test_a_challenge_verdict_of_innocent_shows_the_colour_lacking(
    holds_red: bool, marked: bool
) -> None:
    """Everyone learns from who draws whether a challenged Wild Draw Four was played without a
    card of the colour to match (innocent: ``lack_marks``) or with one (guilty:
    ``shown_holds``, until the seat plays that colour)."""
    seat_1 = ["W+4", "R3" if holds_red else "G3", "B5"]
    sc = scen(
        "challenge-verdict",
        [["B1", "B2", "B3"], seat_1, ["Y1", "Y2", "Y3"]],
        "R9",
        ["W+4:G", "challenge"],
        pile=["G1", "G2", "G4", "G5", "G6", "G7"],
    )
    game = run(sc)
    state = game.state
    red = C.COLOURS.index("R")
    red_mark = int(state.lack_marks[0, 1, red])
    if marked:  # innocent: seat 2 drew six, seat 1's hand (no red) is marked at its draws
        assert game.hand_sizes == [3, 2, 9]
        assert red_mark == int(state.seat_draws[0, 1]) == 0
        assert not state.shown_holds[0].any()
    else:  # guilty: seat 1 drew four; it holds red (R3), and no "lacks red" fact about it
        assert game.hand_sizes == [3, 6, 3]
        assert red_mark == NO_MARK
        assert state.shown_holds[0, 1].tolist() == [c == red for c in range(C.NUM_COLOURS)]
    others = [c for c in range(C.NUM_COLOURS) if c != red]
    assert (state.lack_marks[0, 1, others] == NO_MARK).all()


def test_the_colour_a_bluffer_was_shown_to_hold_is_forgotten_when_it_plays_that_colour() -> None:
    sc = scen(
        "bluff-found-then-red-played",
        [["B1", "B2", "B3"], ["W+4", "R3", "B5"], ["Y1", "Y2", "Y3"]],
        "R9",
        [
            "W+4:R",
            "challenge",  # guilty: seat 1 draws four, seat 2 takes a normal turn on red
            {"current": 2, "hands": {1: ["R3", "B5", "G1", "G2", "G4", "G5"]}},
            "draw",  # B7: nothing plays, the turn passes
            "draw",  # seat 0: B8, likewise
            {"current": 1, "colour": "R"},
        ],
        pile=["G1", "G2", "G4", "G5", "B7", "B8"],
    )
    game = run(sc)
    red = C.COLOURS.index("R")
    assert game.state.shown_holds[0, 1, red]
    game.step("R3")  # maybe the card it was shown to hold: the fact ends
    assert not game.state.shown_holds[0].any()
