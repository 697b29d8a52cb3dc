"""``uno-lab data export``: kept browser games as a demonstrations file that ``uno-lab train
imitate`` trains on, and its bad inputs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from support import ROOT
from support.kept_games import kept_record, write_kept_games

from uno_env import cards as C
from uno_env.game import UnoGame
from uno_env.observation import OBS_DIM, encode
from uno_env.rules import load_rules
from unolab import cli
from unolab.human_games import HUMAN_TEACHER
from unolab.train.imitate import run as imitate
from unolab.train.imitate.files import load_demonstrations

TINY = ROOT / "configs" / "imitate" / "tiny.yaml"
RULES = load_rules("official", num_players=2)


@pytest.fixture(scope="module")
def games_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Ten kept one-hand games against mixbot, and one declined."""
    folder = tmp_path_factory.mktemp("games")
    records = [kept_record(RULES, seed, ["mixbot"], match=False)[0] for seed in range(10)]
    records.append(kept_record(RULES, 99, ["mixbot"], keep=False, match=False)[0])
    write_kept_games(folder, records)
    return folder


def test_the_export_holds_the_persons_decisions(games_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "human.npz"
    assert cli.main(["data", "export", "--games-dir", str(games_dir), "--out", str(out)]) == 0
    demos = load_demonstrations(out, RULES)
    assert demos.teacher_names == (HUMAN_TEACHER,) and demos.num_games == 10
    assert demos.observations.shape == (len(demos), OBS_DIM)
    assert demos.masks[np.arange(len(demos)), demos.actions].all()  # each action legal
    # The first game's rows are the person's (seat 0) unforced decisions, encoded as seat 0.
    record = json.loads((games_dir / f"{0:022d}.json").read_text())
    game, expected = UnoGame(RULES, seed=record["seed"]), []
    for name in record["hands"][0]:
        if game.current_seat == 0 and len(game.legal_action_ids()) > 1:
            expected.append((encode(RULES, game.state)[0], C.parse_action(name)))
        game.step(name)
    rows = np.flatnonzero(demos.games == 0)
    assert len(rows) == len(expected) > 0
    for row, (obs, action) in zip(rows, expected, strict=True):
        assert demos.actions[row] == action
        np.testing.assert_array_equal(demos.observations[row], obs)


def test_train_imitate_fits_a_network_on_the_export(games_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "human.npz"
    cli.main(["data", "export", "--games-dir", str(games_dir), "--out", str(out)])
    settings = [
        f"runs_dir={tmp_path}",
        "name=from_people",
        f"include=[{out}]",
        "samples=0",
        "eval_teachers=false",
        "eval_games=2",
        "validation=0.2",
    ]
    args = ["--config", str(TINY), "--no-progress"]
    for setting in settings:
        args += ["--set", setting]
    result = imitate.main(args)
    assert result.report["data"]["decisions"] == len(load_demonstrations(out, RULES))
    assert (tmp_path / "from_people" / "from_people.safetensors").is_file()


@pytest.mark.parametrize(
    ("case", "named"),
    [
        ("missing", "--games-dir {games}: not a folder"),
        ("empty", "--games-dir {games}: no game kept as data"),
        ("broken", "not valid JSON"),
        ("illegal", "hand 1 action 1 ('G9') is not legal there"),
        ("mixed", "2 different rules; choose one with --rules"),
        ("folder_out", "is a folder"),
        ("no_npz", "a demonstrations file ends in .npz"),
        ("out_folder_missing", "the folder {out_parent} does not exist"),
    ],
)
def test_bad_inputs_are_one_line(
    case: str, named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    games, out = tmp_path / "games", tmp_path / "human.npz"
    record = kept_record(RULES, 1, ["mixbot"], match=False)[0]
    if case != "missing":
        write_kept_games(games, [] if case == "empty" else [record])
    if case == "broken":
        (games / f"{1:022d}.json").write_text("{not json")
    if case == "illegal":
        first = record["hands"][0][0]
        record["hands"][0][0] = "G9" if first != "G9" else "R9"
        write_kept_games(games, [record])
    if case == "mixed":
        other = kept_record(
            load_rules("official", num_players=3), 2, ["mixbot", "mixbot"], match=False
        )
        write_kept_games(games, [record, other[0]])
    if case == "folder_out":
        out = tmp_path
    if case == "no_npz":
        out = tmp_path / "human.txt"
    if case == "out_folder_missing":
        out = tmp_path / "nowhere" / "human.npz"
    code = cli.main(["data", "export", "--games-dir", str(games), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert named.format(games=games, out_parent=out.parent) in err


def test_the_data_command_is_listed_and_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        cli.main(["--help"])
    assert stop.value.code == 0 and "    data" in capsys.readouterr().out
    with pytest.raises(SystemExit) as stop:
        cli.main(["data", "export", "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert "usage: uno-lab data export" in out and "--games-dir" in out and "--out" in out
    with pytest.raises(SystemExit) as stop:
        cli.main(["data", "export"])  # the options are required
    assert stop.value.code == 2 and "--games-dir" in capsys.readouterr().err
