"""Differential tests: the batched core against the scalar reference engine, move by move.

Both engines play the same games from the same keys (``B`` games at once in the core, one
:class:`RefGame` per game). After every step the legal-action mask and every state field of
``docs/engine.md`` must agree. Actions are drawn from seeded policies: uniform play, and biased
policies that reach rare branches (never declaring UNO, always catching, always challenging,
always drawing until both piles are empty).

Fields compared only where they are meaningful:

* ``deck``: the draw pile ``deck[draw_pos:]`` (cards already drawn are history);
* ``discard``: the pile ``discard[:discard_len]``;
* ``wd4_illegal``: while ``challenge`` is legal (it describes the Wild Draw Four being
  decided, in phase CHALLENGE or STACK).

The house rules and RLCard switches (docs/engine.md, last section) are covered by cases for
every preset, every switch alone and a few random combinations of switches, with policies that
favour the rare branches (stacking, deflecting, jumping in, swapping hands); every case asserts
that the reference engine reached the branches it is meant to test.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pytest
from support.reference_engine import (
    PHASE_JUMP_IN,
    PHASE_OVER,
    PHASE_PLAY,
    PHASE_STACK,
    RefGame,
)

from uno_env import core
from uno_env.cards import (
    ACCEPT,
    CANONICAL_DECK,
    CATCH,
    CHALLENGE,
    DECK_SIZE,
    DRAW,
    DRAW_TWO,
    FACE_NAMES,
    KEEP,
    NUM_ACTIONS,
    NUM_FACES,
    NUM_LACK_FACTS,
    NUM_PLAY_ACTIONS,
    NUM_RANKS,
    PASS,
    PLAY_WILD_DRAW_FOUR,
    UNO,
    action_names,
    parse_action,
    parse_cards,
)
from uno_env.config_values import ConfigError
from uno_env.rules import PRESETS, Rules

SCALAR_FIELDS = (
    "key",
    "hand_no",
    "draw_pos",
    "discard_len",
    "top",
    "colour",
    "direction",
    "current",
    "phase",
    "drawn",
    "pending",
    "wd4_seat",
    "wd4_illegal",
    "declared",
    "uno_exposed",
    "shuffles",
    "dealer",
    "turn",
    "done",
    "truncated",
    "winner",
    "match_over",
    "penalty_kind",
    "effect_face",
    "effect_seat",
)
VECTOR_FIELDS = (
    "hand_points",
    "scores",
    "finish_rank",
    "seat_draws",
    "last_played",
    "last_named",
    "lacks_bits",
    "holds_bits",
    "choice_colour",
    "choice_top",
    "choice_draws",
)


# ---------------------------------------------------------------------------------------------
# Policies
# ---------------------------------------------------------------------------------------------


PENALTY_PLAYS = frozenset(
    [c * NUM_RANKS + DRAW_TWO for c in range(4)] + list(range(PLAY_WILD_DRAW_FOUR, 60))
)
"""Play actions of Draw Twos and Wild Draw Fours."""
SEVEN_ZERO_PLAYS = frozenset(c * NUM_RANKS + r for c in range(4) for r in (0, 7))
"""Play actions of 0s and 7s."""


@dataclass(frozen=True)
class Policy:
    """Random play with preferences.

    For each ``(action, probability)`` in ``prefer`` (in order), a legal preferred action is
    chosen with that probability. Then, by phase: in STACK a play (stacking or deflecting) is
    chosen with probability ``stack``; in JUMP_IN a jump-in with probability ``jump`` (else
    ``pass``); in PLAY one of the ``favour`` plays with probability ``favour_prob``.
    Otherwise the action is uniform among the legal actions that have no preference (or among
    all legal actions if only preferred ones are legal). A preference of 0 therefore means
    "never, unless it is the only choice".
    """

    name: str
    prefer: tuple[tuple[int, float], ...] = ()
    stack: float = 0.0
    jump: float = 0.0
    favour: frozenset[int] = frozenset()
    favour_prob: float = 0.0

    def choose(self, rng: np.random.Generator, legal: list[int], phase: int = PHASE_PLAY) -> int:
        for action, prob in self.prefer:
            if action in legal and prob > 0 and rng.random() < prob:
                return action
        plays = [a for a in legal if a < NUM_PLAY_ACTIONS]
        if phase == PHASE_STACK and plays and rng.random() < self.stack:
            return plays[int(rng.integers(len(plays)))]
        if phase == PHASE_JUMP_IN and PASS in legal:
            if plays and rng.random() < self.jump:
                return plays[int(rng.integers(len(plays)))]
            return PASS
        if phase == PHASE_PLAY and self.favour_prob > 0:
            favoured = [a for a in plays if a in self.favour]
            if favoured and rng.random() < self.favour_prob:
                return favoured[int(rng.integers(len(favoured)))]
        preferred = {a for a, _ in self.prefer}
        pool = [a for a in legal if a not in preferred] or legal
        return pool[int(rng.integers(len(pool)))]


UNIFORM = Policy("uniform")
PLAYER = Policy(
    "player",
    ((UNO, 0.7), (CATCH, 0.7), (CHALLENGE, 0.4), (ACCEPT, 0.6), (DRAW, 0.1), (KEEP, 0.3)),
)
NEVER_UNO = Policy("never-uno-always-catch", ((UNO, 0.0), (CATCH, 1.0), (DRAW, 0.1)))
ALWAYS_CHALLENGE = Policy("always-challenge", ((CHALLENGE, 1.0), (DRAW, 0.1), (UNO, 0.5)))
ALWAYS_DRAW = Policy("always-draw-keep", ((DRAW, 1.0), (KEEP, 1.0)))
MOSTLY_DRAW = Policy("mostly-draw", ((DRAW, 0.8), (KEEP, 0.5), (CATCH, 0.5)))
HALF_UNO = Policy("half-uno-always-catch", ((UNO, 0.5), (CATCH, 1.0), (DRAW, 0.1)))
HOUSE = Policy(
    "house",
    ((UNO, 0.6), (CATCH, 0.7), (CHALLENGE, 0.3), (ACCEPT, 0.6), (DRAW, 0.08), (KEEP, 0.3)),
    stack=0.7,
    jump=0.6,
    favour=PENALTY_PLAYS | SEVEN_ZERO_PLAYS,
    favour_prob=0.4,
)
"""Stacks, jumps in and plays penalty cards, 0s and 7s eagerly; draws seldom."""
HOUSE_UNIFORM = Policy("house-uniform", stack=0.5, jump=0.5)
"""Uniform over the legal actions, with an even chance to stack and to jump in."""


# ---------------------------------------------------------------------------------------------
# Lock-step driver
# ---------------------------------------------------------------------------------------------


@dataclass
class Mirror:
    """The reference games of a batch, with arrays shaped like the core's state."""

    rules: Rules
    games: list[RefGame]
    label: str
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    legal: list[list[int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        b, n = len(self.games), self.rules.num_players
        # One row write per game and step: the scalar (and per-seat) fields are columns of one
        # matrix, exposed by name as views. The key never changes: it is copied once.
        self._scalars = np.zeros((b, len(SCALAR_FIELDS) - 1), dtype=np.int64)
        self._vectors = np.zeros((b, len(VECTOR_FIELDS), n), dtype=np.int64)
        self.arrays = {name: self._scalars[:, j] for j, name in enumerate(SCALAR_FIELDS[1:])}
        self.arrays["key"] = np.array([g.key for g in self.games], dtype=np.uint64)
        for j, name in enumerate(VECTOR_FIELDS):
            self.arrays[name] = self._vectors[:, j]
        self.arrays["wd4_open"] = np.zeros(b, dtype=bool)
        self.arrays["hands"] = np.zeros((b, n, NUM_FACES), dtype=np.int64)
        self.arrays["lack_marks"] = np.zeros((b, n, NUM_LACK_FACTS), dtype=np.int64)
        self.arrays["pile_faces"] = np.zeros((b, NUM_FACES), dtype=np.int64)
        self.arrays["deck"] = np.zeros((b, DECK_SIZE), dtype=np.int64)
        self.arrays["discard"] = np.zeros((b, DECK_SIZE), dtype=np.int64)
        self.legal = [[] for _ in range(b)]
        self._deck_shuffles = [-1] * b  # the deck only changes when it is shuffled
        self._hands: list[list[list[int]]] = [[[] for _ in range(n)] for _ in range(b)]
        for i in range(b):
            self.refresh(i)

    def refresh(self, i: int) -> None:
        """Copy game ``i``'s state into the arrays."""
        g, a = self.games[i], self.arrays
        self._scalars[i] = [getattr(g, name) for name in SCALAR_FIELDS[1:]]
        self._vectors[i] = [getattr(g, name) for name in VECTOR_FIELDS]
        a["lack_marks"][i] = g.lack_marks
        a["pile_faces"][i] = g.pile_faces
        copied = self._hands[i]
        for seat, hand in enumerate(g.hands):  # (usually one hand changed)
            if hand != copied[seat]:
                a["hands"][i, seat] = hand
                copied[seat] = list(hand)
        if self._deck_shuffles[i] != g.shuffles or self.rules.seat_draw_streams:
            a["deck"][i] = g.deck
            self._deck_shuffles[i] = g.shuffles
        a["discard"][i, : len(g.discard)] = g.discard
        self.legal[i] = g.legal_actions()
        a["wd4_open"][i] = CHALLENGE in self.legal[i]

    def mask(self) -> np.ndarray:
        """The reference engines' legal actions as a (B, 80) mask."""
        lengths = [len(legal) for legal in self.legal]
        rows = np.repeat(np.arange(len(self.legal)), lengths)
        mask = np.zeros((len(self.legal), NUM_ACTIONS), dtype=bool)
        mask[rows, np.concatenate(self.legal).astype(np.int64)] = True
        return mask


def _names(counts: np.ndarray) -> str:
    """A hand of per-face counts as card names."""
    return " ".join(FACE_NAMES[f] for f in range(NUM_FACES) for _ in range(int(counts[f])))


def _describe(game: RefGame) -> str:
    return (
        f"key={game.key} dealer={game.dealer} hand_no={game.hand_no}; "
        f"{len(game.history)} actions: {action_names(game.history)}"
    )


def _core_field(state: core.UnoState, name: str) -> np.ndarray:
    """A per-seat field of the core state as int64 (``lacks_bits``: shown_lacks as bit sets)."""
    if name == "lacks_bits":
        return (state.shown_lacks.astype(np.int64) << np.arange(4)).sum(axis=-1)
    if name == "holds_bits":
        return (state.shown_holds.astype(np.int64) << np.arange(4)).sum(axis=-1)
    return getattr(state, name).astype(np.int64)


def compare(state: core.UnoState, mirror: Mirror, where: str) -> None:
    """Assert that the core state (and mask) equals the reference games, field by field."""
    a = mirror.arrays
    b = len(mirror.games)
    bad: dict[str, np.ndarray] = {}
    for name in SCALAR_FIELDS:
        core_val = getattr(state, name).astype(a[name].dtype)
        diff = core_val != a[name]
        if name == "wd4_illegal":
            diff &= a["wd4_open"]
        bad[name] = diff
    for name in (*VECTOR_FIELDS, "hands", "lack_marks", "pile_faces"):
        diff = _core_field(state, name) != a[name]
        bad[name] = diff.reshape(b, -1).any(axis=1)
    cols = np.arange(DECK_SIZE)[None, :]
    live_pile = cols >= a["draw_pos"][:, None]
    bad["deck"] = ((state.deck.astype(np.int64) != a["deck"]) & live_pile).any(axis=1)
    in_discard = cols < a["discard_len"][:, None]
    bad["discard"] = ((state.discard.astype(np.int64) != a["discard"]) & in_discard).any(axis=1)
    ref_mask = mirror.mask()
    bad["mask"] = (core.legal_action_mask(mirror.rules, state) != ref_mask).any(axis=1)
    bad["card_total"] = core.card_totals(state) != DECK_SIZE
    bad["hand_size"] = (state.hand_size.astype(np.int64) != a["hands"].sum(axis=2)).any(axis=1)

    any_bad = np.zeros(b, dtype=bool)
    for diff in bad.values():
        any_bad |= diff
    if not any_bad.any():
        return
    i = int(np.flatnonzero(any_bad)[0])
    game = mirror.games[i]
    lines = [f"{mirror.label}: game {i} differs {where} ({_describe(game)})"]
    for name, diff in bad.items():
        if not diff[i]:
            continue
        if name == "mask":
            core_val = action_names(np.flatnonzero(core.legal_action_mask(mirror.rules, state)[i]))
            ref_val = action_names(np.flatnonzero(ref_mask[i]))
        elif name == "card_total":
            core_val, ref_val = int(core.card_totals(state)[i]), DECK_SIZE
        elif name == "hand_size":
            core_val, ref_val = state.hand_size[i].tolist(), a["hands"][i].sum(axis=1).tolist()
        elif name == "hands":
            core_val = [_names(row) for row in state.hands[i]]
            ref_val = [_names(row) for row in a["hands"][i]]
        elif name == "deck":
            lo = int(a["draw_pos"][i])
            core_val, ref_val = state.deck[i, lo:].tolist(), a["deck"][i, lo:].tolist()
        elif name == "discard":
            hi = int(a["discard_len"][i])
            core_val, ref_val = state.discard[i, :hi].tolist(), a["discard"][i, :hi].tolist()
        else:
            core_val, ref_val = _core_field(state, name)[i].tolist(), a[name][i].tolist()
        lines.append(f"  field {name}: core={core_val} ref={ref_val}")
    raise AssertionError("\n".join(lines))


def play_hand(
    rules: Rules,
    state: core.UnoState,
    mirror: Mirror,
    policy: Policy,
    rng: np.random.Generator,
) -> core.UnoState:
    """Play every hand of the batch to its end, comparing after every step."""
    compare(state, mirror, "after the deal")
    b = len(mirror.games)
    step_no = 0
    while True:
        live = [i for i, g in enumerate(mirror.games) if g.phase != PHASE_OVER]
        if not live:
            return state
        actions = np.zeros(b, dtype=np.int64)
        for i in live:
            game = mirror.games[i]
            action = policy.choose(rng, mirror.legal[i], game.phase)
            actions[i] = action
            game.step(action)
            mirror.refresh(i)
        state = core.step(rules, state, actions)
        step_no += 1
        compare(state, mirror, f"after batch step {step_no}")


def run_batch(
    rules: Rules,
    policy: Policy,
    seed: int,
    batch: int,
    label: str,
    hands: int = 1,
) -> Counter[str]:
    """Play ``batch`` matches of up to ``hands`` hands in both engines.

    Returns the reference engine's event counts, plus ``hands`` (hands played).
    """
    rng = np.random.default_rng(seed)
    keys = np.random.SeedSequence(seed).generate_state(batch, dtype=np.uint64)
    state = core.init(rules, batch, keys=keys)
    mirror = Mirror(rules, [RefGame(rules, int(k)) for k in keys], label)
    events: Counter[str] = Counter()
    for hand in range(hands):
        state = play_hand(rules, state, mirror, policy, rng)
        for game in mirror.games:
            events.update(game.events)
        events["hands"] += len(mirror.games)
        going = [i for i, g in enumerate(mirror.games) if not g.match_over]
        if hand + 1 == hands or not going:
            break
        state = core.next_hand(rules, state.select(np.array(going)))
        mirror = Mirror(
            rules, [mirror.games[i].next_hand() for i in going], f"{label} hand {hand + 1}"
        )
    return events


# ---------------------------------------------------------------------------------------------
# The cases
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """A batch of random games: rules, policy, how many games (and hands per match), and the
    rule branches (reference-engine events) that the case must reach."""

    label: str
    rules: Rules
    policy: Policy
    games: int
    hands: int = 1
    expect: tuple[str, ...] = ()


CASES = [
    Case("2p", Rules(num_players=2), PLAYER, 128, expect=("two_player_reverse", "exposed")),
    Case("2p-uniform", Rules(num_players=2, max_turns=300), UNIFORM, 64),
    Case("3p", Rules(num_players=3), PLAYER, 128, expect=("catch", "challenge_guilty")),
    Case("4p", Rules(num_players=4), PLAYER, 128, expect=("final_draw_two", "final_reverse")),
    Case("4p-uniform", Rules(num_players=4, max_turns=300), UNIFORM, 64),
    Case("7p", Rules(num_players=7), PLAYER, 128, expect=("reshuffle", "starter_redraw")),
    Case(
        "4p-never-uno",
        Rules(num_players=4, max_turns=300),
        NEVER_UNO,
        96,
        expect=("catch", "exposed", "truncated"),
    ),
    Case("2p-never-uno", Rules(num_players=2, max_turns=400), NEVER_UNO, 64, expect=("catch",)),
    Case(
        "3p-always-challenge",
        Rules(num_players=3),
        ALWAYS_CHALLENGE,
        96,
        expect=("challenge_guilty", "challenge_innocent"),
    ),
    Case("2p-always-challenge", Rules(num_players=2), ALWAYS_CHALLENGE, 64),
    Case("2p-no-two-player-rules", Rules(num_players=2, two_player_rules=False), PLAYER, 128),
    Case("4p-no-challenge", Rules(num_players=4, wd4_challenge=False), PLAYER, 128),
    Case(
        "3p-wd4-anytime",
        Rules(num_players=3, wd4_challenge=False, wd4_anytime=True),
        PLAYER,
        64,
    ),
    Case("4p-no-uno-call", Rules(num_players=4, uno_call=False), PLAYER, 128),
    Case(
        "6p-hand2-penalty4",
        Rules(num_players=6, hand_size=2, uno_penalty=4, max_turns=300),
        HALF_UNO,
        64,
        expect=("catch", "won"),
    ),
    Case(
        "10p-hand9-always-draw",
        Rules(num_players=10, hand_size=9, max_turns=250),
        ALWAYS_DRAW,
        32,
        expect=("both_piles_empty", "truncated"),
    ),
    Case(
        "10p-hand9-mostly-draw",
        Rules(num_players=10, hand_size=9, max_turns=400),
        MOSTLY_DRAW,
        32,
        expect=("both_piles_empty", "reshuffle"),
    ),
    Case("10p-hand9", Rules(num_players=10, hand_size=9), PLAYER, 64, expect=("reshuffle",)),
    Case("5p-max-turns-25", Rules(num_players=5, max_turns=25), PLAYER, 128, expect=("truncated",)),
    Case(
        "4p-redraw-wilds",
        Rules(num_players=4, starter_redraw_wilds=True),
        PLAYER,
        128,
        expect=("starter_redraw",),
    ),
    Case(
        "3p-match",
        Rules(num_players=3, target_score=120),
        PLAYER,
        64,
        hands=8,
        expect=("match_over",),
    ),
    Case(
        "2p-match",
        Rules(num_players=2, target_score=100, hand_size=4),
        PLAYER,
        64,
        hands=8,
        expect=("match_over",),
    ),
]


def run_case(case: Case, seed_base: int) -> None:
    """Play a case in batches of up to 64 games; assert it reached every expected branch."""
    events: Counter[str] = Counter()
    for k in range(0, case.games, 64):
        batch = min(64, case.games - k)
        events += run_batch(case.rules, case.policy, seed_base + k, batch, case.label, case.hands)
    assert events["hands"] >= case.games
    missing = [e for e in case.expect if events[e] == 0]
    assert not missing, f"{case.label}: never reached {missing}; events: {dict(events)}"


@pytest.mark.parametrize("case", CASES, ids=[c.label for c in CASES])
def test_engines_agree_under_random_play(case: Case) -> None:
    run_case(case, 1000 * CASES.index(case))


def test_cover_at_least_2000_games() -> None:
    assert sum(c.games for c in CASES) + sum(c.games for c in HOUSE_CASES) >= 2000
    assert {2, 3, 4, 7} <= {c.rules.num_players for c in CASES}


# ---------------------------------------------------------------------------------------------
# House rules and RLCard switches: every preset, every switch alone, random combinations
# ---------------------------------------------------------------------------------------------

STACK_EVENTS = ("stack_opened", "stack_taken")
JUMP_EVENTS = ("jump_in_window", "jump_in", "jump_in_pass", "jump_in_window_closed")


def house(
    label: str,
    policy: Policy,
    games: int,
    *expect: str,
    preset: str = "official",
    match_hands: int = 1,
    **fields: object,
) -> Case:
    """A house-rules case: the ``preset`` with ``fields`` changed, ``match_hands`` hands per
    match, expected to reach the ``expect`` branches (4 players unless ``fields`` say)."""
    rules = PRESETS[preset].replace(**({"num_players": 4} | fields))
    return Case(label, rules, policy, games, hands=match_hands, expect=expect)


HOUSE_CASES = [
    # ---- the presets
    house("preset-official", HOUSE, 64, "won", preset="official"),
    house(
        "preset-street-4p",
        HOUSE,
        64,
        *STACK_EVENTS,
        *JUMP_EVENTS,
        "stack_2_on_2",
        "stack_4_on_4",
        "stack_taken_big",
        "until_playable_draw",
        "jump_in_skip",
        "jump_in_out_of_turn",
        preset="street",
        max_turns=500,
    ),
    house(
        "preset-street-2p",
        HOUSE,
        48,
        "stack_2_on_2",
        "jump_in",
        preset="street",
        num_players=2,
        max_turns=500,
    ),
    house(
        "preset-seven_zero-4p",
        HOUSE,
        64,
        "rotate_hands",
        "swap",
        preset="seven_zero",
    ),
    house(
        "preset-rlcard",
        UNIFORM,
        192,
        "rlcard_autoplay_w",
        "rlcard_autoplay_wd4",
        "rlcard_autoplay_colour",
        "rlcard_keep",
        "starter_draw_two_no_skip",
        preset="rlcard",
    ),
    # ---- every switch alone (with the switches it needs)
    house("stack_draw_two", HOUSE, 64, *STACK_EVENTS, "stack_2_on_2", stack_draw_two=True),
    house(
        "stack_draw_four",
        HOUSE,
        64,
        *STACK_EVENTS,
        "stack_4_on_4",
        "stack_challenge_guilty",
        "stack_challenge_innocent",
        stack_draw_four=True,
    ),
    house(
        "stack_draw_two_on_four",
        HOUSE,
        64,
        *STACK_EVENTS,
        "stack_2_on_4",
        "stack_challenge_guilty",
        stack_draw_two_on_four=True,
    ),
    house(
        "stack_draw_four_on_two",
        HOUSE,
        64,
        *STACK_EVENTS,
        "stack_4_on_2",
        "challenge_innocent",
        stack_draw_four_on_two=True,
    ),
    house(
        "stack_cumulative-all-3p",
        HOUSE,
        64,
        "stack_2_on_2",
        "stack_4_on_4",
        "stack_2_on_4",
        "stack_4_on_2",
        "stack_taken_big",
        num_players=3,
        stack_draw_two=True,
        stack_draw_four=True,
        stack_draw_two_on_four=True,
        stack_draw_four_on_two=True,
        stack_cumulative=True,
    ),
    house(
        "stack-with-the-last-card-2p-hand3",
        HOUSE,
        96,
        "stack_final",
        "final_deflect",
        num_players=2,
        hand_size=3,
        stack_draw_two=True,
        stack_draw_four=True,
        reverse_deflects=True,
    ),
    house("reverse_deflects-3p", HOUSE, 64, "deflect", num_players=3, reverse_deflects=True),
    house("reverse_deflects-2p", HOUSE, 64, "deflect_2p", num_players=2, reverse_deflects=True),
    house(
        "jump_in-4p",
        HOUSE,
        64,
        *JUMP_EVENTS,
        "jump_in_skip",
        "jump_in_wild",
        "jump_in_out_of_turn",
        "jump_in_window_moves",
        jump_in=True,
    ),
    house(
        "jump_in-6p-uniform",
        HOUSE_UNIFORM,
        24,
        *JUMP_EVENTS,
        num_players=6,
        jump_in=True,
        max_turns=300,
    ),
    house(
        "jump_in-seven_zero-4p",
        HOUSE,
        64,
        *JUMP_EVENTS,
        "swap",
        "rotate_hands",
        jump_in=True,
        seven_zero=True,
        max_turns=500,
    ),
    house("seven_zero-3p", HOUSE, 64, "rotate_hands", "swap", num_players=3, seven_zero=True),
    house("colours_in_circle", HOUSE, 64, "won", colours_in_circle=True),
    house(
        "play_to_last-4p",
        HOUSE,
        48,
        "play_to_last_continues",
        "play_to_last_complete",
        play_to_last=True,
    ),
    house(
        "play_to_last-3p-uniform",
        HOUSE_UNIFORM,
        32,
        "play_to_last_complete",
        num_players=3,
        play_to_last=True,
        max_turns=600,
    ),
    house("teams", HOUSE, 64, "team_win", teams=True),
    house("seat_draw_streams", HOUSE, 48, "seat_stream_draw", "reshuffle", seat_draw_streams=True),
    house(
        "seat_draw_streams-street-3p",
        HOUSE,
        24,
        "seat_stream_draw",
        preset="street",
        num_players=3,
        seat_draw_streams=True,
        max_turns=400,
    ),
    house(
        "zero_scores_fifty-penalty-points-8p",
        HOUSE,
        64,
        "zero_scores_fifty",
        num_players=8,
        hand_size=3,
        scoring="penalty_points",
        zero_scores_fifty=True,
    ),
    house(
        "zero_scores_fifty", HOUSE, 64, "won", num_players=6, hand_size=3, zero_scores_fifty=True
    ),
    house("voluntary_draw-off", HOUSE, 64, "drew_playable", voluntary_draw=False),
    house("wd4_last_resort", HOUSE, 64, "won", wd4_challenge=False, wd4_last_resort=True),
    house(
        "after_draw-rlcard-4p",
        MOSTLY_DRAW,
        32,
        "rlcard_autoplay_w",
        "rlcard_autoplay_colour",
        "rlcard_keep",
        after_draw="rlcard",
        max_turns=250,
    ),
    house(
        "reshuffle_top-10p",
        MOSTLY_DRAW,
        24,
        "reshuffle_top",
        "both_piles_empty",
        num_players=10,
        hand_size=9,
        reshuffle_top=True,
        max_turns=400,
    ),
    house(
        "starter_draw_two_skips-off",
        HOUSE,
        64,
        "starter_draw_two_no_skip",
        starter_draw_two_skips=False,
    ),
    house(
        "starter_wild_colour-random",
        HOUSE,
        64,
        "starter_wild_random",
        starter_wild_colour="random",
    ),
    house(
        "until_playable-cap3",
        HOUSE,
        48,
        "until_playable_draw",
        "draw_cap_reached",
        draw_rule="until_playable",
        draw_cap=3,
        max_turns=400,
    ),
    house(
        "penalty_points-match",
        HOUSE,
        32,
        "penalty_points_scored",
        "match_over",
        num_players=3,
        scoring="penalty_points",
        target_score=60,
        match_hands=6,
    ),
]


@pytest.mark.parametrize("case", HOUSE_CASES, ids=[c.label for c in HOUSE_CASES])
def test_engines_agree_under_house_rules(case: Case) -> None:
    run_case(case, 500_000 + 1000 * HOUSE_CASES.index(case))


SWITCHES = {
    "stack_draw_two": True,
    "stack_draw_four": True,
    "stack_draw_two_on_four": True,
    "stack_draw_four_on_two": True,
    "stack_cumulative": True,
    "jump_in": True,
    "seven_zero": True,
    "reverse_deflects": True,
    "colours_in_circle": True,
    "play_to_last": True,
    "teams": True,
    "zero_scores_fifty": True,
    "voluntary_draw": False,
    "wd4_last_resort": True,
    "after_draw": "rlcard",
    "reshuffle_top": True,
    "starter_draw_two_skips": False,
    "starter_wild_colour": "random",
    "draw_rule": "until_playable",
    "scoring": "penalty_points",
    "seat_draw_streams": True,
}
"""Every house rule and RLCard switch, with its non-official value."""


@pytest.mark.parametrize("name", list(SWITCHES))
def test_every_switch_has_cases(name: str) -> None:
    """Each switch is played by some case without any other house rule (but the ones it
    needs)."""
    official = Rules()
    needs = {
        "stack_cumulative",
        "stack_draw_two",
        "stack_draw_four",
        "stack_draw_two_on_four",
        "stack_draw_four_on_two",
        "wd4_challenge",
        "scoring",
        "zero_scores_fifty",
    }
    alone = [
        c
        for c in HOUSE_CASES
        if getattr(c.rules, name) == SWITCHES[name]
        and all(
            getattr(c.rules, other) == getattr(official, other)
            for other in SWITCHES
            if other != name and other not in needs
        )
    ]
    assert alone, f"no case plays {name}={SWITCHES[name]!r} alone"


@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_preset_has_a_case(preset: str) -> None:
    """A case plays the preset, changing at most the table size and ``max_turns``."""
    loose = {"num_players": 0, "max_turns": 0}
    want = PRESETS[preset].to_dict() | loose
    assert any(c.rules.to_dict() | loose == want for c in HOUSE_CASES)


BOOLEAN_SWITCHES = (
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
    "seat_draw_streams",
    "uno_call",
    "wd4_challenge",
)
OTHER_SWITCHES: dict[str, tuple[object, ...]] = {
    "num_players": (2, 3, 4, 5),
    "voluntary_draw": (True, False),
    "after_draw": ("choose", "rlcard"),
    "draw_rule": ("one", "until_playable"),
    "draw_cap": (2, 10),
    "scoring": ("winner_takes", "penalty_points"),
    "starter_draw_two_skips": (True, False),
    "starter_wild_colour": ("choose", "random"),
}


def random_combinations(count: int, seed: int) -> list[Rules]:
    """``count`` valid rule sets with random switches (combinations Rules rejects are
    skipped)."""
    rng = np.random.default_rng(seed)
    found: list[Rules] = []
    while len(found) < count:
        fields: dict[str, object] = {name: bool(rng.random() < 0.4) for name in BOOLEAN_SWITCHES}
        fields["uno_call"] = bool(rng.random() < 0.7)
        fields["wd4_challenge"] = not fields["wd4_last_resort"] and rng.random() < 0.6
        for name, values in OTHER_SWITCHES.items():
            fields[name] = values[int(rng.integers(len(values)))]
        if fields["teams"]:
            fields["num_players"] = 4
        fields["max_turns"] = 300
        try:
            found.append(Rules(**fields))
        except ConfigError:
            continue
    return found


COMBINATIONS = random_combinations(8, seed=2024)


@pytest.mark.parametrize("index", range(len(COMBINATIONS)))
def test_engines_agree_under_random_combinations(index: int) -> None:
    rules = COMBINATIONS[index]
    on = [k for k, v in rules.to_dict().items() if v != getattr(Rules(), k)]
    case = Case(f"combination {index}: {on}", rules, HOUSE, 32, expect=("hands",))
    run_case(case, 900_000 + 1000 * index)


# ---------------------------------------------------------------------------------------------
# Every starter card, with stacked decks
# ---------------------------------------------------------------------------------------------


def _deck_with_starter(key: int, num_players: int, hand_size: int, face: int) -> list[int]:
    """A shuffled deck whose first turned card is ``face``."""
    perm = np.random.default_rng(key).permutation(DECK_SIZE)
    deck = [int(f) for f in CANONICAL_DECK[perm]]
    pos = num_players * hand_size
    j = deck.index(face, pos) if face in deck[pos:] else deck.index(face)
    deck[pos], deck[j] = deck[j], deck[pos]
    return deck


STARTER_RULES = {
    "2p": Rules(num_players=2, max_turns=60),
    "3p": Rules(num_players=3, max_turns=60),
    "4p": Rules(num_players=4, max_turns=60),
    "rlcard": PRESETS["rlcard"].replace(max_turns=60),
    "3p-street-seven_zero": PRESETS["street"].replace(
        num_players=3, seven_zero=True, reverse_deflects=True, max_turns=60
    ),
}
"""Rules for the every-starter test: the RLCard starter switches, and house rules whose
windows and effects the starter must not trigger (no jump-in window, no 0 or 7 effect)."""


@pytest.mark.parametrize("label", list(STARTER_RULES))
def test_every_starter_card(label: str) -> None:
    rules = STARTER_RULES[label]
    num_players = rules.num_players
    faces = list(range(NUM_FACES)) * 2
    keys = np.random.SeedSequence(77 + num_players).generate_state(len(faces), dtype=np.uint64)
    dealers = np.arange(len(faces)) % num_players
    decks = [
        _deck_with_starter(int(k), num_players, 7, f) for k, f in zip(keys, faces, strict=True)
    ]
    state = core.init(rules, len(faces), keys=keys, dealer=dealers, decks=np.array(decks))
    games = [
        RefGame(rules, int(k), dealer=int(d), deck=deck)
        for k, d, deck in zip(keys, dealers, decks, strict=True)
    ]
    mirror = Mirror(rules, games, f"starter {label}")
    assert all(g.phase != PHASE_JUMP_IN for g in games)
    play_hand(rules, state, mirror, HOUSE, np.random.default_rng(num_players))


# ---------------------------------------------------------------------------------------------
# Scripted games on stacked decks (one per subtle rule of docs/engine.md)
# ---------------------------------------------------------------------------------------------


def stacked_deck(top_cards: list[str]) -> list[int]:
    """A deck that starts with ``top_cards`` (names), the rest in canonical order."""
    front = parse_cards(top_cards)
    rest = [int(f) for f in CANONICAL_DECK]
    for face in front:
        rest.remove(face)
    return front + rest


def play_script(rules: Rules, top_cards: list[str], script: list[str], label: str) -> RefGame:
    """Deal ``top_cards`` with dealer 0 and play ``script`` in both engines, comparing."""
    deck = stacked_deck(top_cards)
    state = core.init(rules, 1, keys=np.array([7], dtype=np.uint64), dealer=0, decks=deck)
    mirror = Mirror(rules, [RefGame(rules, 7, dealer=0, deck=deck)], label)
    compare(state, mirror, "after the deal")
    for n, name in enumerate(script, 1):
        action = parse_action(name)
        mirror.games[0].step(action)
        mirror.refresh(0)
        state = core.step(rules, state, np.array([action]))
        compare(state, mirror, f"after scripted action {n} ({name})")
    return mirror.games[0]


def test_a_new_turn_of_the_same_seat_starts_clean() -> None:
    """docs: whenever the turn passes, even to the same seat (two-player Skip), ``declared``
    is reset.

    Seat 1 holds RS R5 on R3: it declares, plays RS and plays again with ``declared`` false; it
    draws R7 (two cards again, so it may declare again) and plays it without declaring: exposed.
    """
    rules = Rules(num_players=2, hand_size=2)
    deck = ["RS", "Y1", "R5", "Y2", "R3", "R7"]
    game = play_script(rules, deck, ["uno", "RS", "draw", "R7"], "2p")
    assert game.uno_exposed == 1 and game.current == 0


def test_a_final_reverse_does_not_turn_the_direction() -> None:
    """docs: the hand ends before a last card's effect (only +2/W+4 still make a seat draw)."""
    rules = Rules(num_players=3, hand_size=1)
    game = play_script(rules, ["RR", "Y1", "Y2", "R3"], ["RR"], "3p")
    assert game.done and game.direction == 1


def test_final_draw_two_and_wild_draw_four_still_make_the_next_seat_draw() -> None:
    rules = Rules(num_players=3, hand_size=1)
    game = play_script(rules, ["R+2", "Y1", "Y2", "R3"], ["R+2"], "final +2")
    assert game.winner == 1 and sum(game.hands[2]) == 3
    game = play_script(rules, ["W+4", "Y1", "Y2", "R3"], ["W+4:G"], "final W+4")
    assert game.winner == 1 and sum(game.hands[2]) == 5


# ---------------------------------------------------------------------------------------------
# The reference engine on its own
# ---------------------------------------------------------------------------------------------


def test_reference_refuses_illegal_actions() -> None:
    game = RefGame(Rules(num_players=3), key=5)
    before = game.snapshot()
    illegal = next(a for a in range(NUM_ACTIONS) if a not in game.legal_actions())
    with pytest.raises(ValueError, match="illegal action"):
        game.step(illegal)
    assert game.snapshot() == before
