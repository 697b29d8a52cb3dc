"""Bad input to the search agent and to core.determinize: one clear error naming the value.

The cases: an unknown rollout policy, a rollout policy trained under other rules or
another table size, a budget <= 0, determinizing a finished game or a seat outside the
table; and around them the shapes and types of the arguments. Each case checks the error's
type (a ``ValueError`` subclass, ``FileNotFoundError`` for a missing file, ``TypeError``
where Python would raise it), that the message names the bad value, and that the state
passed in is untouched.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from uno_env import core, load_rules
from uno_env.core import UnoState
from uno_env.rules import Rules
from uno_env.sampling import uniform_legal_actions
from unolab.agents import make_agent
from unolab.agents.ismcts import IsmctsAgent
from unolab.agents.pimc import PimcAgent

PRETRAINED = Path(__file__).resolve().parents[2] / "agents" / "pretrained"
RULES2 = load_rules("official", num_players=2)


def _live(rules: Rules = RULES2, games: int = 4) -> UnoState:
    rng = np.random.default_rng(0)
    state = core.init(rules, games, seed=1)
    for _ in range(5):
        state = core.step(
            rules, state, uniform_legal_actions(core.legal_action_mask(rules, state), rng)
        )
    return state


def _finished() -> UnoState:
    rng = np.random.default_rng(0)
    state = core.init(RULES2, 4, seed=2)
    while not (~state.live).any():
        state = core.step(
            RULES2, state, uniform_legal_actions(core.legal_action_mask(RULES2, state), rng)
        )
    return state


def _symlink_loop() -> str:
    """An agent path that is a symlink loop, in a fresh folder."""
    folder = Path(tempfile.mkdtemp())
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    (folder / "loop.safetensors").symlink_to("back.safetensors")
    (folder / "back.safetensors").symlink_to("loop.safetensors")
    return str(folder / "loop.safetensors")


@dataclass(frozen=True)
class Case:
    """One bad input: what to call, the error it must raise and words its message holds."""

    call: Callable[[UnoState], object]
    error: type[BaseException]
    says: tuple[str, ...]
    state: Callable[[], UnoState] = _live


def _pimc(**kwargs: object) -> Callable[[UnoState], object]:
    return lambda state: PimcAgent(seed=0, **kwargs)  # type: ignore[arg-type]


def _det(
    seat: object = 0, keys: object = None, rules: Rules = RULES2, **kw: object
) -> Callable[[UnoState], object]:
    def call(state: UnoState) -> object:
        k = (
            np.arange(state.batch_size * 3, dtype=np.uint64).reshape(state.batch_size, 3)
            if keys is None
            else keys
        )
        return core.determinize(rules, state, seat, k, **kw)  # type: ignore[arg-type]

    return call


def _ismcts(**kwargs: object) -> Callable[[UnoState], object]:
    return lambda state: IsmctsAgent(seed=0, **kwargs)  # type: ignore[arg-type]


def _ismcts_from(seats: object) -> Callable[[UnoState], object]:
    return lambda state: IsmctsAgent(seed=0, iterations=4).act_from_state(RULES2, state, seats)  # type: ignore[arg-type]


def _search_from(seats: object) -> Callable[[UnoState], object]:
    return lambda state: PimcAgent(seed=0, rollouts=2).act_from_state(RULES2, state, seats)  # type: ignore[arg-type]


CASES: dict[str, Case] = {
    # -- the rollout policy ---------------------------------------------------------------
    "rollout_unknown_name": Case(
        _pimc(rollout_policy="mixbott"), ValueError, ("'mixbott'", "fast", "mixbot")
    ),
    "rollout_empty_name": Case(_pimc(rollout_policy=""), ValueError, ("''",)),
    "rollout_is_search": Case(_pimc(rollout_policy="pimc"), ValueError, ("'pimc'", "search agent")),
    "rollout_missing_file": Case(
        _pimc(rollout_policy="runs/none/agent.safetensors"),
        FileNotFoundError,
        ("agent.safetensors",),
    ),
    "rollout_other_table_size": Case(
        _pimc(rollout_policy=str(PRETRAINED / "ppo_official_4p.safetensors"), rules=RULES2),
        ValueError,
        ("ppo_official_4p", "num_players"),
    ),
    "rollout_other_rules": Case(
        _pimc(
            rollout_policy=str(PRETRAINED / "ppo_official_2p.safetensors"),
            rules=load_rules("street", num_players=2),
        ),
        ValueError,
        ("ppo_official_2p",),
    ),
    "rollout_other_rules_at_first_decision": Case(
        lambda state: PimcAgent(
            seed=0, rollouts=2, rollout_policy=str(PRETRAINED / "ppo_official_4p.safetensors")
        ).act_from_state(RULES2, state, state.current),
        ValueError,
        ("ppo_official_4p", "num_players"),
    ),
    "prior_missing_file": Case(
        _pimc(prior="runs/none/agent.safetensors"), FileNotFoundError, ("agent.safetensors",)
    ),
    "prior_symlink_loop": Case(
        lambda state: PimcAgent(seed=0, prior=_symlink_loop()),
        FileNotFoundError,
        ("loop.safetensors", "symlink loop"),
    ),
    # -- the budget -----------------------------------------------------------------------
    "rollouts_zero": Case(_pimc(rollouts=0), ValueError, ("rollouts", "0")),
    "rollouts_negative": Case(_pimc(rollouts=-8), ValueError, ("rollouts", "-8")),
    "rollouts_float": Case(_pimc(rollouts=1.5), ValueError, ("rollouts", "1.5")),
    "rollouts_bool": Case(_pimc(rollouts=True), ValueError, ("rollouts", "True")),
    "rollouts_text": Case(_pimc(rollouts="64"), ValueError, ("rollouts", "'64'")),
    "rollouts_huge": Case(_pimc(rollouts=10**9), ValueError, ("rollouts", "1000000000")),
    "time_zero": Case(_pimc(time_ms=0), ValueError, ("time_ms", "0")),
    "time_negative": Case(_pimc(time_ms=-5.0), ValueError, ("time_ms", "-5.0")),
    "time_nan": Case(_pimc(time_ms=float("nan")), ValueError, ("time_ms", "nan")),
    "time_inf": Case(_pimc(time_ms=float("inf")), ValueError, ("time_ms", "inf")),
    "unknown_agent_name": Case(lambda state: make_agent("pimcc"), ValueError, ("'pimcc'", "pimc")),
    "time_huge_int": Case(_pimc(time_ms=10**400), ValueError, ("time_ms", "got 1000000000")),
    "rollouts_uint64_max": Case(
        _pimc(rollouts=np.uint64(2**64 - 1)), ValueError, ("rollouts", "18446744073709551615")
    ),
    # -- switches: True or False, never a number or a word Python would read as true ---------
    "prune_draws_number": Case(_pimc(prune_draws=2), ValueError, ("prune_draws", "got 2")),
    "prune_draws_text": Case(_pimc(prune_draws="no"), ValueError, ("prune_draws", "'no'")),
    "early_stop_none": Case(_pimc(early_stop=None), ValueError, ("early_stop", "None")),
    "pimc_weigh_choices_text": Case(
        _pimc(weigh_choices="word"), ValueError, ("weigh_choices", "'word'")
    ),
    "ismcts_weigh_choices_number": Case(
        _ismcts(weigh_choices=1), ValueError, ("weigh_choices", "got 1")
    ),
    # -- specs: typed options, each given once ---------------------------------------------
    **{
        f"spec_{label}": Case(lambda state, spec=spec: make_agent(spec), ValueError, says)
        for label, spec, says in [
            ("switch_number", "pimc:prune_draws=2", ("prune_draws", "'2'", "true, false")),
            ("switch_word", "ismcts:weigh_choices=word", ("weigh_choices", "'word'")),
            ("switch_none", "pimc:early_stop=none", ("early_stop", "'none'")),
            ("switch_empty_word", "pimc_strong:prune_draws=yes", ("prune_draws", "'yes'")),
            ("repeated", "pimc:rollouts=8,rollouts=16", ("rollouts is given twice",)),
            ("repeated_budget", "pimc:8,rollouts=16", ("rollouts is given twice",)),
            ("repeated_switch", "ismcts:weigh_choices=1,weigh_choices=0", ("given twice",)),
            ("infinite", "pimc:time_ms=1e400", ("time_ms", "'1e400'")),
            ("nan", "pimc:prior_weight=nan", ("prior_weight", "'nan'")),
        ]
    },
    # -- determinizing ----------------------------------------------------------------------
    "finished_game": Case(_det(), ValueError, ("finished", "game"), state=_finished),
    "seat_outside_table": Case(_det(seat=2), ValueError, ("seat 2", "0..1")),
    "seat_negative": Case(_det(seat=-1), ValueError, ("seat -1",)),
    "seat_per_game_outside": Case(_det(seat=np.array([0, 1, 5, 0])), ValueError, ("seat 5",)),
    "seat_wrong_shape": Case(_det(seat=np.array([0, 1])), ValueError, ("seat", "(2,)")),
    "seat_float": Case(_det(seat=0.5), ValueError, ("seat", "0.5")),
    "seat_bool": Case(_det(seat=True), ValueError, ("seat", "True")),
    "keys_wrong_shape": Case(
        _det(keys=np.arange(3, dtype=np.uint64)), ValueError, ("keys", "(3,)")
    ),
    "keys_empty": Case(
        _det(keys=np.zeros((4, 0), dtype=np.uint64)), ValueError, ("keys", "(4, 0)")
    ),
    "keys_float": Case(_det(keys=np.ones((4, 2))), ValueError, ("key", "1.0")),
    "rules_other_table_size": Case(
        _det(rules=load_rules("official", num_players=3)), ValueError, ("2 seats", "3")
    ),
    "lacks_wrong_shape": Case(
        _det(lacks=np.zeros((3, 4), dtype=bool)), ValueError, ("lacks", "(3, 4)")
    ),
    "lacks_not_bool": Case(_det(lacks=np.zeros((2, 4))), ValueError, ("lacks", "float64")),
    # -- searching ----------------------------------------------------------------------------
    "search_seat_not_to_act": Case(
        lambda state: _search_from(1 - state.current.astype(np.int64))(state),
        ValueError,
        ("not the seat to act",),
    ),
    "search_finished_game": Case(
        _search_from(np.zeros(4, np.int64)), ValueError, ("finished",), state=_finished
    ),
    # -- ismcts ------------------------------------------------------------------------------
    "ismcts_iterations_zero": Case(_ismcts(iterations=0), ValueError, ("iterations", "0")),
    "ismcts_iterations_negative": Case(_ismcts(iterations=-3), ValueError, ("iterations", "-3")),
    "ismcts_iterations_float": Case(_ismcts(iterations=2.5), ValueError, ("iterations", "2.5")),
    "ismcts_iterations_bool": Case(_ismcts(iterations=True), ValueError, ("iterations", "True")),
    "ismcts_iterations_huge": Case(
        _ismcts(iterations=10**7), ValueError, ("iterations", "10000000")
    ),
    "ismcts_exploration_zero": Case(_ismcts(exploration=0), ValueError, ("exploration", "0")),
    "ismcts_exploration_nan": Case(
        _ismcts(exploration=float("nan")), ValueError, ("exploration", "nan")
    ),
    "ismcts_lack_facts": Case(_ismcts(lack_facts="all"), ValueError, ("lack_facts", "'all'")),
    "ismcts_seat_not_to_act": Case(
        lambda state: _ismcts_from(1 - state.current.astype(np.int64))(state),
        ValueError,
        ("not the seat to act",),
    ),
    "ismcts_finished_game": Case(
        _ismcts_from(np.zeros(4, np.int64)), ValueError, ("finished",), state=_finished
    ),
    # -- act_from_state's arguments, checked before any search ------------------------------
    "search_rules_other_table_size": Case(
        lambda state: PimcAgent(seed=0, rollouts=2).act_from_state(
            load_rules("official", num_players=3), state, state.current
        ),
        ValueError,
        ("num_players=3", "2 seats"),
    ),
    "search_rules_text": Case(
        lambda state: PimcAgent(seed=0, rollouts=2).act_from_state(
            "official",  # type: ignore[arg-type]
            state,
            state.current,
        ),
        TypeError,
        ("rules", "'official'"),
    ),
    "search_state_none": Case(
        lambda state: PimcAgent(seed=0, rollouts=2).act_from_state(RULES2, None, 0),  # type: ignore[arg-type]
        TypeError,
        ("state", "None"),
    ),
    "search_seats_none": Case(_search_from(None), ValueError, ("seats", "None")),
    "search_seats_float": Case(
        _ismcts_from(np.array([0.5, 0.0, 1.0, 0.0])), ValueError, ("seats", "0.5")
    ),
    "search_seats_text": Case(_search_from("0"), ValueError, ("seats", "'0'")),
    "search_seats_wrong_length": Case(
        _search_from(np.zeros(3, np.int64)), ValueError, ("seats", "one per game (4)")
    ),
    "search_seat_outside_table": Case(
        _search_from(np.array([0, 5, 0, 1])), ValueError, ("game 1", "seat 5", "0..1")
    ),
    "search_seat_uint64_max": Case(
        _ismcts_from(np.full(4, 2**64 - 1, np.uint64)),
        ValueError,
        ("seat 18446744073709551615",),
    ),
    "search_masks_wrong_shape": Case(
        lambda state: PimcAgent(seed=0, rollouts=2).act_from_state(
            RULES2, state, state.current, np.ones((4, 3), bool)
        ),
        ValueError,
        ("masks", "(4, 3)"),
    ),
    "spec_double_colon": Case(lambda state: make_agent("pimc::4"), ValueError, ("'pimc::4'",)),
    "spec_option_in_value": Case(
        lambda state: make_agent("pimc:rollouts=8:rollouts=9"),
        ValueError,
        ("'pimc:rollouts=8:rollouts=9'", "'8:rollouts=9'"),
    ),
    "act_without_state": Case(
        lambda state: PimcAgent(seed=0).act(
            np.zeros((4, 1), np.float32), core.legal_action_mask(RULES2, state)
        ),
        TypeError,
        ("act_from_state",),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_search_input(name: str) -> None:
    case = CASES[name]
    state = case.state()
    before = {field: arr.copy() for field, arr in state.array_fields().items()}
    with pytest.raises(case.error) as info:
        case.call(state)
    message = str(info.value)
    assert "\n" not in message.strip(), message
    for word in case.says:
        assert word in message, f"{word!r} not in {message!r}"
    for field, arr in state.array_fields().items():
        np.testing.assert_array_equal(arr, before[field], field)


@pytest.mark.parametrize(
    ("spec", "option", "value"),
    [
        ("pimc:prune_draws=FALSE", "prune_draws", False),
        ("pimc:prune_draws=0", "prune_draws", False),
        ("pimc:early_stop=1", "early_stop", True),
        ("ismcts:weigh_choices=False", "weigh_choices", False),
        ("pimc_guided:weigh_choices=true", "weigh_choices", True),
    ],
)
def test_a_switch_is_true_false_1_or_0_in_any_case(spec: str, option: str, value: bool) -> None:
    assert getattr(make_agent(spec), option) is value


def test_a_bad_spec_is_refused_by_tournaments_and_play_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The one parser serves every place an agent is named."""
    from uno_env import ConfigError
    from unolab.cli import main
    from unolab.tournament.config import load_config

    with pytest.raises(ConfigError, match="prune_draws is a switch"):
        load_config({"name": "t", "participants": ["mixbot", "pimc:prune_draws=2"]})
    with pytest.raises(ConfigError, match="rollouts is given twice"):
        load_config({"name": "t", "participants": ["mixbot", "pimc:8,rollouts=16"]})
    code = main(["play", "--players", "2", "--opponents", "ismcts:weigh_choices=word"])
    err = capsys.readouterr().err
    assert code == 2 and "weigh_choices is a switch" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("pimc:abc", "'abc'"),
        ("pimc:0", "got 0"),
        ("pimc:18446744073709551616", "18446744073709551616"),
        ("pimc:rollouts=8:rollouts=9", "'8:rollouts=9'"),
        ("ismcts:exploration=-1", "exploration"),
    ],
)
def test_uno_lab_agents_checks_a_spec_as_make_agent_does(
    spec: str, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from unolab.cli import main

    with pytest.raises(ValueError, match="agent spec"):
        make_agent(spec)
    code = main(["agents", spec])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == "", captured
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and repr(spec) in lines[0] and says in lines[0], captured.err
