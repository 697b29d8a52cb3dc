"""Bad arguments to the public Python API: the engine's core functions, the agents, the
envs and ``python_uno``'s OpenSpiel states and observers.

Each case calls one public function with one bad argument and checks that the error is a
``ValueError`` (or a documented subclass) or a ``TypeError``, in one line naming the
argument and the value as given. Sizes whose arrays would not fit in memory are refused by
name before anything is allocated. Around the table: a search's missing agent file is bad
input in the web server (a 422) and on the command line (exit status 2), and a tournament
replay whose config and log disagree is refused rather than shown as another game.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.optional import require

from uno_env import core, load_rules
from uno_env.cards import parse_cards
from uno_env.core.checks import MAX_BATCH_SIZE
from uno_env.envs.gym_env import UnoGymEnv
from uno_env.envs.opponents import OpponentPool
from uno_env.envs.vec_env import UnoVecEnv
from uno_env.game import stacked_deck
from uno_env.observation import encode
from uno_env.rng import derive_keys
from unolab.agents import is_agent_file, make_agent
from unolab.agents.agent_files import MissingAgentFileError
from unolab.agents.ismcts import IsmctsAgent
from unolab.agents.learned import load_policy
from unolab.agents.pimc import PimcAgent

RULES2 = load_rules("official", num_players=2)
RULES3 = load_rules("official", num_players=3)
U64 = 2**64 - 1


def _given(value: object) -> Any:
    """A value as a caller hands it over, whatever the annotations say."""
    return value


def _state() -> core.UnoState:
    return core.init(RULES2, 2, seed=0)


def _obs_masks() -> tuple[np.ndarray, np.ndarray]:
    state = _state()
    return encode(RULES2, state), core.legal_action_mask(RULES2, state)


def _bot_act(name: str, observations: Any, masks: Any) -> Callable[[], object]:
    return lambda: make_agent(name, 0).act(observations, masks)


def _search(masks: Callable[[np.ndarray], Any]) -> Callable[[], object]:
    def run() -> object:
        state = _state()
        legal = core.legal_action_mask(RULES2, state)
        return PimcAgent(seed=0, rollouts=2).act_from_state(
            RULES2, state, state.current, masks(legal)
        )

    return run


def _vec(call: Callable[[UnoVecEnv], object]) -> Callable[[], object]:
    def run() -> object:
        env = UnoVecEnv(2, seed=0)
        env.reset()
        return call(env)

    return run


def _dealt(game: Any) -> Any:
    from uno_env.envs.openspiel_state import key_actions

    state = game.new_initial_state()
    for byte in key_actions(987654321):
        state.apply_action(byte)
    return state


def _spiel(call: Callable[[Any, Any, Any], object]) -> Callable[[], object]:
    """``call(pyspiel, game, dealt state)`` on ``python_uno`` (two players)."""

    def run() -> object:
        pyspiel = require("pyspiel", "python_uno (pip install -e .[openspiel])")
        require("uno_env.envs.openspiel_game", "registers python_uno with OpenSpiel")
        game = pyspiel.load_game("python_uno")
        return call(pyspiel, game, _dealt(game))

    return run


@dataclass(frozen=True)
class Case:
    """One bad argument: the call, the error expected, the texts its message must hold."""

    id: str
    run: Callable[[], object]
    error: type[Exception] | tuple[type[Exception], ...]
    names: tuple[str, ...]


CASES: list[Case] = [
    # -- an exported agent a search names: a missing file is bad input (a ValueError too) --
    Case(
        "spec_prior_missing",
        lambda: make_agent("pimc:prior=nofile", 0),
        ValueError,
        ("pimc:prior=nofile", "nofile.safetensors"),
    ),
    Case(
        "spec_rollout_missing",
        lambda: make_agent("pimc:rollout_policy=runs/none.safetensors", 0),
        ValueError,
        ("none.safetensors",),
    ),
    Case("pimc_prior_int", lambda: PimcAgent(seed=0, prior=_given(5)), TypeError, ("prior", "5")),
    Case("pimc_rules_int", lambda: PimcAgent(seed=0, rules=_given(5)), TypeError, ("rules", "5")),
    Case(
        "load_policy_missing",
        lambda: load_policy("runs/none/agent"),
        MissingAgentFileError,
        ("agent.safetensors",),
    ),
    Case(
        "load_policy_bytes",
        lambda: load_policy(_given(b"ppo_official_2p")),
        TypeError,
        ("path", "b'ppo_official_2p'"),
    ),
    # -- sizes that would not fit in memory: refused by name, before allocating ----------
    Case(
        "init_batch_1e7",
        lambda: core.init(RULES2, 10**7),
        ValueError,
        ("batch_size", "10000000", f"{MAX_BATCH_SIZE:,}"),
    ),
    Case(
        "init_keys_too_many",
        lambda: core.init(RULES2, keys=np.zeros(MAX_BATCH_SIZE + 1, np.uint64)),
        ValueError,
        ("keys", f"{MAX_BATCH_SIZE + 1}"),
    ),
    Case(
        "determinize_b_times_k",
        lambda: core.determinize(RULES2, _state(), 0, np.zeros((2, 10**7), np.uint8)),
        ValueError,
        ("keys", "(2, 10000000)", "20,000,000"),
    ),
    Case("derive_keys_count_negative", lambda: derive_keys(0, -1), ValueError, ("count", "-1")),
    Case(
        "derive_keys_count_2_64",
        lambda: derive_keys(0, 2**64),
        ValueError,
        ("count", "18446744073709551616"),
    ),
    # -- the core's public functions -----------------------------------------------------
    Case("event_names_negative", lambda: core.event_names(-1), ValueError, ("flags", "-1")),
    Case(
        "event_names_2_64",
        lambda: core.event_names(2**64),
        ValueError,
        ("flags", "18446744073709551616"),
    ),
    Case(
        "event_names_uint64_max",
        lambda: core.event_names(_given(np.uint64(U64))),
        ValueError,
        ("flags", "18446744073709551615"),
    ),
    Case("event_names_text", lambda: core.event_names(_given("3")), ValueError, ("flags", "'3'")),
    Case("event_names_float", lambda: core.event_names(_given(1.5)), ValueError, ("flags", "1.5")),
    Case("card_totals_none", lambda: core.card_totals(_given(None)), TypeError, ("state", "None")),
    Case("card_totals_text", lambda: core.card_totals(_given("x")), TypeError, ("state", "'x'")),
    Case(
        "hand_rewards_none",
        lambda: core.hand_rewards(RULES2, _given(None)),
        TypeError,
        ("state", "None"),
    ),
    Case(
        "place_rewards_other_size",
        lambda: core.place_rewards(RULES3, _state()),
        ValueError,
        ("num_players=3", "2 seats"),
    ),
    Case(
        "step_in_place_word",
        lambda: core.step(
            RULES2,
            (s := _state()),
            core.legal_action_mask(RULES2, s).argmax(1),
            in_place=_given("yes"),
        ),
        ValueError,
        ("in_place", "'yes'"),
    ),
    Case(
        "reset_games_game_twice",
        lambda: core.reset_games(RULES2, _state(), _given([0, 0]), [1, 2]),
        ValueError,
        ("games", "game 0", "twice"),
    ),
    Case(
        "reset_games_in_place_number",
        lambda: core.reset_games(RULES2, _state(), _given([0]), [1], in_place=_given(1)),
        ValueError,
        ("in_place", "1"),
    ),
    Case(
        "init_dealer_2d",
        lambda: core.init(RULES2, 1, seed=0, dealer=np.array([[0]])),
        ValueError,
        ("dealer", "(1, 1)"),
    ),
    Case(
        "init_dealer_uint64_max",
        lambda: core.init(RULES2, 1, seed=0, dealer=np.uint64(U64)),
        ValueError,
        ("dealer", "18446744073709551615"),
    ),
    Case(
        "init_dealer_text",
        lambda: core.init(RULES2, 1, seed=0, dealer="0"),
        ValueError,
        ("dealer", "'0'"),
    ),
    Case(
        "encode_seats_scalar",
        lambda: encode(RULES2, _state(), _given(0)),
        ValueError,
        ("seats", "got 0 of shape ()"),
    ),
    Case(
        "encode_seats_2d",
        lambda: encode(RULES2, _state(), np.array([[0, 1], [1, 0]])),
        ValueError,
        ("seats", "(2, 2)"),
    ),
    Case(
        "stacked_deck_key_negative", lambda: stacked_deck(["R1"], key=-1), ValueError, ("key", "-1")
    ),
    Case(
        "stacked_deck_key_2_64",
        lambda: stacked_deck(["R1"], key=2**64),
        ValueError,
        ("key", "18446744073709551616"),
    ),
    Case("parse_cards_int", lambda: parse_cards(_given(5)), TypeError, ("names", "5")),
    # -- agents ----------------------------------------------------------------------------
    Case(
        "random_one_observation",
        lambda: _bot_act("random", *(a[0] for a in _obs_masks()))(),
        ValueError,
        ("random", "masks", "(80,)"),
    ),
    Case(
        "random_action_one_observation",
        lambda: _bot_act("random_action", *(a[0] for a in _obs_masks()))(),
        ValueError,
        ("random_action", "masks", "(80,)"),
    ),
    Case(
        "random_float_masks",
        lambda: _bot_act("random", _obs_masks()[0], _obs_masks()[1] * 0.5)(),
        ValueError,
        ("random", "masks", "float64"),
    ),
    Case(
        "mixbot_float_masks",
        lambda: _bot_act("mixbot", _obs_masks()[0], _obs_masks()[1] * 0.5)(),
        ValueError,
        ("mixbot", "masks", "float64"),
    ),
    Case(
        "mixbot_text_observations",
        lambda: _bot_act("mixbot", np.full((2, 648), "x"), _obs_masks()[1])(),
        ValueError,
        ("observations", "<U1"),
    ),
    Case(
        "mixbot_reset_word",
        lambda: make_agent("mixbot", 0).reset(_given("all")),
        ValueError,
        ("games", "'all'"),
    ),
    Case(
        "learned_float_masks",
        lambda: load_policy("ppo_official_2p").act(_obs_masks()[0], _obs_masks()[1] * 0.5),
        ValueError,
        ("masks", "float64"),
    ),
    Case(
        "learned_check_compatible_text",
        lambda: load_policy("ppo_official_2p").check_compatible(_given("official")),
        TypeError,
        ("rules", "'official'"),
    ),
    Case("ismcts_seed_text", lambda: IsmctsAgent(seed=_given("x")), ValueError, ("seed", "'x'")),
    Case(
        "ismcts_seed_2_64",
        lambda: IsmctsAgent(seed=2**64),
        ValueError,
        ("seed", "18446744073709551616"),
    ),
    Case(
        "search_masks_all_true",
        _search(lambda legal: np.ones_like(legal)),
        ValueError,
        ("masks", "not legal"),
    ),
    Case(
        "search_masks_all_false",
        _search(lambda legal: np.zeros_like(legal)),
        ValueError,
        ("masks", "allows no action"),
    ),
    Case(
        "search_masks_float", _search(lambda legal: legal * 0.5), ValueError, ("masks", "float64")
    ),
    Case("search_masks_text", _search(lambda legal: "all"), ValueError, ("masks", "'all'")),
    Case("is_agent_file_int", lambda: is_agent_file(_given(5)), TypeError, ("spec", "5")),
    # -- envs ------------------------------------------------------------------------------
    Case(
        "vec_set_attr_num_envs",
        _vec(lambda env: env.set_attr("num_envs", 5)),
        ValueError,
        ("attr_name", "'num_envs'"),
    ),
    Case(
        "vec_set_attr_method",
        _vec(lambda env: env.set_attr("step", None)),
        ValueError,
        ("attr_name", "'step'"),
    ),
    Case(
        "vec_env_method_extra_args",
        _vec(lambda env: env.env_method("action_masks", 1, 2, 3)),
        TypeError,
        ("action_masks", "(1, 2, 3)"),
    ),
    Case(
        "vec_env_is_wrapped_text",
        _vec(lambda env: env.env_is_wrapped(_given("Wrapper"))),
        TypeError,
        ("wrapper_class", "'Wrapper'"),
    ),
    Case(
        "vec_indices_dict",
        _vec(lambda env: env.get_attr("num_envs", indices={0: 0})),
        TypeError,
        ("indices", "{0: 0}"),
    ),
    Case(
        "gym_step_2d_array",
        lambda: (
            env := UnoGymEnv(num_players=2),
            env.reset(seed=0),
            env.step(np.array([[int(env.action_masks().argmax())]])),
        )[-1],
        TypeError,
        ("action", "array([["),
    ),
    Case(
        "pool_of_a_class",
        lambda: OpponentPool([type(make_agent("random", 0))]),
        TypeError,
        ("RandomBot", "class"),
    ),
    Case(
        "aec_last_observe_word",
        lambda: (lambda env: (env.reset(seed=0), env.last(observe="no"))[-1])(
            __import__("uno_env").env(num_players=2)
        ),
        ValueError,
        ("observe", "'no'"),
    ),
    # -- python_uno: the state methods OpenSpiel's bindings would answer -------------------
    Case(
        "spiel_action_to_string_uint64",
        _spiel(lambda ps, g, s: s.action_to_string(0, np.uint64(U64))),
        ValueError,
        ("18446744073709551615",),
    ),
    Case(
        "spiel_action_to_string_float",
        _spiel(lambda ps, g, s: s.action_to_string(0, 1.5)),
        TypeError,
        ("action", "1.5"),
    ),
    Case(
        "spiel_action_to_string_player_text",
        _spiel(lambda ps, g, s: s.action_to_string("0", 1)),
        TypeError,
        ("player", "'0'"),
    ),
    Case(
        "spiel_legal_actions_mask_seat_2",
        _spiel(lambda ps, g, s: s.legal_actions_mask(2)),
        ValueError,
        ("player", "2"),
    ),
    Case(
        "spiel_legal_actions_mask_bool",
        _spiel(lambda ps, g, s: s.legal_actions_mask(np.bool_(False))),
        TypeError,
        ("player", "False"),
    ),
    Case(
        "spiel_player_return_9",
        _spiel(lambda ps, g, s: s.player_return(9)),
        ValueError,
        ("player", "9"),
    ),
    Case(
        "spiel_player_reward_negative",
        _spiel(lambda ps, g, s: s.player_reward(-1)),
        ValueError,
        ("player", "-1"),
    ),
    Case(
        "spiel_child_bool",
        _spiel(lambda ps, g, s: s.child(np.bool_(True))),
        TypeError,
        ("action", "True"),
    ),
    Case(
        "spiel_child_uint64",
        _spiel(lambda ps, g, s: s.child(np.uint64(U64))),
        ValueError,
        ("18446744073709551615",),
    ),
    Case(
        "spiel_string_to_action_none",
        _spiel(lambda ps, g, s: s.string_to_action(None)),
        TypeError,
        ("None",),
    ),
    Case(
        "spiel_apply_actions",
        _spiel(lambda ps, g, s: s.apply_actions([60])),
        ValueError,
        ("apply_actions", "sequential"),
    ),
    Case(
        "spiel_serialize_state_none",
        _spiel(lambda ps, g, s: ps.serialize_game_and_state(g, None)),
        TypeError,
        ("state", "None"),
    ),
    Case(
        "spiel_serialize_game_none",
        _spiel(lambda ps, g, s: ps.serialize_game_and_state(None, s)),
        TypeError,
        ("game", "None"),
    ),
    Case(
        "spiel_serialize_other_table_size",
        _spiel(
            lambda ps, g, s: ps.serialize_game_and_state(
                ps.load_game("python_uno", {"num_players": 3}), s
            )
        ),
        ValueError,
        ("num_players", "(2, 3)"),
    ),
    Case(
        "spiel_serialize_kuhn_state",
        _spiel(
            lambda ps, g, s: ps.serialize_game_and_state(
                g, ps.load_game("kuhn_poker").new_initial_state()
            )
        ),
        TypeError,
        ("state", "kuhn_poker"),
    ),
    Case(
        "spiel_deserialize_version_99",
        _spiel(
            lambda ps, g, s: ps.deserialize_game_and_state(
                ps.serialize_game_and_state(g, s).replace("Version: 1", "Version: 99")
            )
        ),
        ValueError,
        ("Version: 99",),
    ),
    Case(
        "spiel_observer_none_state",
        _spiel(lambda ps, g, s: g.make_py_observer().set_from(None, 0)),
        TypeError,
        ("state", "None"),
    ),
    Case(
        "spiel_observer_kuhn_state",
        _spiel(
            lambda ps, g, s: g.make_py_observer().set_from(
                ps.load_game("kuhn_poker").new_initial_state(), 0
            )
        ),
        TypeError,
        ("python_uno state", "pyspiel.State"),
    ),
    Case(
        "spiel_observer_other_table_size",
        _spiel(
            lambda ps, g, s: g.make_py_observer().set_from(
                _dealt(ps.load_game("python_uno", {"num_players": 3})), 0
            )
        ),
        ValueError,
        ("3 seats", "num_players=2"),
    ),
    Case(
        "spiel_observer_type_text",
        _spiel(lambda ps, g, s: g.make_py_observer("perfect")),
        TypeError,
        ("iig_obs_type", "'perfect'"),
    ),
    Case(
        "spiel_observer_params_text",
        _spiel(lambda ps, g, s: g.make_py_observer(None, "x")),
        TypeError,
        ("parameters", "'x'"),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_a_bad_argument_is_one_line_naming_it(case: Case) -> None:
    with pytest.raises(case.error) as info:
        case.run()
    message = str(info.value)
    assert "\n" not in message.strip(), message
    for text in case.names:
        assert text in message, f"{text!r} not in {message!r}"


def test_a_missing_agent_file_is_both_a_value_error_and_a_missing_file() -> None:
    with pytest.raises(MissingAgentFileError) as info:
        load_policy("runs/none/agent.safetensors")
    assert isinstance(info.value, ValueError) and isinstance(info.value, FileNotFoundError)


def test_good_arguments_next_to_the_bad_ones_still_work() -> None:
    """The checks refuse only what is wrong: NumPy integers, 0/1 masks, (1,) actions."""
    state = _state()
    legal = core.legal_action_mask(RULES2, state)
    assert core.event_names(_given(np.int16(3))) == ["reshuffled", "direction"]
    assert core.init(RULES2, 2, seed=0, dealer=[1]).dealer.tolist() == [1, 1]
    assert core.reset_games(RULES2, state, _given([1, 0]), [5, 6]).key.tolist() == [6, 5]
    assert stacked_deck(["R1"], key=_given(np.uint64(U64))).shape == (108,)
    observations, masks = _obs_masks()
    for bot in ("random", "random_action", "mixbot"):
        assert make_agent(bot, 0).act(observations, masks.astype(np.int64)).shape == (2,)
    chosen = PimcAgent(seed=0, rollouts=2).act_from_state(
        RULES2, state, state.current, legal.astype(np.int64)
    )
    assert legal[np.arange(2), chosen].all()
    env = UnoGymEnv(num_players=2)
    env.reset(seed=0)
    env.step(np.array([int(env.action_masks().argmax())]))
    assert not is_agent_file("x" * 5000)  # a name no file system holds names no agent


def _tournament_run(tmp: Path) -> Path:
    from unolab.tournament.config import load_config
    from unolab.tournament.runner import run_tournament

    out = tmp / "runs" / "tournaments"
    config = {
        "name": "bots",
        "participants": ["random", "mixbot", "greedy_points"],
        "deal_sets": 1,
        "games_per_chunk": 8,
        "bootstrap": 10,
        "seed": 3,
        "output_dir": str(out),
    }
    run_tournament(load_config(config), progress=False, plots=False, print_table=False)
    return out / "bots"


def _changed_copy(run: Path, name: str, config: Callable[[dict[str, Any]], None]) -> None:
    copy = run.parent / name
    shutil.copytree(run, copy)
    stored = json.loads((copy / "config.json").read_text())
    config(stored["config"])
    (copy / "config.json").write_text(json.dumps(stored))
    log = (copy / "games.jsonl").read_bytes()
    (copy / "games.jsonl").write_bytes(log.replace(b'"random"', b'"pimc:prior=nofile"'))


def test_the_web_server_answers_a_bad_run_with_a_4xx(tmp_path: Path) -> None:
    """A participant whose prior file is missing, and a config seating another table than
    the log, are a 422 naming what is wrong, never a 500 nor another game's replay."""
    require("fastapi", "the web server (pip install -e .[web])")
    from fastapi.testclient import TestClient

    from unolab.web.app import create_app
    from unolab.web.settings import ServeConfig

    run = _tournament_run(tmp_path)

    def prior(config: dict[str, Any]) -> None:
        config["participants"][0] = {"bot": "pimc:prior=nofile", "name": "", "path": None}

    _changed_copy(run, "prior", prior)
    three = run.parent / "three"
    shutil.copytree(run, three)
    stored = json.loads((three / "config.json").read_text())
    stored["config"]["num_players"] = 3
    (three / "config.json").write_text(json.dumps(stored))
    settings = ServeConfig(
        agents_dir=None,
        games_dir=tmp_path / "games",
        runs_dir=tmp_path / "runs",
        allowed_hosts=("testserver",),
    )
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        answers = {
            name: client.get("/api/runs/replay", params={"run": f"tournaments/{name}", "game": 0})
            for name in ("bots", "prior", "three")
        }
    assert answers["bots"].status_code == 200, answers["bots"].text
    for name, says in (("prior", "nofile.safetensors"), ("three", "disagree")):
        assert answers[name].status_code == 422, answers[name].text
        detail = answers[name].json()["detail"]
        assert says in detail and "\n" not in detail, detail


def test_the_command_line_exits_2_for_a_missing_prior(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from unolab.cli import main

    monkeypatch.chdir(tmp_path)
    argv = ["tournament", "--name", "t", "--participants", "pimc:prior=nofile", "random"]
    argv += ["--players", "2", "--deal-sets", "1", "--seed", "1", "--output-dir", "runs"]
    assert main([*argv, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "pimc:prior=nofile" in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "runs").exists()
