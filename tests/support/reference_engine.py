"""A scalar reference implementation of the uno-lab rules, for differential testing.

This engine plays ONE game at a time with plain Python lists and is written to be read next to
``docs/engine.md``: every method implements one paragraph of that contract, the house rules
and RLCard switches (docs section "House rules (rules.md §15-16) and the RLCard compatibility
switches") included. It shares nothing with the batched core (``uno_env/core/``) except the
card constants (``uno_env.cards``) and the counter-based random streams (``uno_env.rng``), so
when the two engines agree move by move it is evidence that both implement the documented
rules.

Conventions that must match the core exactly:

* The deal of hand ``h`` shuffles ``CANONICAL_DECK`` with
  ``perm = keyed_permutation(key, h * 2**20, 108)``: ``deck[i] = CANONICAL_DECK[perm[i]]``,
  top first.
* Every later shuffle in the hand uses stream ``h * 2**20 + shuffles + 1`` and then increments
  ``shuffles``. A shuffle of a list ``old`` of length ``n`` with permutation ``perm`` always
  produces ``new[i] = old[perm[i]]``.
* Refilling the empty draw pile: ``old`` is the discard pile without its top card (with
  ``reshuffle_top``: the whole discard pile), bottom first; ``new`` becomes the draw pile
  ``deck[108 - n:]``, top first; the discard pile keeps only its top card (or nothing).
* Re-drawing a Wild Draw Four starter (or any wild with ``starter_redraw_wilds``): the starter
  goes back on top of the draw pile and ``old`` is the whole draw pile ``deck[draw_pos:]``, top
  first; ``new`` replaces it in place.
* Random colours: a Wild starter with ``starter_wild_colour: random`` uses
  ``keyed_randint(key, h * 2**20 + 2**19 - 1, 4)``; a wild auto-played under
  ``after_draw: rlcard`` uses ``keyed_randint(key, h * 2**20 + 2**19 + turn, 4)``.

Where docs/engine.md says nothing, this engine makes a choice and says so where it happens
("docs silent"):

* a finished (or truncated) hand clears ``declared``, ``uno_exposed``, ``pending``,
  ``wd4_seat``, ``penalty_kind``, ``effect_face`` and ``effect_seat``;
* ``wd4_illegal`` is cleared when the Wild Draw Four is resolved (it is only meaningful while
  ``challenge`` is legal, and the differential test compares it only then);
* entering STACK or CHALLENGE is a new turn of the victim (``declared`` false); a deflected
  penalty keeps ``pending`` and ``penalty_kind`` only (``wd4_seat`` becomes -1);
* a stacked Wild Draw Four obeys the colour rule when the mask enforces it (no challenge);
* under ``play_to_last`` the first seat out becomes ``winner`` and gets its ``hand_points``
  (``winner_takes``, whatever the scoring) at the end of the step that took it out, after the
  victim of its last card drew; both stay if the hand is later truncated;
* ``swap:k`` is legal for ``1 <= k < N`` only (``(s + k) % N`` an active seat other than s).

Readings of sentences that allow two meanings (reported to the lead; each lives in one small
method):

* a deflecting Reverse that is the player's last card makes the seat it deflects to draw the
  pending penalty ("a stacking card that is the player's last card ... the victim draws the
  pending penalty it would have faced"); the direction stays (:meth:`RefGame._final_penalty`);
* under ``play_to_last``, a Draw Two / Wild Draw Four that leaves one active seat still makes
  that seat draw ("its penalty effects ... still apply") (:meth:`RefGame._go_out`);
* ``declared`` is reset when a jump-in window closes into SWAP_TARGET, since ``current``
  changes back to the seat that played the 7 (:meth:`RefGame._resolve`).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass
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
    LACK_RANK0,
    LACK_WILD,
    NAME_COLOUR,
    NO_COLOUR,
    NUM_ACTIONS,
    NUM_COLOURED_FACES,
    NUM_COLOURS,
    NUM_FACES,
    NUM_LACK_FACTS,
    NUM_RANKS,
    PASS,
    PLAY_WILD,
    PLAY_WILD_DRAW_FOUR,
    REVERSE,
    SKIP,
    SWAP,
    UNO,
    WILD,
    WILD_DRAW_FOUR,
    action_name,
)
from uno_env.rng import keyed_permutation, keyed_randint, keyed_uniform

# Phases (docs/engine.md, "State" and "House rules").
PHASE_PLAY = 0
PHASE_AFTER_DRAW = 1
NO_MARK = -(1 << 30)  # docs/engine.md: a lack fact not shown this hand
PHASE_CHALLENGE = 2
PHASE_CHOOSE_COLOUR = 3
PHASE_OVER = 4
PHASE_STACK = 5
PHASE_JUMP_IN = 6
PHASE_SWAP_TARGET = 7

HAND_STREAM_STRIDE = 2**20
"""Stream of the deal of hand ``h`` is ``h * HAND_STREAM_STRIDE``."""
DEALER_STREAM = 2**40 - 1
"""Stream that picks the first dealer when none is given."""
RLCARD_COLOUR_STREAM = 2**19
"""``h * 2**20 + 2**19 + turn``: colour of a wild auto-played under ``after_draw: rlcard``."""
STARTER_COLOUR_STREAM = 2**19 - 1
"""``h * 2**20 + 2**19 - 1``: colour of a Wild starter under ``starter_wild_colour: random``."""
SEAT_DRAW_STREAM = 2**18
"""``h * 2**20 + 2**18 + seat``: the seat's draws under ``seat_draw_streams``."""

SEVEN = 7
ZERO = 0


def face_colour(face: int) -> int:
    """Colour 0-3 of a coloured face, ``NO_COLOUR`` for wilds."""
    return face // NUM_RANKS if face < NUM_COLOURED_FACES else NO_COLOUR


def face_rank(face: int) -> int | None:
    """Rank 0-12 of a coloured face, None for wilds."""
    return face % NUM_RANKS if face < NUM_COLOURED_FACES else None


def is_penalty(face: int) -> bool:
    """Whether ``face`` is a Draw Two or a Wild Draw Four."""
    return face == WILD_DRAW_FOUR or face_rank(face) == DRAW_TWO


def penalty_of(face: int) -> int:
    """The cards a Draw Two (2) or a Wild Draw Four (4) makes its victim draw."""
    return 4 if face == WILD_DRAW_FOUR else 2


def decode_play(action: int) -> tuple[int, int]:
    """Split a play action (0..59) into ``(face, colour made current)``."""
    if action < NUM_COLOURED_FACES:
        return action, face_colour(action)
    if action < PLAY_WILD_DRAW_FOUR:
        return WILD, action - PLAY_WILD
    return WILD_DRAW_FOUR, action - PLAY_WILD_DRAW_FOUR


@dataclass(frozen=True)
class Switches:
    """The rules fields the reference engine reads, with the official defaults.

    Built with :meth:`of` from any rules object; a field the object lacks keeps its default,
    so the engine also runs against a ``Rules`` that predates some switch.
    """

    num_players: int = 4
    hand_size: int = 7
    draw_rule: str = "one"
    draw_cap: int = 10
    wd4_challenge: bool = True
    wd4_anytime: bool = False
    uno_call: bool = True
    uno_penalty: int = 2
    two_player_rules: bool | None = None
    scoring: str = "winner_takes"
    target_score: int = 500
    max_turns: int = 3000
    starter_redraw_wilds: bool = False
    stack_draw_two: bool = False
    stack_draw_four: bool = False
    stack_draw_two_on_four: bool = False
    stack_draw_four_on_two: bool = False
    stack_cumulative: bool = False
    jump_in: bool = False
    seven_zero: bool = False
    reverse_deflects: bool = False
    colours_in_circle: bool = False
    play_to_last: bool = False
    teams: bool = False
    zero_scores_fifty: bool = False
    voluntary_draw: bool = True
    wd4_last_resort: bool = False
    after_draw: str = "choose"
    reshuffle_top: bool = False
    starter_draw_two_skips: bool = True
    starter_wild_colour: str = "choose"
    seat_draw_streams: bool = False

    @classmethod
    def of(cls, rules: Any) -> Switches:
        """Read every switch from ``rules`` (missing attributes keep their defaults)."""
        values = {f.name: getattr(rules, f.name, f.default) for f in dataclasses.fields(cls)}
        return cls(**values)


class RefGame:
    """One hand of UNO (and the match scores around it), following docs/engine.md literally.

    Args:
        rules: A ``Rules`` (or any object with its attributes; see :class:`Switches`).
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
        self.rules = rules
        self.sw = Switches.of(rules)
        if self.sw.draw_rule not in ("one", "until_playable"):
            raise ValueError(f"reference engine: unknown draw_rule {self.sw.draw_rule!r}")
        if self.sw.scoring not in ("winner_takes", "penalty_points"):
            raise ValueError(f"reference engine: unknown scoring {self.sw.scoring!r}")
        self.num_players: int = int(self.sw.num_players)
        self.key = int(key)
        self.hand_no = int(hand_no)
        if dealer is None:
            dealer = self._randint(DEALER_STREAM, self.num_players)
        self.dealer = int(dealer) % self.num_players
        if deck is None:
            deck = self._shuffled_deck()
        if len(deck) != DECK_SIZE:
            raise ValueError(f"a deck has {DECK_SIZE} cards, got {len(deck)}")
        n = self.num_players
        self.deck: list[int] = [int(f) for f in deck]
        self.draw_pos = 0
        self.discard: list[int] = []
        self.hands: list[list[int]] = [[0] * NUM_FACES for _ in range(n)]
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
        self.penalty_kind = 0
        self.effect_face = -1
        self.effect_seat = -1
        self.finish_rank: list[int] = [-1] * n
        self.seat_draws: list[int] = [0] * n
        # The public history (docs/engine.md, "Public history").
        self.shown_lacks: list[list[bool]] = [[False] * NUM_COLOURS for _ in range(n)]
        # Lack facts for determinization: the seat's draw count when it drew unable to play.
        self.lack_marks: list[list[int]] = [[NO_MARK] * NUM_LACK_FACTS for _ in range(n)]
        # The context of each seat's last play in a normal turn (-1: none, or hands moved).
        self.choice_colour: list[int] = [-1] * n
        self.choice_top: list[int] = [-1] * n
        self.choice_draws: list[int] = [-1] * n
        self.last_played: list[int] = [-1] * n
        self.last_named: list[int] = [-1] * n
        # docs/engine.md: the faces the last reshuffle put into the draw pile (public).
        self.pile_faces: list[int] = [0] * NUM_FACES
        # docs/engine.md: the colours a challenge showed a seat to hold (a bluff found).
        self.shown_holds: list[list[bool]] = [[False] * NUM_COLOURS for _ in range(n)]
        self.hand_points = [0] * n
        self.scores: list[int] = [0] * n if scores is None else [int(s) for s in scores]
        self.match_over = self._someone_reached_target()
        self.history: list[int] = []
        self.events: Counter[str] = Counter()
        """How often each notable rule branch was taken (lets tests check their coverage)."""
        self._score_first_out = False
        """play_to_last: the first seat went out in this step (it is scored after the step)."""
        self._score_hand = False
        """The hand ended in this step (it is scored after the step)."""
        self._legal: list[int] | None = None
        """The legal actions of the current decision, once computed."""
        self._deal()
        self._turn_starter()
        self._apply_starter()

    # ------------------------------------------------------------------ rules helpers

    @property
    def two_player_rules(self) -> bool:
        """Whether the two-player rules apply (the option only matters with two players)."""
        option = self.sw.two_player_rules
        enabled = self.num_players == 2 if option is None else bool(option)
        return enabled and self.num_players == 2

    @property
    def challenge_enabled(self) -> bool:
        """Whether a Wild Draw Four opens a CHALLENGE phase."""
        return self.sw.wd4_challenge and not self.sw.wd4_anytime

    def has_response(self, kind: int) -> bool:
        """Whether a victim of a penalty of ``kind`` (2 or 4) enters STACK.

        A property of the rules, not of the victim's hand (docs "Effect").
        """
        sw = self.sw
        if kind == 2:
            return sw.stack_draw_two or sw.stack_draw_four_on_two or sw.reverse_deflects
        return sw.stack_draw_four or sw.stack_draw_two_on_four or sw.reverse_deflects

    def _someone_reached_target(self) -> bool:
        return any(s >= self.sw.target_score for s in self.scores)

    def active(self, seat: int) -> bool:
        """Whether ``seat`` is still playing (always, without ``play_to_last``)."""
        return self.finish_rank[seat] < 0

    def active_seats(self) -> list[int]:
        """The seats still playing, in seat order."""
        return [s for s in range(self.num_players) if self.active(s)]

    def ahead(self, k: int, base: int | None = None, direction: int | None = None) -> int:
        """The seat ``k`` active seats ahead of ``base`` (default: the current seat).

        Seats that have finished are stepped over (docs "Seats ahead and active seats"); the
        direction defaults to the direction of play.
        """
        seat = self.current if base is None else base
        d = self.direction if direction is None else direction
        if not self.sw.play_to_last:
            return (seat + k * d) % self.num_players
        if not self.active_seats():
            raise RuntimeError("ahead: no active seat")
        for _ in range(k):
            seat = (seat + d) % self.num_players
            while not self.active(seat):
                seat = (seat + d) % self.num_players
        return seat

    # ------------------------------------------------------------------ randomness

    def _keys(self) -> np.ndarray:
        return np.array([self.key], dtype=np.uint64)

    def _permutation(self, stream: int, n: int) -> list[int]:
        return [int(p) for p in keyed_permutation(self._keys(), stream, n)[0]]

    def _randint(self, stream: int, high: int) -> int:
        return int(keyed_randint(self._keys(), stream, high)[0])

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
        n_dealt = self.num_players * self.sw.hand_size
        for i in range(n_dealt):
            seat = (self.dealer + 1 + i) % self.num_players
            self.hands[seat][self.deck[i]] += 1
        self.draw_pos = n_dealt

    def _starter_needs_redraw(self, face: int) -> bool:
        if face == WILD_DRAW_FOUR:
            return True
        return face == WILD and self.sw.starter_redraw_wilds

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
        """The starter cases of docs/engine.md "Set-up" (and the two RLCard starter switches).

        The starter never opens a jump-in window, and a 0 or 7 starter has no seven-zero effect.
        """
        n = self.num_players
        first = (self.dealer + 1) % n
        rank = face_rank(self.top)
        self.direction = 1
        self.phase = PHASE_PLAY
        if self.top == WILD:
            self.current = first
            if self.sw.starter_wild_colour == "random":
                stream = self.hand_no * HAND_STREAM_STRIDE + STARTER_COLOUR_STREAM
                self.colour = self._randint(stream, NUM_COLOURS)
                self.events["starter_wild_random"] += 1
            else:
                self.phase = PHASE_CHOOSE_COLOUR
                self.events["starter_wild"] += 1
        elif rank == DRAW_TWO:
            self._draw(first, 2)
            if self.sw.starter_draw_two_skips:
                self.current = (self.dealer + 2) % n
                self.events["starter_draw_two"] += 1
            else:
                self.current = first
                self.events["starter_draw_two_no_skip"] += 1
        elif rank == REVERSE:
            self.direction = -1
            self.current = self.dealer
            self.events["starter_reverse"] += 1
        elif rank == SKIP:
            self.current = (self.dealer + 2) % n
            self.events["starter_skip"] += 1
        else:
            self.current = first

    # ------------------------------------------------------------------ drawing

    def _refill_draw_pile(self) -> None:
        """Turn the discard pile, except its top card, into a new draw pile.

        ``old = discard[:-1]`` (bottom first; the whole pile with ``reshuffle_top``),
        ``perm = keyed_permutation(key, hand_no * 2**20 + shuffles + 1, n)``, and the new pile
        is ``deck[108 - n:]`` with ``deck[108 - n + i] = old[perm[i]]`` (top first). Nothing
        happens when ``n == 0``. With ``reshuffle_top`` the discard pile is left empty, and
        ``top`` and ``colour`` still give the card to match.
        """
        old = list(self.discard) if self.sw.reshuffle_top else self.discard[:-1]
        n = len(old)
        if n == 0:
            return
        self.events["reshuffle"] += 1
        if self.sw.reshuffle_top:
            self.events["reshuffle_top"] += 1
        perm = self._next_shuffle_permutation(n)
        self.deck[DECK_SIZE - n :] = [old[p] for p in perm]
        self.pile_faces = [old.count(face) for face in range(NUM_FACES)]
        self.draw_pos = DECK_SIZE - n
        self.discard = [] if self.sw.reshuffle_top else self.discard[-1:]

    def _draw_one(self, seat: int) -> int | None:
        """Move the top card of the draw pile to ``seat``; None when both piles are empty.

        With ``seat_draw_streams`` the card is first picked from the whole pile by the seat's
        own stream: ``u = keyed_uniform(key, hand*2**20 + 2**18 + seat, seat_draws[seat])``
        swaps ``deck[pos]`` with ``deck[pos + floor(u * (108 - pos))]``.
        """
        if self.draw_pos >= DECK_SIZE:
            self._refill_draw_pile()
        if self.draw_pos >= DECK_SIZE:
            self.events["both_piles_empty"] += 1
            return None
        if self.sw.seat_draw_streams:
            self._pick_for_seat(seat)
        face = self.deck[self.draw_pos]
        self.draw_pos += 1
        self.hands[seat][face] += 1
        self.seat_draws[seat] += 1
        return face

    def _pick_for_seat(self, seat: int) -> None:
        """``seat_draw_streams``: swap the seat's pick to the top of the draw pile."""
        pos = self.draw_pos
        stream = self.hand_no * HAND_STREAM_STRIDE + SEAT_DRAW_STREAM + seat
        u = float(keyed_uniform(self._keys(), stream, self.seat_draws[seat])[0])
        pick = pos + int(u * (DECK_SIZE - pos))
        self.deck[pos], self.deck[pick] = self.deck[pick], self.deck[pos]
        self.events["seat_stream_draw"] += 1

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

    def matches(self, face: int) -> bool:
        """Whether coloured ``face`` matches the current colour or the top card's rank."""
        if face_colour(face) == self.colour:
            return True
        top_rank = face_rank(self.top)
        return top_rank is not None and face_rank(face) == top_rank

    def playable_faces(self, seat: int) -> list[int]:
        """The faces ``seat`` may play in a normal turn (PLAY), by the matching rules.

        A Wild Draw Four: always with ``wd4_challenge`` or ``wd4_anytime``; with
        ``wd4_last_resort`` only when no other play (a Wild included) is legal; otherwise only
        when the hand holds no card of the current colour.
        """
        hand = self.hands[seat]
        faces = [f for f in range(NUM_COLOURED_FACES) if hand[f] > 0 and self.matches(f)]
        if hand[WILD] > 0:
            faces.append(WILD)
        if hand[WILD_DRAW_FOUR] > 0:
            if self.sw.wd4_last_resort:
                allowed = not faces
            elif self.sw.wd4_challenge or self.sw.wd4_anytime:
                allowed = True
            else:
                allowed = not self.holds_colour(seat, self.colour)
            if allowed:
                faces.append(WILD_DRAW_FOUR)
        return faces

    def is_playable(self, seat: int, face: int) -> bool:
        """The PLAY-phase test for ``face`` (assumed held by ``seat``)."""
        return face in self.playable_faces(seat)

    def wild_colours(self) -> list[int]:
        """Colours a wild played now may name: all four, or with ``colours_in_circle`` only
        the one after the current colour in R -> Y -> G -> B -> R."""
        if self.sw.colours_in_circle:
            return [(self.colour + 1) % NUM_COLOURS]
        return list(range(NUM_COLOURS))

    def play_actions_for_face(self, face: int) -> list[int]:
        """The action ids that play ``face`` now: one for a coloured face, one per colour a
        wild may name."""
        if face == WILD:
            return [PLAY_WILD + c for c in self.wild_colours()]
        if face == WILD_DRAW_FOUR:
            return [PLAY_WILD_DRAW_FOUR + c for c in self.wild_colours()]
        return [face]

    def stacking_faces(self, seat: int) -> list[int]:
        """The faces ``seat`` may play in STACK (docs "STACK"); the card must be held.

        A stacked Wild Draw Four also obeys the colour rule when the mask enforces it (no
        ``wd4_challenge``, ``wd4_anytime`` or ``wd4_last_resort``): docs silent, the reading
        of the core (a stacked W+4 "is judged like any W+4").
        """
        sw, hand = self.sw, self.hands[seat]
        faces: list[int] = []
        if self.penalty_kind == 2:
            if sw.stack_draw_two:
                faces += [c * NUM_RANKS + DRAW_TWO for c in range(NUM_COLOURS)]
            if sw.stack_draw_four_on_two:
                faces.append(WILD_DRAW_FOUR)
        else:
            if sw.stack_draw_four:
                faces.append(WILD_DRAW_FOUR)
            if sw.stack_draw_two_on_four:
                faces.append(self.colour * NUM_RANKS + DRAW_TWO)
        if sw.reverse_deflects:
            faces.append(self.colour * NUM_RANKS + REVERSE)
        colour_rule = not (sw.wd4_challenge or sw.wd4_anytime or sw.wd4_last_resort)
        if colour_rule and self.holds_colour(seat, self.colour) and WILD_DRAW_FOUR in faces:
            faces.remove(WILD_DRAW_FOUR)
        return [f for f in faces if hand[f] > 0]

    def _may_declare(self) -> bool:
        return (
            self.sw.uno_call
            and self.phase in (PHASE_PLAY, PHASE_AFTER_DRAW, PHASE_STACK, PHASE_JUMP_IN)
            and sum(self.hands[self.current]) == 2
            and not self.declared
        )

    def legal_actions(self) -> list[int]:
        """The legal action ids for the seat that must act, sorted (cached until a step)."""
        if self._legal is None:
            self._legal = self._compute_legal_actions()
        return list(self._legal)

    def _compute_legal_actions(self) -> list[int]:
        if self.phase == PHASE_OVER:
            return []
        seat = self.current
        actions: list[int] = []
        if self.phase == PHASE_PLAY:
            faces = self.playable_faces(seat)
            for face in faces:
                actions += self.play_actions_for_face(face)
            if self.sw.voluntary_draw or not faces:
                actions.append(DRAW)
        elif self.phase == PHASE_AFTER_DRAW:
            actions += self.play_actions_for_face(self.drawn)
            actions.append(KEEP)
        elif self.phase == PHASE_CHALLENGE:
            actions += [CHALLENGE, ACCEPT]
        elif self.phase == PHASE_CHOOSE_COLOUR:
            actions += [NAME_COLOUR + c for c in range(NUM_COLOURS)]
        elif self.phase == PHASE_STACK:
            for face in self.stacking_faces(seat):
                actions += self.play_actions_for_face(face)
            actions.append(DRAW)
            if self.may_challenge_in_stack():
                actions.append(CHALLENGE)
        elif self.phase == PHASE_JUMP_IN:
            if self.hands[seat][self.effect_face] > 0:
                actions += self.play_actions_for_face(self.effect_face)
            actions.append(PASS)
        elif self.phase == PHASE_SWAP_TARGET:
            for k in range(1, self.num_players):
                target = (seat + k) % self.num_players
                if self.active(target):
                    actions.append(SWAP + k - 1)
        if self._may_declare():
            actions.append(UNO)
        if self.uno_exposed >= 0 and self.uno_exposed != seat:
            actions.append(CATCH)
        return sorted(actions)

    def may_challenge_in_stack(self) -> bool:
        """``challenge`` in STACK: facing a Wild Draw Four that is the top card."""
        return (
            self.phase == PHASE_STACK
            and self.penalty_kind == 4
            and self.top == WILD_DRAW_FOUR
            and self.sw.wd4_challenge
        )

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
        self._legal = None
        if action == UNO:
            self.declared = True
        elif action == CATCH:
            self.events["catch"] += 1
            self._draw(self.uno_exposed, self.sw.uno_penalty)
            self.uno_exposed = -1
        else:
            self.uno_exposed = -1
            self._apply_decision(action)
            self._settle_scores()
        self.turn += 1
        if self.phase != PHASE_OVER and self.turn >= self.sw.max_turns:
            self._truncate()

    def _truncate(self) -> None:
        """The hand hit ``max_turns``: over, no winner, no points.

        Nobody acts in a finished hand, so the decision it stopped in is cleared: no exposure,
        no drawn card, no pending penalty, no declaration (docs/engine.md), and (docs silent)
        no penalty kind and no effect still to resolve. Finishing ranks already given stay.
        """
        self.events["truncated"] += 1
        self.truncated = True
        self.phase = PHASE_OVER
        self._clear_decision()

    def _clear_decision(self) -> None:
        self.uno_exposed = -1
        self.drawn = -1
        self.pending = 0
        self.wd4_seat = -1
        self.declared = False
        self.penalty_kind = 0
        self.effect_face = -1
        self.effect_seat = -1

    def _apply_decision(self, action: int) -> None:
        """Every action other than ``uno`` and ``catch``."""
        if NAME_COLOUR <= action < NAME_COLOUR + NUM_COLOURS:
            self.colour = action - NAME_COLOUR
            self.last_named[self.current] = self.colour
            self.phase = PHASE_PLAY
        elif action == DRAW and self.phase == PHASE_STACK:
            self._take_stacked_penalty()
        elif action == DRAW:
            if self.colour < NUM_COLOURS:  # drawing shows the colour to match is lacking
                self.shown_lacks[self.current][self.colour] = True
            seat, colour, top = self.current, self.colour, self.top
            self._voluntary_draw()
            self._record_stuck(seat, colour, top)
        elif action == KEEP:
            self._pass_turn(self.ahead(1))
        elif action == ACCEPT:
            self._draw(self.current, self.pending)
            self.wd4_illegal = False  # resolved (docs silent)
            self._pass_turn(self.ahead(1))
        elif action == CHALLENGE:
            self._challenge()
        elif action == PASS:
            self._pass_window()
        elif SWAP <= action < SWAP + self.num_players - 1:
            self._swap(action - SWAP + 1)
        elif self.phase == PHASE_STACK:
            face, colour = decode_play(action)
            self.choice_draws[self.current] = -1  # a stacked penalty: no normal turn's choice
            self._stack_play(face, colour)
        else:
            face, colour = decode_play(action)
            if self.phase == PHASE_PLAY:  # a choice among the cards that play: its context
                seat = self.current
                self.choice_colour[seat], self.choice_top[seat] = self.colour, self.top
                self.choice_draws[seat] = self.seat_draws[seat]
            else:  # a drawn card, a jump-in: not a choice among the cards of a normal turn
                self.choice_draws[self.current] = -1
            self._play(face, colour)

    def _record_stuck(self, seat: int, colour: int, top: int) -> None:
        """``seat`` drew on its turn: the cards it held (and kept, unless it is deciding on a
        playable one) lack ``colour``, the rank of ``top`` and wilds, as of its draw count."""
        deciding = self.phase == PHASE_AFTER_DRAW and self.current == seat
        mark = self.seat_draws[seat] - (1 if deciding else 0)
        marks = self.lack_marks[seat]
        if colour < NUM_COLOURS:
            marks[colour] = mark
        rank = face_rank(top) if top >= 0 else None
        if rank is not None:
            marks[LACK_RANK0 + rank] = mark
        marks[LACK_WILD] = mark

    def _pass_turn(self, seat: int) -> None:
        """The turn passes to ``seat`` (possibly the same seat) and starts clean.

        docs/engine.md: phase PLAY, ``declared`` false, ``drawn`` -1, ``pending`` 0,
        ``wd4_seat`` -1 -- even when the same seat plays again (two-player Skip) -- and no
        penalty kind or effect still to resolve.
        """
        self.current = seat
        self.declared = False
        self.phase = PHASE_PLAY
        self.drawn = -1
        self.pending = 0
        self.wd4_seat = -1
        self.penalty_kind = 0
        self.effect_face = -1
        self.effect_seat = -1

    # ------------------------------------------------------------------ drawing decisions

    def _voluntary_draw(self) -> None:
        """``draw`` in PLAY: draw one card (or, ``until_playable``, until one is playable or
        ``draw_cap`` were drawn); then decide on the last card drawn."""
        seat = self.current
        last: int | None = None
        playable = False
        limit = self.sw.draw_cap if self.sw.draw_rule == "until_playable" else 1
        for count in range(1, limit + 1):
            got = self._draw(seat, 1)
            if not got:
                break
            last = got[0]
            playable = self.is_playable(seat, last)
            if playable:
                break
            if count == limit and limit > 1:
                self.events["draw_cap_reached"] += 1
        if self.sw.draw_rule == "until_playable" and last is not None:
            self.events["until_playable_draw"] += 1
        if self.sw.after_draw == "rlcard":
            self._rlcard_after_draw(last)
        elif last is not None and playable:
            self.events["drew_playable"] += 1
            self.phase = PHASE_AFTER_DRAW
            self.drawn = last
        else:
            self._pass_turn(self.ahead(1))

    def _rlcard_after_draw(self, face: int | None) -> None:
        """``after_draw: rlcard``: a drawn wild is played at once with a random colour (a W+4
        without its penalty), a drawn card of the current colour is played at once with its
        effect, anything else is kept and the turn passes."""
        if face is None:
            self._pass_turn(self.ahead(1))
        elif face in (WILD, WILD_DRAW_FOUR):
            stream = self.hand_no * HAND_STREAM_STRIDE + RLCARD_COLOUR_STREAM + self.turn
            colour = self._randint(stream, NUM_COLOURS)
            self.events["rlcard_autoplay_" + ("wd4" if face == WILD_DRAW_FOUR else "w")] += 1
            self._play(face, colour, penalty_free=face == WILD_DRAW_FOUR)
        elif face_colour(face) == self.colour:
            self.events["rlcard_autoplay_colour"] += 1
            self._play(face, face_colour(face))
        else:
            self.events["rlcard_keep"] += 1
            self._pass_turn(self.ahead(1))

    def _take_stacked_penalty(self) -> None:
        """``draw`` in STACK: the victim draws ``pending`` and loses its turn."""
        self.events["stack_taken"] += 1
        if self.pending > 4:
            self.events["stack_taken_big"] += 1
        self._draw(self.current, self.pending)
        self.wd4_illegal = False  # resolved (docs silent)
        self._pass_turn(self.ahead(1))

    def _challenge(self) -> None:
        """Resolve a challenge of the Wild Draw Four played by ``wd4_seat`` (CHALLENGE, STACK).

        Guilty: ``wd4_seat`` draws 4 and the challenger takes a normal turn (the chain ends).
        Innocent: the challenger draws ``pending + 2`` and the turn passes.
        """
        guilty = self.wd4_illegal
        where = "stack_" if self.phase == PHASE_STACK else ""
        # docs/engine.md "Public history": the verdict tells the colour of the accused's
        # choice (a Wild Draw Four chosen in a normal turn, nothing drawn since) held or not.
        accused = self.wd4_seat
        verdict_colour = self.choice_colour[accused]
        if not (
            self.choice_draws[accused] == self.seat_draws[accused]
            and self.last_played[accused] == WILD_DRAW_FOUR
            and 0 <= verdict_colour < NUM_COLOURS
        ):
            verdict_colour = -1
        self.wd4_illegal = False  # resolved (docs silent)
        self.events[f"{where}challenge_guilty" if guilty else f"{where}challenge_innocent"] += 1
        if guilty:
            if verdict_colour >= 0:
                self.shown_holds[accused][verdict_colour] = True
            self._draw(self.wd4_seat, 4)
            self._pass_turn(self.current)
        else:
            if verdict_colour >= 0:
                self.lack_marks[accused][verdict_colour] = self.seat_draws[accused]
            self._draw(self.current, self.pending + 2)
            self._pass_turn(self.ahead(1))

    # ------------------------------------------------------------------ playing a card

    def _put_down(self, face: int, colour: int) -> int:
        """Step 1: the card leaves the current hand onto the discard pile; returns cards left.

        Sets top and colour, judges a Wild Draw Four against the previous colour, and exposes
        a player who went down to one card without declaring.
        """
        seat = self.current
        hand = self.hands[seat]
        if face == WILD_DRAW_FOUR:
            self.wd4_illegal = self.holds_colour(seat, self.colour)
        hand[face] -= 1
        self.last_played[seat] = face
        if face in (WILD, WILD_DRAW_FOUR):
            self.last_named[seat] = colour
        else:
            self.shown_lacks[seat][face_colour(face)] = False
            self.shown_holds[seat][face_colour(face)] = False  # maybe the card it held
        self.discard.append(face)
        self.top = face
        self.colour = colour
        self.drawn = -1
        cards_left = sum(hand)
        if cards_left == 1 and not self.declared and self.sw.uno_call:
            self.uno_exposed = seat
            self.events["exposed"] += 1
        return cards_left

    def _play(self, face: int, colour: int, *, penalty_free: bool = False) -> None:
        """A play in PLAY, AFTER_DRAW or JUMP_IN (docs "Playing a card: order of resolution").

        ``penalty_free``: a Wild Draw Four auto-played under ``after_draw: rlcard`` acts as a
        Wild.
        """
        seat = self.current
        if self.phase == PHASE_JUMP_IN:
            self._count_jump_in(face)
        if self._put_down(face, colour) == 0:  # (an auto-played card never empties a hand)
            self._go_out(seat, face, penalty_of(face))
            return
        if self.sw.jump_in and face != WILD_DRAW_FOUR:
            holder = self._next_holder(face, seat, seat)
            if holder is not None:
                self.events["jump_in_window"] += 1
                self._pass_turn(holder)
                self.phase = PHASE_JUMP_IN
                self.effect_face = face
                self.effect_seat = seat
                return
        self._resolve(face, seat, amount=penalty_of(face), penalty_free=penalty_free)

    def _count_jump_in(self, face: int) -> None:
        self.events["jump_in"] += 1
        if face_rank(face) == SKIP:
            self.events["jump_in_skip"] += 1
        if face == WILD:
            self.events["jump_in_wild"] += 1
        if self.current != self.ahead(1, self.effect_seat):
            self.events["jump_in_out_of_turn"] += 1

    def _stack_play(self, face: int, colour: int) -> None:
        """A play in STACK: a stacked Draw Two / Wild Draw Four, or a deflecting Reverse."""
        seat = self.current
        previous_kind = self.penalty_kind
        if face_rank(face) == REVERSE:
            self.events["deflect"] += 1
            if self.num_players == 2:
                self.events["deflect_2p"] += 1
            pending = self.pending
            if self._put_down(face, colour) == 0:
                self.events["stack_final"] += 1
                self._go_out(seat, face, pending, deflect=True)
                return
            self._deflect(seat, pending, previous_kind)
            return
        kind = penalty_of(face)
        self.events[f"stack_{kind}_on_{previous_kind}"] += 1
        amount = self.pending + kind if self.sw.stack_cumulative else self.pending
        if self._put_down(face, colour) == 0:
            self.events["stack_final"] += 1
            self._go_out(seat, face, amount)
            return
        self._resolve(face, seat, amount=amount)

    def _deflect(self, seat: int, pending: int, kind: int) -> None:
        """A deflecting Reverse: the direction flips and the penalty goes 1 seat ahead (back
        to the seat that played it), in phase STACK."""
        self.direction = -self.direction
        self._pass_turn(self.ahead(1, seat))
        self.phase = PHASE_STACK
        self.pending = pending
        self.penalty_kind = kind

    def _resolve(self, face: int, seat: int, *, amount: int, penalty_free: bool = False) -> None:
        """Step 4: the effect of ``face`` played by ``seat``.

        ``amount`` is what the victim of a Draw Two / Wild Draw Four faces (``p``, or the
        chain's total when stacked). ``penalty_free`` makes a Wild Draw Four act as a Wild.
        """
        rank = face_rank(face)
        sw = self.sw
        if face == WILD or (face == WILD_DRAW_FOUR and penalty_free):
            self._pass_turn(self.ahead(1, seat))
        elif is_penalty(face):
            self._penalise(seat, face, amount)
        elif rank == SKIP:
            self._pass_turn(self.ahead(2, seat))
        elif rank == REVERSE:
            self.direction = -self.direction
            if self.two_player_rules:
                self.events["two_player_reverse"] += 1
                self._pass_turn(seat)
            else:
                self._pass_turn(self.ahead(1, seat))
        elif sw.seven_zero and rank == ZERO:
            self._rotate_hands()
            self._pass_turn(self.ahead(1, seat))
        elif sw.seven_zero and rank == SEVEN and self.active(seat):
            came_back = self.current != seat
            self.current = seat
            self.phase = PHASE_SWAP_TARGET
            self.effect_face = face
            self.effect_seat = seat
            self.pending = 0
            self.wd4_seat = -1
            self.penalty_kind = 0
            if came_back:
                self.declared = False  # `declared` belongs to the seat that must act
        else:
            if sw.seven_zero and rank == SEVEN:
                self.events["seven_swaps_nothing"] += 1
            self._pass_turn(self.ahead(1, seat))

    def _penalise(self, seat: int, face: int, amount: int) -> None:
        """A Draw Two / Wild Draw Four played by ``seat``: its victim stacks, challenges, or
        draws ``amount`` at once and loses its turn."""
        victim = self.ahead(1, seat)
        kind = penalty_of(face)
        if self.has_response(kind):
            self.events["stack_opened"] += 1
            self._pass_turn(victim)
            self.phase = PHASE_STACK
            self.pending = amount
            self.penalty_kind = kind
            if face == WILD_DRAW_FOUR:
                self.wd4_seat = seat
        elif face == WILD_DRAW_FOUR and self.challenge_enabled:
            self._pass_turn(victim)
            self.phase = PHASE_CHALLENGE
            self.pending = amount
            self.wd4_seat = seat
        else:
            self._draw(victim, amount)
            self._pass_turn(self.ahead(2, seat))

    # ------------------------------------------------------------------ jump-in

    def _next_holder(self, face: int, seat: int, after: int) -> int | None:
        """The first active seat after ``after`` in turn order, before coming back to
        ``seat``, that holds ``face``; None if there is none."""
        other = after
        for _ in range(self.num_players):
            other = (other + self.direction) % self.num_players
            if other == seat:
                return None
            if self.active(other) and self.hands[other][face] > 0:
                return other
        return None

    def _pass_window(self) -> None:
        """``pass`` in JUMP_IN: the next holder gets the window, or it closes and the effect
        of ``effect_face`` played by ``effect_seat`` resolves."""
        self.events["jump_in_pass"] += 1
        face, seat = self.effect_face, self.effect_seat
        holder = self._next_holder(face, seat, self.current)
        if holder is not None:
            self.events["jump_in_window_moves"] += 1
            self.current = holder
            self.declared = False
            return
        self.events["jump_in_window_closed"] += 1
        self.effect_face = -1
        self.effect_seat = -1
        self._resolve(face, seat, amount=penalty_of(face))

    # ------------------------------------------------------------------ seven-zero

    def _rotate_hands(self) -> None:
        """A 0 under ``seven_zero``: every active hand passes to the next active seat in the
        direction of play."""
        self.events["rotate_hands"] += 1
        # docs/engine.md: "holds" facts do not travel with the hands; they are dropped.
        self.shown_holds = [[False] * NUM_COLOURS for _ in range(self.num_players)]
        seats = self.active_seats()
        old = {s: (self.hands[s], self.shown_lacks[s]) for s in seats}
        since = {s: [self.seat_draws[s] - m for m in self.lack_marks[s]] for s in seats}
        for s in seats:  # the lacks facts travel with the hand they describe
            to = self.ahead(1, s)
            self.hands[to], self.shown_lacks[to] = old[s]
            self.lack_marks[to] = [self.seat_draws[to] - a for a in since[s]]
            self.choice_draws[to] = -1
        self.uno_exposed = -1

    def _swap(self, k: int) -> None:
        """``swap:k`` in SWAP_TARGET: swap hands with the seat ``k`` places ahead in seat
        order, then the turn passes 1 ahead of the player."""
        seat = self.current
        target = (seat + k) % self.num_players
        self.events["swap"] += 1
        self.shown_holds[seat] = [False] * NUM_COLOURS  # docs/engine.md: dropped
        self.shown_holds[target] = [False] * NUM_COLOURS
        self.hands[seat], self.hands[target] = self.hands[target], self.hands[seat]
        lacks = self.shown_lacks
        lacks[seat], lacks[target] = lacks[target], lacks[seat]
        marks, draws = self.lack_marks, self.seat_draws
        self.choice_draws[seat] = self.choice_draws[target] = -1
        marks[seat], marks[target] = (
            [m - draws[target] + draws[seat] for m in marks[target]],
            [m - draws[seat] + draws[target] for m in marks[seat]],
        )
        self.uno_exposed = -1
        self._pass_turn(self.ahead(1, seat))

    # ------------------------------------------------------------------ end of hand

    def _go_out(self, seat: int, face: int, amount: int, *, deflect: bool = False) -> None:
        """Step 2: ``seat`` played its last card ``face``.

        Without ``play_to_last`` the hand ends; a final Draw Two / Wild Draw Four (or a final
        deflecting Reverse) still makes its victim draw ``amount``. With ``play_to_last`` the
        seat gets its finishing rank and, unless one active seat is left, the card's effect
        resolves (no jump-in window; a 7 swaps nothing).
        """
        self.events["went_out"] += 1
        if not self.sw.play_to_last:
            self._final_penalty(seat, face, amount, deflect)
            self._finish_hand(seat)
            return
        rank = sum(1 for r in self.finish_rank if r >= 0)
        self.finish_rank[seat] = rank
        if rank == 0:
            self.winner = seat
            self._score_first_out = True
        active = self.active_seats()
        if len(active) == 1:
            self._final_penalty(seat, face, amount, deflect)
            self.finish_rank[active[0]] = rank + 1
            self.events["play_to_last_complete"] += 1
            self._finish_hand(self.winner)
            return
        self.events["play_to_last_continues"] += 1
        if deflect:
            self._deflect(seat, amount, self.penalty_kind)
        else:
            self._resolve(face, seat, amount=amount)

    def _final_penalty(self, seat: int, face: int, amount: int, deflect: bool) -> None:
        """The victim of a last Draw Two / Wild Draw Four (or deflecting Reverse) draws.

        A last Skip, Reverse or other card has no effect (the direction stays).
        """
        if deflect:
            self.events["final_deflect"] += 1
            self._draw(self.ahead(1, seat, -self.direction), amount)
        elif is_penalty(face) and amount > 0:
            self.events["final_draw_two" if face != WILD_DRAW_FOUR else "final_wd4"] += 1
            self._draw(self.ahead(1, seat), amount)
        elif face_rank(face) == REVERSE:
            self.events["final_reverse"] += 1

    def hand_value(self, seat: int) -> int:
        """Points left in ``seat``'s hand (a lone 0 counts 50 with ``zero_scores_fifty``)."""
        hand = self.hands[seat]
        if self.sw.zero_scores_fifty and sum(hand) == 1:
            face = hand.index(1)
            if face_rank(face) == ZERO:
                self.events["zero_scores_fifty"] += 1
                return 50
        return sum(int(FACE_POINTS[f]) * count for f, count in enumerate(hand))

    def winner_takes_points(self, winner: int) -> list[int]:
        """Hand points under ``winner_takes``: the winner scores the points left in the other
        hands; under ``teams`` both partners score the two opposing hands."""
        n = self.num_players
        points = [0] * n
        if self.sw.teams:
            self.events["team_win"] += 1
            team_points = self.hand_value((winner + 1) % n) + self.hand_value((winner + 3) % n)
            points[winner] = points[self.partner(winner)] = team_points
        else:
            points[winner] = sum(self.hand_value(s) for s in range(n) if s != winner)
        return points

    def partner(self, seat: int) -> int:
        """The partner of ``seat`` under ``teams`` (seats 0+2 and 1+3)."""
        return (seat + 2) % self.num_players

    def _finish_hand(self, winner: int) -> None:
        """The hand is over: ``winner`` went out (first). It is scored after the step."""
        self.events["won"] += 1
        self.done = True
        self.winner = winner
        self.phase = PHASE_OVER
        self._clear_decision()  # nobody acts any more (docs silent)
        self._score_hand = True

    def _settle_scores(self) -> None:
        """Score what happened in this step, once every card of the step is drawn.

        Under ``play_to_last`` the first seat out scores (``winner_takes``) the points left in
        the other hands when the step that took it out is over, i.e. after a final Draw Two /
        Wild Draw Four's victim drew (docs: "at the moment it went out"; the core does this
        too, and sets ``winner`` and ``hand_points`` then, even if the hand is truncated
        later). At the end of the hand: ``penalty_points`` gives every seat its own hand's
        points; ``winner_takes`` the winner (and partner, ``teams``) the others' points.
        """
        if self._score_first_out:
            self._score_first_out = False
            self.hand_points = self.winner_takes_points(self.winner)
        if not self._score_hand:
            return
        self._score_hand = False
        n = self.num_players
        if self.sw.scoring == "penalty_points":
            self.events["penalty_points_scored"] += 1
            self.hand_points = [self.hand_value(s) for s in range(n)]
        elif not self.sw.play_to_last:
            self.hand_points = self.winner_takes_points(self.winner)
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

    @property
    def holds_bits(self) -> list[int]:
        """``shown_holds`` of each seat as a bit set (bit c: colour c), for comparisons."""
        return [sum(1 << c for c, held in enumerate(row) if held) for row in self.shown_holds]

    @property
    def lacks_bits(self) -> list[int]:
        """``shown_lacks`` of each seat as a bit set (bit c: colour c), for comparisons."""
        return [sum(1 << c for c, lacking in enumerate(row) if lacking) for row in self.shown_lacks]

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
            "penalty_kind": self.penalty_kind,
            "effect_face": self.effect_face,
            "effect_seat": self.effect_seat,
            "finish_rank": list(self.finish_rank),
            "seat_draws": list(self.seat_draws),
            "shown_lacks": [list(row) for row in self.shown_lacks],
            "lack_marks": [list(row) for row in self.lack_marks],
            "choice_colour": list(self.choice_colour),
            "choice_top": list(self.choice_top),
            "choice_draws": list(self.choice_draws),
            "last_played": list(self.last_played),
            "last_named": list(self.last_named),
            "pile_faces": list(self.pile_faces),
            "shown_holds": [list(row) for row in self.shown_holds],
        }
