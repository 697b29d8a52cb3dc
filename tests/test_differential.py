"""Differential tests: the batched core against the scalar reference engine, move by move.

Both engines play the same games from the same keys (``B`` games at once in the core, one
:class:`RefGame` per game). After every step the legal-action mask and every state field of
``docs/engine.md`` must agree. Actions are drawn from seeded policies: uniform play, and biased
policies that reach rare branches (never declaring UNO, always catching, always challenging,
always drawing until both piles are empty).

Fields compared only where they are meaningful:

* ``deck``: the draw pile ``deck[draw_pos:]`` (cards already drawn are history);
* ``discard``: the pile ``discard[:discard_len]``;
* ``wd4_illegal``: in the CHALLENGE phase (it describes the Wild Draw Four being decided).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pytest

from uno_env import core
from uno_env.cards import (
    ACCEPT,
    CANONICAL_DECK,
    CATCH,
    CHALLENGE,
    DECK_SIZE,
    DRAW,
    KEEP,
    NUM_ACTIONS,
    NUM_FACES,
    UNO,
    action_names,
    parse_action,
    parse_cards,
)
from uno_env.rules import Rules

try:  # `python -m pytest` puts the repository root on sys.path, plain `pytest` puts tests/
    from tests.reference_engine import PHASE_CHALLENGE, PHASE_OVER, RefGame
except ImportError:  # pragma: no cover
    from reference_engine import PHASE_CHALLENGE, PHASE_OVER, RefGame  # type: ignore[no-redef]

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
)
VECTOR_FIELDS = ("hand_points", "scores")


# ---------------------------------------------------------------------------------------------
# Policies
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Policy:
    """Random play with preferences.

    For each ``(action, probability)`` in ``prefer`` (in order), a legal preferred action is
    chosen with that probability. Otherwise the action is uniform among the legal actions that
    have no preference (or among all legal actions if only preferred ones are legal). A
    preference of 0 therefore means "never, unless it is the only choice".
    """

    name: str
    prefer: tuple[tuple[int, float], ...] = ()

    def choose(self, rng: np.random.Generator, legal: list[int]) -> int:
        for action, prob in self.prefer:
            if action in legal and prob > 0 and rng.random() < prob:
                return action
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
        self.arrays = {name: np.zeros(b, dtype=np.int64) for name in SCALAR_FIELDS}
        self.arrays["key"] = np.zeros(b, dtype=np.uint64)
        self.arrays["hand_points"] = np.zeros((b, n), dtype=np.int64)
        self.arrays["scores"] = np.zeros((b, n), dtype=np.int64)
        self.arrays["hands"] = np.zeros((b, n, NUM_FACES), dtype=np.int64)
        self.arrays["deck"] = np.zeros((b, DECK_SIZE), dtype=np.int64)
        self.arrays["discard"] = np.zeros((b, DECK_SIZE), dtype=np.int64)
        self.arrays["mask"] = np.zeros((b, NUM_ACTIONS), dtype=bool)
        self.legal = [[] for _ in range(b)]
        self._deck_shuffles = [-1] * b  # the deck only changes when it is shuffled
        for i in range(b):
            self.refresh(i)

    def refresh(self, i: int) -> None:
        """Copy game ``i``'s state into the arrays."""
        g, a = self.games[i], self.arrays
        for name in SCALAR_FIELDS:
            a[name][i] = getattr(g, name)
        a["hand_points"][i] = g.hand_points
        a["scores"][i] = g.scores
        a["hands"][i] = g.hands
        if self._deck_shuffles[i] != g.shuffles:
            a["deck"][i] = g.deck
            self._deck_shuffles[i] = g.shuffles
        a["discard"][i, : len(g.discard)] = g.discard
        self.legal[i] = g.legal_actions()
        a["mask"][i] = False
        a["mask"][i, self.legal[i]] = True


def _describe(game: RefGame) -> str:
    return (
        f"key={game.key} dealer={game.dealer} hand_no={game.hand_no}; "
        f"{len(game.history)} actions: {action_names(game.history)}"
    )


def compare(state: core.UnoState, mirror: Mirror, where: str) -> None:
    """Assert that the core state (and mask) equals the reference games, field by field."""
    a = mirror.arrays
    b = len(mirror.games)
    bad: dict[str, np.ndarray] = {}
    for name in SCALAR_FIELDS:
        core_val = getattr(state, name).astype(a[name].dtype)
        diff = core_val != a[name]
        if name == "wd4_illegal":
            diff &= a["phase"] == PHASE_CHALLENGE
        bad[name] = diff
    for name in (*VECTOR_FIELDS, "hands"):
        diff = getattr(state, name).astype(np.int64) != a[name]
        bad[name] = diff.reshape(b, -1).any(axis=1)
    cols = np.arange(DECK_SIZE)[None, :]
    live_pile = cols >= a["draw_pos"][:, None]
    bad["deck"] = ((state.deck.astype(np.int64) != a["deck"]) & live_pile).any(axis=1)
    in_discard = cols < a["discard_len"][:, None]
    bad["discard"] = ((state.discard.astype(np.int64) != a["discard"]) & in_discard).any(axis=1)
    bad["mask"] = (core.legal_action_mask(mirror.rules, state) != a["mask"]).any(axis=1)
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
            ref_val = action_names(np.flatnonzero(a["mask"][i]))
        elif name == "card_total":
            core_val, ref_val = int(core.card_totals(state)[i]), DECK_SIZE
        elif name == "hand_size":
            core_val, ref_val = state.hand_size[i].tolist(), a["hands"][i].sum(axis=1).tolist()
        elif name == "deck":
            lo = int(a["draw_pos"][i])
            core_val, ref_val = state.deck[i, lo:].tolist(), a["deck"][i, lo:].tolist()
        elif name == "discard":
            hi = int(a["discard_len"][i])
            core_val, ref_val = state.discard[i, :hi].tolist(), a["discard"][i, :hi].tolist()
        else:
            core_val, ref_val = getattr(state, name)[i].tolist(), a[name][i].tolist()
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
            action = policy.choose(rng, mirror.legal[i])
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
    Case("2p", Rules(num_players=2), PLAYER, 192, expect=("two_player_reverse", "exposed")),
    Case("2p-uniform", Rules(num_players=2, max_turns=300), UNIFORM, 64),
    Case("3p", Rules(num_players=3), PLAYER, 192, expect=("catch", "challenge_guilty")),
    Case("4p", Rules(num_players=4), PLAYER, 192, expect=("final_draw_two", "final_reverse")),
    Case("4p-uniform", Rules(num_players=4, max_turns=300), UNIFORM, 64),
    Case("7p", Rules(num_players=7), PLAYER, 192, expect=("reshuffle", "starter_redraw")),
    Case(
        "4p-never-uno",
        Rules(num_players=4, max_turns=300),
        NEVER_UNO,
        128,
        expect=("catch", "exposed", "truncated"),
    ),
    Case("2p-never-uno", Rules(num_players=2, max_turns=400), NEVER_UNO, 64, expect=("catch",)),
    Case(
        "3p-always-challenge",
        Rules(num_players=3),
        ALWAYS_CHALLENGE,
        128,
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


@pytest.mark.parametrize("case", CASES, ids=[c.label for c in CASES])
def test_engines_agree_under_random_play(case: Case) -> None:
    events: Counter[str] = Counter()
    for k in range(0, case.games, 64):
        seed = 1000 * CASES.index(case) + k
        batch = min(64, case.games - k)
        events += run_batch(case.rules, case.policy, seed, batch, case.label, case.hands)
    assert events["hands"] >= case.games
    missing = [e for e in case.expect if events[e] == 0]
    assert not missing, f"{case.label}: never reached {missing}; events: {dict(events)}"


def test_cover_at_least_2000_games() -> None:
    assert sum(c.games for c in CASES) >= 2000
    assert {2, 3, 4, 7} <= {c.rules.num_players for c in CASES}


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


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_every_starter_card(num_players: int) -> None:
    rules = Rules(num_players=num_players, max_turns=60)
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
    mirror = Mirror(rules, games, f"starter {num_players}p")
    play_hand(rules, state, mirror, PLAYER, np.random.default_rng(num_players))


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
