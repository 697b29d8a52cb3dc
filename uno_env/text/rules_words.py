"""The rules of a table in plain words, as a language model (or a newcomer) reads them.

:func:`rules_in_words` states the official rules and each house rule switched on, in the
words a player uses at the table: never a config key or value (``until_playable``,
``True``). :func:`uno_env.text.prompt.system_prompt` puts it in front of every game.
"""

from __future__ import annotations

from uno_env.rules import Rules

__all__ = ["rules_in_words"]


def _official_wd4(rules: Rules) -> str:
    if rules.wd4_challenge:
        return (
            "A Wild Draw Four may be played only by a player holding no card of the colour to "
            "match, but nobody checks at once: the next player may accept (draw 4 and lose "
            "the turn) or challenge it. If the player of the Wild Draw Four held a card of "
            "that colour, they draw 4 instead; if not, the challenger draws 6 and loses the "
            "turn."
        )
    if rules.wd4_anytime:
        return "A Wild Draw Four may be played at any time, and it cannot be challenged."
    if rules.wd4_last_resort:
        return (
            "A Wild Draw Four may be played only when no other card can be played, a Wild "
            "included; it cannot be challenged."
        )
    return (
        "A Wild Draw Four may be played only by a player holding no card of the colour to "
        "match; it cannot be challenged."
    )


def _draw_words(rules: Rules) -> list[str]:
    lines = []
    if rules.voluntary_draw:
        lines.append("Instead of playing, a player may always draw, even holding a playable card.")
    else:
        lines.append("A player may draw only when they have no card they can play.")
    if rules.draw_rule == "one":
        lines.append("Drawing takes one card.")
    else:
        lines.append(
            "Drawing goes on one card at a time until a playable card turns up, at most "
            f"{rules.draw_cap} cards."
        )
    if rules.after_draw == "choose":
        lines.append(
            "If the card drawn can be played, the player may play it at once or keep it; "
            "no other card may be played that turn."
        )
    else:
        lines.append(
            "A drawn card that is a wild (its colour then chosen at random, and a drawn Wild "
            "Draw Four makes nobody draw) or of the colour to match is played at once; any "
            "other drawn card is kept and the turn ends."
        )
    return lines


def _uno_words(rules: Rules) -> str:
    if not rules.uno_call:
        return "Calling UNO is automatic: nobody is ever caught for not calling it."
    return (
        "A player with two cards must call UNO (the move uno) before playing the second to "
        "last; one who gets down to one card without calling it can be caught (the move "
        "catch) by the player who takes the next decision, before any other move of theirs, "
        f"and then draws {rules.uno_penalty} card{'s' if rules.uno_penalty != 1 else ''}."
    )


def _stacking_words(rules: Rules) -> list[str]:
    answers = []
    if rules.stack_draw_two:
        answers.append("a Draw Two with a Draw Two")
    if rules.stack_draw_four:
        answers.append("a Wild Draw Four with a Wild Draw Four")
    if rules.stack_draw_two_on_four:
        answers.append("a Wild Draw Four with a Draw Two of the colour it named")
    if rules.stack_draw_four_on_two:
        answers.append("a Draw Two with a Wild Draw Four")
    if not answers:
        return ["A draw penalty cannot be passed on: the player hit draws and loses the turn."]
    how = (
        "the penalties add up"
        if rules.stack_cumulative
        else "the penalty that started the chain passes on unchanged"
    )
    return [
        "Stacking: a player hit by a draw penalty may pass it on to the next player by "
        f"answering {', '.join(answers)}; {how}; whoever cannot or will not answer draws "
        "the penalty and loses the turn."
    ]


def _scoring_words(rules: Rules) -> list[str]:
    if rules.scoring == "winner_takes":
        lines = [
            "The player who goes out scores the points of every card left in the other "
            "hands (numbers their value, Skip, Reverse and Draw Two 20, wilds 50)."
        ]
        goal = f"The first player whose total reaches {rules.target_score} points wins the match."
    else:
        lines = [
            "Penalty points: every player adds the points of the cards left in their own hand "
            "to their total (numbers their value, Skip, Reverse and Draw Two 20, wilds 50)."
        ]
        goal = (
            f"The match ends when a total reaches {rules.target_score} points, and the lowest "
            "total wins."
        )
    if rules.zero_scores_fifty:
        lines.append("A hand left holding a single 0 counts 50 points.")
    lines.append(goal)
    return lines


def rules_in_words(rules: Rules) -> str:
    """The active rules in plain words: the official game and every house rule switched on.

    Every switch of :class:`~uno_env.rules.Rules` that changes the game is told (the engine
    option ``seat_draw_streams`` changes nothing a player sees and is not).

    Args:
        rules: The rules.

    Returns:
        A few short paragraphs, one sentence per line.
    """
    n = rules.num_players
    lines = [
        f"UNO for {n} players. Each player is dealt {rules.hand_size} cards; one card is "
        "turned up to start the discard pile.",
        "On your turn, play one card that matches the top card of the discard pile by colour "
        "or by number or symbol, or play a wild; whoever plays a wild names the colour to "
        "play next.",
        "Skip: the next player loses their turn. Reverse: the direction of play flips. Draw "
        "Two: the next player draws 2 and loses their turn. Wild Draw Four: the next player "
        "draws 4 and loses their turn.",
        _official_wd4(rules),
        *_draw_words(rules),
        _uno_words(rules),
        *_stacking_words(rules),
    ]
    if rules.two_player and n == 2:
        lines.append("With two players a Reverse acts like a Skip: its player plays again.")
    elif n == 2:
        lines.append("With two players a Reverse only flips the direction: the turn passes.")
    if rules.reverse_deflects:
        lines.append(
            "A player hit by a draw penalty may play a Reverse of the colour to match: the "
            "penalty goes back to the player who sent it."
        )
    if rules.jump_in:
        lines.append(
            "Jump-in: a player holding a card identical to the one just played may play it at "
            "once, out of turn (never a Wild Draw Four); play then continues from them."
        )
    if rules.seven_zero:
        lines.append(
            "Seven-zero: playing a 0 makes every player pass their hand to the next player in "
            "the direction of play; playing a 7 swaps your hand with a player of your choice."
        )
    if rules.colours_in_circle:
        lines.append(
            "Colours in a circle: a wild does not let its player choose; the new colour is the "
            "one after the colour to match in the cycle red, yellow, green, blue."
        )
    if rules.teams:
        lines.append(
            "Teams: partners sit opposite (seats 0 and 2, seats 1 and 3); the hand ends when "
            "either partner goes out, and both score."
        )
    if rules.play_to_last:
        lines.append(
            "Play to the last: the hand goes on after the first player goes out, until only "
            "one player is left; the first out wins the hand."
        )
    else:
        lines.append("The hand ends as soon as a player plays their last card.")
    lines += _scoring_words(rules)
    lines.append(
        f"A hand that lasts {rules.max_turns} decisions stops without a winner and scores nothing."
    )
    starter = "A Wild Draw Four turned up as the starter goes back into the pile"
    starter += (
        "; so does a Wild starter." if rules.starter_redraw_wilds else " and a new one is turned."
    )
    lines.append(starter)
    if not rules.starter_redraw_wilds:
        lines.append(
            "A Wild starter's colour is named by the first player."
            if rules.starter_wild_colour == "choose"
            else "A Wild starter gets a random colour."
        )
    lines.append(
        "A Draw Two starter makes the first player draw 2 and lose the turn."
        if rules.starter_draw_two_skips
        else "A Draw Two starter makes the first player draw 2, who then still plays."
    )
    lines.append(
        "When the draw pile runs out, the whole discard pile, top card included, is shuffled "
        "into a new one."
        if rules.reshuffle_top
        else "When the draw pile runs out, the discards under the top card are shuffled into "
        "a new one."
    )
    return "\n".join(lines)
