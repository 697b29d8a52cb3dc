"""Bad input to the envs, the engine's and the agents' Python API: one clear error naming the
argument and the value as given, the env still usable.

Each case builds an env (or calls the API) with one bad input and checks that the error is
a domain exception (``ValueError`` and its subclasses, or ``TypeError`` for an argument of
the wrong kind, as Python does), that its message names the bad input, and that what was
there before is intact: the env still plays after ``reset()``, a refused action leaves the
state as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import uno_env
from uno_env import ConfigError, IllegalActionError, UnoGame, core, load_rules
from uno_env.cards import action_name, action_names, card_name, parse_action, parse_card
from uno_env.envs.gym_env import UnoGymEnv
from uno_env.envs.learner_tables import TablesStoppedError
from uno_env.envs.opponents import OpponentPool
from uno_env.envs.pettingzoo_env import raw_env
from uno_env.envs.vec_env import UnoVecEnv
from uno_env.observation import OBS_DIM, encode, get_field, observation_bounds
from uno_env.play import PolicyError
from unolab.agents import make_agent, resolve_opponents, resolve_policy
from unolab.agents.arena import evaluate_vs, play_games

RULES2 = load_rules("official", num_players=2)
_R3 = load_rules("official", num_players=3)
_S2 = core.init(RULES2, 2, seed=0)
RANDOM = make_agent("random", 0)


class _Faulty:
    """An opponent that misbehaves once when armed, and otherwise plays legally."""

    def __init__(self, name: str, fault: Callable[[np.ndarray], Any]) -> None:
        self.name = name
        self.fault = fault
        self.armed = False

    def act(self, observations: np.ndarray, masks: np.ndarray) -> Any:
        if self.armed:
            self.armed = False
            return self.fault(masks)
        return masks.argmax(axis=1)

    def reset(self, games: np.ndarray | None = None) -> None:
        """Stateless."""


def _raise(masks: np.ndarray) -> Any:
    raise ValueError("the network exploded")


FAULTS: dict[str, Callable[[np.ndarray], Any]] = {
    "illegal": lambda masks: (~masks).argmax(axis=1),
    "out_of_range": lambda masks: np.full(masks.shape[0], 999),
    "negative": lambda masks: np.full(masks.shape[0], -3),
    "floats": lambda masks: np.zeros(masks.shape[0]) + 0.5,
    "wrong_shape": lambda masks: np.zeros((masks.shape[0], 2), dtype=np.int64),
    "raises": _raise,
}


@dataclass(frozen=True)
class Case:
    """One bad input: what to run, the error expected, a text its message must contain."""

    id: str
    run: Callable[[], object]
    error: type[Exception] | tuple[type[Exception], ...]
    names: str


def _gym(**kwargs: Any) -> Callable[[], object]:
    return lambda: UnoGymEnv(**kwargs)


def _vec(num_envs: Any, **kwargs: Any) -> Callable[[], object]:
    return lambda: UnoVecEnv(num_envs, **kwargs)


def _vec_step(actions: Any) -> Callable[[], object]:
    def run() -> object:
        env = UnoVecEnv(4, seed=0)
        env.reset()
        return env.step(actions)

    return run


def _gym_reset(options: dict[str, Any]) -> Callable[[], object]:
    def run() -> object:
        return UnoGymEnv(num_players=2).reset(seed=0, options=options)

    return run


def _encode_seat(seat: int) -> Callable[[], object]:
    def run() -> object:
        rules = load_rules("official", num_players=3)
        return encode(rules, core.init(rules, 2, seed=0), np.array([0, seat]))

    return run


def _aec_reset(options: dict[str, Any]) -> Callable[[], object]:
    def run() -> object:
        return raw_env(num_players=2).reset(seed=0, options=options)

    return run


def _core_init(*args: Any, **kwargs: Any) -> Callable[[], object]:
    return lambda: core.init(load_rules("official", num_players=2), *args, **kwargs)


def _game_step(action: str) -> Callable[[], object]:
    return lambda: UnoGame("official", seed=0, num_players=2).step(action)


def _aec_step(action: Any, wrapped: bool) -> Callable[[], object]:
    """Step an AEC env: ``env()`` (whose default ends the hand on an illegal move) or
    ``raw_env``; what is no action id is an error either way."""

    def run() -> object:
        env = uno_env.env(num_players=2) if wrapped else raw_env(num_players=2)
        env.reset(seed=0)
        return env.step(action)

    return run


def _gym_step(action: Any) -> Callable[[], object]:
    def run() -> object:
        env = UnoGymEnv(num_players=2)
        env.reset(seed=0)
        return env.step(action)

    return run


def _vec_call(method: str, *args: Any, **kwargs: Any) -> Callable[[], object]:
    """Call a method of a VecEnv of 2 envs."""

    def run() -> object:
        env = UnoVecEnv(2, seed=0)
        env.reset()
        return getattr(env, method)(*args, **kwargs)

    return run


def _aec() -> Any:
    """A raw AEC env of 2 players, dealt."""
    env = raw_env(num_players=2)
    env.reset(seed=0)
    return env


def _shaped(shape: Callable[[int, int], tuple[int, ...]]) -> Callable[[Any, Any], np.ndarray]:
    """A reward function whose table has the wrong shape: ``shape(B, N)``."""

    def wrong_shape(rules: Any, state: Any) -> np.ndarray:
        return np.zeros(shape(state.batch_size, rules.num_players), dtype=np.float32)

    return wrong_shape


def _play_with_reward(reward: Any, kind: str) -> Callable[[], object]:
    """Play hands with a custom reward function until one ends and it is asked."""

    def run() -> object:
        if kind == "aec":
            aec = raw_env(num_players=2, reward=reward)
            aec.reset(seed=0)
            for _agent in aec.agent_iter(10_000):
                obs, _, terminated, truncated, _ = aec.last()
                done = terminated or truncated
                aec.step(None if done else int(np.flatnonzero(obs["action_mask"])[0]))
        elif kind == "gym":
            gym = UnoGymEnv(num_players=2, reward=reward)
            gym.reset(seed=0)
            for _ in range(10_000):
                _, _, terminated, truncated, _ = gym.step(int(gym.action_masks().argmax()))
                if terminated or truncated:
                    gym.reset()
        else:
            vec = UnoVecEnv(2, reward=reward, seed=0)
            vec.reset()
            for _ in range(10_000):
                vec.step(vec.action_masks().argmax(axis=1))
        return None

    return run


_NOT_ACTIONS: list[tuple[str, Any, type[Exception], str]] = [
    # A number that is no action id is named as given, never as the int64 it wraps to.
    ("2_pow_63", 2**63, IllegalActionError, "9223372036854775808 is out of range"),
    ("2_pow_64_minus_1", 2**64 - 1, IllegalActionError, "18446744073709551615 is out of"),
    ("2_pow_64", 2**64, IllegalActionError, "18446744073709551616 is out of range"),
    ("uint64_max", np.uint64(2**64 - 1), IllegalActionError, "18446744073709551615"),
    ("negative", -1, IllegalActionError, "action -1 is out of range"),
    ("fractional", 3.5, IllegalActionError, "got 3.5"),
    ("nan", float("nan"), IllegalActionError, "got nan"),
    ("huge_float", 1e30, IllegalActionError, "1e+30 is out of range"),
    ("nested_list", [[1]], TypeError, "got [[1]]"),
    ("bool", True, TypeError, "got True"),
    ("text", "3", TypeError, "got '3'"),
]


CASES: list[Case] = [
    Case("opponent_by_name", _gym(opponents="mixbot"), TypeError, "resolve_opponents"),
    Case("opponent_not_a_policy", _gym(opponents=42), TypeError, "42"),
    Case(
        "opponent_list_too_long",
        _gym(num_players=2, opponents=[make_agent("random")] * 3),
        ValueError,
        "got 3",
    ),
    Case("opponent_unknown_bot", lambda: resolve_opponents(["nobot"]), ValueError, "nobot"),
    Case(
        "opponent_missing_file",
        lambda: resolve_opponents("no/such/agent.safetensors"),
        ValueError,
        "no/such/agent",
    ),
    Case("pool_empty", lambda: OpponentPool([]), ValueError, "at least one"),
    Case(
        "pool_negative_weight",
        lambda: OpponentPool([make_agent("random")], [-1.0]),
        ValueError,
        "-1.0",
    ),
    Case(
        "pool_nan_weight",
        lambda: OpponentPool([make_agent("random")], [float("nan")]),
        ValueError,
        "nan",
    ),
    Case(
        "pool_weights_count",
        lambda: OpponentPool([make_agent("random")], [1.0, 2.0]),
        ValueError,
        "2.0",
    ),
    Case("learner_seat_out_of_range", _gym(num_players=2, learner_seat=5), ValueError, "5"),
    Case("learner_seat_word", _gym(learner_seat="first"), ValueError, "first"),
    Case("reward_unknown", _gym(reward="money"), ValueError, "money"),
    Case("rules_unknown_preset", _gym(rules="no_such_preset"), ConfigError, "no_such_preset"),
    Case("players_too_many", _gym(num_players=11), ConfigError, "11"),
    Case("players_too_few", _gym(num_players=1), ConfigError, "1"),
    Case("vec_zero_envs", _vec(0), ValueError, "0"),
    Case("vec_float_envs", _vec(2.5), ValueError, "2.5"),
    Case("vec_actions_wrong_size", _vec_step(np.zeros(3, dtype=np.int64)), ValueError, "(3,)"),
    Case("vec_actions_illegal", _vec_step(np.full(4, 79)), IllegalActionError, "79"),
    Case("reset_learner_seat", _gym_reset({"learner_seat": 9}), ValueError, "9"),
    Case("reset_learner_seat_bool", _gym_reset({"learner_seat": True}), ValueError, "got True"),
    Case("reset_learner_seat_list", _gym_reset({"learner_seat": [0, 1]}), ValueError, "[0, 1]"),
    Case("learner_seat_bool", _gym(num_players=2, learner_seat=True), ValueError, "got True"),
    Case("learner_seat_list", _gym(num_players=2, learner_seat=[0, 1]), ValueError, "[0, 1]"),
    Case("vec_learner_seat_bool", _vec(2, learner_seat=False), ValueError, "got False"),
    Case("vec_bool_envs", _vec(True), ValueError, "got True"),
    Case("core_init_bool_batch", _core_init(True), ValueError, "got True"),
    # Game keys are integers in [0, 2**64): no wrapping of -1, no overflow at 2**64.
    *(
        Case(f"{where}_key_{label}", run(key), ValueError, f"[0, 2**64), got {key!r}")
        for label, key in [
            ("negative", -1),
            ("too_large", 2**64),
            ("bool", True),
            ("float", 1.5),
            ("text", "7"),
        ]
        for where, run in [
            ("gym", lambda k: _gym_reset({"key": k})),
            ("aec", lambda k: _aec_reset({"key": k})),
            ("core_init", lambda k: _core_init(keys=[3, k])),
        ]
    ),
    # What is no action id: one error in every env and mode, naming it as given.
    *(
        Case(f"{where}_action_{label}", run(action), error, says)
        for label, action, error, says in _NOT_ACTIONS
        for where, run in [
            ("aec", lambda a: _aec_step(a, wrapped=True)),
            ("raw_aec", lambda a: _aec_step(a, wrapped=False)),
            ("gym", _gym_step),
        ]
    ),
    Case("aec_action_of_a_live_agent_none", _aec_step(None, True), TypeError, "got None"),
    Case(
        "vec_action_2_pow_63",
        _vec_call("step", [2**63, 0]),
        IllegalActionError,
        "env 0: action 9223372036854775808 is out of range",
    ),
    Case(
        "vec_action_uint64_max",
        _vec_call("step", np.array([0, 2**64 - 1], dtype=np.uint64)),
        IllegalActionError,
        "env 1: action 18446744073709551615 is out of range",
    ),
    Case("vec_action_fractional", _vec_call("step", [0.0, 2.5]), IllegalActionError, "2.5"),
    Case("vec_action_text", _vec_call("step", ["a", "b"]), TypeError, "['a', 'b']"),
    Case("vec_action_bools", _vec_call("step", [True, False]), TypeError, "[True, False]"),
    # Indices of a VecEnv of 2 envs, and its seeds.
    *(
        Case(f"vec_{method}_index_{label}", _vec_call(method, *args, indices=idx), error, says)
        for method, args in [
            ("get_attr", ("num_envs",)),
            ("set_attr", ("render_mode", None)),
            ("env_method", ("action_masks",)),
            ("env_is_wrapped", (object,)),
        ]
        for label, idx, error, says in [
            ("5", [5], ValueError, "env 5 does not exist"),
            ("int_5", 5, ValueError, "env 5 does not exist"),
            ("minus_3", [-3], ValueError, "env -3 does not exist"),
            ("float", [0.5], TypeError, "[0.5]"),
            ("bool", [True], TypeError, "[True]"),
            ("text", "0", TypeError, "'0'"),
        ]
    ),
    *(
        Case(f"{where}_seed_{label}", run(seed), ValueError, f"seed: {says}")
        for label, seed, says in [
            ("text", "text", "expected an integer, got 'text'"),
            ("negative", -1, "-1 is out of range"),
            ("2_pow_63", 2**63, "9223372036854775808 is out of range"),
            ("bool", True, "expected an integer, got True"),
            ("float", 1.5, "expected an integer, got 1.5"),
        ]
        for where, run in [
            ("vec", lambda s: _vec_call("seed", s)),
            ("vec_init", lambda s: lambda: UnoVecEnv(2, seed=s)),
            ("gym_reset", lambda s: lambda: UnoGymEnv(num_players=2).reset(seed=s)),
            ("aec_reset", lambda s: lambda: raw_env(num_players=2).reset(seed=s)),
        ]
    ),
    # A reward function of the wrong shape, or of no numbers: named, with the shapes.
    *(
        Case(
            f"{kind}_reward_{label}",
            _play_with_reward(fn, kind),
            error,
            says.format(b=2 if kind == "vec" else 1),  # the vec env plays 2 games
        )
        for label, fn, error, says in [
            (
                "one_per_game",
                _shaped(lambda b, n: (b,)),
                ValueError,
                "reward function '_shaped.<locals>.wrong_shape' returned shape ({b},); expected ({b}, 2)",
            ),
            ("one_seat", _shaped(lambda b, n: (b, 1)), ValueError, "({b}, 1); expected ({b}, 2)"),
            ("none", lambda rules, state: None, TypeError, "returned None; expected a ({b}, 2)"),
            (
                "nan",
                lambda rules, state: np.full((state.batch_size, rules.num_players), np.nan),
                ValueError,
                "returned nan for game 0, seat 0",
            ),
        ]
        for kind in ("aec", "gym", "vec")
    ),
    Case("reward_not_a_name", _gym(reward=["win_loss"]), TypeError, "got ['win_loss']"),
    # NaN, infinities, bools and huge integers where a number or a size goes.
    Case("illegal_reward_nan", _gym(illegal_reward=float("nan")), ValueError, "nan is out"),
    Case(
        "aec_illegal_reward_inf",
        lambda: uno_env.env(illegal_reward=float("inf")),
        ValueError,
        "illegal_reward: inf is out of range",
    ),
    Case("illegal_reward_text", _gym(illegal_reward="-1"), ValueError, "got '-1'"),
    Case("render_view_bool", lambda: raw_env(render_view=True), ValueError, "got True"),
    Case("render_view_float", lambda: raw_env(render_view=0.5), ValueError, "got 0.5"),
    Case(
        "pool_text_weight",
        lambda: OpponentPool([make_agent("random")], ["a"]),
        ValueError,
        "weights[0]: expected a number, got 'a'",
    ),
    Case(
        "pool_inf_weight",
        lambda: OpponentPool([make_agent("random")], [float("inf")]),
        ValueError,
        "weights[0]: inf is out of range",
    ),
    Case(
        "pool_bool_weight",
        lambda: OpponentPool([make_agent("random")], [True]),
        ValueError,
        "weights[0]: expected a number, got True",
    ),
    Case("vec_huge_envs", _vec(10**12), ValueError, "got 1000000000000"),
    Case("vec_2_pow_63_envs", _vec(2**63), ValueError, "got 9223372036854775808"),
    # The agents' Python API: seeds, hand counts and batch sizes.
    *(
        Case(f"{where}_seed_{label}", run(seed), ValueError, f"seed: {says}")
        for label, seed, says in [
            ("text", "x", "expected an integer, got 'x'"),
            ("bool", True, "expected an integer, got True"),
            ("negative", -1, "-1 is out of range"),
            ("2_pow_64", 2**64, "18446744073709551616 is out of range"),
        ]
        for where, run in [
            ("make_agent", lambda s: lambda: make_agent("random", s)),
            ("make_search", lambda s: lambda: make_agent("pimc", s)),
            ("resolve_policy", lambda s: lambda: resolve_policy("mixbot", seed=s)),
            ("play_games", lambda s: lambda: play_games(RULES2, [RANDOM] * 2, 2, seed=s)),
            ("evaluate_vs", lambda s: lambda: evaluate_vs(RULES2, RANDOM, "random", 2, seed=s)),
        ]
    ),
    *(
        Case(f"play_games_{what}_{label}", run, ValueError, f"{what}: {says}")
        for what, label, run, says in [
            (
                "num_games",
                "float",
                lambda: play_games(RULES2, [RANDOM] * 2, 2.5),
                "expected an integer, got 2.5",
            ),
            (
                "num_games",
                "bool",
                lambda: play_games(RULES2, [RANDOM] * 2, True),
                "expected an integer, got True",
            ),
            (
                "num_games",
                "huge",
                lambda: play_games(RULES2, [RANDOM] * 2, 10**30),
                "1000000000000000000000000000000 is out of range",
            ),
            (
                "batch_size",
                "huge",
                lambda: play_games(RULES2, [RANDOM] * 2, 2, batch_size=10**12),
                "1000000000000 is out of range",
            ),
        ]
    ),
    Case("make_agent_not_a_name", lambda: make_agent(7), TypeError, "got 7"),
    Case("encode_seat", _encode_seat(7), ValueError, "7"),
    Case("game_unknown_card", _game_step("X9"), ValueError, "X9"),
    Case("game_illegal_card", _game_step("W+4:Q"), ValueError, "W+4:Q"),
    # The engine's functions: rules and state of the right kind and table size, indices of
    # games and seats inside the batch and the table (never wrapped), values as given.
    Case("core_init_rules_text", lambda: core.init("official", 1), TypeError, "'official'"),
    Case("core_init_rules_none", lambda: core.init(None, 1), TypeError, "got None"),
    Case("core_init_huge_batch", _core_init(10**12), ValueError, "got 1000000000000"),
    Case("core_init_batch_2_pow_63", _core_init(2**63), ValueError, "9223372036854775808"),
    Case("core_init_seed_2_pow_64", _core_init(1, seed=2**64), ValueError, "18446744073709551616"),
    Case("core_init_no_keys", _core_init(keys=[]), ValueError, "got []"),
    Case("core_init_deck_ids", _core_init(1, decks=np.full(108, 99)), ValueError, "99"),
    Case("core_step_none", lambda: core.step(RULES2, _S2, None), IllegalActionError, "None"),
    Case("core_step_text", lambda: core.step(RULES2, _S2, "1"), IllegalActionError, "'1'"),
    Case(
        "core_step_objects",
        lambda: core.step(RULES2, _S2, np.array([None, None])),
        IllegalActionError,
        "action None",
    ),
    Case("core_step_not_a_state", lambda: core.step(RULES2, None, [0, 0]), TypeError, "None"),
    Case("core_mask_other_table", lambda: core.legal_action_mask(_R3, _S2), ValueError, "3"),
    Case("core_mask_not_a_state", lambda: core.legal_action_mask(RULES2, "s"), TypeError, "'s'"),
    Case("core_reset_game_5", lambda: core.reset_games(RULES2, _S2, [5], [1]), ValueError, "5"),
    Case("core_reset_game_neg", lambda: core.reset_games(RULES2, _S2, [-1], [1]), ValueError, "-1"),
    Case(
        "core_reset_game_fraction",
        lambda: core.reset_games(RULES2, _S2, [0.5], [1]),
        ValueError,
        "0.5",
    ),
    Case(
        "core_reset_mask_shape",
        lambda: core.reset_games(RULES2, _S2, np.array([True, False, True]), [1, 2]),
        ValueError,
        "(3,)",
    ),
    Case("core_seat_ahead_seat_5", lambda: core.seat_ahead_of(RULES2, _S2, 5), ValueError, "5"),
    Case(
        "core_seat_ahead_game_neg",
        lambda: core.seat_ahead_of(RULES2, _S2, 0, game=-1),
        ValueError,
        "-1",
    ),
    Case("core_winner_7", lambda: core.winner_rewards(RULES2, np.array([7])), ValueError, "7"),
    Case("core_winner_neg2", lambda: core.winner_rewards(RULES2, np.array([-2])), ValueError, "-2"),
    Case(
        "core_points_game_9", lambda: core.points_left(RULES2, _S2, np.array([9])), ValueError, "9"
    ),
    Case(
        "core_determinize_key_neg",
        lambda: core.determinize(RULES2, _S2, 0, [[-1], [-1]]),
        ValueError,
        "-1",
    ),
    Case(
        "core_determinize_wild_facts_word",
        lambda: core.determinize(RULES2, _S2, 0, [[1], [2]], wild_facts="no"),
        ValueError,
        "'no'",
    ),
    Case(
        "encode_seat_fraction", lambda: encode(RULES2, _S2, np.array([0.5, 0.0])), ValueError, "0.5"
    ),
    Case(
        "encode_seat_uint64_max",
        lambda: encode(RULES2, _S2, np.array([0, 2**64 - 1], dtype=np.uint64)),
        ValueError,
        "18446744073709551615",
    ),
    Case("encode_other_table", lambda: encode(_R3, _S2), ValueError, "3"),
    Case(
        "get_field_unknown", lambda: get_field(np.zeros((1, OBS_DIM)), "nope"), ValueError, "'nope'"
    ),
    Case("get_field_narrow", lambda: get_field(np.zeros((1, 3)), "hand"), ValueError, "(1, 3)"),
    Case("bounds_of_a_name", lambda: observation_bounds("official"), TypeError, "'official'"),
    # Cards and UnoGame: names are text, ids are integers in range (not bools, not floats).
    Case("parse_card_none", lambda: parse_card(None), ValueError, "None"),
    Case("parse_action_list", lambda: parse_action(["R1"]), ValueError, "['R1']"),
    Case("card_name_bool", lambda: card_name(True), ValueError, "True"),
    Case("card_name_fraction", lambda: card_name(1.5), ValueError, "1.5"),
    Case("action_name_text", lambda: action_name("3"), ValueError, "'3'"),
    Case("action_names_text", lambda: action_names("abc"), ValueError, "'abc'"),
    Case("game_seed_bool", lambda: UnoGame(seed=True), ValueError, "True"),
    Case("game_seed_2_pow_64", lambda: UnoGame(seed=2**64), ValueError, "18446744073709551616"),
    Case("game_deck_text", lambda: UnoGame(seed=0, deck="R1"), ValueError, "'R1'"),
    Case("game_deck_mapping", lambda: UnoGame(seed=0, deck={"R1": 1}), ValueError, "{'R1': 1}"),
    Case("game_deck_face_200", lambda: UnoGame(seed=0, deck=[200]), ValueError, "200"),
    Case(
        "game_deck_face_2_pow_64",
        lambda: UnoGame(seed=0, deck=[2**64]),
        ValueError,
        "18446744073709551616",
    ),
    Case("game_deck_none", lambda: UnoGame(seed=0, deck=[None]), ValueError, "None"),
    Case(
        "game_step_2_pow_64",
        lambda: UnoGame(seed=0).step(2**64),
        IllegalActionError,
        "18446744073709551616",
    ),
    Case("game_hand_fraction", lambda: UnoGame(seed=0).hand(0.0), ValueError, "0.0"),
    Case("rules_empty_name", lambda: load_rules(" "), ConfigError, "' '"),
    # The envs: switches, options, agents and attributes are checked; a call before reset()
    # is a ValueError too.
    Case("gym_colour_word", _gym(colour="no"), ValueError, "'no'"),
    Case("gym_reset_options_list", lambda: UnoGymEnv().reset(options=[1]), ValueError, "[1]"),
    Case("gym_step_before_reset", lambda: UnoGymEnv().step(0), ValueError, "reset()"),
    Case("aec_observe_unknown", lambda: _aec().observe("player_9"), ValueError, "'player_9'"),
    Case("aec_action_space_unknown", lambda: _aec().action_space(0), ValueError, "0"),
    Case(
        "aec_reset_options_list",
        lambda: raw_env().reset(options=[("key", 1)]),
        ValueError,
        "[('key', 1)]",
    ),
    Case("aec_step_before_reset_raw", lambda: raw_env().step(0), ValueError, "reset()"),
    Case("aec_step_before_reset", lambda: uno_env.env().step(0), ValueError, "reset()"),
    Case("aec_agent_iter_text", lambda: list(_aec().agent_iter("5")), ValueError, "'5'"),
    Case("vec_step_none", _vec_call("step", None), ValueError, "None"),
    Case(
        "vec_get_attr_missing", _vec_call("get_attr", "no_such_attr"), ValueError, "'no_such_attr'"
    ),
    Case("vec_get_attr_number", _vec_call("get_attr", 5), ValueError, "5"),
    Case(
        "vec_set_attr_missing",
        _vec_call("set_attr", "no_such_attr", 1),
        ValueError,
        "'no_such_attr'",
    ),
    Case("vec_env_method_missing", _vec_call("env_method", "nope"), ValueError, "'nope'"),
    Case(
        "vec_env_method_not_callable", _vec_call("env_method", "num_envs"), ValueError, "'num_envs'"
    ),
    Case("vec_render_mode", _vec_call("render", "bogus"), ValueError, "'bogus'"),
    Case("pool_of_a_name", lambda: OpponentPool("random"), ValueError, "'random'"),
    Case("pool_of_none", lambda: OpponentPool([None]), TypeError, "None"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_gets_one_clear_error(case: Case) -> None:
    with pytest.raises(case.error) as info:
        case.run()
    message = str(info.value)
    assert case.names in message, message
    assert "\n" not in message.strip(), message


@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("kind", ["gym", "vec"])
def test_a_failing_opponent_stops_the_env_until_reset(fault: str, kind: str) -> None:
    """The failure names the opponent; nothing plays on from the half-played round."""
    opponent = _Faulty(f"faulty_{fault}", FAULTS[fault])
    env: Any
    if kind == "gym":
        env = UnoGymEnv(num_players=2, opponents=opponent, learner_seat=0)
        env.reset(seed=1)
        step: Callable[[], object] = lambda: env.step(int(env.action_masks().argmax()))  # noqa: E731
    else:
        env = UnoVecEnv(4, opponents=opponent, learner_seat=0, seed=1)
        env.reset()
        step = lambda: env.step(env.action_masks().argmax(axis=1))  # noqa: E731
    opponent.armed = True
    with pytest.raises(PolicyError, match=f"faulty_{fault}"):
        for _ in range(50):
            result = step()
            if kind == "gym" and (result[2] or result[3]):  # type: ignore[index]
                env.reset()
    for call in (step, env.action_masks):
        with pytest.raises(TablesStoppedError, match="reset"):
            call()
    # reset() deals again and the env plays on (the opponent now plays legally).
    if kind == "gym":
        env.reset(seed=2)
    else:
        env.reset()
    for _ in range(20):
        result = step()
        if kind == "gym" and (result[2] or result[3]):  # type: ignore[index]
            env.reset()


def test_a_refused_learner_action_leaves_the_env_as_it_was() -> None:
    env = UnoVecEnv(4, seed=3)
    env.reset()
    before = env.tables.state
    with pytest.raises(IllegalActionError):
        env.step(np.full(4, 79))
    after = env.tables.state
    for name in ("hands", "deck", "draw_pos", "current", "phase"):
        assert np.array_equal(getattr(before, name), getattr(after, name)), name
    env.step(env.action_masks().argmax(axis=1))


def test_the_catalogue_is_large_enough() -> None:
    assert len(CASES) + len(FAULTS) * 2 >= 30


def test_numpy_integers_are_accepted_wherever_an_int_is() -> None:
    """An integer read from an array is an integer: rules, sizes, seats, seeds and actions."""
    aec = uno_env.env(num_players=np.int64(3), hand_size=np.int32(5))
    aec.reset(seed=np.int64(4))
    assert aec.unwrapped.rules.num_players == 3 and type(aec.unwrapped.rules.num_players) is int
    legal = np.flatnonzero(aec.observe(aec.agent_selection)["action_mask"])
    aec.step(np.int64(legal[0]))  # a NumPy action, as a policy's array gives it
    aec.step(np.array(np.flatnonzero(aec.observe(aec.agent_selection)["action_mask"])[0]))
    rules = load_rules("official", num_players=np.uint8(2), voluntary_draw=np.bool_(False))
    assert rules.num_players == 2 and rules.voluntary_draw is False
    gym = UnoGymEnv(num_players=np.int16(2), learner_seat=np.int64(1))
    gym.reset(seed=np.uint32(5))
    gym.step(np.int32(gym.action_masks().argmax()))
    vec = UnoVecEnv(np.int64(2), seed=np.int64(6), learner_seat=np.int8(0))
    assert vec.seed(np.uint16(7)) == [7, 7]
    vec.reset()
    vec.step(vec.action_masks().argmax(axis=1).astype(np.int32))
    assert vec.get_attr("num_envs", indices=np.array([1])) == [2]
    # A bool is still no integer, whichever library made it.
    with pytest.raises(ConfigError, match="num_players: expected an integer, got True"):
        load_rules("official", num_players=np.True_)


def test_an_illegal_action_id_still_ends_the_hand_under_terminate() -> None:
    """Only what is no action id at all is an error; an illegal move is the game's business."""
    aec = uno_env.env(num_players=2, illegal_reward=-2.0)
    aec.reset(seed=0)
    agent = aec.agent_selection
    illegal = np.int64(np.flatnonzero(aec.observe(agent)["action_mask"] == 0)[0])
    aec.step(illegal)
    assert all(aec.terminations.values()) and aec.rewards[agent] == -2.0
