"""Checking helpers for tests and fuzzing: the state invariants of the batched core.

:func:`check_invariants` returns human-readable violations (an empty list when the batch is
consistent); :func:`assert_invariants` raises them as an :class:`AssertionError`. The checks
are vectorised (a few array passes over the batch), so the fuzzers and environment wrappers
can afford them on every step. Every state that ``init``, ``step``, ``next_hand`` and
``reset_games`` return must pass.

What is checked (``docs/engine.md`` is the contract):

* cards: 108 per game in hands + draw pile ``deck[draw_pos:]`` + discard pile
  ``discard[:discard_len]``, and per face exactly the deck's count of that face; no negative
  hand counts; ``hand_size`` equal to the cards held; pile bounds in range;
  ``top == discard[discard_len - 1]``;
* turn state: current seat in range, phase a known value, direction +-1, colour 0..3 (4 only
  while a Wild starter's colour is being named), ``drawn`` / ``pending`` / ``wd4_seat`` /
  ``uno_exposed`` consistent with the phase, an exposed seat holding exactly one card, ``turn`` within ``0..max_turns``;
* the mask: non-empty for every live game, all False for every finished one;
* the end of a hand: ``done`` and ``truncated`` never both set, phase OVER exactly when one of
  them is; a won hand has a winner with an empty hand who scored the points left in the other
  hands (the other seats 0); a live or truncated hand has no winner and zero ``hand_points``;
* scores: non-negative, at least the current ``hand_points``, equal to ``hand_points`` while
  the match is in its first hand, and ``match_over`` exactly when a score reached the target.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from uno_env import cards as C
from uno_env import core
from uno_env.core.history import NO_CHOICE, NO_MARK
from uno_env.rules import Rules

__all__ = ["MAX_REPORTED_GAMES", "assert_invariants", "check_invariants"]

MAX_REPORTED_GAMES = 5
"""Games listed (with details) per violated invariant; the total count is always given."""

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]
_Detail = Callable[[int], str]

_POSITIONS = np.arange(C.DECK_SIZE, dtype=np.int64)


def check_invariants(rules: Rules, state: core.UnoState) -> list[str]:
    """Check every invariant of ``state`` over the whole batch.

    Args:
        rules: The rules of the batch.
        state: The batch to check (not modified; its legal-action mask may be computed and
            cached as :func:`uno_env.core.legal_action_mask` does).

    Returns:
        One message per violated invariant, naming the first offending games and how many
        games violate it. An empty list means the batch is consistent.
    """
    report = _Report()
    n_games, n_players = state.batch_size, state.num_players
    if n_players != rules.num_players:
        return [f"state has {n_players} seats but rules.num_players is {rules.num_players}"]
    games = np.arange(n_games)
    hands = state.hands  # int8: reductions below widen with dtype=, no full-size copies
    draw_pos = state.draw_pos.astype(np.int64)
    discard_len = state.discard_len.astype(np.int64)
    phase = state.phase.astype(np.int64)
    current = state.current.astype(np.int64)
    done, truncated = state.done, state.truncated
    over = phase == core.OVER

    # ---- cards ------------------------------------------------------------------------
    report.add("a hand holds a negative count of a face", (hands < 0).any(axis=(1, 2)))
    bad_draw = (draw_pos < 0) | (draw_pos > C.DECK_SIZE)
    report.add("draw_pos out of 0..108", bad_draw, draw_pos)
    # The top card always stays on the pile, unless reshuffle_top (RLCard) takes it too.
    min_discard = 0 if rules.reshuffle_top else 1
    bad_discard = (discard_len < min_discard) | (discard_len > C.DECK_SIZE)
    report.add(f"discard_len out of {min_discard}..108", bad_discard)
    in_pile = _POSITIONS[None, :] >= np.clip(draw_pos, 0, C.DECK_SIZE)[:, None]
    in_discard = _POSITIONS[None, :] < np.clip(discard_len, 0, C.DECK_SIZE)[:, None]
    deck, discard = state.deck, state.discard
    bad_face = ((deck < 0) | (deck >= C.NUM_FACES)) & in_pile
    bad_face |= ((discard < 0) | (discard >= C.NUM_FACES)) & in_discard
    report.add("a pile holds a face id out of 0..53", bad_face.any(axis=1))

    held = hands.sum(axis=2, dtype=np.int64)  # (B, N) cards per seat
    report.add(
        "hand_size != hands.sum(-1)",
        (state.hand_size != held).any(axis=1),
        detail=lambda g: f"hand_size {state.hand_size[g].tolist()}, held {held[g].tolist()}",
    )
    totals = held.sum(axis=1) + (C.DECK_SIZE - draw_pos) + discard_len
    report.add(
        "cards not conserved (hands + draw pile + discard pile != 108)", totals != 108, totals
    )
    per_face = hands.sum(axis=1, dtype=np.int64) + _face_counts(deck, in_pile, discard, in_discard)
    wrong_faces = per_face != C.FACE_COUNTS[None, :]
    report.add(
        "faces not conserved (a face's total in hands + piles differs from the deck)",
        wrong_faces.any(axis=1),
        detail=lambda g: ", ".join(
            f"{C.FACE_NAMES[f]}: {per_face[g, f]} (deck {C.FACE_COUNTS[f]})"
            for f in np.flatnonzero(wrong_faces[g])
        ),
    )
    top_index = np.clip(discard_len - 1, 0, C.DECK_SIZE - 1)
    top_of_pile = discard[games, top_index].astype(np.int64)
    report.add(
        "top != discard[discard_len - 1]",
        (discard_len > 0) & (state.top.astype(np.int64) != top_of_pile),
        detail=lambda g: f"top {state.top[g]}, pile top {top_of_pile[g]}",
    )

    # ---- whose turn, which phase --------------------------------------------------------
    report.add("current seat out of range", (current < 0) | (current >= n_players), current)
    valid_phase = (phase >= 0) & (phase < len(core.PHASE_NAMES))
    report.add("phase is not a known value", ~valid_phase, phase)
    report.add("direction is not +1 or -1", np.abs(state.direction.astype(np.int64)) != 1)
    colour = state.colour.astype(np.int64)
    naming = phase == core.CHOOSE_COLOUR
    bad_colour = np.where(naming, colour != C.NO_COLOUR, (colour < 0) | (colour >= C.NUM_COLOURS))
    report.add(
        "colour not in 0..3 (or not 4 while a Wild starter's colour is named)", bad_colour, colour
    )
    turn = state.turn.astype(np.int64)
    report.add("turn out of 0..max_turns", (turn < 0) | (turn > rules.max_turns), turn)

    drawn = state.drawn.astype(np.int64)
    after_draw = phase == core.AFTER_DRAW
    safe_drawn = np.clip(drawn, 0, C.NUM_FACES - 1)
    safe_current = np.clip(current, 0, n_players - 1)
    holds_drawn = hands[games, safe_current, safe_drawn] > 0
    bad_drawn = np.where(
        after_draw, (drawn < 0) | (drawn >= C.NUM_FACES) | ~holds_drawn, drawn != -1
    )
    report.add("drawn inconsistent with phase (AFTER_DRAW: a held face, else -1)", bad_drawn, drawn)
    challenge = phase == core.CHALLENGE_PHASE
    stack = phase == core.STACK
    wd4_seat = state.wd4_seat.astype(np.int64)
    pending = state.pending.astype(np.int64)
    kind = state.penalty_kind.astype(np.int64)
    other_seat = (wd4_seat >= 0) & (wd4_seat < n_players) & (wd4_seat != current)
    bad_wd4 = np.where(
        challenge,
        ~other_seat | (pending < 1) | (kind != 0),
        np.where(
            stack,
            ((wd4_seat != -1) & ~other_seat) | (pending < 1) | ((kind != 2) & (kind != 4)),
            (wd4_seat != -1) | (pending != 0) | (kind != 0),
        ),
    )
    report.add(
        "wd4_seat/pending/penalty_kind inconsistent with phase (CHALLENGE: another seat, > 0, 0; "
        "STACK: -1 or another seat, > 0, 2 or 4; else -1, 0, 0)",
        bad_wd4,
        detail=lambda g: (
            f"phase {phase[g]}, wd4_seat {wd4_seat[g]}, pending {pending[g]}, kind {kind[g]}"
        ),
    )
    effect_phase = (phase == core.JUMP_IN) | (phase == core.SWAP_TARGET)
    effect_face = state.effect_face.astype(np.int64)
    effect_seat = state.effect_seat.astype(np.int64)
    bad_effect = np.where(
        effect_phase,
        (effect_face < 0) | (effect_face >= C.NUM_FACES) | (effect_seat < 0),
        (effect_face != -1) | (effect_seat != -1),
    )
    report.add("effect_face/effect_seat set outside JUMP_IN / SWAP_TARGET", bad_effect, phase)
    ranks = state.finish_rank.astype(np.int64)
    if rules.play_to_last:
        finished = ranks >= 0
        sorted_ranks = np.sort(np.where(finished, ranks, n_players + 1), axis=1)
        expected_ranks = np.where(
            np.arange(n_players)[None, :] < finished.sum(axis=1)[:, None],
            np.arange(n_players)[None, :],
            n_players + 1,
        )
        bad_ranks = (sorted_ranks != expected_ranks).any(axis=1)
        bad_ranks |= done & ~finished.all(axis=1)
        bad_ranks |= (finished & (held > 0)).any(axis=1) & ~done
        report.add("finish_rank is not 0, 1, 2... for the finished seats", bad_ranks)
    else:
        report.add("finish_rank set without play_to_last", (ranks != -1).any(axis=1))
    exposed = state.uno_exposed.astype(np.int64)
    bad_exposed = (exposed < -1) | (exposed >= n_players) | ((exposed >= 0) & over)
    if not rules.uno_call:
        bad_exposed |= exposed >= 0
    report.add("uno_exposed out of range, set in a finished hand or without uno_call", bad_exposed)
    # An exposed seat went down to one card, and any action that could change that hand
    # (other than the catch, which ends the exposure) ends the exposure first.
    exposed_cards = held[games, np.clip(exposed, 0, n_players - 1)]
    report.add(
        "the uno_exposed seat does not hold exactly one card",
        (exposed >= 0) & (exposed < n_players) & (exposed_cards != 1),
        exposed_cards,
    )

    # ---- the mask -----------------------------------------------------------------------
    bad_seat = (current < 0) | (current >= n_players)
    if not (bad_draw | bad_discard | bad_face.any(axis=1) | bad_seat | ~valid_phase).any():
        # The mask itself is only computed on a structurally sound batch (it would not index).
        mask = core.legal_action_mask(rules, state)
        n_legal = mask.sum(axis=1)
        report.add("no legal action in a live game", ~over & (n_legal == 0), phase)
        report.add("legal actions in a finished game", over & (n_legal > 0), n_legal)

    # ---- end of the hand ----------------------------------------------------------------
    report.add("done and truncated both set", done & truncated)
    report.add("phase OVER disagrees with done | truncated", over != (done | truncated), phase)
    winner = state.winner.astype(np.int64)
    hand_points = state.hand_points.astype(np.int64)
    won = np.flatnonzero(done)
    bad_won = np.zeros(n_games, dtype=bool)
    if won.size:
        w = winner[won]
        seat_ok = (w >= 0) & (w < n_players)
        w_safe = np.clip(w, 0, n_players - 1)
        rows = np.arange(won.size)
        left = _points_left(rules, hands[won], held[won])  # (k, N) points left in each hand
        if rules.scoring == "penalty_points":
            expected = left
        elif rules.teams:
            opponents = (w_safe[:, None] + np.array([1, 3])[None, :]) % 4
            owed = left[rows[:, None], opponents].sum(axis=1)
            expected = np.zeros_like(left)
            expected[rows, w_safe] = owed
            expected[rows, (w_safe + 2) % 4] = owed
        else:
            owed = left.sum(axis=1) - left[rows, w_safe]
            expected = np.zeros_like(left)
            expected[rows, w_safe] = owed
        winner_out = held[won, w_safe] == 0
        points_ok = (hand_points[won] == expected).all(axis=1)
        if rules.play_to_last:
            # The first seat out scored when it went out; the hand went on after that.
            points_ok = (hand_points[won] >= 0).all(axis=1)
            if rules.scoring == "penalty_points":
                points_ok = (hand_points[won] == expected).all(axis=1)
            winner_out &= ranks[won, w_safe] == 0
        bad_won[won] = ~(seat_ok & winner_out & points_ok)
    report.add(
        "won hand: the winner must hold no card and the points follow the scoring rule",
        bad_won,
        detail=lambda g: (
            f"winner {winner[g]}, cards left {held[g].tolist()}, "
            f"hand_points {hand_points[g].tolist()}"
        ),
    )
    # Under play_to_last the first seat out is the winner (and scored) before the hand ends.
    first_out = (ranks == 0).any(axis=1) if rules.play_to_last else np.zeros(n_games, bool)
    not_won = ~done & ~first_out
    report.add("winner set in a hand that was not won", not_won & (winner != -1), winner)
    report.add(
        "hand_points non-zero in a hand that was not won",
        not_won & (hand_points != 0).any(axis=1),
        detail=lambda g: str(hand_points[g].tolist()),
    )

    # ---- the public history (uno_env.core.history) ----------------------------------------
    report.add("seat_draws < 0", (state.seat_draws < 0).any(axis=1))
    pile_faces = state.pile_faces.astype(np.int64)
    report.add(
        "pile_faces out of 0..copies of the face",
        ((pile_faces < 0) | (pile_faces > C.FACE_COUNTS[None, :])).any(axis=1),
    )
    # After a reshuffle the draw pile holds nothing but the faces that went into it.
    pile_counts = _face_counts(deck, in_pile, discard, np.zeros_like(in_discard))
    report.add(
        "the draw pile holds a face its last reshuffle did not put there (pile_faces)",
        pile_faces.any(axis=1) & (pile_counts > pile_faces).any(axis=1),
        detail=lambda g: str(
            [C.FACE_NAMES[f] for f in np.flatnonzero(pile_counts[g] > pile_faces[g])]
        ),
    )
    last = state.last_played
    report.add("last_played out of -1..53", ((last < -1) | (last >= C.NUM_FACES)).any(axis=1))
    named = state.last_named
    report.add("last_named out of -1..3", ((named < -1) | (named >= C.NUM_COLOURS)).any(axis=1))
    # Nobody has played, named or drawn in a hand that has not begun.
    fresh = state.turn == 0
    report.add(
        "a seat shows a colour lacking before any move",
        fresh & state.shown_lacks.any(axis=(1, 2)),
    )
    draws = state.seat_draws.astype(np.int64)
    marks = state.lack_marks.astype(np.int64)
    shown = marks != NO_MARK
    report.add(
        "a lack fact marked after the seat's draws",
        (shown & (marks > draws[:, :, None])).any(axis=(1, 2)),
    )
    report.add("a lack fact before any move", fresh & shown.any(axis=(1, 2)))
    chosen = state.choice_draws.astype(np.int64)
    report.add(
        "choice_draws out of -1..seat_draws", ((chosen < NO_CHOICE) | (chosen > draws)).any(axis=1)
    )
    known = chosen != NO_CHOICE
    report.add(
        "a known choice without its context",
        (known & ((state.choice_colour < 0) | (state.last_played < 0))).any(axis=1),
    )

    # ---- scores and the match -----------------------------------------------------------
    scores = state.scores.astype(np.int64)
    report.add("negative score", (scores < 0).any(axis=1), detail=lambda g: str(scores[g].tolist()))
    report.add(
        "score below the points of the hand just scored",
        (done | ~first_out) & (scores < hand_points).any(axis=1),
        detail=lambda g: f"scores {scores[g].tolist()}, hand_points {hand_points[g].tolist()}",
    )
    first_hand = (state.hand_no == 0) & (done | ~first_out)
    report.add(
        "scores differ from hand_points in the first hand of a match",
        first_hand & (scores != hand_points).any(axis=1),
        detail=lambda g: f"scores {scores[g].tolist()}, hand_points {hand_points[g].tolist()}",
    )
    reached = scores.max(axis=1) >= rules.target_score
    report.add(
        "match_over disagrees with a score reaching target_score",
        state.match_over != reached,
        detail=lambda g: f"match_over {bool(state.match_over[g])}, scores {scores[g].tolist()}",
    )
    return report.messages


def assert_invariants(rules: Rules, state: core.UnoState, context: str = "") -> None:
    """Raise an :class:`AssertionError` listing every violated invariant of ``state``.

    Args:
        rules: The rules of the batch.
        state: The batch to check.
        context: Text prefixed to the message (e.g. the seed and step of a fuzz run).

    Raises:
        AssertionError: if :func:`check_invariants` reports any violation.
    """
    problems = check_invariants(rules, state)
    if problems:
        head = f"{context}: " if context else ""
        raise AssertionError(head + "state invariants violated:\n  " + "\n  ".join(problems))


def _points_left(rules: Rules, hands: npt.NDArray[np.int8], held: IntArray) -> IntArray:
    """(k, N) points left in each hand; a lone 0 counts 50 under ``zero_scores_fifty``."""
    left = hands.astype(np.int64) @ C.FACE_POINTS.astype(np.int64)
    if rules.zero_scores_fifty:
        zeros = hands[:, :, [0, 13, 26, 39]].sum(axis=2)
        left[(held == 1) & (zeros == 1)] = 50
    return left


def _face_counts(
    deck: npt.NDArray[np.int8],
    in_pile: BoolArray,
    discard: npt.NDArray[np.int8],
    in_discard: BoolArray,
) -> IntArray:
    """Count, per game, the faces in the draw pile and the discard pile: shape (B, 54).

    Positions outside the piles (and out-of-range face ids) go to one spare bin.
    """
    n_games = deck.shape[0]
    spare = n_games * C.NUM_FACES
    base = (np.arange(n_games, dtype=np.int64) * C.NUM_FACES)[:, None]
    total = np.zeros(spare + 1, dtype=np.int64)
    for faces, where in ((deck, in_pile), (discard, in_discard)):
        ok = where & (faces >= 0) & (faces < C.NUM_FACES)
        total += np.bincount(np.where(ok, base + faces, spare).ravel(), minlength=spare + 1)
    return total[:spare].reshape(n_games, C.NUM_FACES)


class _Report:
    """Collects one message per violated invariant."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    def add(
        self,
        what: str,
        bad: npt.ArrayLike,
        values: npt.ArrayLike | None = None,
        detail: _Detail | None = None,
    ) -> None:
        """Record ``what`` if any game is ``bad``, with the first games and their values."""
        offenders = np.flatnonzero(np.asarray(bad, dtype=bool))
        if not offenders.size:
            return
        shown = offenders[:MAX_REPORTED_GAMES]
        if detail is not None:
            parts = [f"game {int(g)}: {detail(int(g))}" for g in shown]
        elif values is not None:
            shown_values = np.asarray(values)[shown]
            parts = [f"game {int(g)}: {v}" for g, v in zip(shown, shown_values, strict=True)]
        else:
            parts = [f"game {int(g)}" for g in shown]
        more = f" (+{offenders.size - shown.size} more)" if offenders.size > shown.size else ""
        self.messages.append(f"{what} [{offenders.size} games] {'; '.join(parts)}{more}")
