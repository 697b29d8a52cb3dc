"""A scalar reference implementation of the uno-lab rules, for differential testing.

This engine plays ONE game at a time with plain Python lists and is written to be read next to
``docs/engine.md``: every method implements one paragraph of that contract. It shares nothing
with the batched core (``uno_env/core.py``) except the card constants (``uno_env.cards``) and
the counter-based random streams (``uno_env.rng``), so when the two engines agree move by move
it is evidence that both implement the documented rules.

Conventions that must match the core exactly:

* The deal of hand ``h`` shuffles ``CANONICAL_DECK`` with
  ``perm = keyed_permutation(key, h * 2**20, 108)``: ``deck[i] = CANONICAL_DECK[perm[i]]``,
  top first.
* Every later shuffle in the hand uses stream ``h * 2**20 + shuffles + 1`` and then increments
  ``shuffles``. A shuffle of a list ``old`` of length ``n`` with permutation ``perm`` always
  produces ``new[i] = old[perm[i]]``.
* Refilling the empty draw pile: ``old`` is the discard pile without its top card, bottom
  first; ``new`` becomes the draw pile ``deck[108 - n:]``, top first; the discard pile keeps only
  its top card.
* Re-drawing a Wild Draw Four starter (or any wild with ``starter_redraw_wilds``): the starter
  goes back on top of the draw pile and ``old`` is the whole draw pile ``deck[draw_pos:]``, top
  first; ``new`` replaces it in place.

Where docs/engine.md says nothing, this engine makes the same choice as the batched core and
says so where it happens: a finished hand clears ``declared``; a truncated hand clears
``uno_exposed``; ``wd4_illegal`` is cleared when the Wild Draw Four is resolved (it is only
meaningful in the CHALLENGE phase, and the differential test compares it only there).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from uno_env.cards import (
    ACCEPT,
    CANONICAL_DECK,
    CATCH,
    CHALLENGE,
    DECK_SIZE,
    DRAW,
    DRAW_TWO,
    FACE_POINTS,
    KEEP,
    NAME_COLOUR,
    NO_COLOUR,
    NUM_ACTIONS,
    NUM_COLOURED_FACES,
    NUM_COLOURS,
    NUM_FACES,
    NUM_RANKS,
    PLAY_WILD,
    PLAY_WILD_DRAW_FOUR,
    REVERSE,
    SKIP,
    UNO,
    WILD,
    WILD_DRAW_FOUR,
    action_name,
)
from uno_env.rng import keyed_permutation, keyed_randint

# Phases (docs/engine.md, "State").
PHASE_PLAY = 0
PHASE_AFTER_DRAW = 1
PHASE_CHALLENGE = 2
PHASE_CHOOSE_COLOUR = 3
PHASE_OVER = 4

HAND_STREAM_STRIDE = 2**20
"""Stream of the deal of hand ``h`` is ``h * HAND_STREAM_STRIDE``."""
DEALER_STREAM = 2**40 - 1
"""Stream that picks the first dealer when none is given."""


def face_colour(face: int) -> int:
    """Colour 0-3 of a coloured face, ``NO_COLOUR`` for wilds."""
    return face // NUM_RANKS if face < NUM_COLOURED_FACES else NO_COLOUR


def face_rank(face: int) -> int | None:
    """Rank 0-12 of a coloured face, None for wilds."""
    return face % NUM_RANKS if face < NUM_COLOURED_FACES else None


def play_actions_for_face(face: int) -> list[int]:
    """The action ids that play ``face``: one id for a coloured face, four for a wild."""
    if face == WILD:
        return [PLAY_WILD + c for c in range(NUM_COLOURS)]
    if face == WILD_DRAW_FOUR:
        return [PLAY_WILD_DRAW_FOUR + c for c in range(NUM_COLOURS)]
    return [face]


def decode_play(action: int) -> tuple[int, int]:
    """Split a play action (0..59) into ``(face, colour made current)``."""
    if action < NUM_COLOURED_FACES:
        return action, face_colour(action)
    if action < PLAY_WILD_DRAW_FOUR:
        return WILD, action - PLAY_WILD
    return WILD_DRAW_FOUR, action - PLAY_WILD_DRAW_FOUR


class RefGame:
    """One hand of UNO (and the match scores around it), following docs/engine.md literally.

    Args:
        rules: Any object with the attributes ``num_players``, ``hand_size``, ``draw_rule``,
            ``draw_cap``, ``wd4_challenge``, ``wd4_anytime``, ``uno_call``, ``uno_penalty``,
            ``two_player_rules`` (bool, or None for "on iff two players"), ``scoring``,
            ``target_score``, ``max_turns`` and ``starter_redraw_wilds``.
        key: The game's 64-bit random key.
        dealer: Dealer seat; None draws it from the key (first hand of a match).
        deck: 108 face ids, top first, to deal from instead of shuffling.
        hand_no: Hand number within the match (selects the random streams).
        scores: Match totals carried into this hand (zeros when None).
    """

    def __init__(
        self,
        rules: Any,
        key: int,
        dealer: int | None = None,
        deck: list[int] | None = None,
        hand_no: int = 0,
        scores: list[int] | None = None,
    ) -> None:
        if rules.draw_rule != "one":
            raise NotImplementedError(f"reference engine: draw_rule {rules.draw_rule!r}")
        if rules.scoring != "winner_takes":
            raise NotImplementedError(f"reference engine: scoring {rules.scoring!r}")
        self.rules = rules
        self.num_players: int = int(rules.num_players)
        self.key = int(key)
        self.hand_no = int(hand_no)
        if dealer is None:
            keys = np.array([self.key], dtype=np.uint64)
            dealer = int(keyed_randint(keys, DEALER_STREAM, self.num_players)[0])
        self.dealer = int(dealer) % self.num_players
        if deck is None:
            deck = self._shuffled_deck()
        if len(deck) != DECK_SIZE:
            raise ValueError(f"a deck has {DECK_SIZE} cards, got {len(deck)}")
        self.deck: list[int] = [int(f) for f in deck]
        self.draw_pos = 0
        self.discard: list[int] = []
        self.hands: list[list[int]] = [[0] * NUM_FACES for _ in range(self.num_players)]
        self.top = -1
        self.colour = NO_COLOUR
        self.direction = 1
        self.current = 0
        self.phase = PHASE_PLAY
        self.drawn = -1
        self.pending = 0
        self.wd4_seat = -1
        self.wd4_illegal = False
        self.declared = False
        self.uno_exposed = -1
        self.shuffles = 0
        self.turn = 0
        self.done = False
        self.truncated = False
        self.winner = -1
        self.hand_points = [0] * self.num_players
        self.scores: list[int] = (
            [0] * self.num_players if scores is None else [int(s) for s in scores]
        )
        self.match_over = self._someone_reached_target()
        self.history: list[int] = []
        self.events: Counter[str] = Counter()
        """How often each notable rule branch was taken (lets tests check their coverage)."""
        self._deal()
        self._turn_starter()
        self._apply_starter()

    # ------------------------------------------------------------------ rules helpers

    @property
    def two_player_rules(self) -> bool:
        """Whether the two-player rules apply (the option only matters with two players)."""
        option = self.rules.two_player_rules
        enabled = self.num_players == 2 if option is None else bool(option)
        return enabled and self.num_players == 2

    @property
    def challenge_enabled(self) -> bool:
        """Whether a Wild Draw Four opens a CHALLENGE phase."""
        return bool(self.rules.wd4_challenge) and not bool(self.rules.wd4_anytime)

    def _someone_reached_target(self) -> bool:
        return any(s >= self.rules.target_score for s in self.scores)

    def seat(self, offset: int, base: int | None = None) -> int:
        """The seat ``offset`` places from ``base`` (default: the current seat), modulo N."""
        return ((self.current if base is None else base) + offset) % self.num_players

    # ------------------------------------------------------------------ randomness

    def _permutation(self, stream: int, n: int) -> list[int]:
        keys = np.array([self.key], dtype=np.uint64)
        return [int(p) for p in keyed_permutation(keys, stream, n)[0]]

    def _shuffled_deck(self) -> list[int]:
        perm = self._permutation(self.hand_no * HAND_STREAM_STRIDE, DECK_SIZE)
        return [int(CANONICAL_DECK[p]) for p in perm]

    def _next_shuffle_permutation(self, n: int) -> list[int]:
        """Permutation for the next reshuffle of this hand; counts the shuffle."""
        stream = self.hand_no * HAND_STREAM_STRIDE + self.shuffles + 1
        self.shuffles += 1
        return self._permutation(stream, n)

    # ------------------------------------------------------------------ set-up

    def _deal(self) -> None:
        """Deal one card at a time from the top, starting at the dealer's left."""
        n_dealt = self.num_players * self.rules.hand_size
        for i in range(n_dealt):
            seat = (self.dealer + 1 + i) % self.num_players
            self.hands[seat][self.deck[i]] += 1
        self.draw_pos = n_dealt

    def _starter_needs_redraw(self, face: int) -> bool:
        if face == WILD_DRAW_FOUR:
            return True
        return face == WILD and bool(self.rules.starter_redraw_wilds)

    def _turn_starter(self) -> None:
        """Turn the starter; a W+4 (or wild, with the option) goes back and the pile is shuffled.

        The returned card is put back on top of the draw pile (``draw_pos -= 1``) and the whole
        pile ``old = deck[draw_pos:]`` is replaced by ``new[i] = old[perm[i]]``.
        """
        while True:
            face = self.deck[self.draw_pos]
            self.draw_pos += 1
            if not self._starter_needs_redraw(face):
                break
            self.draw_pos -= 1
            self.events["starter_redraw"] += 1
            pile = self.deck[self.draw_pos :]
            perm = self._next_shuffle_permutation(len(pile))
            self.deck[self.draw_pos :] = [pile[p] for p in perm]
        self.discard = [face]
        self.top = face
        self.colour = face_colour(face)

    def _apply_starter(self) -> None:
        """The five starter cases of docs/engine.md "Set-up"."""
        first = self.seat(1, self.dealer)
        rank = face_rank(self.top)
        self.direction = 1
        self.phase = PHASE_PLAY
        if self.top == WILD:
            self.current = first
            self.phase = PHASE_CHOOSE_COLOUR
            self.events["starter_wild"] += 1
        elif rank == DRAW_TWO:
            self._draw(first, 2)
            self.current = self.seat(2, self.dealer)
            self.events["starter_draw_two"] += 1
        elif rank == REVERSE:
            self.direction = -1
            self.current = self.dealer
            self.events["starter_reverse"] += 1
        elif rank == SKIP:
            self.current = self.seat(2, self.dealer)
            self.events["starter_skip"] += 1
        else:
            self.current = first

    # ------------------------------------------------------------------ drawing

    def _refill_draw_pile(self) -> None:
        """Turn the discard pile, except its top card, into a new draw pile.

        ``old = discard[:-1]`` (bottom first), ``perm = keyed_permutation(key,
        hand_no * 2**20 + shuffles + 1, n)``, and the new pile is ``deck[108 - n:]`` with
        ``deck[108 - n + i] = old[perm[i]]`` (top first). Nothing happens when ``n == 0``.
        """
        old = self.discard[:-1]
        n = len(old)
        if n == 0:
            return
        self.events["reshuffle"] += 1
        perm = self._next_shuffle_permutation(n)
        self.deck[DECK_SIZE - n :] = [old[p] for p in perm]
        self.draw_pos = DECK_SIZE - n
        self.discard = self.discard[-1:]

    def _draw_one(self, seat: int) -> int | None:
        """Move the top card of the draw pile to ``seat``; None when both piles are empty."""
        if self.draw_pos >= DECK_SIZE:
            self._refill_draw_pile()
        if self.draw_pos >= DECK_SIZE:
            self.events["both_piles_empty"] += 1
            return None
        face = self.deck[self.draw_pos]
        self.draw_pos += 1
        self.hands[seat][face] += 1
        return face

    def _draw(self, seat: int, n: int) -> list[int]:
        """``seat`` draws up to ``n`` cards, one at a time; returns the faces drawn."""
        drawn = []
        for _ in range(n):
            face = self._draw_one(seat)
            if face is None:
                break
            drawn.append(face)
        return drawn

    # ------------------------------------------------------------------ legality

    def holds_colour(self, seat: int, colour: int) -> bool:
        """Whether ``seat`` holds a coloured card of ``colour``."""
        hand = self.hands[seat]
        start = colour * NUM_RANKS
        return any(hand[f] > 0 for f in range(start, start + NUM_RANKS))

    def is_playable(self, seat: int, face: int) -> bool:
        """The PLAY-phase test for ``face`` (assumed held by ``seat``)."""
        if face == WILD:
            return True
        if face == WILD_DRAW_FOUR:
            if self.rules.wd4_challenge or self.rules.wd4_anytime:
                return True
            return not self.holds_colour(seat, self.colour)
        if face_colour(face) == self.colour:
            return True
        top_rank = face_rank(self.top)
        return top_rank is not None and face_rank(face) == top_rank

    def _may_declare(self) -> bool:
        return (
            bool(self.rules.uno_call) and sum(self.hands[self.current]) == 2 and not self.declared
        )

    def legal_actions(self) -> list[int]:
        """The legal action ids for the seat that must act, sorted."""
        if self.phase == PHASE_OVER:
            return []
        seat = self.current
        actions: list[int] = []
        if self.phase == PHASE_PLAY:
            for face in range(NUM_FACES):
                if self.hands[seat][face] > 0 and self.is_playable(seat, face):
                    actions += play_actions_for_face(face)
            actions.append(DRAW)
            if self._may_declare():
                actions.append(UNO)
        elif self.phase == PHASE_AFTER_DRAW:
            actions += play_actions_for_face(self.drawn)
            actions.append(KEEP)
            if self._may_declare():
                actions.append(UNO)
        elif self.phase == PHASE_CHALLENGE:
            actions += [CHALLENGE, ACCEPT]
        elif self.phase == PHASE_CHOOSE_COLOUR:
            actions += [NAME_COLOUR + c for c in range(NUM_COLOURS)]
        if self.uno_exposed >= 0 and self.uno_exposed != seat:
            actions.append(CATCH)
        return sorted(actions)

    def legal_mask(self) -> list[bool]:
        """The legal actions as an 80-entry boolean list."""
        mask = [False] * NUM_ACTIONS
        for a in self.legal_actions():
            mask[a] = True
        return mask

    # ------------------------------------------------------------------ stepping

    def step(self, action: int) -> None:
        """Apply one decision of the current seat.

        Raises:
            ValueError: if the action is not legal now (the state is left untouched).
        """
        action = int(action)
        legal = self.legal_actions()
        if action not in legal:
            name = action_name(action) if 0 <= action < NUM_ACTIONS else str(action)
            raise ValueError(
                f"illegal action {name} ({action}) in phase {self.phase} for seat "
                f"{self.current}; legal: {[action_name(a) for a in legal]}"
            )
        self.history.append(action)
        if action == UNO:
            self.declared = True
        elif action == CATCH:
            self.events["catch"] += 1
            self._draw(self.uno_exposed, self.rules.uno_penalty)
            self.uno_exposed = -1
        else:
            self.uno_exposed = -1
            self._apply_decision(action)
        self.turn += 1
        if self.phase != PHASE_OVER and self.turn >= self.rules.max_turns:
            self._truncate()

    def _truncate(self) -> None:
        """The hand hit ``max_turns``: over, no winner, no points.

        Nobody acts in a finished hand, so the decision it stopped in is cleared: no exposure,
        no drawn card, no pending penalty, no declaration (docs/engine.md).
        """
        self.events["truncated"] += 1
        self.truncated = True
        self.phase = PHASE_OVER
        self.uno_exposed = -1
        self.drawn = -1
        self.pending = 0
        self.wd4_seat = -1
        self.declared = False

    def _apply_decision(self, action: int) -> None:
        """Every action other than ``uno`` and ``catch``."""
        if NAME_COLOUR <= action < NAME_COLOUR + NUM_COLOURS:
            self.colour = action - NAME_COLOUR
            self.phase = PHASE_PLAY
        elif action == DRAW:
            self._voluntary_draw()
        elif action == KEEP:
            self._pass_turn(self.seat(self.direction))
        elif action == ACCEPT:
            self._draw(self.current, self.pending)
            self.wd4_illegal = False  # resolved (docs silent)
            self._pass_turn(self.seat(self.direction))
        elif action == CHALLENGE:
            self._challenge()
        else:
            face, colour = decode_play(action)
            self._play(face, colour)

    def _pass_turn(self, seat: int) -> None:
        """The turn passes to ``seat`` (possibly the same seat) and starts clean.

        docs/engine.md: phase PLAY, ``declared`` false, ``drawn`` -1, ``pending`` 0,
        ``wd4_seat`` -1 -- even when the same seat plays again (two-player Skip).
        """
        self.current = seat
        self.declared = False
        self.phase = PHASE_PLAY
        self.drawn = -1
        self.pending = 0
        self.wd4_seat = -1

    def _voluntary_draw(self) -> None:
        """``draw`` in PLAY: draw one; keep the turn to decide on it only if it is playable."""
        seat = self.current
        got = self._draw(seat, 1)
        if got and self.is_playable(seat, got[0]):
            self.events["drew_playable"] += 1
            self.phase = PHASE_AFTER_DRAW
            self.drawn = got[0]
        else:
            self._pass_turn(self.seat(self.direction))

    def _challenge(self) -> None:
        """Resolve a challenge of the Wild Draw Four played by ``wd4_seat``."""
        guilty = self.wd4_illegal
        self.wd4_illegal = False  # resolved (docs silent)
        self.events["challenge_guilty" if guilty else "challenge_innocent"] += 1
        if guilty:
            self._draw(self.wd4_seat, 4)
            self._pass_turn(self.current)
        else:
            self._draw(self.current, self.pending + 2)
            self._pass_turn(self.seat(self.direction))

    def _play(self, face: int, colour: int) -> None:
        """Play ``face`` from the current seat's hand, making ``colour`` current."""
        seat = self.current
        hand = self.hands[seat]
        previous_colour = self.colour
        if face == WILD_DRAW_FOUR:
            self.wd4_illegal = self.holds_colour(seat, previous_colour)
        hand[face] -= 1
        self.discard.append(face)
        self.top = face
        self.colour = colour
        self.drawn = -1
        cards_left = sum(hand)
        if cards_left == 1 and not self.declared and self.rules.uno_call:
            self.uno_exposed = seat
            self.events["exposed"] += 1
        if cards_left == 0:
            self._finish_hand(seat, face)
            return
        rank = face_rank(face)
        d = self.direction
        if rank == SKIP:
            self._pass_turn(self.seat(2 * d))
        elif rank == REVERSE:
            self.direction = -d
            if self.two_player_rules:
                self.events["two_player_reverse"] += 1
                self._pass_turn(seat)
            else:
                self._pass_turn(self.seat(-d))
        elif rank == DRAW_TWO:
            self._draw(self.seat(d), 2)
            self._pass_turn(self.seat(2 * d))
        elif face == WILD_DRAW_FOUR and self.challenge_enabled:
            self._pass_turn(self.seat(d))
            self.phase = PHASE_CHALLENGE
            self.pending = 4
            self.wd4_seat = seat
        elif face == WILD_DRAW_FOUR:
            self._draw(self.seat(d), 4)
            self._pass_turn(self.seat(2 * d))
        else:
            self._pass_turn(self.seat(d))

    # ------------------------------------------------------------------ end of hand

    def _finish_hand(self, seat: int, face: int) -> None:
        """``seat`` went out with ``face``: final penalty, then winner_takes scoring.

        Only a last Draw Two or Wild Draw Four still acts (the next seat draws, no challenge);
        a last Skip or Reverse does nothing: the direction is left as it was.
        """
        victim = self.seat(self.direction, seat)
        self.events["won"] += 1
        if face_rank(face) == DRAW_TWO:
            self.events["final_draw_two"] += 1
            self._draw(victim, 2)
        elif face == WILD_DRAW_FOUR:
            self.events["final_wd4"] += 1
            self._draw(victim, 4)
        elif face_rank(face) == REVERSE:
            self.events["final_reverse"] += 1
        self.done = True
        self.winner = seat
        self.phase = PHASE_OVER
        self.declared = False  # nobody acts any more (docs silent; the core does the same)
        points = sum(
            int(FACE_POINTS[f]) * count
            for other in range(self.num_players)
            if other != seat
            for f, count in enumerate(self.hands[other])
        )
        self.hand_points = [0] * self.num_players
        self.hand_points[seat] = points
        self.scores = [s + p for s, p in zip(self.scores, self.hand_points, strict=True)]
        self.match_over = self._someone_reached_target()
        if self.match_over:
            self.events["match_over"] += 1

    def next_hand(self) -> RefGame:
        """The next hand of the match: hand ``hand_no + 1``, dealer ``dealer + 1``, same scores.

        Raises:
            ValueError: if this hand is still being played or the match is already over.
        """
        if self.phase != PHASE_OVER:
            raise ValueError("next_hand: the hand is still being played")
        if self.match_over:
            raise ValueError("next_hand: the match is over")
        return RefGame(
            self.rules,
            self.key,
            dealer=(self.dealer + 1) % self.num_players,
            hand_no=self.hand_no + 1,
            scores=list(self.scores),
        )

    # ------------------------------------------------------------------ inspection

    @property
    def discard_len(self) -> int:
        """Number of cards on the discard pile."""
        return len(self.discard)

    def card_total(self) -> int:
        """Cards in hands + draw pile + discard pile (always 108)."""
        in_hands = sum(sum(hand) for hand in self.hands)
        return in_hands + (DECK_SIZE - self.draw_pos) + len(self.discard)

    def snapshot(self) -> dict[str, Any]:
        """Every state field of docs/engine.md, as plain Python values."""
        return {
            "key": self.key,
            "hand_no": self.hand_no,
            "deck": list(self.deck),
            "draw_pos": self.draw_pos,
            "discard": list(self.discard),
            "discard_len": self.discard_len,
            "hands": [list(hand) for hand in self.hands],
            "top": self.top,
            "colour": self.colour,
            "direction": self.direction,
            "current": self.current,
            "phase": self.phase,
            "drawn": self.drawn,
            "pending": self.pending,
            "wd4_seat": self.wd4_seat,
            "wd4_illegal": self.wd4_illegal,
            "declared": self.declared,
            "uno_exposed": self.uno_exposed,
            "shuffles": self.shuffles,
            "dealer": self.dealer,
            "turn": self.turn,
            "done": self.done,
            "truncated": self.truncated,
            "winner": self.winner,
            "hand_points": list(self.hand_points),
            "scores": list(self.scores),
            "match_over": self.match_over,
        }
