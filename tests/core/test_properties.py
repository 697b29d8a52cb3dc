"""Property tests of the batched core (Hypothesis): conservation, legality, scoring, replay.

Hypothesis draws the rules (player count, hand size and the rule switches that exist today),
the seed of the games and the seed of a uniformly random policy; each example plays a small
batch of games. The properties follow ``docs/engine.md``:

* the 108 cards (and every face's count) are conserved after every step;
* the legal-action mask is never empty while a hand is live, and empty once it is over;
* a won hand scores the points left in the losers' hands, and the win/loss rewards sum to 0;
* the same seed and actions replay the same game, field by field; another seed deals another
  deck;
* ``step`` never mutates its input; an illegal action raises ``IllegalActionError`` and leaves
  the state untouched;
* ``reset_games`` replaces only the games it is given.

Every example is also checked against the full :func:`uno_env.testing.check_invariants`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from uno_env import cards as C
from uno_env import core
from uno_env.rules import Rules
from uno_env.sampling import uniform_legal_actions
from uno_env.testing import assert_invariants, check_invariants

PROPERTY_SETTINGS = settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
BATCH = 6
MAX_STEPS = 200
"""Batched steps per example (the games that are still live after them are left so)."""

seeds = st.integers(min_value=0, max_value=2**32 - 1)


@st.composite
def rules_strategy(
    draw: st.DrawFn,
    max_hand_size: int = 12,
    play_to_the_end: bool = False,
    official_scoring: bool = False,
) -> Rules:
    """Valid rules: every switch, house rules included, in combinations Rules accepts.

    ``official_scoring`` keeps the scoring switches (teams, play_to_last, penalty_points,
    zero_scores_fifty) off, for properties stated for the official scoring.
    """
    n_players = draw(st.integers(2, 10))
    # Rules needs n_players * hand_size <= 99 (a starter and a draw pile must remain).
    hand_size = draw(st.integers(1, min(max_hand_size, (C.DECK_SIZE - 9) // n_players)))
    wd4 = draw(st.sampled_from(("challenge", "masked", "anytime", "last_resort")))
    two_player_rules = draw(st.sampled_from((None, True, False))) if n_players == 2 else None
    # Half the examples play to the end, half are truncated early (or at once).
    turn_limits = (1, 2, 7, 40, 150, 3000, 3000, 3000, 3000, 3000)
    max_turns = 3000 if play_to_the_end else draw(st.sampled_from(turn_limits))
    stacks = {
        name: draw(st.booleans())
        for name in (
            "stack_draw_two",
            "stack_draw_four",
            "stack_draw_two_on_four",
            "stack_draw_four_on_two",
        )
    }
    stacking = any(stacks.values())
    teams = n_players == 4 and not official_scoring and draw(st.booleans())
    after_draw = draw(st.sampled_from(("choose", "rlcard")))
    return Rules(
        **stacks,
        stack_cumulative=stacking and draw(st.booleans()),
        reverse_deflects=draw(st.booleans()),
        jump_in=draw(st.booleans()),
        seven_zero=draw(st.booleans()),
        colours_in_circle=draw(st.booleans()),
        play_to_last=not (teams or official_scoring) and draw(st.booleans()),
        teams=teams,
        scoring="winner_takes"
        if official_scoring
        else draw(st.sampled_from(("winner_takes", "penalty_points"))),
        zero_scores_fifty=not official_scoring and draw(st.booleans()),
        voluntary_draw=draw(st.booleans()),
        after_draw=after_draw,
        draw_rule="one"
        if after_draw == "rlcard"
        else draw(st.sampled_from(("one", "until_playable"))),
        draw_cap=draw(st.integers(1, 12)),
        reshuffle_top=draw(st.booleans()),
        starter_draw_two_skips=draw(st.booleans()),
        starter_wild_colour=draw(st.sampled_from(("choose", "random"))),
        num_players=n_players,
        hand_size=hand_size,
        wd4_challenge=wd4 == "challenge",
        wd4_anytime=wd4 == "anytime",
        wd4_last_resort=wd4 == "last_resort",
        uno_call=draw(st.booleans()),
        uno_penalty=draw(st.integers(0, 4)),
        two_player_rules=two_player_rules,
        max_turns=max_turns,
        starter_redraw_wilds=draw(st.booleans()),
        target_score=draw(st.sampled_from((1, 100, 500))),
    )


def play(
    rules: Rules,
    state: core.UnoState,
    policy_seed: int,
    max_steps: int = MAX_STEPS,
    on_step: Callable[[core.UnoState, np.ndarray, core.UnoState], None] | None = None,
) -> core.UnoState:
    """Play uniformly random legal actions until every hand is over (or ``max_steps``).

    ``on_step(before, actions, after)`` is called after every batched step.
    """
    rng = np.random.default_rng(policy_seed)
    for _ in range(max_steps):
        if not state.live.any():
            break
        actions = uniform_legal_actions(core.legal_action_mask(rules, state), rng)
        new = core.step(rules, state, actions)
        if on_step is not None:
            on_step(state, actions, new)
        state = new
    return state


def assert_same_state(a: core.UnoState, b: core.UnoState, what: str = "") -> None:
    """Every array field of ``a`` equals the one of ``b`` (dtype and shape included)."""
    fa, fb = a.array_fields(), b.array_fields()
    assert fa.keys() == fb.keys()
    for name, arr in fa.items():
        other = fb[name]
        assert arr.dtype == other.dtype and arr.shape == other.shape, f"{what} {name}"
        assert np.array_equal(arr, other), f"{what}: field {name} differs"


def points_left(hands: np.ndarray) -> np.ndarray:
    """Points left in each hand, (B, N)."""
    return hands.astype(np.int64) @ C.FACE_POINTS.astype(np.int64)


# ---------------------------------------------------------------------------------------------
# Conservation and the mask
# ---------------------------------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(rules=rules_strategy(max_hand_size=40), seed=seeds, policy_seed=seeds)
def test_cards_conserved_after_every_step(rules: Rules, seed: int, policy_seed: int) -> None:
    state = core.init(rules, BATCH, seed=seed)
    assert (core.card_totals(state) == C.DECK_SIZE).all()
    assert_invariants(rules, state, "after init")

    def check(before: core.UnoState, actions: np.ndarray, after: core.UnoState) -> None:
        totals = core.card_totals(after)
        assert (totals == C.DECK_SIZE).all(), f"card totals {totals.tolist()}"
        # Per face too: hands + draw pile + discard pile hold each face as often as the deck.
        for g in range(after.batch_size):
            faces = np.concatenate(
                [
                    np.repeat(np.arange(C.NUM_FACES), after.hands[g].sum(axis=0)),
                    after.deck[g, after.draw_pos[g] :],
                    after.discard[g, : after.discard_len[g]],
                ]
            )
            counts = np.bincount(faces.astype(np.int64), minlength=C.NUM_FACES)
            assert np.array_equal(counts, C.FACE_COUNTS), f"game {g}: faces not conserved"
        assert (after.hands >= 0).all()
        assert_invariants(rules, after, f"actions {actions.tolist()}")

    play(rules, state, policy_seed, on_step=check)


@PROPERTY_SETTINGS
@given(rules=rules_strategy(), seed=seeds, policy_seed=seeds)
def test_mask_never_empty_while_live(rules: Rules, seed: int, policy_seed: int) -> None:
    def check_mask(state: core.UnoState) -> None:
        mask = core.legal_action_mask(rules, state)
        n_legal = mask.sum(axis=1)
        assert (n_legal[state.live] > 0).all(), f"empty mask in live games {n_legal.tolist()}"
        assert (n_legal[~state.live] == 0).all(), "a finished game has legal actions"

    state = core.init(rules, BATCH, seed=seed)
    check_mask(state)
    play(rules, state, policy_seed, on_step=lambda _b, _a, after: check_mask(after))


@PROPERTY_SETTINGS
@given(rules=rules_strategy(), seed=seeds, policy_seed=seeds)
def test_each_step_reports_what_it_did(rules: Rules, seed: int, policy_seed: int) -> None:
    """The events of a step agree with the public counters it changed."""

    def check(before: core.UnoState, actions: np.ndarray, after: core.UnoState) -> None:
        stepped = before.live
        drawn = after.seat_draws.astype(np.int64) - before.seat_draws
        assert np.array_equal(after.step_drawn[stepped], drawn[stepped]), "cards drawn"
        reshuffled = (after.step_events & core.EVENT_RESHUFFLED) != 0
        assert np.array_equal(reshuffled[stepped], (after.shuffles > before.shuffles)[stepped])
        turned = (after.step_events & core.EVENT_DIRECTION) != 0
        changed = after.direction != before.direction
        assert (turned[stepped] | ~changed[stepped]).all(), "a direction changed unreported"
        skipped = after.step_skipped.astype(np.int64)
        victims = skipped[stepped]
        assert ((victims == -1) | ((victims >= 0) & (victims < rules.num_players))).all()
        # A skipped seat is not the one to act next (unless play comes back round to it).
        hits = np.flatnonzero(stepped & (skipped >= 0) & after.live)
        if rules.num_players > 2:
            assert (after.current[hits] != skipped[hits]).all(), "a skipped seat acts"
        # Games already over keep their last events.
        over = ~stepped
        assert np.array_equal(after.step_drawn[over], before.step_drawn[over])

    play(rules, core.init(rules, BATCH, seed=seed), policy_seed, on_step=check)


# ---------------------------------------------------------------------------------------------
# Scoring and rewards
# ---------------------------------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(
    rules=rules_strategy(max_hand_size=5, play_to_the_end=True, official_scoring=True),
    seed=seeds,
    policy_seed=seeds,
)
def test_points_scored_equal_points_left_in_losers_hands(
    rules: Rules, seed: int, policy_seed: int
) -> None:
    state = play(rules, core.init(rules, 3 * BATCH, seed=seed), policy_seed, max_steps=250)
    for g in np.flatnonzero(state.done):
        winner = int(state.winner[g])
        left = points_left(state.hands[g : g + 1])[0]
        assert state.hands[g, winner].sum() == 0, "the winner still holds cards"
        expected = np.zeros(rules.num_players, dtype=np.int64)
        expected[winner] = left.sum()
        assert np.array_equal(state.hand_points[g], expected), (g, state.hand_points[g], left)
        # First hand of the match: the match scores are this hand's points.
        assert np.array_equal(state.scores[g], expected)
        assert state.match_over[g] == (expected.max() >= rules.target_score)
    for g in np.flatnonzero(state.truncated):
        assert state.winner[g] == -1 and not state.hand_points[g].any()
    assert_invariants(rules, state)

    # The next hand keeps the scores, passes the deal on and conserves the cards.
    finished = state.select(~state.live & ~state.match_over)
    if finished.batch_size:
        following = core.next_hand(rules, finished)
        assert np.array_equal(following.scores, finished.scores)
        assert np.array_equal(following.dealer, (finished.dealer + 1) % rules.num_players)
        assert (following.hand_no == 1).all()
        assert_invariants(rules, following, "next_hand")


@PROPERTY_SETTINGS
@given(
    rules=rules_strategy(max_hand_size=5, play_to_the_end=True, official_scoring=True),
    seed=seeds,
    policy_seed=seeds,
)
def test_hand_rewards_sum_to_zero_for_won_hands(rules: Rules, seed: int, policy_seed: int) -> None:
    def check(_before: core.UnoState, _actions: np.ndarray, after: core.UnoState) -> None:
        rewards = core.hand_rewards(rules, after)
        assert rewards.shape == (after.batch_size, rules.num_players)
        won = after.done
        np.testing.assert_allclose(rewards[won].sum(axis=1), 0.0, atol=1e-5)
        winners = after.winner[won].astype(np.int64)
        assert (rewards[np.flatnonzero(won), winners] == 1.0).all()
        assert not rewards[~won].any(), "live or truncated hands must give zero rewards"

    play(rules, core.init(rules, 3 * BATCH, seed=seed), policy_seed, max_steps=250, on_step=check)


# ---------------------------------------------------------------------------------------------
# Determinism and purity
# ---------------------------------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(rules=rules_strategy(), seed=seeds, other_seed=seeds, policy_seed=seeds)
def test_same_seed_same_game(rules: Rules, seed: int, other_seed: int, policy_seed: int) -> None:
    first = core.init(rules, BATCH, seed=seed)
    second = core.init(rules, BATCH, seed=seed)
    assert_same_state(first, second, "init")
    replay = [second]

    def replay_step(_before: core.UnoState, actions: np.ndarray, after: core.UnoState) -> None:
        replay.append(core.step(rules, replay[-1], actions.copy()))
        assert_same_state(after, replay[-1], f"after {len(replay) - 1} steps")

    play(rules, first, policy_seed, max_steps=100, on_step=replay_step)

    assume(other_seed != seed)
    different = core.init(rules, BATCH, seed=other_seed)
    assert not np.array_equal(different.key, first.key)
    assert not np.array_equal(different.deck, first.deck), "another seed dealt the same decks"


@PROPERTY_SETTINGS
@given(rules=rules_strategy(), seed=seeds, policy_seed=seeds)
def test_step_never_mutates_its_input(rules: Rules, seed: int, policy_seed: int) -> None:
    def check(before: core.UnoState, actions: np.ndarray, after: core.UnoState) -> None:
        snapshot = before.copy()
        again = core.step(rules, before, actions)  # step the same input a second time
        assert_same_state(before, snapshot, "step mutated its input")
        assert_same_state(again, after, "stepping the same input twice")
        for name, arr in after.array_fields().items():
            assert not np.shares_memory(arr, before.array_fields()[name]), name

    play(rules, core.init(rules, BATCH, seed=seed), policy_seed, max_steps=80, on_step=check)


@PROPERTY_SETTINGS
@given(
    rules=rules_strategy(),
    seed=seeds,
    policy_seed=seeds,
    n_steps=st.integers(0, 60),
    data=st.data(),
)
def test_illegal_action_raises_and_leaves_state_unchanged(
    rules: Rules, seed: int, policy_seed: int, n_steps: int, data: st.DataObject
) -> None:
    state = play(rules, core.init(rules, BATCH, seed=seed), policy_seed, max_steps=n_steps)
    live = np.flatnonzero(state.live)
    assume(live.size > 0)
    mask = core.legal_action_mask(rules, state)
    game = int(data.draw(st.sampled_from(live.tolist()), label="game"))
    illegal_ids = np.flatnonzero(~mask[game]).tolist()
    bad = data.draw(
        st.sampled_from(illegal_ids) | st.sampled_from([-1, -80, C.NUM_ACTIONS, 1000]),
        label="illegal action",
    )
    # Every other game takes a legal action, so only the chosen game is at fault.
    actions = uniform_legal_actions(mask, np.random.default_rng(policy_seed))
    actions[game] = bad
    snapshot = state.copy()
    with pytest.raises(core.IllegalActionError, match=f"game {game}"):
        core.step(rules, state, actions)
    assert_same_state(state, snapshot, "a rejected step changed the state")
    # The same batch with a legal action for that game still steps.
    actions[game] = uniform_legal_actions(mask[game : game + 1], np.random.default_rng(0))[0]
    assert_invariants(rules, core.step(rules, state, actions))


@pytest.mark.parametrize(
    ("actions", "shown"),
    [
        (np.array([2**64 - 1, 0], dtype=np.uint64), "18446744073709551615"),
        (np.array([2**63, 0], dtype=np.uint64), "9223372036854775808"),
        ([2**64 - 1, 0], "18446744073709551615"),
        ([2**64, 0], "18446744073709551616"),
        ((-(2**63) - 1, 0), "-9223372036854775809"),
        (np.array([3.5, 0.0]), "3.5"),
        (np.array([np.nan, 0.0]), "nan"),
        (np.array([1e300, 0.0]), "1e+300"),
    ],
    ids=[
        "uint64-max",
        "uint64-2**63",
        "int-2**64-1",
        "int-2**64",
        "int-below",
        "half",
        "nan",
        "huge",
    ],
)
def test_an_action_no_int64_holds_is_named_as_given(actions: object, shown: str) -> None:
    """A cast would turn 2**64 - 1 into -1 and 3.5 into 3: such a value is refused as given."""
    rules = Rules()
    state = core.init(rules, 2, seed=0)
    snapshot = state.copy()
    with pytest.raises(core.IllegalActionError, match=re.escape(f"action {shown} ")):
        core.step(rules, state, actions)  # type: ignore[arg-type]
    assert_same_state(state, snapshot, "a rejected step changed the state")


# ---------------------------------------------------------------------------------------------
# Autoreset
# ---------------------------------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(
    rules=rules_strategy(),
    seed=seeds,
    policy_seed=seeds,
    n_steps=st.integers(0, 200),
    chosen=st.lists(st.booleans(), min_size=BATCH, max_size=BATCH),
    new_keys=st.lists(st.integers(0, 2**64 - 1), min_size=BATCH, max_size=BATCH, unique=True),
)
def test_reset_games_keeps_other_games_untouched(
    rules: Rules,
    seed: int,
    policy_seed: int,
    n_steps: int,
    chosen: list[bool],
    new_keys: list[int],
) -> None:
    state = play(rules, core.init(rules, BATCH, seed=seed), policy_seed, max_steps=n_steps)
    reset = np.array(chosen, dtype=bool)
    keys = np.array(new_keys, dtype=np.uint64)[reset]
    snapshot = state.copy()
    fresh = core.reset_games(rules, state, reset, keys)
    assert_same_state(state, snapshot, "reset_games mutated its input")
    kept = np.flatnonzero(~reset)
    assert_same_state(fresh.select(kept), state.select(kept), "a game that was not reset")
    if reset.any():
        assert_same_state(fresh.select(reset), core.init(rules, keys=keys), "a reset game")
    assert_invariants(rules, fresh, "after reset_games")


# ---------------------------------------------------------------------------------------------
# The invariant checker itself: it must see a corrupted state (and not crash on one)
# ---------------------------------------------------------------------------------------------


def _extra_card(s: core.UnoState) -> None:
    s.hands[0, 0, 0] += 1


def _stale_hand_size(s: core.UnoState) -> None:
    s.hand_size[0, 1] += 1


def _changed_face(s: core.UnoState) -> None:
    held = int(np.flatnonzero(s.hands[0, 0])[0])
    s.hands[0, 0, held] -= 1
    s.hands[0, 0, C.WILD if held != C.WILD else 0] += 1  # 108 cards, a face too many


def _wrong_top(s: core.UnoState) -> None:
    s.top[0] = (int(s.top[0]) + 1) % C.NUM_FACES


def _bad_seat(s: core.UnoState) -> None:
    s.current[0] = s.num_players


def _bad_phase(s: core.UnoState) -> None:
    s.phase[0] = 99


def _unnamed_colour(s: core.UnoState) -> None:
    s.phase[0] = core.PLAY
    s.colour[0] = C.NO_COLOUR


def _won_without_winner(s: core.UnoState) -> None:
    s.done[0] = True
    s.phase[0] = core.OVER


def _done_and_truncated(s: core.UnoState) -> None:
    s.done[0] = s.truncated[0] = True
    s.phase[0] = core.OVER


def _over_but_live(s: core.UnoState) -> None:
    s.phase[0] = core.OVER


def _points_in_live_hand(s: core.UnoState) -> None:
    s.hand_points[0, 0] = 10
    s.scores[0, 0] = 10


def _negative_score(s: core.UnoState) -> None:
    s.scores[0, 1] = -5


def _draw_pos_out_of_range(s: core.UnoState) -> None:
    s.draw_pos[0] = C.DECK_SIZE + 3


def _lack_marked_in_the_future(s: core.UnoState) -> None:
    s.lack_marks[0, 1, 2] = s.seat_draws[0, 1] + 1


def _choice_after_the_draws(s: core.UnoState) -> None:
    s.choice_draws[0, 2] = s.seat_draws[0, 2] + 1


@pytest.mark.parametrize(
    ("corrupt", "expected"),
    [
        (_extra_card, "cards not conserved"),
        (_changed_face, "faces not conserved"),
        (_stale_hand_size, "hand_size != hands.sum(-1)"),
        (_wrong_top, "top != discard"),
        (_bad_seat, "current seat out of range"),
        (_bad_phase, "phase is not a known value"),
        (_unnamed_colour, "colour not in 0..3"),
        (_won_without_winner, "won hand"),
        (_done_and_truncated, "done and truncated both set"),
        (_over_but_live, "phase OVER disagrees"),
        (_points_in_live_hand, "hand_points non-zero"),
        (_negative_score, "negative score"),
        (_draw_pos_out_of_range, "draw_pos out of 0..108"),
        (_lack_marked_in_the_future, "a lack fact marked after the seat's draws"),
        (_choice_after_the_draws, "choice_draws out of -1..seat_draws"),
    ],
)
def test_check_invariants_reports_corruption(
    corrupt: Callable[[core.UnoState], None], expected: str
) -> None:
    rules = Rules(num_players=3)
    state = play(rules, core.init(rules, 4, seed=11), policy_seed=5, max_steps=20)
    assert check_invariants(rules, state) == []
    bad = state.copy()
    corrupt(bad)
    problems = check_invariants(rules, bad)
    assert any(expected in p for p in problems), problems
    assert all("game 0" in p for p in problems), problems  # only the corrupted game is named
    with pytest.raises(AssertionError, match="invariants violated"):
        assert_invariants(rules, bad)
