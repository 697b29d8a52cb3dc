"""The arena: play complete hands between batched policies, and rate one against others.

:func:`play_games` plays hands in batches through the batched play loop every caller shares
(:func:`uno_env.play.play_tables`): each step encodes every live game once from the acting
seat's point of view and calls each policy once, on the rows of the games where one of its
seats must act. A policy that fails raises :class:`uno_env.play.PolicyError`.

:func:`evaluate_vs` rates a candidate against opponents: the candidate's seat is rotated
evenly over all seats and the win rate comes with a Wilson 95% interval.

Results are reproducible: the same rules, seed, batch size and freshly built (seeded)
policies give the same results. Game ``i`` is always dealt from the same key, whatever the
batch size; with randomised policies the actions also depend on how the games are batched.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from uno_env.config_values import check_float, check_int
from uno_env.files import shown
from uno_env.outcomes import TableResults
from uno_env.play import Round, play_tables
from uno_env.policy import Policy
from uno_env.rng import derive_keys
from uno_env.rules import Rules
from unolab.agents.progress import Bar, progress_bar
from unolab.agents.registry import agent_seed
from unolab.agents.resolve import policy_factory

__all__ = [
    "MAX_BATCH_SIZE",
    "MAX_DECISIONS",
    "MAX_HANDS",
    "EvalResult",
    "check_policy",
    "evaluate_vs",
    "play_games",
    "wilson_interval",
]

DEFAULT_BATCH_SIZE = 4096

OpponentFactory = Callable[[int], Policy]
"""Builds one opponent from an integer seed."""


def _seat_groups(policies: Sequence[Policy]) -> tuple[list[Policy], npt.NDArray[np.int64]]:
    """The distinct policy objects, and each seat's index among them.

    A policy in several seats is called once per step, on all its rows.
    """
    distinct: dict[int, int] = {}
    for policy in policies:
        distinct.setdefault(id(policy), len(distinct))
    unique = list({id(policy): policy for policy in policies}.values())
    return unique, np.array([distinct[id(p)] for p in policies], dtype=np.int64)


def play_games(
    rules: Rules,
    policies: Sequence[Policy],
    num_games: int,
    seed: int | None = 0,
    batch_size: int = DEFAULT_BATCH_SIZE,
    *,
    progress: bool = True,
    description: str = "games",
) -> TableResults:
    """Play ``num_games`` complete hands, one policy per seat.

    Args:
        rules: The rules of every game; ``rules.num_players`` must equal ``len(policies)``.
        policies: The policy of each seat. The same object may sit in several seats.
        num_games: Hands to play (each a fresh match's first hand).
        seed: Seed of the game keys (:func:`uno_env.rng.derive_keys`).
        batch_size: Games played side by side.
        progress: Show a progress bar (:mod:`unolab.agents.progress`: plain lines off a
            terminal).
        description: Label of the progress bar.

    Returns:
        The outcome of every hand (:class:`uno_env.outcomes.TableResults`), in the order of
        the game keys.

    Raises:
        ValueError: for a wrong number of policies, or a game count, batch size or seed that
            is not an integer within its bounds (:data:`MAX_HANDS`, :data:`MAX_BATCH_SIZE`,
            ``0 <= seed < 2**64``), naming it.
        TypeError: for rules that are not Rules, a seat's policy that is not one, or a
            ``progress`` that is not a bool, naming it.
        PolicyError: if a policy fails or chooses an illegal action (the message names it).
    """
    n_players = _check_rules(rules)
    if isinstance(policies, (str, bytes)) or not isinstance(policies, Sequence):
        raise TypeError(f"policies must be a list of policies, one per seat, got {shown(policies)}")
    if len(policies) != n_players:
        raise ValueError(f"need one policy per seat: {n_players} seats, {len(policies)} policies")
    for seat, policy in enumerate(policies):
        check_policy(policy, f"policies[{seat}]")
    _check_counts(num_games, batch_size, seed)
    _check_switch("progress", progress)
    with progress_bar(description, num_games, unit="hands", enabled=progress) as bar:
        return _play(rules, policies, num_games, seed, batch_size, _Count(bar, num_games))


MAX_HANDS = 2**40
"""The most hands one call plays (about a trillion: days of any machine's time)."""
MAX_BATCH_SIZE = 2**20
"""The most games played side by side (their states are held in memory together)."""
MAX_DECISIONS = 1e9
"""The largest estimate of a hand's decisions :func:`evaluate_vs` counts by (a hand ends
at its ``max_turns``, far below)."""


def _check_counts(num_games: int, batch_size: int, seed: object, least_games: int = 0) -> None:
    """Integers (NumPy's too, not bools) in their bounds, and a seed as an agent's is."""
    check_int("num_games", num_games, least_games, MAX_HANDS, "hands played by one call")
    check_int("batch_size", batch_size, 1, MAX_BATCH_SIZE, "games held in memory at once")
    agent_seed(seed)


def _check_rules(rules: object) -> int:
    """The table size of ``rules``, which must be :class:`~uno_env.rules.Rules`.

    Raises:
        TypeError: naming what was given instead.
    """
    if not isinstance(rules, Rules):
        raise TypeError(
            f"rules must be Rules (uno_env.load_rules(NAME_OR_PATH) makes them), got {shown(rules)}"
        )
    return rules.num_players


def _check_switch(name: str, value: object) -> None:
    """A switch must be True or False (NumPy's too): a word or a number is no switch.

    Raises:
        TypeError: naming the switch and the value.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {shown(value)}")


class _Count:
    """Advances a bar by hands as they end or, given the decisions a hand takes, by
    decisions as they are played.

    A search agent's evaluation plays its hands as one batch, so they all end near its end;
    its time goes into the decisions, which are counted as they are made against an
    estimate of their total: ``decisions_per_hand`` at first, then the decisions per hand
    of the hands played so far, measured after each batch. The total never drops below
    what is certain (a decision per live hand and per hand not yet dealt), and it becomes
    the true count when the last hand ends.
    """

    def __init__(self, bar: Bar, hands: int, decisions_per_hand: float | None = None) -> None:
        self.bar = bar
        self.per_hand = decisions_per_hand
        self.unstarted = hands
        self.hands_done = 0

    def on_round(self, turn: Round) -> None:
        """Count a round's decisions."""
        acting = int(np.count_nonzero(turn.acting >= 0))
        self.bar.advance(acting)
        certain = self.bar.completed + acting + self.unstarted
        if self.bar.total < certain:
            self.bar.update(total=certain)

    def start(self, hands: int) -> None:
        """A batch of ``hands`` is dealt."""
        self.unstarted -= hands

    def finish(self, hands: int) -> None:
        """A batch of ``hands`` ended: re-estimate what is left from what was played."""
        self.hands_done += hands
        if self.per_hand is None:
            return
        measured = self.bar.completed / max(self.hands_done, 1)
        if self.unstarted:
            self.bar.update(total=self.bar.completed + round(self.unstarted * measured))
        else:
            self.bar.update(total=self.bar.completed)


def _play(
    rules: Rules,
    policies: Sequence[Policy],
    num_games: int,
    seed: int | None,
    batch_size: int,
    count: _Count,
) -> TableResults:
    """:func:`play_games` (arguments checked), counted by ``count``."""
    n_players = rules.num_players
    results = TableResults.empty(num_games, n_players)
    if num_games == 0:
        return results
    keys = derive_keys(seed, num_games)
    unique, seat_index = _seat_groups(policies)
    for start in range(0, num_games, batch_size):
        ids = np.arange(start, min(start + batch_size, num_games))
        lineups = np.broadcast_to(seat_index, (ids.size, n_players))
        count.start(ids.size)
        out = play_tables(
            rules,
            unique,
            lineups,
            keys[ids],
            on_error="raise",
            first_game=start,
            on_finished=count.bar.advance if count.per_hand is None else None,
            on_round=None if count.per_hand is None else count.on_round,
        )
        count.finish(ids.size)
        results.put(ids, out)
    return results


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion.

    Args:
        successes: Number of successes, ``0 <= successes <= n``.
        n: Number of trials.
        z: Standard normal quantile (1.96 for a 95% interval).

    Returns:
        ``(low, high)`` within [0, 1]. With ``n == 0`` nothing is known: ``(0.0, 1.0)``.

    Raises:
        ValueError: for a negative ``n``, ``successes`` outside ``0..n`` or ``z <= 0``.

    Example:
        >>> [round(x, 4) for x in wilson_interval(50, 100)]
        [0.4038, 0.5962]
    """
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    if z <= 0:
        raise ValueError(f"z must be positive, got {z}")
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    z2 = z * z
    denominator = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class EvalResult:
    """A candidate's record against opponents, its seat rotated over the table.

    Attributes:
        candidate: The candidate's name.
        opponent: The opponents' name.
        num_players: Seats at the table.
        games: Hands played.
        wins: Hands the candidate won.
        truncated: Hands truncated at ``max_turns`` (nobody won; they count as not won).
        win_rate: ``wins / games``.
        ci_low: Lower end of the Wilson 95% interval of the win rate.
        ci_high: Upper end of that interval.
        fair_share: ``1 / num_players``, the win rate of an equal player.
        mean_turns: Mean decisions per hand.
        seat_games: Hands played with the candidate in each seat.
        seat_wins: Hands the candidate won from each seat.
    """

    candidate: str
    opponent: str
    num_players: int
    games: int
    wins: int
    truncated: int
    win_rate: float
    ci_low: float
    ci_high: float
    fair_share: float
    mean_turns: float
    seat_games: tuple[int, ...]
    seat_wins: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        """Plain mapping (for JSON)."""
        out = asdict(self)
        out["seat_games"] = list(self.seat_games)
        out["seat_wins"] = list(self.seat_wins)
        return out


def _opponent_builder(opponent_factory: str | OpponentFactory, rules: Rules) -> OpponentFactory:
    if not isinstance(opponent_factory, str):
        if not callable(opponent_factory):
            raise TypeError(
                "opponent_factory must be a bot name or a callable building a policy from a "
                f"seed, got {shown(opponent_factory)}"
            )
        factory = opponent_factory

        def checked(seed: int) -> Policy:
            opponent = factory(seed)
            check_policy(opponent, f"opponent_factory({seed})'s result")
            return opponent

        return checked
    return policy_factory(opponent_factory, rules)  # fails now, naming what it takes


def check_policy(policy: object, what: str) -> None:
    """Refuse what is not a lab policy in one line; an SB3 model is told its adapter.

    Raises:
        TypeError: naming ``what`` and, for an SB3 model, the adapter to wrap it with.
    """
    if isinstance(policy, Policy):
        return
    kind = type(policy).__name__
    if hasattr(policy, "policy") and hasattr(policy, "predict"):  # a Stable-Baselines3 model
        raise TypeError(
            f"{what} is a {kind} model, not a policy: wrap it with "
            f"unolab.train.export.as_policy(model, rules) (a frozen copy of its network)"
        )
    raise TypeError(
        f"{what} must be a policy (act(observations, masks) and a name), got a {kind}: "
        f"{shown(policy)}"
    )


def evaluate_vs(
    rules: Rules,
    candidate: Policy,
    opponent_factory: str | OpponentFactory,
    num_games: int,
    seed: int = 0,
    batch_size: int = DEFAULT_BATCH_SIZE,
    *,
    progress: bool = True,
    decisions_per_hand: float | None = None,
) -> EvalResult:
    """Rate ``candidate`` against opponents, its seat rotated evenly over all seats.

    Seat ``k`` gets ``num_games // N`` hands (the first ``num_games % N`` seats one more),
    with the candidate in seat ``k`` and a fresh opponent in every other seat. The dealer of
    each hand is drawn at random from its key (docs/rules.md §2), as at a real table.

    Args:
        rules: The rules of every game (``rules.num_players`` seats).
        candidate: The policy rated.
        opponent_factory: An agent's name or path (anything
            :func:`~unolab.agents.resolve.policy_factory` resolves: a bot, a search, a shipped
            or exported agent, a Python class), or a callable that builds one opponent from
            an integer seed (seeds are derived from ``seed``).
        num_games: Hands in all.
        seed: Seed of the game keys and of the opponents.
        batch_size: Games played side by side.
        progress: Show one progress bar for all seats (:mod:`unolab.agents.progress`:
            plain lines off a terminal).
        decisions_per_hand: Count the bar in decisions (every seat's), starting from this
            estimate of a hand's decisions, rather than in hands: for a search agent, whose
            hands all end near the end of its batch. ``None``: count hands.

    Returns:
        The candidate's wins, win rate and Wilson 95% interval.

    Raises:
        ValueError: for a game count (at least 1), batch size or seed that is not an
            integer within its bounds, or a ``decisions_per_hand`` that is not a number in
            (0, :data:`MAX_DECISIONS`], naming it (as :func:`play_games`); an opponent's
            name the resolver refuses (an unknown name, a missing or mismatched agent file).
        TypeError: for a candidate (or an opponent built) that is not a policy, an
            ``opponent_factory`` neither a name nor callable, rules that are not Rules, or
            a ``progress`` that is not a bool.
    """
    check_policy(candidate, "candidate")
    n_players = _check_rules(rules)
    _check_counts(num_games, batch_size, seed, least_games=1)
    _check_switch("progress", progress)
    if decisions_per_hand is not None:
        check_float("decisions_per_hand", decisions_per_hand, 0, MAX_DECISIONS, low_open=True)
    build = _opponent_builder(opponent_factory, rules)
    # Per rotation: one seed per opponent seat, and one (the last) for the game keys.
    seeds = np.random.SeedSequence(seed).generate_state(n_players * (n_players + 1), np.uint32)
    seat_seeds = seeds.reshape(n_players, n_players + 1).astype(np.int64)
    lineups: list[list[Policy]] = [
        [
            candidate if other == seat else build(int(seat_seeds[seat, other]))
            for other in range(n_players)
        ]
        for seat in range(n_players)
    ]
    opponent_name = (
        opponent_factory if isinstance(opponent_factory, str) else lineups[0][1 % n_players].name
    )
    seat_games, seat_wins, turns, truncated = [], [], 0, 0
    unit, total = "hands", float(num_games)
    if decisions_per_hand is not None:
        unit, total = "decisions", float(round(num_games * decisions_per_hand))
    description = f"{candidate.name} vs {opponent_name}"
    with progress_bar(description, total, unit=unit, enabled=progress) as bar:
        count = _Count(bar, num_games, decisions_per_hand)
        for seat, policies in enumerate(lineups):
            games = num_games // n_players + (1 if seat < num_games % n_players else 0)
            seed_of_keys = int(seat_seeds[seat, n_players])
            results = _play(rules, policies, games, seed_of_keys, batch_size, count)
            seat_games.append(games)
            seat_wins.append(int(np.count_nonzero(results.winners == seat)))
            turns += int(results.turns.sum(dtype=np.int64))
            truncated += int(np.count_nonzero(results.truncated))
    wins = sum(seat_wins)
    low, high = wilson_interval(wins, num_games)
    return EvalResult(
        candidate=candidate.name,
        opponent=opponent_name,
        num_players=n_players,
        games=num_games,
        wins=wins,
        truncated=truncated,
        win_rate=wins / num_games if num_games else float("nan"),
        ci_low=low,
        ci_high=high,
        fair_share=1.0 / n_players,
        mean_turns=turns / num_games if num_games else float("nan"),
        seat_games=tuple(seat_games),
        seat_wins=tuple(seat_wins),
    )
