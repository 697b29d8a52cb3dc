"""Human against agents in the terminal: ``uno-lab play``, and ``uno-lab replay``.

You see your own hand (sorted, coloured), the top card and colour, everyone's card count and
every move in plain words ("player_2 (mixbot) draws 2 and is skipped"); legal moves are
numbered and also accepted in the text notation (``G7``, ``W:B``, ``draw``). UNO
declarations, catches, challenges and house-rule decisions are asked when they arise,
because they are legal actions like any other. Nothing hidden is shown until a hand ends,
when every hand is revealed with its points. A session plays a match to the rules'
``target_score``, offering each next hand; ``q``, Ctrl-D or a closed input end it cleanly,
and ``--record`` still saves what was played.
"""

from __future__ import annotations

import builtins
import json
import secrets
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from uno_env import cards as C
from uno_env.files import (
    read_regular_text,
)
from uno_env.game import UnoGame
from uno_env.narrate import (
    Table,
    describe_deal,
    describe_hand_end,
    describe_match_end,
    describe_situation,
    describe_step,
    describe_table,
    move_label,
    offered_moves,
)
from uno_env.play import choose_actions
from uno_env.policy import Policy
from uno_env.rules import Rules
from unolab.records import (
    RECORD_FORMAT,
    RecordError,
    check_record_path,
    load_record,
    save_record,
)

__all__ = [
    "MAX_INPUT_LINE",
    "InputLineError",
    "SessionEnd",
    "agent_mismatch_hint",
    "fitting_agents",
    "play_session",
    "random_seed",
    "read_input_line",
    "replay",
]

InputFn = Callable[[str], str]
SayFn = Callable[[str], None]

_MAX_META_BYTES = 16 * 2**20
"""The largest agent metadata file read for a hint."""

_QUIT_WORDS = ("q", "quit", "exit")

_HELP_LINES = (
    "How to answer:",
    "  a number          the move with that number in the list",
    "  a move's name     G7 (green 7), RS / RR / R+2 (red Skip / Reverse / Draw Two),",
    "                    W:B (Wild naming blue), W+4:R (Wild Draw Four naming red)",
    "  draw / keep       draw a card; keep the card just drawn instead of playing it",
    "  uno               call UNO before playing your second-to-last card",
    "  catch             catch a player who is down to one card without calling UNO",
    "  challenge/accept  answer a Wild Draw Four played on you",
    "  help              this text",
    "  q                 stop (a --record file is still written)",
    "A card matches the top card by colour or by symbol; Wilds match anything.",
)


def _help(rules: Rules) -> str:
    """The help text for these rules: without the UNO call and catch where the rules have
    none (``uno_call: false``), nor the challenge where a Wild Draw Four cannot be
    challenged."""
    dropped = set()
    if not rules.uno_call:
        dropped |= {"  uno ", "  catch "}
    if not rules.wd4_challenge:
        dropped.add("  challenge/accept ")
    return "\n".join(line for line in _HELP_LINES if not any(line.startswith(d) for d in dropped))


class SessionEnd(Exception):
    """The human stopped the session: ``q``, Ctrl-D or a closed input."""


class InputLineError(ValueError):
    """A line of the standard input that cannot be a move: too long, or not UTF-8 text."""


MAX_INPUT_LINE = 1000
"""The most characters a line of moves read from a pipe or a file may hold (a move is a
number or a word): an endless stream without a newline (``</dev/zero``) is refused there
instead of filling the memory."""

_BUILTIN_INPUT = builtins.input


def read_input_line(prompt: str) -> str:
    """One line of the standard input, without its newline; ``EOFError`` at its end.

    At a terminal (or where ``input`` has been replaced: tests, embedders) this is
    ``input``, looked up when called, with its line editing. From a pipe or a file the line
    is read bounded by :data:`MAX_INPUT_LINE`; a standard input that is closed is its end.

    Raises:
        EOFError: at the end of the input, or when there is none.
        InputLineError: for a line longer than :data:`MAX_INPUT_LINE` or not UTF-8.
    """
    stdin = sys.stdin
    if builtins.input is not _BUILTIN_INPUT:
        return builtins.input(prompt)
    if stdin is None or stdin.closed:
        raise EOFError
    if stdin.isatty():
        return builtins.input(prompt)
    sys.stdout.write(prompt)
    sys.stdout.flush()
    try:
        line = stdin.readline(MAX_INPUT_LINE + 1)
    except UnicodeDecodeError:
        raise InputLineError(
            "the standard input is not UTF-8 text; give moves as numbers or names, one a line"
        ) from None
    if not line:
        raise EOFError
    if len(line) > MAX_INPUT_LINE and not line.endswith("\n"):
        raise InputLineError(
            f"a line of the standard input is longer than {MAX_INPUT_LINE:,} characters; "
            "give moves as numbers or names, one a line"
        )
    return line.removesuffix("\n").removesuffix("\r")


def random_seed() -> int:
    """A fresh random seed for a new deal (printed, so the game can be dealt again)."""
    return secrets.randbelow(2**31)


def fitting_agents(rules: Rules, folder: Path | None = None) -> list[Path]:
    """The shipped agents (see :mod:`unolab.agents.registry`) trained under exactly ``rules``."""
    if folder is None:
        from unolab.agents.registry import SHIPPED_DIR

        folder = SHIPPED_DIR
    wanted = rules.game_rules()
    found = []
    for meta_path in sorted(folder.glob("*.json")):
        try:
            meta = json.loads(read_regular_text(meta_path, _MAX_META_BYTES, "agent metadata"))
            trained = Rules.from_dict(meta["rules"]).game_rules()
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if trained == wanted and meta_path.with_suffix(".safetensors").is_file():
            found.append(meta_path.with_suffix(".safetensors"))
    return found


def agent_mismatch_hint(spec: str | Path, rules: Rules) -> str:
    """What to do when an exported agent was trained for another table.

    Names the table size the agent was trained for, and the shipped agents whose rules fit
    the requested ones.
    """
    from unolab.agents.registry import shipped_agent_path

    path = shipped_agent_path(str(spec)) or Path(spec)
    try:
        meta_text = read_regular_text(path.with_suffix(".json"), _MAX_META_BYTES, "metadata")
        meta = json.loads(meta_text)
        trained: int | None = int(meta["rules"]["num_players"])
    except (OSError, ValueError, KeyError, TypeError):
        trained = None
    hint = ""
    if trained is not None and trained != rules.num_players:
        hint = f"{spec} was trained for {trained} players: play it with --players {trained}. "
    fits = fitting_agents(rules)
    if fits:
        names = ", ".join(p.stem for p in fits)
        return hint + f"Shipped agents for {rules.num_players} players: {names}"
    return hint + (
        f"No shipped agent fits these rules with {rules.num_players} "
        "players: play against bots (mixbot, card_ranking, ...) instead"
    )


@dataclass
class _Session:
    """One terminal match: the game, who sits where, and what was played (for --record)."""

    rules: Rules
    game: UnoGame
    table: Table
    policies: dict[int, Policy]
    ask: InputFn
    say: SayFn
    hands_played: list[list[str]] = field(default_factory=list)

    @property
    def human(self) -> int:
        assert self.table.listener is not None
        return self.table.listener

    def read(self, prompt: str) -> str:
        """One line of input; Ctrl-D or a closed input ends the session."""
        try:
            return self.ask(prompt)
        except EOFError:
            self.say("")
            raise SessionEnd("end of input") from None

    def choose(self) -> int:
        """Ask the human for a legal action until the answer is one."""
        game = self.game
        legal = game.legal_action_ids()
        offered = offered_moves(legal)  # an "uno" that cannot matter is not listed
        n = len(offered)
        for line in describe_table(self.rules, game.state, self.table):
            self.say(line)
        self.say(describe_situation(self.rules, game.state, self.table))
        labels = [move_label(a, self.table, self.human, self.rules.num_players) for a in offered]
        self.say("Your moves: " + "  ".join(f"[{i + 1}] {label}" for i, label in enumerate(labels)))
        while True:
            answer = self.read("Your move (number or name, 'help', 'q' to quit): ").strip()
            if answer.lower() in _QUIT_WORDS:
                raise SessionEnd("you stopped")
            if answer.lower() in ("help", "h", "?"):
                self.say(_help(self.rules))
                continue
            if answer.isdigit():
                if 1 <= int(answer) <= n:
                    return offered[int(answer) - 1]
                self.say(f"There is no move {answer}: choose 1–{n}.")
                continue
            try:
                action = C.parse_action(answer)
            except ValueError as err:
                self.say(f"Sorry: {err}. Choose 1–{n}, a move's name, or 'help'.")
                continue
            if action in legal:
                return action
            self.say(
                f"{C.action_name(action)!r} is not legal now. Legal: "
                f"{', '.join(C.action_names(legal))}"
            )

    def play_hand(self) -> None:
        """Play the current hand to its end, narrating every move."""
        game = self.game
        for line in describe_deal(self.rules, game.state, self.table):
            self.say(line)
        while not game.over:
            seat = game.current_seat
            before = game.state
            if seat == self.human:
                action = self.choose()
            else:
                # The lab's one play round: observation or state policies (search) alike.
                chosen, _ = choose_actions(
                    self.rules, before, [self.policies[seat]], np.zeros(1, dtype=np.int64)
                )
                action = int(chosen[0])
            game.step(action)
            for line in describe_step(self.rules, before, game.state, seat, action, self.table):
                self.say("  " + line)

    def finish_hand(self) -> None:
        """Reveal every hand with its points and the match scores."""
        state = self.game.state
        for line in describe_hand_end(self.rules, state, self.table, state.hands[0]):
            self.say(line)

    def wants_another_hand(self) -> bool:
        while True:
            answer = self.read("Deal the next hand? [Y/n] ").strip().lower()
            if answer in ("", "y", "yes"):
                return True
            if answer in ("n", "no", *_QUIT_WORDS):
                return False
            self.say("Answer y (deal the next hand) or n (stop here).")

    def match_result(self) -> str:
        return describe_match_end(self.rules, self.game.state, self.table)


def play_session(
    rules: Rules,
    opponents: Sequence[Policy],
    human_seat: int = 0,
    seed: int | None = None,
    ask: InputFn | None = None,
    say: SayFn = print,
    colour: bool = True,
    record: Path | None = None,
    opponent_names: Sequence[str] | None = None,
) -> UnoGame:
    """Play a match against ``opponents`` to the rules' ``target_score``, hand after hand.

    Each finished hand is revealed (every hand with its points); the next one is dealt when
    the human says so. ``q``, Ctrl-D or the end of the input (``EOFError``) end the session
    cleanly; Ctrl-C (``KeyboardInterrupt``) ends it too and is raised again for the caller.
    The record is written in every case.

    Args:
        rules: The rules.
        opponents: One policy per other seat, in seat order.
        human_seat: The human's seat.
        seed: The deal's seed; ``None`` draws one at random. It is printed either way.
        ask: Reads a line (default: the built-in ``input``, looked up at call time).
        say: Writes a line (``print``).
        colour: ANSI colours.
        record: Write the match (rules, seed, names, every hand's actions) as JSON here, for
            ``uno-lab replay``. Checked before the first card is dealt.
        opponent_names: What each opponent is (``mixbot``, an agent's name), shown next to
            its seat: ``player_1 (mixbot)``.

    Returns:
        The game as it stood at the end (finished, or abandoned mid-hand).

    Raises:
        ValueError: for a wrong number of opponents or names, a bad seat or record path.
        InputLineError: for a line of input that cannot be a move (too long, not UTF-8),
            once the record is written.
    """
    n_players = rules.num_players
    if len(opponents) != n_players - 1:
        raise ValueError(
            f"{n_players} players need {n_players - 1} opponents, got {len(opponents)}"
        )
    if not 0 <= human_seat < n_players:
        raise ValueError(f"--seat must be in 0..{n_players - 1}, got {human_seat}")
    if opponent_names is not None and len(opponent_names) != len(opponents):
        raise ValueError(f"need {len(opponents)} opponent names, got {len(opponent_names)}")
    if record is not None:
        check_record_path(record)
    if seed is None:
        seed = random_seed()
    others = [s for s in range(n_players) if s != human_seat]
    labels = list(opponent_names) if opponent_names is not None else [None] * len(others)
    names = ["you"] * n_players
    for seat, label in zip(others, labels, strict=True):
        names[seat] = f"player_{seat}" + (f" ({label})" if label else "")
    session = _Session(
        rules=rules,
        game=UnoGame(rules, seed=seed),
        table=Table(names=names, listener=human_seat, colour=colour),
        policies=dict(zip(others, opponents, strict=True)),
        ask=ask if ask is not None else read_input_line,
        say=say,
    )
    say(
        f"UNO, {n_players} players, first to {rules.target_score} points. Seed {seed} "
        f"(uno-lab play --seed {seed} deals these cards again). Type 'help' for help."
    )
    interrupted = False
    refused: InputLineError | None = None
    try:
        while True:
            session.play_hand()
            session.hands_played.append([a for _, a in session.game.history])
            session.finish_hand()
            if session.game.match_over or not session.wants_another_hand():
                break
            session.game.next_hand()
        say(session.match_result())
    except (SessionEnd, KeyboardInterrupt, InputLineError) as stop:
        interrupted = isinstance(stop, KeyboardInterrupt)
        refused = stop if isinstance(stop, InputLineError) else None
        if len(session.hands_played) <= int(session.game.state.hand_no[0]):
            session.hands_played.append([a for _, a in session.game.history])
        reason = "interrupted" if interrupted else "unreadable input" if refused else str(stop)
        say(f"Game abandoned ({reason}). The seed was {seed}.")
    if record is not None:
        data = {
            "format": RECORD_FORMAT,
            "rules": rules.to_dict(),
            "seed": seed,
            "names": names,
            "hands": session.hands_played,
        }
        save_record(record, data, say)
    if interrupted:
        raise KeyboardInterrupt
    if refused is not None:  # after the record: the game so far is kept, then one error line
        raise refused
    return session.game


# ---- replay ------------------------------------------------------------------------------


def replay(path: Path, say: SayFn = print, show_hands: bool = False) -> UnoGame:
    """Print a recorded game move by move, in plain words (it replays exactly from its seed).

    The whole file is checked and replayed before anything is printed, so a bad file gives
    one error and no partial replay.

    Args:
        path: A game written by ``uno-lab play --record``.
        say: Writes a line.
        show_hands: Also show every hand before each move (the record is no secret).

    Raises:
        FileNotFoundError: if there is no such file.
        RecordError: naming the file and what is wrong with it.
    """
    rules, seed, names, hands = load_record(path)
    # The recording player's seat reads "you draw 2: G5 R1" (a record hides nothing).
    spectator = Table(
        names=names, listener=names.index("you") if "you" in names else None, colour=False
    )
    game = UnoGame(rules, seed=seed)
    lines = [f"Replay of {path}: {rules.num_players} players, seed {seed}."]
    for h, actions in enumerate(hands):
        if h > 0:
            if not game.over or game.match_over:
                raise RecordError(
                    f"{path}: hand {h + 1} is listed, but hand {h} "
                    f"{'ends the match' if game.match_over else 'did not end'}"
                )
            game.next_hand()
        lines += describe_deal(rules, game.state, spectator)
        for turn, name in enumerate(actions, start=1):
            where = f"{path}: hand {h + 1}, move {turn} ({name!r})"
            if game.over:
                raise RecordError(f"{where}: the hand was already over after {turn - 1} moves")
            try:
                action = C.parse_action(name)
            except ValueError as err:
                raise RecordError(f"{where}: {err}") from None
            seat = game.current_seat
            if show_hands:
                for s in range(rules.num_players):
                    lines.append(f"        {names[s]} holds {' '.join(game.hand(s)) or '-'}")
            if action not in game.legal_action_ids():
                raise RecordError(
                    f"{where} by {names[seat]} is not legal there (legal: "
                    f"{', '.join(game.legal_actions())}); the file does not replay under its "
                    "rules and seed"
                )
            before = game.state
            game.step(action)
            told = describe_step(rules, before, game.state, seat, action, spectator)
            lines.append(f"{turn:4d}. {name:<9} " + " ".join(told))
        if game.over:
            lines += describe_hand_end(rules, game.state, spectator, game.state.hands[0])
        else:
            lines.append(f"(The record stops here, in the middle of hand {h + 1}.)")
    if hands and game.over:  # the match's last line, as the game itself said it
        lines.append(describe_match_end(rules, game.state, spectator))
    for line in lines:
        say(line)
    return game
