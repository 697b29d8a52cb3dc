"""Bad inputs to imitation runs and to runs that start from a clone.

Every case runs the imitation's command line (:func:`unolab.train.imitate.run.main`, or
``uno-lab train ppo`` / ``uno-lab train dqn`` starting from a clone with ``init_from``, or
``uno-lab train imitate``) in-process on a folder prepared by its ``setup`` (a few through a
real ``uno-lab`` process, for the exit path), and checks that

* the command exits with status 2 (never a bare exception of Python or a library);
* the last line of stderr is the error, and stderr names the bad input (``names``);
* no "Traceback" is printed;
* every file of the folder is still there with the same bytes, and nothing was added.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import torch
from support import ROOT
from support.bad_inputs import args, nothing, run_entry, snapshot, train_args, write_file

from uno_env.cards import NUM_ACTIONS
from uno_env.observation import OBS_DIM, OBS_VERSION
from uno_env.rules import load_rules
from unolab import cli
from unolab.agents.learned import save_policy
from unolab.agents.policy_metadata import PolicyMetadata
from unolab.train import run_cli
from unolab.train.imitate import run as imitate
from unolab.train.imitate.data import generate_demonstrations
from unolab.train.imitate.files import save_demonstrations

TINY = ROOT / "configs" / "imitate" / "tiny.yaml"
PPO_TINY = ROOT / "configs" / "ppo" / "tiny.yaml"
DQN_TINY = ROOT / "configs" / "dqn" / "tiny.yaml"


def _uno_lab(argv: list[str]) -> object:
    raise SystemExit(cli.main(argv))


ENTRIES: dict[str, Callable[[list[str]], object]] = {
    "imitate": imitate.main,
    "ppo": lambda argv: run_cli.main("ppo", argv),
    "dqn": lambda argv: run_cli.main("dqn", argv),
    "uno-lab": _uno_lab,
}
MODULES = {
    "imitate": "",  # a function of the library, run in-process only
    "ppo": "",
    "dqn": "",
    "uno-lab": "unolab.cli",
}


@dataclass(frozen=True)
class Case:
    """One bad input.

    Attributes:
        id: The case's name.
        entry: ``imitate``, ``ppo``, ``dqn`` or ``uno-lab`` (its whole command line).
        argv: The command line, given the case's folder.
        names: What the error message must contain (the file, key or value at fault).
        setup: Prepares the folder (an earlier run, an agent file...).
        subprocess: Run as ``python -m <module>`` in a real process (``uno-lab`` only).
    """

    id: str
    entry: str
    argv: Callable[[Path], list[str]]
    names: str
    setup: Callable[[Path], None] = field(default=nothing)
    subprocess: bool = False


def _imitate_args(*overrides: str, config: Path = TINY) -> Callable[[Path], list[str]]:
    """``--config`` the tiny imitation into ``<folder>/runs``, plus ``--set`` items."""

    def argv(folder: Path) -> list[str]:
        line = ["--config", str(config), "--no-progress", "--set", f"runs_dir={folder / 'runs'}"]
        for item in overrides:
            line += ["--set", item.format(folder=folder)]
        return line

    return argv


def _uno_lab_args(*overrides: str) -> Callable[[Path], list[str]]:
    """``uno-lab train imitate`` with :func:`_imitate_args`'s options."""
    options = _imitate_args(*overrides)
    return lambda folder: ["train", "imitate", *options(folder)]


def _clone(
    relative: str,
    hidden: tuple[int, ...] = (32, 32),
    players: int = 2,
    activation: str = "tanh",
    encoding: tuple[int, int] = (OBS_VERSION, OBS_DIM),
) -> Callable[[Path], None]:
    """An exported clone (random weights) of the given shape, table size, activation and
    observation encoding (version, features)."""

    def setup(folder: Path) -> None:
        sizes = [encoding[1], *hidden, NUM_ACTIONS]
        layers = [
            (torch.zeros(sizes[i + 1], sizes[i]), torch.zeros(sizes[i + 1]))
            for i in range(len(sizes) - 1)
        ]
        meta = PolicyMetadata(
            name="clone",
            algorithm="imitation",
            obs_version=encoding[0],
            obs_dim=encoding[1],
            num_actions=NUM_ACTIONS,
            hidden=hidden,
            activation=activation,
            rules=load_rules("official", num_players=players).to_dict(),
            extra={"teachers": {"mixbot": 1.0}},
        )
        save_policy(folder / relative, layers, meta)

    return setup


def _recording(relative: str, players: int) -> Callable[[Path], None]:
    """A kept recording (200 decisions of mixbot) of a table of ``players``."""

    def setup(folder: Path) -> None:
        rules = load_rules("official", num_players=players)
        demos = generate_demonstrations(rules, {"mixbot": 1.0}, 200, seed=0, progress=False)
        save_demonstrations(folder / relative, demos, rules)

    return setup


def _corrupt_agent(folder: Path) -> None:
    """An agent whose weights and metadata are both garbage."""
    write_file("bad.safetensors", b"\x08\x00\x00\x00\x00\x00\x00\x00{nonsense" + bytes(64))(folder)
    write_file("bad.json", b'{"name": "bad", "oops": ')(folder)


CASES: list[Case] = [
    # ------------------------------------------------------------------- the config file
    Case("no_config_given", "imitate", args("--no-progress"), "--config"),
    Case(
        "missing_config_file", "imitate", args("--config", "{folder}/nowhere.yaml"), "nowhere.yaml"
    ),
    Case(
        "config_not_yaml",
        "imitate",
        args("--config", "{folder}/broken.yaml"),
        "broken.yaml",
        write_file("broken.yaml", b"name: x\nteachers: {mixbot: 1\n"),
    ),
    Case(
        "unknown_key_in_file",
        "imitate",
        args("--config", "{folder}/typo.yaml"),
        "teacher",
        write_file("typo.yaml", b"name: x\nteacher: {mixbot: 1.0}\n"),
    ),
    Case(
        "missing_name_no_output",
        "imitate",
        args("--config", "{folder}/noname.yaml"),
        "name is missing",
        write_file("noname.yaml", b"teachers: {mixbot: 1.0}\nsamples: 2000\n"),
    ),
    Case("unknown_key_set", "imitate", _imitate_args("epochz=3"), "epochz"),
    Case("set_without_equals", "imitate", _imitate_args("samples"), "samples"),
    Case("set_value_not_yaml", "imitate", _imitate_args("samples=[1, 2"), "samples"),
    # -------------------------------------------------------------------- teachers, mixes
    Case("unknown_teacher_bot", "imitate", _imitate_args("teachers={{nobody: 1}}"), "nobody"),
    Case("no_teacher", "imitate", _imitate_args("teachers={{}}"), "teachers"),
    Case("teacher_weight_nan", "imitate", _imitate_args("teachers={{mixbot: .nan}}"), "mixbot"),
    Case("teacher_weight_negative", "imitate", _imitate_args("teachers={{mixbot: -1}}"), "mixbot"),
    Case("teacher_weight_text", "imitate", _imitate_args("teachers={{mixbot: lots}}"), "lots"),
    Case("all_teacher_weights_zero", "imitate", _imitate_args("teachers={{mixbot: 0}}"), "weight"),
    Case("teachers_not_a_mapping", "imitate", _imitate_args("teachers=[mixbot]"), "teachers"),
    Case("unknown_opponent_bot", "imitate", _imitate_args("opponents={{ghost: 1}}"), "ghost"),
    Case(
        "opponent_agent_file_refused",
        "imitate",
        _imitate_args("opponents={{'{folder}/c.safetensors': 1}}"),
        "c.safetensors",
        _clone("c"),
    ),
    Case(
        "teacher_agent_file_missing",
        "imitate",
        _imitate_args("teachers={{'{folder}/ghost.safetensors': 1}}"),
        "ghost.safetensors",
    ),
    Case(
        "teacher_agent_of_another_table_size",
        "imitate",
        _imitate_args("teachers={{'{folder}/four.safetensors': 1}}"),
        "four.safetensors",
        _clone("four", players=4),
    ),
    Case(
        "teacher_agent_corrupt",
        "imitate",
        _imitate_args("teachers={{'{folder}/bad.safetensors': 1}}"),
        "bad",
        _corrupt_agent,
    ),
    # ---------------------------------------------------------------------- sizes, numbers
    Case("samples_too_few", "imitate", _imitate_args("samples=10"), "samples"),
    Case("samples_too_many", "imitate", _imitate_args("samples=1000000000"), "samples"),
    Case("samples_not_integer", "imitate", _imitate_args("samples=2.5e3"), "samples"),
    Case("validation_too_large", "imitate", _imitate_args("validation=0.9"), "validation"),
    Case("validation_zero", "imitate", _imitate_args("validation=0"), "validation"),
    Case("epochs_zero", "imitate", _imitate_args("epochs=0"), "epochs"),
    Case("batch_size_zero", "imitate", _imitate_args("batch_size=0"), "batch_size"),
    Case("games_per_batch_huge", "imitate", _imitate_args("games_per_batch=10000000"), "games"),
    Case("learning_rate_nan", "imitate", _imitate_args("learning_rate=.nan"), "learning_rate"),
    Case("learning_rate_zero", "imitate", _imitate_args("learning_rate=0"), "learning_rate"),
    Case("label_smoothing_half", "imitate", _imitate_args("label_smoothing=0.5"), "smoothing"),
    Case("net_arch_empty", "imitate", _imitate_args("net_arch=[]"), "net_arch"),
    Case("net_arch_negative_width", "imitate", _imitate_args("net_arch=[32, -1]"), "net_arch[1]"),
    Case("activation_unknown", "imitate", _imitate_args("activation=sigmoid"), "sigmoid"),
    Case("eval_bot_unknown", "imitate", _imitate_args("eval_bots=[nobody]"), "nobody"),
    Case("eval_games_zero", "imitate", _imitate_args("eval_games=0"), "eval_games"),
    Case("negative_seed", "imitate", _imitate_args("seed=-1"), "seed"),
    Case("num_players_out_of_range", "imitate", _imitate_args("num_players=11"), "num_players"),
    Case("unknown_rules_preset", "imitate", _imitate_args("rules=street2"), "street2"),
    # ----------------------------------------------------------------- output and runs
    Case("run_name_dot_dot", "imitate", _imitate_args("name=.."), "name"),
    Case("run_name_with_slash", "imitate", _imitate_args("name=a/b"), "a/b"),
    Case(
        "runs_dir_is_a_file",
        "imitate",
        args("--config", str(TINY), "--set", "runs_dir={folder}/afile"),
        "afile",
        write_file("afile", b"not a folder"),
    ),
    Case(
        "second_run_without_overwrite",
        "imitate",
        _imitate_args(),
        "--overwrite",
        write_file("runs/imitate_tiny/imitate_tiny.safetensors", b"the first run's clone"),
    ),
    # ----------------------------------------------------- starting a run from a clone
    Case(
        "ppo_init_from_clone_of_another_net_arch",
        "ppo",
        train_args(PPO_TINY, "init_from={folder}/clone.safetensors"),
        "net_arch",
        _clone("clone", hidden=(16,)),
    ),
    Case(
        "ppo_init_from_clone_of_another_table_size",
        "ppo",
        train_args(PPO_TINY, "init_from={folder}/clone.safetensors"),
        "clone.safetensors",
        _clone("clone", players=4),
    ),
    Case(
        "ppo_init_from_clone_of_observation_v3",
        "ppo",
        train_args(PPO_TINY, "init_from={folder}/clone.safetensors"),
        f"observation version 3 (353 features); this uno-lab encodes version {OBS_VERSION}",
        _clone("clone", encoding=(3, 353)),
    ),
    Case(
        "dqn_init_from_clone_of_observation_v3",
        "dqn",
        train_args(DQN_TINY, "init_from={folder}/clone.safetensors"),
        "observation version 3",
        _clone("clone", hidden=(8, 8, 8), activation="relu", encoding=(3, 353)),
    ),
    Case(
        "dqn_init_from_clone_of_another_net_arch",
        "dqn",
        train_args(DQN_TINY, "init_from={folder}/clone.safetensors"),
        "net_arch",
        _clone("clone", hidden=(8, 8, 8), activation="relu"),
    ),
    # ------------------------------------------------------- included recordings
    Case(
        "include_a_missing_recording",
        "imitate",
        _imitate_args("include=[{folder}/gone.npz]"),
        "gone.npz",
    ),
    Case(
        "include_a_recording_that_is_not_one",
        "imitate",
        _imitate_args("include=[{folder}/junk.npz]"),
        "junk.npz: not a demonstrations file",
        write_file("junk.npz", b"PK\x03\x04 not really a zip"),
    ),
    Case(
        "include_a_recording_of_another_table_size",
        "imitate",
        _imitate_args("include=[{folder}/four.npz]", "samples=0"),
        "four.npz: recorded under other rules (num_players: 4, this run plays 2)",
        _recording("four.npz", players=4),
    ),
    Case(
        "samples_zero_without_a_recording",
        "imitate",
        _imitate_args("samples=0"),
        "--set samples=0: 0 is out of range",
    ),
    Case(
        "value_targets_negative",
        "imitate",
        _imitate_args("value_targets=-1"),
        "--set value_targets=-1: -1.0 is out of range",
    ),
    # ----------------------------------------------- the uno-lab command and real exits
    Case(  # an item of --set is named as it was given, as uno-lab train ppo names it
        "uno_lab_set_item_named_as_given",
        "uno-lab",
        _uno_lab_args("epochs=0"),
        "uno-lab train imitate: error: --set epochs=0: 0 is out of range; allowed 1..",
    ),
    Case(
        "uno_lab_set_item_of_the_wrong_type",
        "uno-lab",
        _uno_lab_args("batch_size=lots"),
        "--set batch_size=lots: expected an integer, got 'lots'",
    ),
    Case(
        "uno_lab_train_imitate_unknown_teacher",
        "uno-lab",
        _uno_lab_args("teachers={{nobody: 1}}"),
        "nobody",
    ),
    Case(
        "subprocess_missing_config",
        "uno-lab",
        args("train", "imitate", "--config", "{folder}/nowhere.yaml"),
        "nowhere.yaml",
        subprocess=True,
    ),
    Case(
        "subprocess_unknown_key",
        "uno-lab",
        _uno_lab_args("batchsize=3"),
        "batchsize",
        subprocess=True,
    ),
]


def _run(case: Case, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of the case's command."""
    return run_entry(
        MODULES[case.entry], ENTRIES[case.entry], argv, capsys, in_subprocess=case.subprocess
    )


def test_the_catalogue_is_large_enough() -> None:
    assert len(CASES) >= 12
    assert len({case.id for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_bad_imitation_input(
    case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case.setup(tmp_path)
    before = snapshot(tmp_path)
    code, out, err = _run(case, case.argv(tmp_path), capsys)

    assert code == 2, (code, out, err)
    assert "Traceback" not in out + err, err
    lines = err.strip().splitlines()
    assert lines and "error:" in lines[-1], err
    assert case.names in err, err
    assert snapshot(tmp_path) == before, "files changed, appeared or were lost"
