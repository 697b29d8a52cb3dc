"""core.determinize: consistent with what the seat knows, uniform over the rest, leak-free."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from scipy import stats

from uno_env import cards as C
from uno_env import core, load_rules
from uno_env.core.determinize import determinize_with_report
from uno_env.core.state import ARRAY_FIELDS
from uno_env.rules import Rules
from uno_env.sampling import uniform_legal_actions
from uno_env.testing import check_invariants

# Fields the observer sees (or that are its own): a determinization never changes them.
PUBLIC = (
    "hand_no",
    "draw_pos",
    "discard",
    "discard_len",
    "hand_size",
    "top",
    "colour",
    "direction",
    "current",
    "phase",
    "pending",
    "penalty_kind",
    "wd4_seat",
    "declared",
    "uno_exposed",
    "effect_face",
    "effect_seat",
    "shuffles",
    "dealer",
    "turn",
    "done",
    "truncated",
    "winner",
    "seat_draws",
    "shown_lacks",
    "lack_marks",
    "last_played",
    "last_named",
    "pile_faces",
    "finish_rank",
    "hand_points",
    "scores",
    "match_over",
)


def _played(rules: Rules, games: int, seed: int, max_turns: int = 60) -> core.UnoState:
    """Live games after a random number of random-legal moves, all phases mixed."""
    rng = np.random.default_rng(seed)
    state = core.init(rules, games, seed=seed)
    snapshots = []
    for _ in range(max_turns):
        mask = core.legal_action_mask(rules, state)
        state = core.step(rules, state, uniform_legal_actions(mask, rng))
        snapshots.append(state.select(np.flatnonzero(state.live)[:8]))
    pool = [s for s in snapshots if s.batch_size]
    fields = {name: np.concatenate([getattr(s, name) for s in pool]) for name in ARRAY_FIELDS}
    return core.UnoState(**fields)


@pytest.mark.parametrize(
    "rules",
    [
        load_rules("official", num_players=2),
        load_rules("official", num_players=4),
        load_rules("street", num_players=3),
        load_rules("seven_zero", num_players=4),
        Rules(num_players=3, seat_draw_streams=True, wd4_challenge=False, wd4_last_resort=True),
    ],
    ids=["official2", "official4", "street3", "seven_zero4", "last_resort3"],
)
def test_properties_hold_for_every_seat(rules: Rules) -> None:
    state = _played(rules, 64, seed=rules.num_players)
    rng = np.random.default_rng(0)
    n_det = 6
    for seats in (
        state.current.astype(np.int64),
        rng.integers(0, rules.num_players, state.batch_size),
    ):
        keys = rng.integers(0, 2**63, size=(state.batch_size, n_det), dtype=np.uint64)
        dets = core.determinize(rules, state, seats, keys)
        assert dets.batch_size == state.batch_size * n_det
        assert check_invariants(rules, dets) == []
        src = np.repeat(np.arange(state.batch_size), n_det)
        obs = np.repeat(seats, n_det)
        rows = np.arange(dets.batch_size)
        for name in PUBLIC:  # public facts and counts per seat unchanged
            np.testing.assert_array_equal(getattr(dets, name), getattr(state, name)[src], name)
        # The observer's own hand is its own.
        np.testing.assert_array_equal(dets.hands[rows, obs], state.hands[src, obs])
        # The same unseen cards, re-dealt: per face, others' hands + draw pile is conserved.
        others = dets.hands.sum(axis=1) - dets.hands[rows, obs]
        true_others = state.hands[src].sum(axis=1) - state.hands[src, obs]
        for r in range(dets.batch_size):
            pile = np.bincount(dets.deck[r, dets.draw_pos[r] :], minlength=C.NUM_FACES)
            true_pile = np.bincount(
                state.deck[src[r], state.draw_pos[src[r]] :], minlength=C.NUM_FACES
            )
            np.testing.assert_array_equal(others[r] + pile, true_others[r] + true_pile)
        # Keys renewed, the real deal blanked.
        assert (dets.key != state.key[src]).all()
        for r in range(dets.batch_size):
            assert (dets.deck[r, : dets.draw_pos[r]] == -1).all()
        # Legal moves of the observer when it is the seat to act: the same mask.
        acting = obs == dets.current
        np.testing.assert_array_equal(
            core.legal_action_mask(rules, dets)[acting],
            core.legal_action_mask(rules, state)[src][acting],
        )
        # Determinized games play on.
        mask = core.legal_action_mask(rules, dets)
        after = core.step(rules, dets, uniform_legal_actions(mask, rng))
        assert check_invariants(rules, after) == []


def test_input_state_untouched_and_keys_reproduce() -> None:
    rules = load_rules("official", num_players=3)
    state = _played(rules, 16, seed=5).select(np.arange(16))
    before = {name: arr.copy() for name, arr in state.array_fields().items()}
    keys = np.arange(16 * 4, dtype=np.uint64).reshape(16, 4)
    first = core.determinize(rules, state, 0, keys)
    again = core.determinize(rules, state, 0, keys)
    for name, arr in state.array_fields().items():
        np.testing.assert_array_equal(arr, before[name], name)
        np.testing.assert_array_equal(getattr(first, name), getattr(again, name), name)
    other = core.determinize(rules, state, 0, keys + np.uint64(1000))
    assert not np.array_equal(first.hands, other.hands)


def test_every_hidden_card_is_reachable_in_every_slot() -> None:
    rules = load_rules("official", num_players=3)
    state = _played(rules, 64, seed=11, max_turns=8).select([3])
    seat = int(state.current[0])
    dets = core.determinize(rules, state, seat, np.arange(3000, dtype=np.uint64))
    unseen = set(np.flatnonzero(
        C.FACE_COUNTS - state.hands[0, seat]
        - np.bincount(state.discard[0, : state.discard_len[0]], minlength=C.NUM_FACES)
    ).tolist())  # fmt: skip
    for other in range(3):
        if other != seat:
            held = set(np.flatnonzero(dets.hands[:, other].sum(axis=0)).tolist())
            assert held == unseen, f"seat {other} never got {sorted(unseen - held)}"
    pos = int(state.draw_pos[0])
    for position in (pos, (pos + 107) // 2, 107):
        assert set(dets.deck[:, position].tolist()) == unseen


def _small_state(
    unseen: list[int],
    other_size: int,
    phase: int = core.PLAY,
    pile_faces: dict[int, int] | None = None,
) -> core.UnoState:
    """Two seats; everything but ``unseen`` public: seat 0 holds three cards, seat 1
    ``other_size`` of the unseen cards, the draw pile the rest; the top card is R5 (red).
    ``pile_faces``: the faces a reshuffle put into the pile (default: none yet)."""
    rules = load_rules("official", num_players=2)
    base = core.init(rules, 1, seed=0)
    own = [C.parse_card(x) for x in ("G9", "B9", "Y9")]
    top = C.parse_card("R5")
    rest = list(C.CANONICAL_DECK)
    for face in [*own, *unseen, top]:
        rest.remove(face)
    discard = np.zeros((1, C.DECK_SIZE), dtype=np.int8)
    discard[0, : len(rest) + 1] = [*rest, top]
    hands = np.zeros((1, 2, C.NUM_FACES), dtype=np.int8)
    for face in own:
        hands[0, 0, face] += 1
    for face in unseen[:other_size]:
        hands[0, 1, face] += 1
    n_pile = len(unseen) - other_size
    deck = np.full((1, C.DECK_SIZE), -1, dtype=np.int8)
    deck[0, C.DECK_SIZE - n_pile :] = unseen[other_size:]
    fields = dict(
        base.array_fields(),
        deck=deck,
        draw_pos=np.array([C.DECK_SIZE - n_pile], dtype=np.int16),
        discard=discard,
        discard_len=np.array([len(rest) + 1], dtype=np.int16),
        hands=hands,
        hand_size=np.array([[3, other_size]], dtype=np.int16),
        top=np.array([top], dtype=np.int8),
        colour=np.array([0], dtype=np.int8),
        current=np.array([1 if phase == core.AFTER_DRAW else 0], dtype=np.int8),
        phase=np.array([phase], dtype=np.int8),
        drawn=np.array([unseen[0] if phase == core.AFTER_DRAW else -1], dtype=np.int8),
        pile_faces=np.zeros((1, C.NUM_FACES), dtype=np.int8),
    )
    for face, count in (pile_faces or {}).items():
        fields["pile_faces"][0, face] = count
    state = core.UnoState(**{k: np.ascontiguousarray(v) for k, v in fields.items()})
    assert check_invariants(rules, state) == []
    return state


def _outcome(state: core.UnoState, row: int) -> tuple[object, ...]:
    hand = tuple(np.repeat(np.arange(C.NUM_FACES), state.hands[row, 1]).tolist())
    pile = tuple(state.deck[row, state.draw_pos[row] :].tolist())
    return hand, pile, int(state.drawn[row])


def _expected(
    unseen: list[int],
    other_size: int,
    drawn_playable: bool,
    pile_faces: dict[int, int] | None = None,
) -> Counter:
    """Outcome counts over every permutation of the physical unseen cards (those whose
    pile keeps to ``pile_faces``, when given)."""
    counts: Counter = Counter()
    for perm in itertools.permutations(unseen):
        pile = Counter(perm[other_size:])
        if pile_faces is not None and any(pile[f] > pile_faces.get(f, 0) for f in pile):
            continue
        hand = tuple(sorted(perm[:other_size]))
        drawn = -1
        if drawn_playable:
            drawn = perm[0]
            red_or_five = drawn >= C.WILD or drawn // 13 == 0 or drawn % 13 == 5
            if not red_or_five:
                continue
        counts[(hand, tuple(perm[other_size:]), drawn)] += 1
    return counts


@pytest.mark.parametrize(
    ("names", "other_size", "phase", "reshuffled"),
    [
        (["R1", "G2", "B3", "Y4"], 2, core.PLAY, None),
        (["R1", "R1", "G2", "W", "Y4"], 2, core.PLAY, None),
        (["R1", "G2", "B3", "W", "Y5"], 3, core.AFTER_DRAW, None),
        # After a reshuffle the pile holds only faces that went into it (public).
        (["R1", "R1", "G2", "W", "Y4", "B3"], 3, core.PLAY, {"R1": 1, "W": 1, "Y4": 1, "B3": 1}),
        (["R1", "R1", "G2", "W", "Y4"], 2, core.PLAY, {"R1": 1, "G2": 1, "W": 1, "Y4": 1, "B7": 2}),
        (["R1", "G2", "B3", "W", "Y5"], 3, core.AFTER_DRAW, {"W": 1, "B3": 1, "Y5": 1}),
    ],
    ids=[
        "four-distinct",
        "with-duplicate",
        "hidden-drawn-card",
        "reshuffled",
        "reshuffled-duplicate",
        "reshuffled-hidden-drawn-card",
    ],
)
def test_uniform_over_consistent_deals(
    names: list[str], other_size: int, phase: int, reshuffled: dict[str, int] | None
) -> None:
    """Chi-square: every consistent deal (hand of seat 1, pile order, its drawn card) as
    often as the number of physical card orders giving it."""
    unseen = [C.parse_card(x) for x in names]
    pile_faces = None
    if reshuffled is not None:
        pile_faces = {C.parse_card(x): n for x, n in reshuffled.items()}
    state = _small_state(unseen, other_size, phase, pile_faces)
    n = 12_000
    dets = core.determinize(
        load_rules("official", num_players=2),
        state,
        0,
        np.arange(n, dtype=np.uint64) * np.uint64(7919),
    )
    seen = Counter(_outcome(dets, r) for r in range(n))
    expected = _expected(unseen, other_size, phase == core.AFTER_DRAW, pile_faces)
    assert set(seen) <= set(expected), "a deal inconsistent with the public facts"
    keys = sorted(expected)
    total = sum(expected.values())
    observed = np.array([seen[k] for k in keys])
    freq = np.array([expected[k] * n / total for k in keys])
    result = stats.chisquare(observed, freq)
    assert result.pvalue > 1e-3, (result, len(keys))


def test_two_states_of_one_information_set_give_the_same_determinizations() -> None:
    rules = load_rules("official", num_players=3)
    state = _played(rules, 64, seed=21).select(np.arange(10))
    twin = state.copy()
    for g in range(twin.batch_size):
        seat = int(twin.current[g])
        other = (seat + 1) % 3
        # Swap one card of the next seat with the top of the draw pile (different hidden cards),
        # scramble the dealt part of the deck, change the key and the hidden drawn/bluff flags.
        held = np.flatnonzero(twin.hands[g, other])
        pos = int(twin.draw_pos[g])
        if held.size and pos < C.DECK_SIZE:
            face, pile_top = int(held[0]), int(twin.deck[g, pos])
            twin.hands[g, other, face] -= 1
            twin.hands[g, other, pile_top] += 1
            twin.deck[g, pos] = face
        twin.deck[g, :pos] = twin.deck[g, :pos][::-1]
        twin.key[g] ^= np.uint64(12345)
        twin.wd4_illegal[g] = not twin.wd4_illegal[g]
    seats = state.current.astype(np.int64)
    keys = np.arange(10 * 8, dtype=np.uint64).reshape(10, 8)
    a = core.determinize(rules, state, seats, keys)
    b = core.determinize(rules, twin, seats, keys)
    for name, arr in a.array_fields().items():
        if name == "wd4_illegal":  # only meaningful (and resampled) while a W+4 is pending
            pending = a.wd4_seat >= 0
            np.testing.assert_array_equal(arr[pending], b.wd4_illegal[pending])
            continue
        np.testing.assert_array_equal(arr, getattr(b, name), name)


def test_wild_draw_four_legality_is_resampled_consistently() -> None:
    rules = load_rules("official", num_players=2)
    rng = np.random.default_rng(3)
    state = core.init(rules, 2048, seed=3)
    found = None
    for _ in range(80):
        state = core.step(
            rules, state, uniform_legal_actions(core.legal_action_mask(rules, state), rng)
        )
        facing = np.flatnonzero(state.phase == core.CHALLENGE_PHASE)
        below = state.discard[facing, np.maximum(state.discard_len[facing] - 2, 0)]
        usable = facing[
            (below < C.NUM_COLOURED_FACES) & (state.hand_size[facing, state.wd4_seat[facing]] >= 3)
        ]
        if usable.size:
            found = state.select(usable[:1])
            break
    assert found is not None
    seat = int(found.current[0])
    dets = core.determinize(rules, found, seat, np.arange(2000, dtype=np.uint64))
    bluffer = int(found.wd4_seat[0])
    before = C.FACE_COLOUR[found.discard[0, found.discard_len[0] - 2]]
    holds = dets.hands[:, bluffer, before * 13 : before * 13 + 13].sum(axis=1) > 0
    np.testing.assert_array_equal(dets.wd4_illegal, holds)
    assert 0 < holds.mean() < 1  # unknown to the challenger: both outcomes are sampled
    # The bluffer itself knows: its own flag is kept.
    own = core.determinize(rules, found, bluffer, np.arange(50, dtype=np.uint64))
    assert (own.wd4_illegal == found.wd4_illegal[0]).all()


def test_lacks_constraints_are_respected() -> None:
    rules = load_rules("official", num_players=4)
    state = _played(rules, 64, seed=8)
    colour_of = np.zeros((C.NUM_FACES, C.NUM_COLOURS), dtype=bool)
    colour_of[np.arange(52), np.arange(52) // 13] = True
    holds = (state.hands.astype(np.int64) @ colour_of.astype(np.int64)) > 0  # (B, N, 4)
    # True facts, as a public history would give them: some colours some seats really lack.
    lacks = ~holds & (np.random.default_rng(1).random(holds.shape) < 0.3)
    seats = state.current.astype(np.int64)
    keys = np.arange(state.batch_size * 5, dtype=np.uint64).reshape(state.batch_size, 5)
    result = determinize_with_report(rules, state, seats, keys, lacks=lacks)
    dets = result.states
    assert check_invariants(rules, dets) == []
    got = (dets.hands.astype(np.int64) @ colour_of.astype(np.int64)) > 0
    want_lacks = np.repeat(lacks, 5, axis=0)
    ok = ~(got & want_lacks).any(axis=2)  # (rows, N)
    observer = np.repeat(seats, 5)
    ok[np.arange(dets.batch_size), observer] = True
    assert ok[~result.relaxed].all()
    assert result.relaxed.mean() < 0.01
    # Without constraints nothing is relaxed.
    plain = determinize_with_report(rules, state, seats, keys, lacks=np.zeros_like(lacks))
    assert not plain.relaxed.any()


def _allowances(state: core.UnoState, wild_facts: bool) -> np.ndarray:
    """(B, N, 18): how many of each seat's latest cards may break each lack fact."""
    allow = np.minimum(state.seat_draws[:, :, None].astype(np.int64) - state.lack_marks, 10**6)
    if not wild_facts:
        allow[:, :, C.LACK_WILD] = 10**6
    return allow


def _feasible(hand: np.ndarray, allow: np.ndarray) -> bool:
    """Whether a hand (face counts) can be ordered so that every card breaking a fact is
    among the latest ``allow[fact]`` cards (each card's deadline: its facts' smallest
    allowance; an earliest-deadline order exists iff the k-th deadline exceeds k)."""
    deadlines = []
    for face in np.flatnonzero(hand):
        if face < C.NUM_COLOURED_FACES:
            colour, rank = divmod(int(face), C.NUM_RANKS)
            deadline = min(allow[colour], allow[C.LACK_RANK0 + rank])
        else:
            deadline = allow[C.LACK_WILD]
        deadlines += [deadline] * int(hand[face])
    return all(d > k for k, d in enumerate(sorted(deadlines)))


@pytest.mark.parametrize("wild_facts", [False, True])
def test_the_public_history_constrains_by_default(wild_facts: bool) -> None:
    """Without ``lacks``, the state's lack facts are the constraints: every other seat's
    hand can be ordered so that each card breaking a fact was drawn after it."""
    rules = load_rules("official", num_players=4)
    state = _played(rules, 64, seed=9)
    allow = _allowances(state, wild_facts)
    assert (allow < 10**6).any(), "random play shows some lack facts"
    seats = state.current.astype(np.int64)
    keys = np.arange(state.batch_size * 5, dtype=np.uint64).reshape(state.batch_size, 5)
    result = determinize_with_report(rules, state, seats, keys, wild_facts=wild_facts)
    dets = result.states
    assert check_invariants(rules, dets) == []
    rows = np.repeat(np.arange(state.batch_size), 5)
    # Another seat deciding on a playable drawn card holds it among its latest cards.
    deciding = state.phase == core.AFTER_DRAW
    checked = 0
    for row in np.flatnonzero(~result.relaxed):
        game = rows[row]
        for seat in range(rules.num_players):
            if seat == seats[game]:
                continue
            limits = allow[game, seat]
            if deciding[game] and seat == state.current[game]:
                limits = np.maximum(limits, 1)
            assert _feasible(dets.hands[row, seat], limits), (row, seat)
            checked += 1
    assert checked > 1000
    assert result.relaxed.mean() < 0.02
    # The same keys with the history ignored give other deals.
    ignored = core.determinize(rules, state, seats, keys, lacks=np.zeros_like(state.shown_lacks))
    assert not np.array_equal(ignored.hands, dets.hands)


@pytest.mark.parametrize(
    ("bot", "num_players", "wild_facts"),
    [("random", 2, True), ("random", 4, True), ("mixbot", 2, False), ("mixbot", 4, False)],
)
def test_lack_facts_are_true_for_players_who_draw_only_when_stuck(
    bot: str, num_players: int, wild_facts: bool
) -> None:
    """The papers' random player and ``mixbot`` draw only when no card plays (``mixbot``
    may hold a wild while it draws): at every step of their games, every seat's real hand
    satisfies the facts recorded about it, so determinization never excludes the truth."""
    from uno_env.play import choose_actions
    from unolab.agents.registry import make_agent

    rules = load_rules("official", num_players=num_players)
    state = core.init(rules, 64, seed=17)
    policies = [make_agent(bot, seed) for seed in range(num_players)]
    checked = 0
    while state.live.any():
        state = state.select(np.flatnonzero(state.live))
        allow = _allowances(state, wild_facts)
        for game, seat in zip(*np.nonzero((allow < 10**6).any(axis=2)), strict=True):
            assert _feasible(state.hands[game, seat], allow[game, seat]), (bot, game, seat)
            checked += 1
        actions, _ = choose_actions(rules, state, policies, state.current.astype(np.int64))
        state = core.step(rules, state, actions)
    assert checked > 500


def test_the_wild_fact_is_false_for_mixbot() -> None:
    """``mixbot`` holds wilds back and draws (docs/bots.md): the wild fact is evidence about
    players who draw only when stuck, which is why determinization leaves it out by default."""
    from uno_env.play import choose_actions
    from unolab.agents.registry import make_agent

    rules = load_rules("official", num_players=2)
    state = core.init(rules, 64, seed=17)
    policies = [make_agent("mixbot", seed) for seed in range(2)]
    broken = 0
    while state.live.any():
        state = state.select(np.flatnonzero(state.live))
        allow = _allowances(state, wild_facts=True)
        for game, seat in zip(*np.nonzero(allow[:, :, C.LACK_WILD] < 10**6), strict=True):
            broken += not _feasible(state.hands[game, seat], allow[game, seat])
        actions, _ = choose_actions(rules, state, policies, state.current.astype(np.int64))
        state = core.step(rules, state, actions)
    assert broken > 0


def _after_reshuffles(rules: Rules, games: int, seed: int) -> core.UnoState:
    """Live games whose draw pile has been refilled from the discards, in many phases."""
    rng = np.random.default_rng(seed)
    state = core.init(rules, games, seed=seed)
    found = []
    while state.live.any() and sum(s.batch_size for s in found) < 120:
        mask = core.legal_action_mask(rules, state)
        state = core.step(rules, state, uniform_legal_actions(mask, rng))
        rows = np.flatnonzero(state.live & state.pile_faces.any(axis=1))
        if rows.size:
            found.append(state.select(rows[:4]))
    fields = {name: np.concatenate([getattr(s, name) for s in found]) for name in ARRAY_FIELDS}
    return core.UnoState(**fields)


@pytest.mark.parametrize(("preset", "games"), [("official", 400), ("rlcard", 8000)])
def test_after_a_reshuffle_the_pile_is_dealt_only_the_faces_that_went_into_it(
    preset: str, games: int
) -> None:
    """The discards shuffled into the pile were public: no determinization puts another
    face there, and without that fact many deals would."""
    rules = load_rules(preset, num_players=3)
    state = _after_reshuffles(rules, games, seed=8)
    assert state.batch_size >= 40
    assert check_invariants(rules, state) == []  # the real pile keeps to it, too
    seats = state.current.astype(np.int64)
    keys = np.arange(state.batch_size * 16, dtype=np.uint64).reshape(-1, 16)
    dets = core.determinize(rules, state, seats, keys)
    assert check_invariants(rules, dets) == []
    caps = np.repeat(state.pile_faces, 16, axis=0).astype(np.int64)
    for r in range(dets.batch_size):
        pile = np.bincount(dets.deck[r, dets.draw_pos[r] :], minlength=C.NUM_FACES)
        assert (pile <= caps[r]).all(), r
    # The same deals with the fact forgotten: the pile then often holds other faces.
    blind = state.with_fields(pile_faces=np.zeros_like(state.pile_faces))
    loose = core.determinize(rules, blind, seats, keys)
    broken = 0
    for r in range(loose.batch_size):
        pile = np.bincount(loose.deck[r, loose.draw_pos[r] :], minlength=C.NUM_FACES)
        broken += bool((pile > caps[r]).any())
    assert broken > loose.batch_size // 4


def test_a_seat_found_bluffing_is_dealt_the_colour_it_was_shown_to_hold() -> None:
    """A challenge that finds a Wild Draw Four a bluff shows its player holds the colour it
    was judged against (``shown_holds``): true of the real hand at every step of games
    between random players, and kept by every determinization; without the history many
    deals break it."""
    from uno_env.play import choose_actions
    from unolab.agents.registry import make_agent

    rules = load_rules("official", num_players=4)
    state = core.init(rules, 300, seed=4)
    players = [make_agent("random", seed) for seed in range(4)]
    found = []
    while state.live.any():
        state = state.select(np.flatnonzero(state.live))
        for game, seat, colour in zip(*np.nonzero(state.shown_holds), strict=True):
            hand = state.hands[game, seat, colour * C.NUM_RANKS : (colour + 1) * C.NUM_RANKS]
            assert hand.sum() > 0, (game, seat, colour)
        rows = np.flatnonzero(state.shown_holds.any(axis=(1, 2)))
        if rows.size:
            found.append(state.select(rows[:2]))
        actions, _ = choose_actions(rules, state, players, state.current.astype(np.int64))
        state = core.step(rules, state, actions)
    fields = {name: np.concatenate([getattr(s, name) for s in found]) for name in ARRAY_FIELDS}
    pool = core.UnoState(**fields)
    assert pool.batch_size >= 50
    # Observe from a seat that holds no such fact itself.
    seats = np.array([int(np.flatnonzero(~h.any(axis=1))[0]) for h in pool.shown_holds])
    keys = np.arange(pool.batch_size * 20, dtype=np.uint64).reshape(-1, 20)
    result = determinize_with_report(rules, pool, seats, keys)
    dets, rows = result.states, np.repeat(np.arange(pool.batch_size), 20)
    assert result.relaxed.mean() < 0.02
    blind = core.determinize(rules, pool, seats, keys, lacks=np.zeros_like(pool.shown_lacks))

    def missing(states: core.UnoState, row: int) -> bool:
        holds = pool.shown_holds[rows[row]]
        for seat, colour in zip(*np.nonzero(holds), strict=True):
            cards = states.hands[row, seat, colour * C.NUM_RANKS : (colour + 1) * C.NUM_RANKS]
            if seat != seats[rows[row]] and cards.sum() == 0:
                return True
        return False

    assert not any(missing(dets, r) for r in np.flatnonzero(~result.relaxed))
    assert sum(missing(blind, r) for r in range(blind.batch_size)) > blind.batch_size // 10
