"""Teacher demonstrations for imitation: (observation, legal mask, teacher action) triples.

:func:`generate_demonstrations` plays thousands of games side by side through the lab's one
play loop (:func:`uno_env.play.play_tables`: every policy is called once per round on all the
games where it acts) and, as a hook on each round, records at each decision of a teacher seat the observation that seat sees (the same :func:`uno_env.observation.encode`
the learner envs give PPO), the legal-action mask and the teacher's action.

Forced decisions (a single legal action) are not recorded: there is nothing to learn from
them and they would inflate the accuracy. Each decision also keeps its phase and the
teacher's action, from which :func:`decision_kinds` sorts it into the kinds the report
gives an accuracy for, and its game's number, so that validation holds out whole games.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from uno_env import cards as C
from uno_env.core import AFTER_DRAW, CHALLENGE_PHASE, CHOOSE_COLOUR, PLAY
from uno_env.observation import OBS_DIM, encode
from uno_env.play import Round, choose_actions, play_tables
from uno_env.policy import Policy, PolicyFactory, SearchStatistics
from uno_env.rng import derive_keys
from uno_env.rules import Rules
from unolab.agents.progress import progress_bar, say
from unolab.agents.registry import SEARCH_NAMES
from unolab.agents.resolve import policy_factory

__all__ = [
    "DECISION_KINDS",
    "Demonstrations",
    "decision_kinds",
    "generate_demonstrations",
    "teacher_factory",
]

DECISION_KINDS: tuple[str, ...] = (
    "play",
    "draw",
    "after_draw",
    "wild_colour",
    "challenge",
    "uno",
    "other",
)
"""The kinds of decision the report scores separately (see :func:`decision_kinds`)."""


@dataclass(frozen=True)
class Demonstrations:
    """Recorded teacher decisions, one row each.

    Attributes:
        observations: What the teacher's seat saw, (N, OBS_DIM) float32.
        masks: The legal actions, (N, NUM_ACTIONS) bool.
        actions: The teacher's action, (N,) int64.
        phases: The decision's phase (``uno_env.core.PHASE_NAMES``), (N,) int8.
        teachers: Index into ``teacher_names`` of the teacher that decided, (N,) int16.
        games: Number of the game the decision belongs to, (N,) int64.
        teacher_names: The teachers, in the order of ``teachers``' indices.
        num_games: Games played (the last batch may stop before its games end).
        forced: Forced teacher decisions (one legal action) seen and skipped.
        seconds: Wall time of the generation.
        values: A search teacher's estimate of each action (its mean rollout reward for
            the deciding seat), (N, NUM_ACTIONS) float16, NaN where it has none (actions
            not searched, decisions of other teachers); ``None`` when no teacher searches.
    """

    observations: npt.NDArray[np.float32]
    masks: npt.NDArray[np.bool_]
    actions: npt.NDArray[np.int64]
    phases: npt.NDArray[np.int8]
    teachers: npt.NDArray[np.int16]
    games: npt.NDArray[np.int64]
    teacher_names: tuple[str, ...]
    num_games: int
    forced: int
    seconds: float
    values: npt.NDArray[np.float16] | None = None

    def __len__(self) -> int:
        return int(self.actions.shape[0])


def decision_kinds(
    phases: npt.NDArray[np.integer], actions: npt.NDArray[np.integer]
) -> npt.NDArray[np.int8]:
    """The kind of each decision, an index into :data:`DECISION_KINDS`.

    By the teacher's action and the phase: ``uno`` declaring UNO or catching a seat that
    did not; ``challenge`` challenging or accepting a Wild Draw Four; ``after_draw``
    playing the card just drawn or keeping it; ``draw`` drawing in a normal turn; ``play``
    playing a card in a normal turn (a wild's colour is scored apart, as ``wild_colour``,
    by :func:`agreement`); ``wild_colour`` naming the colour of a Wild starter; ``other``
    the decisions of house rules (stacking, jump-in, seven-zero swaps).
    """
    kind = np.full(actions.shape, DECISION_KINDS.index("other"), dtype=np.int8)
    normal_turn = phases == PLAY
    kind[normal_turn & (actions < C.NUM_PLAY_ACTIONS)] = DECISION_KINDS.index("play")
    kind[normal_turn & (actions == C.DRAW)] = DECISION_KINDS.index("draw")
    kind[phases == AFTER_DRAW] = DECISION_KINDS.index("after_draw")
    kind[phases == CHOOSE_COLOUR] = DECISION_KINDS.index("wild_colour")
    kind[phases == CHALLENGE_PHASE] = DECISION_KINDS.index("challenge")
    kind[(actions == C.UNO) | (actions == C.CATCH)] = DECISION_KINDS.index("uno")
    return kind


def teacher_factory(name: str, rules: Rules, budget: int | None = None) -> PolicyFactory:
    """The factory of a teacher: a name of :data:`unolab.agents.AGENT_NAMES` or an exported agent.

    Args:
        name: A bot or search agent name (``pimc``), or the path of an exported agent.
        rules: The rules it will play (an exported agent is checked against them).
        budget: For a search agent, its rollouts per candidate action (``pimc`` and its
            variants) or its iterations per decision (``ismcts``); ``None``: the agent's
            default. Ignored by the other teachers.

    Raises:
        ValueError: as :func:`unolab.agents.resolve.policy_factory`, or for a budget out of range.
    """
    if name not in SEARCH_NAMES or budget is None:
        return policy_factory(name, rules)
    # The named search itself (pimc_guided keeps its prior), at the budget asked for.
    return policy_factory(f"{name}:{budget}", rules)


def _draw(
    rng: np.random.Generator, weights: npt.NDArray[np.float64], size: int | tuple[int, int]
) -> npt.NDArray[np.int64]:
    """Indices drawn with probabilities proportional to ``weights``."""
    drawn: npt.NDArray[np.int64] = rng.choice(weights.size, size=size, p=weights / weights.sum())
    return drawn


@dataclass(frozen=True)
class _Seating:
    """One batch of recorded games: its policies, who sits where and its first game."""

    policies: list[Policy | None]
    lineup: npt.NDArray[np.int64]
    is_teacher: npt.NDArray[np.bool_]
    first_game: int


def generate_demonstrations(
    rules: Rules,
    teachers: Mapping[str, float],
    num_samples: int,
    *,
    opponents: Mapping[str, float] | None = None,
    seed: int = 0,
    games_per_batch: int = 4096,
    progress: bool = True,
    teacher_budget: int | None = None,
    behaviour: str | None = None,
    behaviour_share: float = 0.0,
) -> Demonstrations:
    """Play games with the teachers and record ``num_samples`` of their decisions.

    Args:
        rules: The rules of every game.
        teachers: Agent name (a bot or ``pimc``) or exported agent path -> relative
            weight. Each teacher seat
            of each game is held by one teacher drawn with these weights.
        num_samples: Decisions to record (forced ones are skipped, not counted).
        opponents: ``None``: every seat is a teacher seat. Otherwise bot name -> weight:
            one seat per game, drawn at random, is the teacher's and the others are held
            by these bots (their decisions are not recorded).
        seed: Seed of the deals, the seating and the bots' own random choices.
        games_per_batch: Games played side by side.
        progress: Show a progress bar (off a terminal, a line after every batch of games).
        teacher_budget: Rollouts per candidate action of a search teacher (``pimc``);
            ``None``: the agent's default (:func:`teacher_factory`).
        behaviour: A bot name or exported agent (typically the clone being trained) that
            plays ``behaviour_share`` of the teacher seats' decisions, drawn at random,
            while the teacher's action is still the one recorded (DAgger: the teacher
            labels the positions the learner reaches by its own mistakes). ``None``: the
            teachers play every decision they record.
        behaviour_share: Share of the teacher seats' decisions played by ``behaviour``
            (0 to 1).

    Returns:
        The recorded decisions.

    Raises:
        ValueError: for an unknown bot, an agent file that cannot be loaded or was trained
            under other rules, or a teacher that chooses an illegal action
            (:class:`uno_env.play.PolicyError`).
    """
    if num_samples < 1 or games_per_batch < 1:
        raise ValueError(
            f"num_samples and games_per_batch must be >= 1, got {num_samples}, {games_per_batch}"
        )
    if not 0.0 <= behaviour_share <= 1.0:
        raise ValueError(f"behaviour_share must be in [0, 1], got {behaviour_share}")
    start = time.perf_counter()
    teacher_names = tuple(teachers)
    factories: list[PolicyFactory] = [
        teacher_factory(name, rules, teacher_budget) for name in teacher_names
    ]
    teacher_weights = np.array([teachers[name] for name in teacher_names], dtype=np.float64)
    opponent_names = tuple(opponents or {})
    factories += [policy_factory(name, rules) for name in opponent_names]
    opponent_weights = np.array(
        [(opponents or {})[name] for name in opponent_names], dtype=np.float64
    )
    n_teachers, n_players = len(teacher_names), rules.num_players
    rng = np.random.default_rng(seed)
    acts_instead = behaviour is not None and behaviour_share > 0
    if acts_instead:
        assert behaviour is not None
        factories.append(teacher_factory(behaviour, rules))
    behaviour_index = len(factories) - 1
    # Its own stream: a recording without behaviour draws exactly what it drew before.
    behaviour_rng = np.random.default_rng([seed, 2])

    out_obs = np.empty((num_samples, OBS_DIM), dtype=np.float32)
    out_masks = np.empty((num_samples, C.NUM_ACTIONS), dtype=bool)
    out_actions = np.empty(num_samples, dtype=np.int64)
    out_phases = np.empty(num_samples, dtype=np.int8)
    out_teachers = np.empty(num_samples, dtype=np.int16)
    out_games = np.empty(num_samples, dtype=np.int64)
    searches = [i for i, name in enumerate(teacher_names) if name in SEARCH_NAMES]
    out_values = (
        np.full((num_samples, C.NUM_ACTIONS), np.nan, dtype=np.float16) if searches else None
    )
    filled, games_started, forced = 0, 0, 0

    def record(turn: Round, seating: _Seating) -> bool:
        """Record the teachers' decisions of a round; let the behaviour act instead."""
        nonlocal filled, forced
        policies, lineup, first_game = seating.policies, seating.lineup, seating.first_game
        state, games = turn.state, turn.games
        current = state.current.astype(np.int64)
        choices = turn.masks.sum(axis=1)
        teacher_turn = (turn.acting >= 0) & seating.is_teacher[games, current]
        forced += int(np.count_nonzero(teacher_turn & (choices == 1)))
        rows = np.flatnonzero(teacher_turn & (choices > 1))[: num_samples - filled]
        if rows.size:
            into = slice(filled, filled + rows.size)
            if out_values is not None:
                estimates = _search_estimates(policies, searches, turn.acting)
                out_values[into] = estimates[rows]
            seen = state if rows.size == state.batch_size else state.select(rows)
            out_obs[into] = encode(rules, seen)
            out_masks[into] = turn.masks[rows]
            out_actions[into] = turn.actions[rows]
            out_phases[into] = state.phase[rows]
            out_teachers[into] = lineup[games[rows], current[rows]]
            out_games[into] = first_game + games[rows]
            filled += rows.size
            bar.advance(rows.size)
        if acts_instead:
            instead = teacher_turn & (behaviour_rng.random(state.batch_size) < behaviour_share)
            if instead.any():
                others, _ = choose_actions(
                    rules,
                    state,
                    policies,
                    np.where(instead, behaviour_index, -1),
                    masks=turn.masks,
                    game_ids=first_game + games,
                )
                turn.actions[instead] = others[instead]
        return filled < num_samples

    with progress_bar(
        f"recording {'+'.join(teacher_names)}",
        num_samples,
        unit="decisions",
        enabled=progress,
        plain_lines=False,  # off a terminal: the line after every batch below
    ) as bar:
        while filled < num_samples:
            n_games = games_per_batch
            keys = derive_keys(rng, n_games)
            seeds = rng.integers(0, 2**63 - 1, size=len(factories))
            policies: list[Policy | None] = [
                factory(int(s)) for factory, s in zip(factories, seeds, strict=True)
            ]
            if opponents is None:
                lineup = _draw(rng, teacher_weights, (n_games, n_players))
                is_teacher = np.ones((n_games, n_players), dtype=bool)
            else:
                lineup = n_teachers + _draw(rng, opponent_weights, (n_games, n_players))
                seat = rng.integers(0, n_players, size=n_games)
                rows = np.arange(n_games)
                lineup[rows, seat] = _draw(rng, teacher_weights, n_games)
                is_teacher = np.zeros((n_games, n_players), dtype=bool)
                is_teacher[rows, seat] = True
            lineup = lineup.astype(np.int64)
            first_game = games_started
            games_started += n_games
            seating = _Seating(policies, lineup, is_teacher, first_game)
            play_tables(
                rules,
                policies,
                lineup,
                keys,
                on_error="raise",
                first_game=first_game,
                on_round=functools.partial(record, seating=seating),
            )
            if bar.shown and not bar.live:
                # Off a terminal no bar is drawn: one line per batch of games instead.
                elapsed = time.perf_counter() - start
                say(
                    f"recorded {filled:,} of {num_samples:,} decisions in {games_started:,} "
                    f"games after {elapsed:.0f} s"
                )
    return Demonstrations(
        observations=out_obs,
        masks=out_masks,
        actions=out_actions,
        phases=out_phases,
        teachers=out_teachers,
        games=out_games,
        teacher_names=teacher_names,
        num_games=games_started,
        forced=forced,
        seconds=time.perf_counter() - start,
        values=out_values,
    )


def _search_estimates(
    policies: Sequence[Policy | None], searches: Sequence[int], acting: npt.NDArray[np.int64]
) -> npt.NDArray[np.float32]:
    """The search teachers' estimates of the decision just taken, one row per game.

    :func:`~uno_env.play.choose_actions` calls each policy that holds a row once, on the
    rows it holds in row order: the rows of policy ``i`` are those where ``acting == i``,
    and its ``last_values`` are this step's.
    """
    out = np.full((acting.shape[0], C.NUM_ACTIONS), np.nan, dtype=np.float32)
    for index in searches:
        rows = np.flatnonzero(acting == index)
        policy = policies[index]
        values = policy.last_values if isinstance(policy, SearchStatistics) else None
        if rows.size and values is not None and values.shape[0] == rows.size:
            out[rows] = values
    return out
