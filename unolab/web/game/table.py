"""A live web game: one match of hands between the human (seat 0) and server-side agents
(:class:`WebGame`; the games in play, by id, are :class:`unolab.web.game.games.Games`).
Every live game is in the file of live games (:mod:`unolab.web.game.live`), every accepted
action committed before its request is answered, and a game the server does not hold in
memory (after a restart) is rebuilt from it; finished hands are saved as records too
(:mod:`unolab.web.store`), with the data fields of a game the player keeps as data.

Every request that changes a game holds the game's lock, checks everything first and only
then steps: a refused move changes nothing. After the human's move the agents play on,
within the same request, until it is the human's turn again or the hand is over.

A language model's seat is the exception: its answer takes seconds, so a request stops
before its decision and the view names the seat in ``thinking``; the page shows the model
thinking and asks for its move (``POST /api/games/{id}/agent-move``), which decides it in a
thread of its own (never the batcher's: the other tables' bots go on meanwhile), then lets
the agents play on to the next model decision or the human's turn. When the endpoint fails
(nothing listens, a refused key, an unknown model, no answer), the seat plays the
documented fallback move of :func:`uno_env.text.answers.fallback_action` (``draw`` when it
is legal...), the view's ``agent_error`` says so in one line, and the next decision asks
the model again. The model's decisions are recorded next to the saved game
(:meth:`unolab.web.store.GameStore.decisions_path`), one JSON line each.

A table for several people (``shared``, :mod:`unolab.web.game.seats`) has a person in each
of its seats for people: the agents play on until a seat whose player is here must act,
the host's stand-in plays the seats whose player is away, and every sentence is told to
each seat as that seat may hear it (its own drawn cards named, nobody else's) and to the
spectators as nobody's.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from uno_env import cards as C
from uno_env.game import UnoGame
from uno_env.narrate import Table, describe_deal, describe_hand_end, describe_step
from uno_env.play import PolicyError, choose_actions
from uno_env.rules import Rules
from unolab.records import RECORD_FORMAT
from unolab.web.catalogue import Catalogue
from unolab.web.game.batching import AgentBatcher
from unolab.web.game.live import LIVE, StoredGame
from unolab.web.game.picture import step_picture
from unolab.web.game.seats import SPECTATOR, SharedTable, default_action
from unolab.web.guard import Conflict, Invalid
from unolab.web.store import ThinkTimes

if TYPE_CHECKING:
    from unolab.agents.llm.agent import LLMAgent

LOG = logging.getLogger(__name__)

__all__ = ["HUMAN_SEAT", "KEPT_EVENTS", "Listener", "WebGame"]

HUMAN_SEAT = 0

Listener = int
"""A seat, or :data:`unolab.web.game.seats.SPECTATOR`: whom a sentence is told to."""

KEPT_EVENTS = 200
"""Steps kept for the ``events`` of :func:`unolab.web.game.picture.game_view`: one
request adds at most one step per seat and a few jump-ins, so the page always finds every
step since its last answer, and a long match does not grow without bound in memory."""


@dataclass
class WebGame:
    """A match in progress.

    Attributes:
        id: The game's unguessable id.
        rules: The rules.
        seed: The deal's seed (shown, so the deal can be played again).
        agents: Each seat's agent id (``None`` for the human's seat).
        labels: Each seat's agent label, as shown.
        game: The game.
        hands: The actions of every hand so far (the record).
        seq: Moves taken in the whole match; a move is accepted only with the current one.
        touched: When a request last used the game (``time.time``).
        client: The address of the client that started it (for the per-client cap).
        unsaved: A finished hand is not on disk yet (its save failed; it is tried again).
        save_error: Why the last save failed (``None`` once saved).
        events: The latest steps (at most :data:`KEPT_EVENTS`), each with what the page
            needs to show it on its own
            (:func:`unolab.web.game.picture.step_picture`).
        last_cards: The card each seat played last in the current hand (``None``: none yet).
        models: Seat -> the game's own agent of a language model in that seat (closed,
            and dropped, once the match is over).
        model_names: Seat -> the name of the language model in that seat.
        thinking: The seat of a language model whose decision is due (the page asks for
            it with ``agent-move``), or ``None``.
        agent_error: What went wrong with a model's endpoint in the last request, in one
            line (``None``: nothing).
        pending: ``(seq, hand, action)`` of each action taken since the game was last
            committed to the file of live games.
        shared: The seats of a table for several people (``None``: one person, seat 0).
        logs: The sentences told to each listener of a table for several people.
        times: The human's thinking times (recorded if ``setup["keep_as_data"]``).
    """

    id: str
    rules: Rules
    seed: int
    agents: list[str | None]
    labels: list[str | None]
    game: UnoGame
    setup: dict[str, Any]
    hands: list[list[str]] = field(default_factory=lambda: [[]])
    seq: int = 0
    touched: float = field(default_factory=time.time)
    client: str = ""
    unsaved: bool = False
    save_error: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    last_cards: list[str | None] = field(default_factory=list)
    models: dict[int, LLMAgent] = field(default_factory=dict, repr=False)
    model_names: dict[int, str] = field(default_factory=dict)
    thinking: int | None = None
    agent_error: str | None = None
    pending: list[tuple[int, int, str]] = field(default_factory=list)
    shared: SharedTable | None = None
    logs: dict[Listener, list[str]] = field(default_factory=dict)
    times: ThinkTimes = field(default_factory=ThinkTimes, repr=False)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def start(
        cls,
        game_id: str,
        rules: Rules,
        seed: int,
        agents: Sequence[str | None],
        catalogue: Catalogue,
        setup: dict[str, Any],
        shared: SharedTable | None = None,
    ) -> WebGame:
        """A new match, dealt (the agents have not moved yet: call :meth:`play_agents`).

        Args:
            agents: The agent id of each seat after seat 0 (``None``: a seat for people,
                at a table for several people only).
            shared: The seats of a table for several people.
        """
        labels: list[str | None] = [None]
        labels += [None if a is None else catalogue.entry(a).label for a in agents]
        game = cls(
            id=game_id,
            rules=rules,
            seed=seed,
            agents=[None, *agents],
            labels=labels,
            game=UnoGame(rules, seed=seed),
            setup=setup,
            shared=shared,
        )
        game.last_cards = [None] * rules.num_players
        return game

    @classmethod
    def restore(cls, stored: StoredGame, catalogue: Catalogue, decisions: Path | None) -> WebGame:
        """A game of the file of live games, rebuilt: the same deal, every action replayed
        (with its sentences and steps), its language models seated again (recording to
        ``decisions``, after what they recorded before).

        Raises:
            Conflict: for a game whose agents this server does not offer now.
            ValueError: for an action that does not replay (a file edited by hand).
        """
        rules = Rules.from_dict(stored.rules, where=f"live game {stored.id}: rules")
        for agent_id in stored.agents:
            if agent_id is not None and agent_id not in catalogue.entries:
                raise Conflict(
                    f"game {stored.id} is played against {agent_id!r}, which this server does "
                    "not offer now; start it with the --agents-dir that holds that agent"
                )
        game = cls(
            id=stored.id,
            rules=rules,
            seed=stored.seed,
            agents=list(stored.agents),
            labels=list(stored.labels),
            game=UnoGame(rules, seed=stored.seed),
            setup=dict(stored.setup),
            client=stored.client,
            touched=stored.touched,
            shared=None if stored.shared is None else SharedTable.restore(stored.shared),
        )
        game._replay(stored.hands)
        # A hand finished before the restart is saved again (the save may have failed).
        game.unsaved = len(stored.hands) > 1 or game.game.over
        try:
            game.seat_models(catalogue, decisions)
        except ValueError as err:
            game.close_models()
            raise Conflict(f"game {stored.id}: {err}") from None
        if not game.game.over and game.game.current_seat in game.models:
            game.thinking = game.game.current_seat
        return game

    def _replay(self, hands: Sequence[Sequence[str]]) -> None:
        """Play ``hands`` (the actions of each hand) on the freshly dealt game, with their
        sentences and steps."""
        for number, actions in enumerate(hands):
            if number > 0:
                self.game.next_hand()
                self.hands.append([])
            self.last_cards = [None] * self.rules.num_players
            self.deal_lines()
            for name in actions:
                self._step(self.game.current_seat, C.parse_action(name))
        self.pending.clear()

    def retell(self) -> None:
        """Tell the match again from its deal with the names the seats have now (a player
        took a seat of a table for several people): the log reads as it will after a
        restart, which rebuilds it the same way. Nothing of the game changes."""
        hands = [list(actions) for actions in self.hands]
        unsaved, turn_since = self.unsaved, self.shared.turn_since if self.shared else 0.0
        self.game = UnoGame(self.rules, seed=self.seed)
        self.hands, self.seq, self.logs, self.events = [[]], 0, {}, []
        self._replay(hands)
        self.unsaved = unsaved
        if self.shared is not None:
            self.shared.turn_since = turn_since

    def stored(self) -> StoredGame:
        """The game as the file of live games first holds it (before any action)."""
        return StoredGame(
            id=self.id,
            client=self.client,
            rules=self.rules.to_dict(),
            seed=self.seed,
            agents=list(self.agents),
            labels=list(self.labels),
            setup=dict(self.setup),
            hands=[[]],
            touched=self.touched,
            status=LIVE,
            shared=None if self.shared is None else self.shared.stored(),
        )

    @property
    def names(self) -> list[str]:
        """Seat names: ``you``, ``player_1 (mixbot)``, ... (at a table for several people,
        each player's name in place of ``you``: :meth:`seat_names`)."""
        return self.seat_names(HUMAN_SEAT if self.shared is None else SPECTATOR)

    def seat_names(self, listener: Listener) -> list[str]:
        """Seat names as ``listener`` hears them: its own seat is ``you``, a player by the
        name they gave, a seat nobody has taken ``player_2``, an agent
        ``player_1 (mixbot)``."""
        names = []
        for seat, label in enumerate(self.labels):
            person = None if self.shared is None else self.shared.seats.get(seat)
            if seat == listener:
                names.append("you")
            elif person is not None:
                names.append(person.name or f"player_{seat}")
            else:
                names.append(f"player_{seat} ({label})")
        return names

    @property
    def narrator(self) -> Table:
        """The words, from the human's seat."""
        return Table(names=self.names, listener=HUMAN_SEAT, colour=False)

    def narrator_for(self, listener: Listener) -> Table:
        """The words as ``listener`` hears them (:data:`SPECTATOR`: nobody's cards)."""
        if self.shared is None:
            return self.narrator
        return Table(
            names=self.seat_names(listener),
            listener=None if listener == SPECTATOR else listener,
            colour=False,
        )

    @property
    def listeners(self) -> list[Listener]:
        """Whom the sentences are told to: the human, or every seat for people and the
        spectators."""
        if self.shared is None:
            return [HUMAN_SEAT]
        return [*self.shared.people, SPECTATOR]

    def _tell(self, say: Callable[[Table], list[str]]) -> dict[Listener, list[str]]:
        """Tell each listener its sentences (added to its log); returns them."""
        told = {who: say(self.narrator_for(who)) for who in self.listeners}
        for who, lines in told.items():
            self.logs.setdefault(who, []).extend(lines)
        return told

    @property
    def log(self) -> list[str]:
        """Every sentence so far, as the human (seat 0) heard it."""
        return self.logs.setdefault(HUMAN_SEAT, [])

    def log_of(self, listener: Listener) -> list[str]:
        """Every sentence so far, as ``listener`` heard it."""
        return self.logs.setdefault(listener, [])

    @property
    def match_over(self) -> bool:
        """Someone reached the target score (or the hand was the last one)."""
        return self.game.over and self.game.match_over

    def deal_lines(self) -> None:
        """Narrate the deal of the current hand."""
        self._tell(lambda table: describe_deal(self.rules, self.game.state, table))
        self.times.restart()

    def seat_models(self, catalogue: Catalogue, decisions: Path | None) -> None:
        """Give each language model's seat its own agent, recording to ``decisions``.

        Raises:
            ValueError: for a model that cannot play here (one line).
        """
        for seat, agent_id in enumerate(self.agents):
            if agent_id is not None and catalogue.entry(agent_id).kind == "llm":
                agent = catalogue.model_agent(agent_id, str(self.labels[seat]))
                self.models[seat] = agent
                self.model_names[seat] = agent.model
        if self.models and decisions is not None:
            try:
                for agent in self.models.values():
                    agent.record_to(decisions)
            except OSError as err:  # the game is played all the same, unrecorded
                LOG.warning("the decisions of game %s are not recorded: %s", self.id, err)

    def play_agents(
        self, catalogue: Catalogue, batcher: AgentBatcher, model_moves: int = 0
    ) -> None:
        """Let the agents move until the human must act or the hand is over, deciding at
        most ``model_moves`` language-model moves: the request stops before the next one
        (``thinking`` names its seat)."""
        game = self.game
        self.thinking = None
        people = {HUMAN_SEAT} if self.shared is None else self.shared.controlled()
        while not game.over and game.current_seat not in people:
            seat = game.current_seat
            if seat in self.models:
                if model_moves <= 0:
                    self.thinking = seat
                    return
                model_moves -= 1
                action = self._model_move(seat)
            else:
                agent = self.agents[seat]
                if agent is None:  # a seat for people whose player is away
                    assert self.shared is not None
                    agent = self.shared.stand_in
                policy = catalogue.policy(agent, self.rules)
                action = batcher.decide(self.rules, game.state, policy)
            self._step(seat, action)

    def _model_move(self, seat: int) -> int:
        """The move of the language model in ``seat``: its answer, or the fallback move
        when its endpoint fails (``agent_error`` says so)."""
        agent = self.models[seat]
        state = self.game.state
        try:
            actions, _ = choose_actions(self.rules, state, [agent], np.zeros(1, dtype=np.int64))
            return int(actions[0])
        except PolicyError as err:
            cause = err.__cause__
            why = " ".join(str(cause if cause is not None else err).split())
        from uno_env.text.answers import fallback_action
        from uno_env.text.prompt import decision_prompt
        from uno_env.text.view import seat_view

        action = fallback_action(decision_prompt(seat_view(self.rules, state, seat), agent.options))
        name = self.names[seat]
        self.agent_error = (
            f"{name}: {why}; it played the fallback move {C.action_name(action)} (draw when "
            "it may) and the model is asked again at its next move"
        )
        agent.reset()  # a lasting failure is tried again at the next decision
        agent.record_failure(state, seat, action, why)  # as the replay shows it
        return action

    def close_models(self) -> None:
        """Close the models' agents (their connections and record files); the game's lock
        held."""
        models, self.models = self.models, {}
        for agent in models.values():
            try:
                agent.close()
            except Exception as err:  # closing a connection: nothing to tell the player
                LOG.warning("closing a model's agent of game %s: %s", self.id, err)

    def close(self) -> None:
        """Close the models' agents of a game dropped from memory; never waits for a
        model's answer in progress (the agents are then left to the garbage collector)."""
        if not self.models or not self.lock.acquire(blocking=False):
            return
        try:
            self.close_models()
        finally:
            self.lock.release()

    def _step(self, seat: int, action: int, human: bool = False) -> None:
        before = self.game.state
        self.game.step(action)
        self.seq += 1
        self.hands[-1].append(C.action_name(action))
        self.times.step(self.hands, human)
        self.pending.append((self.seq, len(self.hands) - 1, self.hands[-1][-1]))
        after = self.game.state
        told = self._tell(
            lambda table: describe_step(self.rules, before, after, seat, action, table)
        )
        face = int(C.ACTION_FACE[action])
        if face >= 0:
            self.last_cards[seat] = C.FACE_NAMES[face]
        self.events.append(step_picture(self.game.state, self.seq, seat, action, told))
        del self.events[:-KEPT_EVENTS]
        if self.shared is not None:
            self.shared.turn_began()
        if self.game.over:
            state = self.game.state
            self._tell(lambda table: describe_hand_end(self.rules, state, table, state.hands[0]))
            self.unsaved = True

    def timeout_move(self, seat: int) -> None:
        """Play the safe default move of ``seat``, whose turn ran out
        (:func:`unolab.web.game.seats.default_action`)."""
        self._step(seat, default_action(self.rules, self.game.state, seat))

    def human_move(self, action_name: str, seq: int, seat: int = HUMAN_SEAT) -> None:
        """Check and take the move of the human in ``seat``.

        Raises:
            Conflict: for a finished match or hand, a stale ``seq`` or a move out of turn.
            Invalid: for an unknown or illegal action (naming the legal ones).
        """
        if self.match_over:
            raise Conflict("this game is over; start a new game")
        if self.game.over:
            raise Conflict("the hand is over; deal the next hand first")
        if seq != self.seq:
            raise Conflict(
                f"this move was sent for move {seq}, the game is at move {self.seq} "
                "(a repeated or stale request); reload the game"
            )
        if self.game.current_seat != seat:
            raise Conflict("it is not your turn")
        try:
            action = C.parse_action(action_name)
        except ValueError as err:
            raise Invalid(str(err)) from None
        legal = self.game.legal_action_ids()
        if action not in legal:
            raise Invalid(
                f"{action_name!r} is not legal now; legal: {', '.join(C.action_names(legal))}"
            )
        self._step(seat, action, human=True)

    def next_hand(self, seq: int) -> None:
        """Deal the next hand of the match.

        Raises:
            Conflict: if the hand is not over, the match is, or ``seq`` is stale.
        """
        if not self.game.over:
            raise Conflict("the hand is still being played")
        if self.match_over:
            raise Conflict("the match is over; start a new game")
        if seq != self.seq:
            raise Conflict(f"stale request: the game is at move {self.seq}, not {seq}")
        self.game.next_hand()
        self.hands.append([])
        self.last_cards = [None] * self.rules.num_players
        self.deal_lines()
        if self.shared is not None:
            self.shared.turn_began()

    def record(self) -> dict[str, Any]:
        """The record (``uno-lab play --record``'s format, plus the seats' agent ids and
        the data fields: :meth:`ThinkTimes.fields`) of the finished hands (not one in play)."""
        finished = self.hands if self.game.over else self.hands[:-1]
        return {
            "format": RECORD_FORMAT,
            "rules": self.rules.to_dict(),
            "seed": self.seed,
            "names": self.names,
            "hands": [list(h) for h in finished],
            "agents": list(self.agents),
            "match_over": self.match_over,
            "saved": datetime.now(UTC).isoformat(timespec="seconds"),
            **self.times.fields(finished, self.setup.get("keep_as_data"), self.labels),
        }
