"""The observation encoding: no hidden information leaks, the spaces hold every observation.

Hidden information is what a seat cannot know at the table: the other seats' cards and the
order of the draw pile. Two states that differ only there must give that seat the same
observation, for every rule preset and table size.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from uno_env import cards as C
from uno_env import core
from uno_env.core import UnoState
from uno_env.envs import field_bounds, observation_bounds, observation_space
from uno_env.observation import OBS_LAYOUT, encode, get_field
from uno_env.rules import PRESETS, Rules, load_rules
from uno_env.sampling import uniform_legal_actions

TABLE_SIZES = (2, 4, 10)


def reached_states(rules: Rules, seed: int, batch: int = 16, steps: int = 40) -> UnoState:
    """A batch of states reached by random legal play (finished hands included)."""
    rng = np.random.default_rng(seed)
    state = core.init(rules, batch, seed=seed)
    for _ in range(int(rng.integers(0, steps))):
        state = core.step(
            rules, state, uniform_legal_actions(core.legal_action_mask(rules, state), rng)
        )
    return state


def swap_between_hands(
    state: UnoState, game: int, a: int, b: int, rng: np.random.Generator
) -> UnoState | None:
    """Exchange one card of seat ``a`` with a different card of seat ``b`` (sizes kept)."""
    out = state.copy()
    held_a = np.flatnonzero(out.hands[game, a])
    held_b = np.flatnonzero(out.hands[game, b])
    pairs = [(fa, fb) for fa in held_a for fb in held_b if fa != fb]
    if not pairs:
        return None
    fa, fb = pairs[int(rng.integers(len(pairs)))]
    out.hands[game, a, fa] -= 1
    out.hands[game, a, fb] += 1
    out.hands[game, b, fb] -= 1
    out.hands[game, b, fa] += 1
    return out


def swap_with_draw_pile(
    state: UnoState, game: int, seat: int, rng: np.random.Generator
) -> UnoState | None:
    """Exchange one card of ``seat`` with a different card of the draw pile."""
    out = state.copy()
    start = int(out.draw_pos[game])
    held = np.flatnonzero(out.hands[game, seat])
    if start >= out.deck.shape[1] or not held.size:
        return None
    face = int(held[int(rng.integers(held.size))])
    positions = [p for p in range(start, out.deck.shape[1]) if out.deck[game, p] != face]
    if not positions:
        return None
    pos = positions[int(rng.integers(len(positions)))]
    pile_face = int(out.deck[game, pos])
    out.deck[game, pos] = face
    out.hands[game, seat, face] -= 1
    out.hands[game, seat, pile_face] += 1
    return out


def shuffle_draw_pile(state: UnoState, rng: np.random.Generator) -> UnoState:
    """Permute the undrawn cards of every game."""
    out = state.copy()
    for g in range(out.batch_size):
        start = int(out.draw_pos[g])
        out.deck[g, start:] = rng.permutation(out.deck[g, start:])
    return out


def observe_all(rules: Rules, state: UnoState, seat: int) -> np.ndarray:
    return encode(rules, state, np.full(state.batch_size, seat))


preset_and_size = st.tuples(st.sampled_from(sorted(PRESETS)), st.sampled_from(TABLE_SIZES))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(preset_and_size, st.integers(0, 2**31 - 1))
def test_hidden_cards_and_draw_order_do_not_leak(case: tuple[str, int], seed: int) -> None:
    preset, n_players = case
    rules = load_rules(preset, num_players=n_players)
    rng = np.random.default_rng(seed)
    state = reached_states(rules, seed)
    observer = int(rng.integers(n_players))
    base = observe_all(rules, state, observer)
    variants = [shuffle_draw_pile(state, rng)]
    others = [s for s in range(n_players) if s != observer]
    for game in range(state.batch_size):
        a, b = rng.choice(others, size=2) if len(others) > 1 else (others[0], others[0])
        if a != b:
            variants.append(swap_between_hands(state, game, int(a), int(b), rng))
        variants.append(swap_with_draw_pile(state, game, int(a), rng))
    checked = 0
    for variant in variants:
        if variant is None:
            continue
        np.testing.assert_array_equal(observe_all(rules, variant, observer), base)
        checked += 1
    assert checked > 0


@pytest.mark.parametrize("n_players", TABLE_SIZES)
def test_own_hidden_cards_do_change_the_observation(n_players: int) -> None:
    """The same perturbation seen by the seat whose cards moved: the test above can fail."""
    rules = load_rules(num_players=n_players)
    rng = np.random.default_rng(1)
    state = reached_states(rules, 1)
    changed = swap_with_draw_pile(state, 0, 0, rng)
    assert changed is not None
    assert not np.array_equal(observe_all(rules, changed, 0), observe_all(rules, state, 0))
    moved = swap_between_hands(state, 0, 0, 1, rng)
    assert moved is not None
    assert not np.array_equal(observe_all(rules, moved, 1), observe_all(rules, state, 1))


def test_private_fields_are_zero_for_other_observers() -> None:
    """The drawn card, the pending penalty and the declaration belong to the acting seat."""
    rules = load_rules(num_players=4)
    found = 0
    for seed in range(30):
        state = reached_states(rules, seed, batch=32, steps=60)
        for g in np.flatnonzero(state.drawn >= 0):
            other = (int(state.current[g]) + 1) % 4
            obs = encode(rules, state.select(np.array([g])), np.array([other]))
            assert not get_field(obs, "drawn_card").any()
            assert not get_field(obs, "pending_penalty").any()
            assert not get_field(obs, "declared").any()
            found += 1
    assert found > 0


def test_bounds_cover_every_field() -> None:
    """Every observation field has bounds (the one table, ``OBS_FIELDS``)."""
    rules = Rules()
    assert set(field_bounds(rules)) == set(OBS_LAYOUT)
    low, high = observation_bounds(rules)
    assert np.isfinite(low).all() and np.isfinite(high).all()
    assert (low <= high).all()


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("n_players", TABLE_SIZES)
def test_observations_lie_in_the_space(preset: str, n_players: int) -> None:
    rules = load_rules(preset, num_players=n_players)
    space = observation_space(rules)
    for seed in range(3):
        state = reached_states(rules, seed, batch=32, steps=200)
        for seat in range(n_players):
            obs = observe_all(rules, state, seat)
            assert space.contains(obs[0])
            outside = (obs < space.low) | (obs > space.high)
            assert not outside.any(), f"seat {seat}: fields outside the space: " + str(
                [name for name, where in OBS_LAYOUT.items() if outside[:, where].any()]
            )


def test_observation_is_relative_to_the_observer() -> None:
    rules = load_rules(num_players=4)
    state = reached_states(rules, 3, batch=8, steps=30)
    for seat in range(4):
        sizes = get_field(observe_all(rules, state, seat), "hand_sizes")
        for k in range(4):
            np.testing.assert_array_equal(sizes[:, k], state.hand_size[:, (seat + k) % 4])
        np.testing.assert_array_equal(
            get_field(observe_all(rules, state, seat), "hand"), state.hands[:, seat]
        )


@pytest.mark.parametrize("n_players", TABLE_SIZES)
def test_every_field_is_the_state_it_names(n_players: int) -> None:
    """Field by field, the encoding of random states against the state arrays.

    Observation version 2 indexed the drawn-card slot with int8 arithmetic, so a drawn face
    of 6 or more wrapped around into other fields; this pins every one-hot to its place.
    """
    rules = Rules(num_players=n_players)
    rng = np.random.default_rng(n_players)
    state = core.init(rules, 64, seed=n_players)
    saw_drawn = 0
    for _ in range(120):
        obs = encode(rules, state)
        acting = state.current.astype(int)
        games = np.arange(state.batch_size)
        assert np.array_equal(get_field(obs, "hand"), state.hands[games, acting])
        assert np.array_equal(get_field(obs, "top_card").argmax(1), state.top)
        assert np.array_equal(get_field(obs, "phase").argmax(1), state.phase)
        drawn = get_field(obs, "drawn_card")
        for g in games:
            if state.drawn[g] >= 0:
                saw_drawn += 1
                assert drawn[g].sum() == 1 and drawn[g].argmax() == state.drawn[g]
            else:
                assert drawn[g].sum() == 0
        assert (get_field(obs, "uno_exposed").sum(1) == (state.uno_exposed >= 0)).all()
        assert (get_field(obs, "num_players").argmax(1) == n_players - 1).all()
        assert (get_field(obs, "num_players").sum(1) == 1).all()
        counts = get_field(obs, "discard_counts").sum(1)
        assert np.array_equal(counts, state.discard_len)
        legal = get_field(obs, "legal_actions")
        assert np.array_equal(legal.astype(bool), core.legal_action_mask(rules, state))
        _check_history_fields(obs, state, acting, n_players)
        state = core.step(
            rules, state, uniform_legal_actions(core.legal_action_mask(rules, state), rng)
        )
    assert saw_drawn > 20


def _check_history_fields(
    obs: np.ndarray, state: UnoState, seats: np.ndarray, n_players: int
) -> None:
    """The public-history fields (version 4) against the state's history arrays."""
    games = np.arange(state.batch_size)
    lacks = get_field(obs, "shown_lacks").reshape(-1, C.MAX_PLAYERS, C.NUM_COLOURS)
    colours = get_field(obs, "last_played_colour").reshape(-1, C.MAX_PLAYERS, 5)
    ranks = get_field(obs, "last_played_rank").reshape(-1, C.MAX_PLAYERS, 15)
    named = get_field(obs, "last_named").reshape(-1, C.MAX_PLAYERS, C.NUM_COLOURS)
    drawn = get_field(obs, "cards_drawn")
    for k in range(C.MAX_PLAYERS):
        if k >= n_players:  # slots past the table are zero
            assert not lacks[:, k].any() and not colours[:, k].any() and not drawn[:, k].any()
            continue
        other = (seats + k) % n_players
        assert np.array_equal(lacks[:, k], state.shown_lacks[games, other])
        last = state.last_played[games, other].astype(int)
        played = last >= 0
        assert np.array_equal(colours[:, k].sum(1), played) and np.array_equal(
            ranks[:, k].sum(1), played
        )
        want_colour = np.where(last >= 52, 4, last // 13)
        want_rank = np.where(last >= 52, last - 52 + 13, last % 13)
        assert np.array_equal(colours[played, k].argmax(1), want_colour[played])
        assert np.array_equal(ranks[played, k].argmax(1), want_rank[played])
        last_named = state.last_named[games, other].astype(int)
        assert np.array_equal(named[:, k].sum(1), last_named >= 0)
        assert np.array_equal(named[last_named >= 0, k].argmax(1), last_named[last_named >= 0])
        assert np.array_equal(drawn[:, k], np.minimum(state.seat_draws[games, other], 108))
    # Unseen: every card not in the observer's hand nor in the discard pile, by colour.
    seen = state.hands[games, seats].astype(np.int64) + get_field(obs, "discard_counts")
    unseen = C.FACE_COUNTS[None, :] - seen
    groups = np.concatenate(
        [unseen[:, :52].reshape(-1, 4, 13).sum(2), unseen[:, 52:].sum(1, keepdims=True)], axis=1
    )
    assert np.array_equal(get_field(obs, "unseen_colours"), groups)


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("n_players", (2, 4))
def test_one_information_set_encodes_identically(preset: str, n_players: int) -> None:
    """States a seat cannot tell apart (other hands, draw order, hidden decisions, with the
    same public history) give that seat the same observation.

    ``core.determinize`` samples such states; the history arrays are public, so they are
    kept, and the observation must not change.
    """
    rules = load_rules(preset, num_players=n_players)
    checked = 0
    for seed in range(4):
        state = reached_states(rules, seed + 100, batch=32, steps=80)
        live = np.flatnonzero(state.live)
        if not live.size:
            continue
        state = state.select(live)
        assert state.shown_lacks.any() or state.last_played.max() >= 0
        for seat in range(n_players):
            keys = np.arange(state.batch_size * 3, dtype=np.uint64).reshape(-1, 3) + seed
            dets = core.determinize(rules, state, seat, keys)
            assert not np.array_equal(dets.hands, np.repeat(state.hands, 3, axis=0))
            seen = observe_all(rules, dets, seat)
            np.testing.assert_array_equal(
                seen, np.repeat(observe_all(rules, state, seat), 3, axis=0)
            )
            checked += 1
    assert checked > 0


def test_the_history_tells_states_apart() -> None:
    """Same cards, different public history: the observation differs (the test above can fail)."""
    rules = load_rules(num_players=4)
    state = reached_states(rules, 7, batch=16, steps=40)
    seat = np.zeros(state.batch_size, dtype=np.int64)
    base = encode(rules, state, seat)
    for name in ("shown_lacks", "last_played", "last_named", "seat_draws"):
        changed = state.copy()
        arr = getattr(changed, name)
        arr[:, 1] = ~arr[:, 1] if arr.dtype == np.bool_ else arr[:, 1] * 0 + 3
        assert not np.array_equal(encode(rules, changed, seat), base), name


def test_the_docs_table_is_the_code_s() -> None:
    """docs/envs.md shows the fields of ``OBS_FIELDS``, with the current version and size."""
    from tests.support import ROOT
    from uno_env.observation import OBS_DIM, OBS_VERSION, fields_table

    text = (ROOT / "docs" / "envs.md").read_text()
    assert fields_table() in text, "regenerate the table with uno_env.observation.fields_table()"
    assert f"(version {OBS_VERSION}, {OBS_DIM} features)" in text
