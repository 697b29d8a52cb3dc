"""The table-driven scenario harness shared by the rule tests (official and house rules).

A scenario is a stacked deck (built from the hands each seat must get), a rules mapping, and
a script: action names to play, interleaved with checkpoints (mappings of expectations).
After every step the harness checks that the 108 cards are all accounted for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from uno_env import UnoGame
from uno_env import cards as C
from uno_env.core import event_names

Script = Sequence[str | Mapping[str, Any]]


def stack(
    hands: Sequence[Sequence[str]], starter: str, pile: Sequence[str] = (), dealer: int = 0
) -> list[str]:
    """Deck (top first) that deals ``hands[seat]`` to each seat, then turns ``starter``.

    Dealing is one card at a time from the dealer's left: deck position ``i`` goes to seat
    ``(dealer + 1 + i) % N`` (docs/engine.md), so card ``k`` of ``seat`` sits at position
    ``k * N + (seat - dealer - 1) % N``.
    """
    n = len(hands)
    size = len(hands[0])
    assert all(len(h) == size for h in hands), "every seat must get the same number of cards"
    deck: list[str] = [""] * (n * size)
    for seat, cards in enumerate(hands):
        for k, card in enumerate(cards):
            deck[k * n + (seat - dealer - 1) % n] = card
    return [*deck, starter, *pile]


@dataclass(frozen=True)
class Scenario:
    """One table-driven scenario: rules, dealer, stacked deck and a checked script."""

    name: str
    deck: tuple[str, ...]
    script: tuple[str | Mapping[str, Any], ...]
    rules: Mapping[str, Any] = field(default_factory=dict)
    dealer: int = 0
    seed: int = 0


def scen(
    name: str,
    hands: Sequence[Sequence[str]],
    starter: str,
    script: Script,
    *,
    pile: Sequence[str] = (),
    dealer: int = 0,
    seed: int = 0,
    **rules: Any,
) -> Scenario:
    """A scenario whose deck deals ``hands`` (seat by seat) and turns ``starter``."""
    return Scenario(
        name=name,
        deck=tuple(stack(hands, starter, pile, dealer)),
        script=tuple(script),
        rules={"num_players": len(hands), "hand_size": len(hands[0]), **rules},
        dealer=dealer,
        seed=seed,
    )


def raw_scen(
    name: str, deck: Sequence[str], script: Script, *, dealer: int = 0, **rules: Any
) -> Scenario:
    """A scenario given by the raw stacked deck, top first."""
    return Scenario(name=name, deck=tuple(deck), script=tuple(script), rules=rules, dealer=dealer)


def by_face(cards: Sequence[str]) -> list[str]:
    """Cards sorted by face id, the order of ``UnoGame.hand``."""
    return sorted(cards, key=C.parse_card)


def points(cards: Sequence[str]) -> int:
    """Points of the cards (numbers face value, actions 20, wilds 50)."""
    return sum(int(C.FACE_POINTS[C.parse_card(c)]) for c in cards)


def assert_conserved(game: UnoGame) -> None:
    """Hands + draw pile + discard pile hold exactly the 108-card deck; top is the last discard."""
    st = game.state
    in_hands = st.hands[0].sum(axis=0).astype(np.int64)
    pile = np.bincount(st.deck[0, int(st.draw_pos[0]) :].astype(np.int64), minlength=C.NUM_FACES)
    disc = st.discard[0, : int(st.discard_len[0])].astype(np.int64)
    discard = np.bincount(disc, minlength=C.NUM_FACES)
    assert (in_hands + pile + discard).tolist() == C.FACE_COUNTS.tolist()
    assert sum(game.hand_sizes) + game.draw_pile_size + len(game.discard_pile) == C.DECK_SIZE
    assert game.hand_sizes == [len(game.hand(s)) for s in range(game.num_players)]
    assert st.hand_size[0].tolist() == game.hand_sizes
    if game.discard_pile:  # (reshuffle_top may leave it empty)
        assert game.discard_pile[-1] == game.top_card


def _effect(game: UnoGame) -> tuple[str | None, int | None]:
    face, seat = int(game.state.effect_face[0]), int(game.state.effect_seat[0])
    return (None if face < 0 else C.FACE_NAMES[face], None if seat < 0 else seat)


def check(game: UnoGame, expect: Mapping[str, Any], where: str) -> None:
    """Assert every expectation of a checkpoint."""
    st = game.state
    simple = {
        "current": lambda: game.current_seat,
        "top": lambda: game.top_card,
        "colour": lambda: game.current_colour,
        "direction": lambda: game.direction,
        "phase": lambda: game.phase,
        "sizes": lambda: game.hand_sizes,
        "exposed": lambda: game.uno_exposed,
        "drawn": lambda: game.drawn_card,
        "discard": lambda: game.discard_pile,
        "done": lambda: game.done,
        "truncated": lambda: game.truncated,
        "winner": lambda: game.winner,
        "hand_scores": lambda: game.hand_scores,
        "match_scores": lambda: game.match_scores,
        "match_over": lambda: game.match_over,
        "shuffles": lambda: int(st.shuffles[0]),
        "dealer": lambda: game.dealer,
        "pending": lambda: int(st.pending[0]),
        "penalty_kind": lambda: int(st.penalty_kind[0]),
        "effect": lambda: _effect(game),
        "finish_rank": lambda: st.finish_rank[0].tolist(),
        "wd4_seat": lambda: int(st.wd4_seat[0]),
        "declared": lambda: bool(st.declared[0]),
        "skipped": lambda: None if st.step_skipped[0] < 0 else int(st.step_skipped[0]),
        "step_drawn": lambda: st.step_drawn[0].tolist(),
        "events": lambda: set(event_names(int(st.step_events[0]))),
    }
    legal = game.legal_actions()
    for key, want in expect.items():
        if key in simple:
            got = simple[key]()
            if isinstance(got, list) and isinstance(want, tuple):
                want = list(want)
            assert got == want, f"{where}: {key} is {got!r}, expected {want!r}"
        elif key == "legal":
            assert sorted(legal) == sorted(want), f"{where}: legal {legal}, expected {want}"
        elif key == "legal_has":
            missing = [a for a in want if a not in legal]
            assert not missing, f"{where}: {missing} not legal; legal {legal}"
        elif key == "legal_lacks":
            present = [a for a in want if a in legal]
            assert not present, f"{where}: {present} legal; legal {legal}"
        elif key == "hands":
            for seat, cards in want.items():
                got = game.hand(seat)
                assert got == by_face(cards), f"{where}: seat {seat} holds {got}, expected {cards}"
        elif key == "draw_top":
            got = game.draw_pile[: len(want)]
            assert got == list(want), f"{where}: draw pile starts {got}, expected {want}"
        else:
            raise AssertionError(f"unknown expectation key {key!r}")


def run(sc: Scenario) -> UnoGame:
    """Deal a scenario and play its script, checking the cards after every step."""
    game = UnoGame(seed=sc.seed, dealer=sc.dealer, deck=list(sc.deck), **sc.rules)
    assert_conserved(game)
    played: list[str] = []
    for item in sc.script:
        if isinstance(item, str):
            game.step(item)
            played.append(item)
            assert_conserved(game)
        else:
            check(game, item, f"{sc.name} after {played or 'the deal'}")
    return game
