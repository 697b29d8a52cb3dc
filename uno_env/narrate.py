"""Plain words for a game of UNO seen from one seat: the narrator of ``uno-lab play``,
``uno-lab replay``, the browser table and the text env's ``"changes"`` view
(:mod:`uno_env.envs.text_env`).

Everything here reads what a step reported (its events: :mod:`uno_env.core.events`) and the
state it left (one game, B = 1), and says what happened the way a player at the table would: "player_2 draws 2 and is skipped", "you
challenged; the Wild Draw Four was legal: you draw 6". Only the listener's own cards are
ever named; other players' draws are counted, never shown (a replay may show every hand on
purpose, see :func:`unolab.play.replay`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from uno_env import cards as C
from uno_env import core
from uno_env.envs.render import colour_card
from uno_env.rules import Rules

__all__ = [
    "Table",
    "card_list",
    "colour_word",
    "describe_deal",
    "describe_hand_end",
    "describe_match_end",
    "describe_situation",
    "describe_step",
    "describe_table",
    "move_label",
    "offered_moves",
]

_COLOUR_WORDS = ("red", "yellow", "green", "blue")


def colour_word(colour: int) -> str:
    """``red``, ``yellow``, ``green`` or ``blue`` for a colour 0-3; ``not named`` otherwise."""
    return _COLOUR_WORDS[colour] if 0 <= colour < len(_COLOUR_WORDS) else "not named"


@dataclass(frozen=True)
class Table:
    """Who sits where, as the listener hears it.

    Args:
        names: One display name per seat; the listener's own seat is ``"you"``.
        listener: The seat whose cards may be named (``None``: nobody's, as for a spectator).
        colour: ANSI colours for cards.
    """

    names: Sequence[str]
    listener: int | None = None
    colour: bool = True

    def subject(self, seat: int, third: str, first: str) -> str:
        """``"you draw"`` or ``"player_1 (mixbot) draws"``: the seat with its verb."""
        return f"{self.names[seat]} {first if seat == self.listener else third}"

    def possessive(self, seat: int) -> str:
        """``"your"`` or ``"player_1 (mixbot)'s"``."""
        return "your" if seat == self.listener else f"{self.names[seat]}'s"

    def card(self, face: int) -> str:
        """A card name, coloured if the table uses colour."""
        return colour_card(C.FACE_NAMES[face], int(C.FACE_COLOUR[face]), self.colour)


def card_list(table: Table, faces: Sequence[int]) -> str:
    """Card names separated by spaces (``"-"`` for none)."""
    return " ".join(table.card(f) for f in faces) if len(faces) else "-"


def _faces(counts: np.ndarray) -> list[int]:
    """Face ids of a hand's count vector, sorted, with repeats."""
    return [f for f in range(C.NUM_FACES) for _ in range(int(counts[f]))]


def _count(n: int, what: str = "card") -> str:
    return f"{n} {what}{'s' if n != 1 else ''}"


def describe_deal(rules: Rules, state: core.UnoState, table: Table) -> list[str]:
    """The dealer, the starter card and what the starter did, for a freshly dealt hand."""
    dealer = int(state.dealer[0])
    top = int(state.top[0])
    first = int(state.current[0])
    lines = [
        f"Hand {int(state.hand_no[0]) + 1}: {table.subject(dealer, 'deals', 'deal')} "
        f"{_count(rules.hand_size)} each; the starter card is {table.card(top)}."
    ]
    events = int(state.step_events[0])
    if events & core.EVENT_RESHUFFLED:
        lines.append(
            "(A Wild Draw Four was turned up first: it went back and the deck was shuffled.)"
        )
    rank = int(C.FACE_RANK[top])
    skipped = int(state.step_skipped[0])
    for seat in np.flatnonzero(state.step_drawn[0] > 0):
        lines.append(
            f"The starter Draw Two: {table.subject(int(seat), 'draws', 'draw')} 2"
            + (" and is skipped." if int(seat) == skipped else " and still plays first.")
        )
    if rank == C.SKIP:
        lines.append(f"The starter Skip: {table.subject(skipped, 'is', 'are')} skipped.")
    elif rank == C.REVERSE and rules.num_players > 2:
        lines.append("The starter Reverse: play goes counter-clockwise and the dealer starts.")
    if int(state.phase[0]) == core.CHOOSE_COLOUR:
        lines.append(f"The starter is a Wild: {table.subject(first, 'names', 'name')} its colour.")
    elif top == C.WILD:
        lines.append(f"The starter is a Wild; its colour is {colour_word(int(state.colour[0]))}.")
    lines.append(f"{table.subject(first, 'plays', 'play')} first.")
    return lines


def describe_step(
    rules: Rules,
    before: core.UnoState,
    after: core.UnoState,
    seat: int,
    action: int,
    table: Table,
) -> list[str]:
    """What one step did, in plain words.

    Args:
        rules: The rules of the game.
        before: The state before the step (B = 1).
        after: The state after it.
        seat: The seat that acted.
        action: The action id it took.
        table: Names and the listener (whose drawn cards are named).

    Returns:
        One or more sentences; cards drawn are named only for the listener.
    """
    face = int(C.ACTION_FACE[action])
    played = face >= 0
    events = int(after.step_events[0])
    swapped = bool(events & core.EVENT_HANDS_MOVED)
    drawn = after.step_drawn[0].astype(np.int64)  # cards each seat drew in this step
    told: set[int] = set()

    def drew(who: int) -> str:
        """`` 2: G5 R1`` for the listener, `` 2`` for anyone else."""
        n = int(drawn[who])
        told.add(who)
        if who == table.listener and n > 0:
            # Which cards: the listener's own hand before and after (what they now hold).
            held = before.hands[0, who].astype(np.int64)
            if played and seat == who:
                held[face] -= 1
            new = after.hands[0, who].astype(np.int64) - held
            return f" {n}: {card_list(table, _faces(np.maximum(new, 0)))}"
        return f" {n}"

    lines: list[str] = []
    subject = table.subject
    phase = int(before.phase[0])
    if played:
        what = table.card(face)
        if face >= C.WILD:
            what += f" naming {colour_word(int(C.ACTION_COLOUR[action]))}"
        if phase == core.JUMP_IN:
            lines.append(f"{subject(seat, 'jumps', 'jump')} in with {what}.")
        elif phase == core.AFTER_DRAW:
            lines.append(f"{subject(seat, 'plays', 'play')} the card just drawn, {what}.")
        else:
            lines.append(f"{subject(seat, 'plays', 'play')} {what}.")
    elif action == C.DRAW:
        if phase == core.STACK:
            lines.append(
                f"{subject(seat, 'takes', 'take')} the penalty and draws" + drew(seat) + "."
            )
        elif drawn[seat] == 0:
            told.add(seat)
            lines.append(
                f"{subject(seat, 'tries', 'try')} to draw, but both piles are empty: the turn passes."
            )
        else:
            n = int(drawn[seat])
            text = f"{subject(seat, 'draws', 'draw')}" + (
                " a card" if n == 1 and seat != table.listener else drew(seat)
            )
            told.add(seat)
            keeps_turn = int(after.current[0]) == seat and int(after.phase[0]) == core.AFTER_DRAW
            if seat == table.listener and not keeps_turn and bool(after.live[0]):
                text += ": nothing playable, your turn ends"
            lines.append(text + ".")
    elif action == C.KEEP:
        kept = int(before.drawn[0])
        if seat == table.listener and kept >= 0:
            lines.append(f"You keep {table.card(kept)}; your turn ends.")
        else:
            lines.append(f"{subject(seat, 'keeps', 'keep')} the card just drawn.")
    elif action == C.CHALLENGE:
        bluffer = int(before.wd4_seat[0])
        if events & core.EVENT_BLUFF_CAUGHT:
            lines.append(
                f"{subject(seat, 'challenges', 'challenged')}: {table.possessive(bluffer)} Wild "
                f"Draw Four was illegal ({'you' if bluffer == table.listener else 'they'} could "
                "match the colour): "
                f"{subject(bluffer, 'draws', 'draw')}" + drew(bluffer) + "."
            )
        else:
            lines.append(
                f"{subject(seat, 'challenges', 'challenged')}; the Wild Draw Four was legal: "
                f"{subject(seat, 'draws', 'draw')}" + drew(seat) + "."
            )
    elif action == C.ACCEPT:
        lines.append(
            f"{subject(seat, 'accepts', 'accept')} the Wild Draw Four and "
            f"{'draw' if seat == table.listener else 'draws'}" + drew(seat) + "."
        )
    elif action == C.UNO:
        lines.append(f"{subject(seat, 'calls', 'call')} UNO!")
    elif action == C.CATCH:
        caught = int(before.uno_exposed[0])
        if caught >= 0:
            lines.append(
                f"{subject(seat, 'catches', 'catch')} {table.names[caught]} without UNO: "
                f"{subject(caught, 'draws', 'draw')}" + drew(caught) + "."
            )
    elif action == C.PASS:
        lines.append(f"{subject(seat, 'passes', 'pass')}.")
    elif C.NAME_COLOUR <= action < C.SWAP:
        colour = colour_word(action - C.NAME_COLOUR)
        lines.append(f"{subject(seat, 'names', 'name')} the starter's colour: {colour}.")
    elif action >= C.SWAP:
        target = (seat + action - C.SWAP + 1) % rules.num_players
        lines.append(f"{subject(seat, 'swaps', 'swap')} hands with {table.names[target]}.")
    if swapped and action < C.SWAP:
        lines.append("Everyone passes their hand on to the next player.")

    live = bool(after.live[0])
    skipped = int(after.step_skipped[0])
    two_player_reverse = played and int(C.FACE_RANK[face]) == C.REVERSE and skipped >= 0
    if two_player_reverse:
        skipped = -1  # told below, as the Reverse's own rule
    for other in (int(s) for s in np.flatnonzero(drawn > 0)):
        if other in told:
            continue
        text = f"{subject(other, 'draws', 'draw')}" + drew(other)
        if other == skipped:
            text += " and " + ("are" if other == table.listener else "is") + " skipped"
            skipped = -1
        lines.append(text + ".")
    if skipped >= 0:
        lines.append(f"{subject(skipped, 'is', 'are')} skipped.")
    if live and events & core.EVENT_DIRECTION and rules.num_players > 2:
        way = "clockwise" if int(after.direction[0]) > 0 else "counter-clockwise"
        lines.append(f"Play now goes {way}.")
    if live and two_player_reverse:
        lines.append(f"With two players a Reverse skips: {subject(seat, 'plays', 'play')} again.")
    if events & core.EVENT_RESHUFFLED:
        lines.append("The discards are shuffled into a new draw pile.")
    exposed = int(after.uno_exposed[0])
    if events & core.EVENT_UNO_EXPOSED and exposed >= 0:
        if exposed == table.listener:
            lines.append("You are down to one card without calling UNO: you can be caught.")
        else:
            lines.append(
                f"{table.names[exposed]} is down to one card and did not call UNO: "
                "catch them before your next move."
            )
    return lines


def describe_table(rules: Rules, state: core.UnoState, table: Table) -> list[str]:
    """The table as the listener sees it: top card, colour, every seat's count, own hand."""
    top = int(state.top[0])
    colour = int(state.colour[0])
    # With two players the turn alternates whichever way play goes: no direction is told.
    way = "clockwise" if int(state.direction[0]) > 0 else "counter-clockwise"
    going = f"play goes {way}; " if rules.num_players > 2 else ""
    lines = [
        f"Hand {int(state.hand_no[0]) + 1}, turn {int(state.turn[0]) + 1}; {going}"
        f"draw pile {C.DECK_SIZE - int(state.draw_pos[0])} cards.",
        f"Top card {table.card(top)}, colour "
        f"{colour_card(colour_word(colour), colour if colour < 4 else 4, table.colour)}.",
    ]
    width = max(len(name) for name in table.names)
    current = int(state.current[0])
    exposed = int(state.uno_exposed[0])
    for seat, name in enumerate(table.names):
        count = int(state.hand_size[0, seat])
        marker = ">" if seat == current and bool(state.live[0]) else " "
        text = f" {marker} {name:<{width}}  {_count(count)}"
        if int(state.finish_rank[0, seat]) >= 0:
            text += "  (out)"
        if seat == exposed:
            text += "  one card, no UNO called: catchable"
        lines.append(text)
    if table.listener is not None:
        lines.append(f"Your hand: {card_list(table, _faces(state.hands[0, table.listener]))}")
    return lines


def describe_situation(rules: Rules, state: core.UnoState, table: Table) -> str:
    """What the listener must decide now, in words (no engine phase names)."""
    phase = int(state.phase[0])
    if phase == core.AFTER_DRAW:
        return f"You drew a playable card, {table.card(int(state.drawn[0]))}: play it or keep it."
    if phase == core.CHALLENGE_PHASE:
        who = table.names[int(state.wd4_seat[0])]
        return (
            f"{who} played a Wild Draw Four on you. 'accept': you draw {int(state.pending[0])}. "
            f"'challenge': if {who} could have matched the colour, they draw 4 instead; "
            f"if not, you draw {int(state.pending[0]) + 2}."
        )
    if phase == core.CHOOSE_COLOUR:
        return "The starter is a Wild: name its colour, then play."
    if phase == core.STACK:
        return (
            f"You face {_count(int(state.pending[0]))} of penalty: stack a card on it, "
            "or 'draw' to take them."
        )
    if phase == core.JUMP_IN:
        face = int(state.effect_face[0])
        return f"You hold {table.card(face)} too: jump in with it, or 'pass'."
    if phase == core.SWAP_TARGET:
        return "You played a 7: choose whose hand to swap yours with."
    return "Your turn: play a card that matches the colour or the top card's symbol, or draw."


def offered_moves(legal: Sequence[int]) -> list[int]:
    """The legal moves worth offering a player: ``legal`` without an ``uno`` that cannot matter.

    The rules let a seat holding two cards declare UNO at any decision of its turn, but the
    declaration only spares it from being caught when it plays a card in that decision (the
    play that leaves one card); with no card to play (it can only draw, or take a penalty)
    its hand stays at two or more and the declaration lapses with the turn. Such an ``uno``
    is legal yet meaningless, so it is not offered (it is still accepted if typed).
    """
    can_play = any(action < C.NUM_PLAY_ACTIONS for action in legal)
    return [action for action in legal if action != C.UNO or can_play]


def move_label(action: int, table: Table, seat: int, num_players: int) -> str:
    """An action's name with a few words where the name alone is terse."""
    name = C.action_name(action)
    colour = int(C.ACTION_COLOUR[action])
    if C.PLAY_WILD <= action < C.DRAW or C.NAME_COLOUR <= action < C.SWAP:
        return colour_card(name, colour, table.colour) + f" ({colour_word(colour)})"
    if action < C.PLAY_WILD:
        return colour_card(name, colour, table.colour)
    if action >= C.SWAP:
        return f"{name} (with {table.names[(seat + action - C.SWAP + 1) % num_players]})"
    extra = {
        C.DRAW: "draw",
        C.KEEP: "keep the drawn card",
        C.UNO: "call UNO",
        C.CATCH: "catch a missing UNO",
        C.PASS: "let the chance go",
    }
    return f"{name}" + (f" ({extra[action]})" if action in extra and extra[action] != name else "")


def describe_match_end(rules: Rules, state: core.UnoState, table: Table) -> str:
    """The last line of a match, played or replayed: who won it, or who leads if it stopped.

    Args:
        rules: The rules (their scoring says whether the highest or the lowest total leads).
        state: The game after its last finished hand.
        table: Names; the listener's seat is addressed as "you".
    """
    scores = [int(s) for s in state.scores[0]]
    best = min(scores) if rules.scoring == "penalty_points" else max(scores)
    seats = [seat for seat, score in enumerate(scores) if score == best]
    who = " and ".join(table.names[seat] for seat in seats)
    plural = len(seats) > 1 or seats == [table.listener]
    hands = int(state.hand_no[0]) + 1
    after = f"after {_count(hands, 'hand')}"
    if bool(state.match_over[0]):
        return (
            f"Game over: {who} {'win' if plural else 'wins'} the match with {best} points {after}."
        )
    return (
        f"Game over {after} (match not finished; {who} {'lead' if plural else 'leads'} "
        f"with {best})."
    )


def describe_hand_end(
    rules: Rules, state: core.UnoState, table: Table, hands: np.ndarray
) -> list[str]:
    """The hand's outcome, every hand revealed with its points, and the match scores.

    Args:
        rules: The rules.
        state: The finished hand.
        table: Names (every hand is shown, the hand being over).
        hands: The seats' hands at the end (counts per face, shape (N, 54)).
    """
    lines: list[str] = []
    winner = int(state.winner[0])
    points = [int(p) for p in state.hand_points[0]]
    if bool(state.done[0]) and winner >= 0:
        lines.append(
            f"Hand {int(state.hand_no[0]) + 1} over: {table.subject(winner, 'goes', 'go')} out "
            f"and {'score' if winner == table.listener else 'scores'} {points[winner]} points."
        )
    else:
        lines.append(
            f"Hand {int(state.hand_no[0]) + 1} over: cut at {rules.max_turns} turns "
            "(max_turns), no winner, no points."
        )
    width = max(len(name) for name in table.names)
    for seat, name in enumerate(table.names):
        faces = _faces(hands[seat])
        worth = int(sum(int(C.FACE_POINTS[f]) for f in faces))
        lines.append(
            f"   {name:<{width}}  {card_list(table, faces) if faces else '(no cards)'}"
            f"  [cards worth {worth}; scores {points[seat]}]"
        )
    totals = ", ".join(
        f"{name} {int(score)}" for name, score in zip(table.names, state.scores[0], strict=True)
    )
    goal = "lowest total wins" if rules.scoring == "penalty_points" else "first to reach it wins"
    lines.append(f"Match scores: {totals} (target {rules.target_score}; {goal}).")
    return lines
