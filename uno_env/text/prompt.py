"""The prompts a language model reads: the rules in words, and one decision at a time.

:func:`system_prompt` states the active rules (:func:`rules_in_words`), the card notation
and the answer forms accepted. :func:`decision_prompt` turns a seat's view
(:func:`uno_env.text.view.seat_view`) into the text of one decision and the labels a
model may answer (:class:`Prompt`).

The contract. When :attr:`PromptOptions.list_moves` is on, the prompt holds exactly one
line beginning ``Legal moves: ``, listing every legal action separated by ``", "``, each
in the lab's action notation (:func:`uno_env.cards.action_name`: ``G7``, ``W:B``,
``W+4:R``, ``draw``, ``keep``, ``challenge``, ``colour:G``, ``swap:1`` ...), optionally
followed by a gloss in parentheses (glosses never contain parentheses)::

    Legal moves: G7 (green 7), W:B (wild, name blue), draw (draw a card)

In letters mode each move is preceded by its letter::

    Legal moves: A) G7 (green 7), B) W:B (wild, name blue), C) draw (draw a card)

So a program recovers the legal moves by removing each `` (...)`` gloss, splitting on
``", "`` and, in letters mode, reading the ``X) `` prefix. Letters run ``A`` to ``Z``, then
``AA``, ``AB`` ... for the rare decision with more than 26 legal moves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from uno_env import cards as C
from uno_env.config_values import ConfigError
from uno_env.files import shown
from uno_env.rules import Rules
from uno_env.text.rules_words import rules_in_words
from uno_env.text.view import colour_word

__all__ = [
    "LEGAL_MOVES",
    "Prompt",
    "PromptOptions",
    "choice_labels",
    "decision_prompt",
    "move_gloss",
    "system_prompt",
]

LEGAL_MOVES = "Legal moves: "
"""The beginning of the one line that lists the legal moves (the contract above)."""

_VIEWS = ("full", "changes")
_CHOICES = ("names", "letters")


@dataclass(frozen=True)
class PromptOptions:
    """How decisions are put to a model.

    Attributes:
        view: ``"full"``: every prompt states the whole table as the seat sees it;
            ``"changes"``: a prompt tells what happened since the seat's last decision (the
            ``since`` sentences) and only what the decision needs (hand, top card, colour,
            card counts); with nothing to tell (a first decision) it states the whole table.
        list_moves: List the legal moves on a ``Legal moves:`` line.
        choices: ``"names"``: the model answers a move's notation (``G7``); ``"letters"``:
            each listed move has a letter and the model may answer it (needs
            ``list_moves``).
        glosses: A few words in parentheses after each listed move (``G7 (green 7)``).

    Raises:
        ConfigError: naming the option and the value given, for a value outside the
            choices above or letters without listed moves.
    """

    view: Literal["full", "changes"] = "full"
    list_moves: bool = True
    choices: Literal["names", "letters"] = "names"
    glosses: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.view, str) or self.view not in _VIEWS:
            raise ConfigError(f"view: expected 'full' or 'changes', got {shown(self.view)}")
        if not isinstance(self.choices, str) or self.choices not in _CHOICES:
            raise ConfigError(f"choices: expected 'names' or 'letters', got {shown(self.choices)}")
        for name in ("list_moves", "glosses"):
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise ConfigError(f"{name}: expected true or false, got {shown(value)}")
        if self.choices == "letters" and not self.list_moves:
            raise ConfigError(
                "choices: 'letters' needs list_moves: true (the letters label the listed moves)"
            )


@dataclass(frozen=True)
class Prompt:
    """One decision as text, and the labels a model may answer.

    Attributes:
        text: The prompt.
        choices: Each label a model may answer, mapped to its action id, in the order the
            moves are listed (action-id order): the notation (``"G7"``) in names mode, the
            letters (``"A"``, ``"B"`` ...) in letters mode.
        glosses: The words of each legal move by notation (``{"G7": "green 7"}``), listed or
            not: an answer that repeats them is understood.
    """

    text: str
    choices: dict[str, int]
    glosses: Mapping[str, str] = field(default_factory=dict)

    @property
    def actions(self) -> list[int]:
        """The legal action ids, in the order listed."""
        return list(self.choices.values())


# ------------------------------------------------------------------ glosses

_RANK_WORDS = (*(str(d) for d in range(10)), "skip", "reverse", "draw two")


def _card_words(face: int) -> str:
    if face == C.WILD:
        return "wild"
    if face == C.WILD_DRAW_FOUR:
        return "wild draw four"
    colour = C.COLOURS[face // C.NUM_RANKS]
    return f"{colour_word(colour)} {_RANK_WORDS[face % C.NUM_RANKS]}"


def _seat_name(seat: int, view: Mapping[str, Any]) -> str:
    return "you" if seat == view["seat"] else f"seat {seat}"


def move_gloss(action: int, view: Mapping[str, Any]) -> str:
    """A few words saying what a legal move does, for the decision of ``view``."""
    face = int(C.ACTION_FACE[action])
    if face >= 0:
        words = _card_words(face)
        if face >= C.WILD:
            return f"{words}, name {colour_word(C.COLOURS[int(C.ACTION_COLOUR[action])])}"
        return words
    if action == C.DRAW:
        pending = view.get("pending_penalty", 0)
        return f"take the {pending} penalty cards" if pending else "draw a card"
    if action == C.KEEP:
        return "keep the drawn card"
    if action == C.CHALLENGE:
        return "challenge the Wild Draw Four"
    if action == C.ACCEPT:
        return f"draw {view.get('pending_penalty', 4)}"
    if action == C.UNO:
        return "call UNO"
    if action == C.CATCH:
        caught = view.get("catchable_seat")
        return "catch a missing UNO" if caught is None else f"catch seat {caught} without UNO"
    if action == C.PASS:
        return "do not jump in"
    if C.NAME_COLOUR <= action < C.SWAP:
        return f"name {colour_word(C.COLOURS[action - C.NAME_COLOUR])}"
    target = (view["seat"] + action - C.SWAP + 1) % view["players"]
    return f"swap hands with seat {target}"


def choice_labels(count: int) -> list[str]:
    """The letters of ``count`` listed moves: ``A`` .. ``Z``, then ``AA``, ``AB`` ..."""
    letters = [chr(ord("A") + i) for i in range(26)]
    out = letters[:count]
    for first in letters:
        if len(out) >= count:
            break
        out += [first + second for second in letters][: count - len(out)]
    return out


_ACTION_IDS = {name: i for i, name in enumerate(C.ACTION_NAMES)}
_LETTERS = choice_labels(C.NUM_ACTIONS)


# ------------------------------------------------------------------ the decision


def _situation(view: Mapping[str, Any]) -> str:
    decision = view["decision"]
    if decision == "drawn_card":
        return (
            f"You drew {view['drawn_card']}, which you may play: play it now or keep it "
            "(your turn then ends)."
        )
    if decision == "challenge":
        who = _seat_name(view["wild_draw_four_from"], view)
        pending = view["pending_penalty"]
        return (
            f"{who.capitalize()} played a Wild Draw Four on you. Accept: you draw {pending}. "
            f"Challenge: if {who} held a card of the colour to match, {who} draws 4 instead; "
            f"if not, you draw {pending + 2}."
        )
    if decision == "colour":
        return "The starter card is a Wild: name the colour to play, then play."
    if decision == "stack":
        return (
            f"You face a draw penalty of {view['pending_penalty']} cards: pass it on with a "
            "card that stacks on it, or draw to take them."
        )
    if decision == "jump_in":
        return f"You hold {view['jump_in_card']} too: jump in with it out of turn, or pass."
    if decision == "swap":
        return "You played a 7: choose whose hand to swap yours with."
    return (
        "Your turn: play a card that matches the colour or the number or symbol of the top "
        "card, or a wild, or draw."
    )


def _others_line(o: Mapping[str, Any]) -> str:
    where = {"next": "next to play", "previous": "plays just before you"}.get(
        o["position"], f"plays {o['position']} from you"
    )
    parts = [f"seat {o['seat']} ({where}{', your partner' if o['partner'] else ''})"]
    if o["out"]:
        parts.append("out of the hand")
    else:
        parts.append(f"{o['cards']} card{'s' if o['cards'] != 1 else ''}")
    if o["uno"] == "called":
        parts.append("UNO called")
    elif o["uno"] == "catchable":
        parts.append("one card and no UNO called: catchable")
    if o["last_played"] is not None:
        last = o["last_played"]
        if o["last_named"] is not None and last in ("W", "W+4"):
            last += f" naming {colour_word(o['last_named'])}"
        parts.append(f"last played {last}")
    return "- " + ", ".join(parts)


def _table_lines(view: Mapping[str, Any], full: bool) -> list[str]:
    hand = view["hand"]
    lines = []
    if full:
        lines.append(
            f"Hand {view['hand_number']}, decision {view['turn'] + 1} of the hand. You are "
            f"seat {view['seat']} of {view['players']} players."
        )
    lines.append(f"Your hand ({len(hand)} card{'s' if len(hand) != 1 else ''}): {' '.join(hand)}")
    lines.append(f"Top card: {view['top_card']}. Colour to match: {colour_word(view['colour'])}.")
    if full:
        if view["players"] > 2:
            lines.append(f"Play goes {view['direction']}.")
        lines.append(
            f"Draw pile: {view['draw_pile']} cards. Discard pile: {view['discard_pile']} cards."
        )
        lines.append("Other players, in the order of play:")
        lines += [_others_line(o) for o in view["others"]]
        match = view["match"]
        scores = ", ".join(
            f"{_seat_name(seat, view)}: {score}" for seat, score in enumerate(match["scores"])
        )
        goal = (
            "the match ends when a total reaches {t}; the lowest total wins"
            if match["lowest_wins"]
            else "the first to reach {t} wins the match"
        ).format(t=match["target_score"])
        lines.append(f"Match scores: {scores} ({goal}).")
    else:
        counts = "; ".join(
            f"seat {o['seat']} {o['cards'] if not o['out'] else 'out'}"
            + (" (UNO called)" if o["uno"] == "called" else "")
            + (" (catchable)" if o["uno"] == "catchable" else "")
            for o in view["others"]
        )
        lines.append(f"Cards held, in the order of play: {counts}.")
    if view["you"]["catchable"]:
        lines.append("You are down to one card and did not call UNO: you can be caught.")
    return lines


def decision_prompt(
    view: Mapping[str, Any], options: PromptOptions, since: Sequence[str] = ()
) -> Prompt:
    """The text of the decision ``view`` asks for, and the labels a model may answer.

    Args:
        view: A :func:`~uno_env.text.view.seat_view` of the seat that must act.
        options: How the decision is put (see :class:`PromptOptions`).
        since: Sentences saying what happened since the seat's last decision (the
            narrator's, or :func:`~uno_env.text.view.changes_between`); shown in the
            ``"changes"`` view, ignored in the ``"full"`` view.

    Returns:
        The prompt (see the module docstring for its ``Legal moves:`` line).

    Raises:
        ValueError: for a view of a seat that has no decision to take.
    """
    legal = view["legal_moves"]
    if view.get("decision") is None or not legal:
        raise ValueError(
            f"seat {view.get('seat')} has no decision to take in this view (not its move)"
        )
    actions = [_ACTION_IDS[name] for name in legal]
    glosses = {name: move_gloss(a, view) for name, a in zip(legal, actions, strict=True)}
    changes = options.view == "changes" and bool(since)
    lines: list[str] = []
    if changes:
        lines.append("Since your last decision:")
        lines += [f"- {line}" for line in since]
    lines += _table_lines(view, full=not changes)
    lines.append(_situation(view))
    letters = options.choices == "letters"
    if letters:
        labels = (
            _LETTERS[: len(legal)] if len(legal) <= len(_LETTERS) else choice_labels(len(legal))
        )
        choices = dict(zip(labels, actions, strict=True))
    else:
        labels = legal
        choices = dict(zip(legal, actions, strict=True))
    if options.list_moves:
        items = []
        for label, name in zip(labels, legal, strict=True):
            item = f"{label}) {name}" if letters else name
            items.append(f"{item} ({glosses[name]})" if options.glosses else item)
        lines.append(LEGAL_MOVES + ", ".join(items))
        lines.append(
            "Answer with the letter of exactly one legal move."
            if letters
            else "Answer with exactly one legal move, in the notation listed."
        )
    else:
        lines.append(
            "Answer with exactly one legal move in the card notation (such as G7, W:B or draw)."
        )
    return Prompt(text="\n".join(lines), choices=choices, glosses=glosses)


_NOTATION = (
    "Card notation: a colour letter R (red), Y (yellow), G (green) or B (blue) followed by "
    "0-9, S (Skip), R (Reverse) or +2 (Draw Two): G7 is a green 7, RS a red Skip, B+2 a "
    "blue Draw Two. W is a Wild and W+4 a Wild Draw Four; playing one names its colour: "
    "W:B plays a Wild naming blue, W+4:R a Wild Draw Four naming red. Other moves: draw, "
    "keep (keep the card just drawn), challenge, accept, uno (call UNO), catch (catch a "
    "player who did not call UNO), pass, colour:G (name a colour) and swap:k (swap hands "
    "with the player k seats further on in seat order)."
)


def system_prompt(rules: Rules, options: PromptOptions) -> str:
    """The standing instructions: the game, its rules, the notation and the answer forms.

    Args:
        rules: The rules of the game.
        options: How decisions will be put (names or letters).

    Returns:
        The text of a system message.
    """
    if options.choices == "letters":
        answer = (
            "Answer each decision with exactly one legal move: its letter from the Legal "
            "moves line (such as B), or its notation."
        )
    else:
        answer = "Answer each decision with exactly one legal move, in the notation (such as G7)."
    forms = (
        "You may think first; then end with a line 'Final answer: <move>', or write the move "
        'as <action><move></action>, or as JSON {"action": "<move>"}. Plain words such '
        "as 'green 7' or 'wild draw four, blue' are understood too. An answer that names "
        "two different moves, or a move that is not legal, is refused and asked again once; "
        "a second refusal draws a card (or keeps the drawn card, or takes the first legal "
        "move) for you."
    )
    return "\n\n".join(
        [
            "You are playing a game of UNO. Play to win.",
            "Rules:\n" + rules_in_words(rules),
            _NOTATION,
            answer + " " + forms,
        ]
    )
