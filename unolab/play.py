"""Human against agents in the terminal: ``uno-lab play``.

You see your own hand (sorted, coloured), the top card and colour, everyone's card count and
the last moves; legal moves are numbered and also accepted in the text notation (``G7``,
``W:B``, ``draw``). UNO declarations, catches, challenges and house-rule decisions are asked
when they arise, because they are legal actions like any other. Nothing hidden is shown.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from uno_env import cards as C
from uno_env import core
from uno_env.envs.render import render_table
from uno_env.game import UnoGame
from uno_env.observation import encode
from uno_env.policy import Policy
from uno_env.rules import Rules

__all__ = ["play_session", "replay"]

InputFn = Callable[[str], str]


def _choose(game: UnoGame, ask: InputFn, say: Callable[[str], None]) -> int:
    """Ask the human for a legal action until the answer is one."""
    legal = game.legal_action_ids()
    while True:
        say(
            "Your moves: " + "  ".join(f"[{i + 1}] {C.action_name(a)}" for i, a in enumerate(legal))
        )
        answer = ask("Your move (number or name, 'q' to quit): ").strip()
        if answer.lower() in ("q", "quit", "exit"):
            raise KeyboardInterrupt
        if answer.isdigit() and 1 <= int(answer) <= len(legal):
            return legal[int(answer) - 1]
        try:
            action = C.parse_action(answer)
        except ValueError as err:
            say(f"Sorry: {err}. Type a number from 1 to {len(legal)} or a move's name.")
            continue
        if action in legal:
            return action
        say(
            f"{C.action_name(action)!r} is not legal now. Legal: {', '.join(C.action_names(legal))}"
        )


def play_session(
    rules: Rules,
    opponents: Sequence[Policy],
    human_seat: int = 0,
    seed: int = 0,
    ask: InputFn = input,
    say: Callable[[str], None] = print,
    colour: bool = True,
    record: Path | None = None,
) -> UnoGame:
    """Play one hand: the human in ``human_seat``, the opponents in the other seats in order.

    Args:
        rules: The rules.
        opponents: One policy per other seat, in seat order.
        human_seat: The human's seat.
        seed: The game's seed.
        ask: Reads a line (``input``).
        say: Writes a line (``print``).
        colour: ANSI colours.
        record: Write the game (rules, seed, actions) as JSON here, for ``uno-lab replay``.

    Returns:
        The finished game.
    """
    n_players = rules.num_players
    if len(opponents) != n_players - 1:
        raise ValueError(
            f"{n_players} players need {n_players - 1} opponents, got {len(opponents)}"
        )
    if not 0 <= human_seat < n_players:
        raise ValueError(f"seat must be in 0..{n_players - 1}, got {human_seat}")
    names = [f"player_{s}" if s != human_seat else "you" for s in range(n_players)]
    others = [s for s in range(n_players) if s != human_seat]
    seat_policy = dict(zip(others, opponents, strict=True))
    game = UnoGame(rules, seed=seed)
    shown = 0
    try:
        while not game.over:
            seat = game.current_seat
            for mover, action in game.history[shown:]:
                say(f"  {names[mover]} played {action}")
            shown = len(game.history)
            if seat == human_seat:
                say(render_table(rules, game.state, view=human_seat, colour=colour, names=names))
                game.step(_choose(game, ask, say))
            else:
                state = game.state
                mask = core.legal_action_mask(rules, state)
                choice = int(seat_policy[seat].act(encode(rules, state), mask)[0])
                game.step(choice)
    except KeyboardInterrupt:
        say("Game abandoned.")
        return game
    for mover, action in game.history[shown:]:
        say(f"  {names[mover]} played {action}")
    if game.done:
        winner = game.winner
        assert winner is not None
        say(f"Game over: {names[winner]} won, scoring {game.hand_scores[winner]} points.")
    else:
        say("Game over: the hand was cut at max_turns (no winner).")
    if record is not None:
        data = {
            "rules": rules.to_dict(),
            "seed": seed,
            "names": names,
            "actions": [action for _, action in game.history],
        }
        record.write_text(json.dumps(data, indent=2))
        say(f"Recorded to {record} (uno-lab replay {record}).")
    return game


def replay(path: Path, say: Callable[[str], None] = print, show_hands: bool = False) -> UnoGame:
    """Print a recorded game move by move (the game replays exactly from its seed)."""
    data = json.loads(path.read_text())
    rules = Rules.from_dict(data["rules"], where=str(path))
    names = data.get("names") or [f"player_{s}" for s in range(rules.num_players)]
    game = UnoGame(rules, seed=int(data["seed"]))
    say(
        f"Replay of {path}: {rules.num_players} players, dealer {names[game.dealer]}, "
        f"starter {game.top_card}"
    )
    for turn, action in enumerate(data["actions"], start=1):
        seat = game.current_seat
        if show_hands:
            say(f"      {names[seat]} holds {' '.join(game.hand(seat))}")
        game.step(action)
        say(f"{turn:4d}. {names[seat]:>10}: {action:<10} top {game.top_card}")
    if game.done and game.winner is not None:
        say(f"{names[game.winner]} won with {game.hand_scores[game.winner]} points.")
    return game
