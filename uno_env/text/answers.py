"""Reading a model's answer into an action, the feedback for a refused one, the fallback.

:func:`parse_answer` forgives the forms models write: the notation in any case (``g7``,
``w:b``), plain words (``green 7``, ``wild draw four, blue``, ``draw a card``), the letter of
a listed move in letters mode, and three wrappers whose content is read alone: an
``<action>…</action>`` tag, a ``Final answer:`` line, and a JSON object with an ``action``
key. A ``<think>…</think>`` block is skipped. Without a wrapper, a longer text is searched
for the moves it names: it must name exactly one legal move (repeating it is fine, and moves
that are not legal are then ignored); words that name no single move (``wild``, ``play it``)
count only as a whole answer. An answer that names two different legal moves, only
moves that are not legal, or nothing recognisable is invalid, with a one-sentence reason.

:func:`retry_message` is the feedback for an invalid answer; :func:`fallback_action` is the
documented fallback after a second invalid answer: ``draw`` when drawing is legal, else
``keep``, else the first legal move listed.

Everything here is plain dict look-ups over words, with the patterns compiled once at
import: reading an answer costs microseconds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from uno_env import cards as C
from uno_env.text.prompt import Prompt

__all__ = ["FORMS", "Answer", "fallback_action", "parse_answer", "retry_message"]

FORMS = ("notation", "letter", "natural", "tag", "final_answer", "json")
"""The forms an answer may take (:attr:`Answer.form`)."""


@dataclass(frozen=True)
class Answer:
    """A model's answer, read.

    Attributes:
        action: The action id, or ``None`` for an invalid answer.
        error: Why the answer is invalid (one sentence, usable as feedback), else ``None``.
        form: The form that was read: ``"notation"``, ``"letter"``, ``"natural"``, or the
            wrapper it came in: ``"tag"``, ``"final_answer"``, ``"json"``; ``""`` when
            nothing was recognised.
    """

    action: int | None
    error: str | None
    form: str

    @property
    def valid(self) -> bool:
        """Whether the answer names one legal move."""
        return self.action is not None


# ------------------------------------------------------------------ the phrase table

_COLOUR_WORDS = ("red", "yellow", "green", "blue")
_DIGIT_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_RANK_PHRASES: tuple[tuple[str, ...], ...] = (
    *((str(d), _DIGIT_WORDS[d]) for d in range(10)),
    ("skip",),
    ("reverse",),
    ("draw two", "draw 2", "+2", "plus two", "plus 2", "draw2"),
)
_WILD_NAMES = ("wild", "wild card", "w")
_WD4_NAMES = (
    "wild draw four",
    "wild draw 4",
    "wild +4",
    "wild draw four card",
    "w+4",
    "wd4",
    "draw four",
    "+4",
)
_NAMING = (
    "",
    ":",
    "name",
    "naming",
    "and name",
    "calling",
    "call",
    "choose",
    "choosing",
    "to",
    "as",
    "colour",
    "color",
    "colour :",
    "color :",
    "and choose",
    "and call",
)

NOTATION, NATURAL = "notation", "natural"
WHOLE = "whole"
"""The kind of a phrase that names a move only as a whole answer (``wild``, ``play it``): in a
longer text such words are talk about the cards, not a choice."""


def _norm(text: str) -> str:
    """Lower case; every character but letters, digits, ``+`` and ``:`` a space; ``:`` a word."""
    return " ".join(_SPLITTER.sub(" ", text.lower().replace(":", " : ")).split())


_SPLITTER = re.compile(r"[^a-z0-9+:]+")


def _phrases() -> dict[str, tuple[frozenset[int], str]]:
    table: dict[str, tuple[set[int], str]] = {}

    def add(phrase: str, actions: set[int] | range | list[int], kind: str) -> None:
        key = _norm(phrase)
        if key in table:
            table[key][0].update(actions)
        else:
            table[key] = (set(actions), kind)

    for action, name in enumerate(C.ACTION_NAMES):
        add(name, {action}, NOTATION)
    add("color:R", {C.NAME_COLOUR}, NOTATION)
    for c, letter in enumerate(C.COLOURS):
        add(f"color:{letter}", {C.NAME_COLOUR + c}, NOTATION)
    for face in range(C.NUM_COLOURED_FACES):
        colour = _COLOUR_WORDS[face // C.NUM_RANKS]
        for rank in _RANK_PHRASES[face % C.NUM_RANKS]:
            add(f"{colour} {rank}", {face}, NATURAL)
    for c, colour in enumerate(_COLOUR_WORDS):
        wild, wd4 = C.PLAY_WILD + c, C.PLAY_WILD_DRAW_FOUR + c
        for link in _NAMING:
            for name in _WILD_NAMES:
                add(f"{name} {link} {colour}", {wild}, NATURAL)
            for name in _WD4_NAMES:
                add(f"{name} {link} {colour}", {wd4}, NATURAL)
        add(f"{colour} wild", {wild}, NATURAL)
        add(f"{colour} wild draw four", {wd4}, NATURAL)
        for verb in ("", "name", "colour", "color", "choose", "pick", "call", "name colour"):
            add(f"{verb} {colour}", {C.NAME_COLOUR + c}, NATURAL)
    for name in ("wild", "wild card", "play a wild"):
        add(name, range(C.PLAY_WILD, C.PLAY_WILD + 4), WHOLE)
    for name in ("wild draw four", "wild draw 4", "wild +4", "wd4"):
        add(name, range(C.PLAY_WILD_DRAW_FOUR, C.PLAY_WILD_DRAW_FOUR + 4), WHOLE)
    words = {
        C.DRAW: (
            "draw a card",
            "draw one",
            "draw 1",
            "draw one card",
            "draw card",
            "draw a card from the pile",
            "take the penalty",
            "take the cards",
            "take the penalty cards",
            "accept the penalty and draw",
        ),
        C.KEEP: ("keep it", "keep the card", "keep the drawn card", "keep card", "keep drawn card"),
        C.CHALLENGE: ("challenge it", "challenge the wild draw four", "i challenge"),
        C.ACCEPT: ("accept it", "accept the wild draw four", "accept the penalty"),
        C.UNO: ("call uno", "declare uno", "say uno"),
        C.CATCH: ("catch them", "catch the player", "catch a missing uno"),
        C.PASS: ("do not jump in", "don't jump in", "no jump in", "pass the chance"),
    }
    for action, phrases in words.items():
        for phrase in phrases:
            add(phrase, {action}, NATURAL)
    for phrase in ("play it", "play the drawn card", "play the card", "play drawn card"):
        add(phrase, range(C.NUM_PLAY_ACTIONS), WHOLE)
    for k in range(1, C.MAX_PLAYERS):
        add(f"swap {k}", {C.SWAP + k - 1}, NATURAL)
    return {key: (frozenset(actions), kind) for key, (actions, kind) in table.items()}


_PHRASES = _phrases()
_SPAN: dict[str, int] = {}
"""The most words of a phrase, by its first word (most words of a text start none)."""
for _key in _PHRASES:
    _first, _size = _key.split()[0], len(_key.split())
    _SPAN[_first] = max(_SPAN.get(_first, 0), _size)
_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<action>(.*?)</action>", re.IGNORECASE | re.DOTALL)
_FINAL = re.compile(r"final\s+answer\s*(?:is)?\s*[:=\-]?\s*([^\n]*)", re.IGNORECASE)
_JSON = re.compile(r"\{[^{}]*\}")
_LETTER = re.compile(r"^\W*(?:option\s+|choice\s+|letter\s+)?([A-Za-z]{1,2})\W*$", re.IGNORECASE)
_LETTER_IN_TEXT = re.compile(r"(?<![A-Za-z0-9])([A-Z]{1,2})\)")
_MARKUP = re.compile(r"^[\s*_`'\"]+|[\s*_`'\".!]+$")


# ------------------------------------------------------------------ reading


def _mentions(normal: str) -> Iterator[tuple[frozenset[int], str, str]]:
    """The moves a normalised text names: (candidate actions, kind, the words), the longest
    phrase first at each word."""
    words = normal.split()
    i = 0
    while i < len(words):
        span = _SPAN.get(words[i], 0)
        for size in range(min(span, len(words) - i), 0, -1):
            key = " ".join(words[i : i + size])
            hit = _PHRASES.get(key)
            if hit is not None:
                yield hit[0], hit[1], key
                i += size
                break
        else:
            i += 1


def _legal_list(prompt: Prompt) -> str:
    letters = _letters_mode(prompt)
    names = [C.ACTION_NAMES[a] for a in prompt.choices.values()]
    if letters:
        return ", ".join(
            f"{label}) {name}" for label, name in zip(prompt.choices, names, strict=True)
        )
    return ", ".join(names)


def _letters_mode(prompt: Prompt) -> bool:
    first = next(iter(prompt.choices), "")
    return first == "A" and first not in C.ACTION_NAMES


def _read(segment: str, prompt: Prompt, letters: bool) -> tuple[int | None, str | None, str]:
    """Read one segment: (action, error, form)."""
    legal = set(prompt.choices.values())
    stripped = _MARKUP.sub("", segment.strip())
    if letters:
        match = _LETTER.match(stripped)
        if match is not None and match.group(1).upper() in prompt.choices:
            return prompt.choices[match.group(1).upper()], None, "letter"
    resolved: dict[int, str] = {}
    normal = f" {_norm(segment)} "
    for action, key in _gloss_hits(prompt):
        if key in normal:
            resolved.setdefault(action, NATURAL)
            normal = normal.replace(key, " ")
    vague: list[tuple[frozenset[int], str]] = []
    illegal: list[str] = []
    whole = normal.strip()
    for candidates, kind, words in _mentions(normal):
        if kind == WHOLE:
            if words != whole:
                continue
            kind = NATURAL
        inside = candidates & legal
        if len(inside) == 1:
            resolved.setdefault(next(iter(inside)), kind)
        elif inside:
            vague.append((inside, words))
        else:
            illegal.append(C.ACTION_NAMES[min(candidates)] if kind == NOTATION else words)
    if letters:
        for label in _LETTER_IN_TEXT.findall(segment):
            if label in prompt.choices:
                resolved.setdefault(prompt.choices[label], "letter")
    if len(resolved) == 1:
        action, kind = next(iter(resolved.items()))
        return action, None, kind
    if len(resolved) > 1:
        named = " and ".join(C.ACTION_NAMES[a] for a in sorted(resolved))
        return None, f"The answer names more than one legal move ({named}); name exactly one.", ""
    if vague:
        candidates, words = vague[0]
        options = ", ".join(C.ACTION_NAMES[a] for a in sorted(candidates))
        return None, f"'{words}' could mean {options}; name exactly one of them.", ""
    if illegal:
        return None, f"'{illegal[0]}' is not a legal move now.", ""
    if not stripped:
        return None, "The answer is empty.", ""
    return None, "No move was found in the answer.", ""


def _gloss_hits(prompt: Prompt) -> Iterator[tuple[int, str]]:
    """The legal moves other than plays with their glosses (`` swap hands with seat 2 ``),
    normalised and padded with spaces: an answer that repeats one names that move."""
    for name, gloss in prompt.glosses.items():
        action = _ACTION_IDS.get(name)
        if action is not None and action in prompt.choices.values() and C.ACTION_FACE[action] < 0:
            yield action, f" {_norm(gloss)} "


_ACTION_IDS = {name: i for i, name in enumerate(C.ACTION_NAMES)}


def _json_action(text: str) -> str | None:
    for block in _JSON.findall(text):
        try:
            data = json.loads(block)
        except ValueError:
            continue
        if isinstance(data, dict) and "action" in data:
            return str(data["action"])
    return None


def parse_answer(text: str, prompt: Prompt) -> Answer:
    """Read a model's answer to ``prompt`` into one of its legal actions.

    Args:
        text: What the model wrote.
        prompt: The decision it answered (its choices are the legal moves).

    Returns:
        The answer: an action and its form, or ``action=None`` with the reason.
    """
    if not isinstance(text, str):
        return Answer(None, f"The answer must be text, got {type(text).__name__}.", "")
    letters = _letters_mode(prompt)
    body = _THINK.sub(" ", text) if "<think>" in text.lower() else text
    tags = _TAG.findall(body)
    if tags:
        wrapper, segment = "tag", tags[-1]
    else:
        found = _json_action(body) if "{" in body else None
        if found is not None:
            wrapper, segment = "json", found
        else:
            finals = _FINAL.findall(body)
            if finals:
                wrapper, segment = "final_answer", finals[-1]
            else:
                wrapper, segment = "", body
    action, error, form = _read(segment, prompt, letters)
    if action is None and error == "No move was found in the answer." and wrapper:
        error = f"No move was found in the {_WRAPPER_WORDS[wrapper]}."
    return Answer(action, error, wrapper or form)


_WRAPPER_WORDS = {
    "tag": "<action> tag",
    "json": "JSON 'action'",
    "final_answer": "'Final answer:' line",
}


def retry_message(answer: Answer, prompt: Prompt) -> str:
    """The feedback for an invalid answer: why, and the legal moves to choose from."""
    why = answer.error or "The answer was not understood."
    return (
        f"Your answer was refused: {why} Answer again with exactly one of the legal moves: "
        f"{_legal_list(prompt)}."
    )


def fallback_action(prompt: Prompt) -> int:
    """The move played for a seat after a second invalid answer: ``draw`` when drawing is
    legal, else ``keep``, else the first legal move listed.

    Raises:
        ValueError: for a prompt without legal moves.
    """
    actions = list(prompt.choices.values())
    if not actions:
        raise ValueError("the prompt has no legal moves to fall back on")
    if C.DRAW in actions:
        return C.DRAW
    if C.KEEP in actions:
        return C.KEEP
    return actions[0]
