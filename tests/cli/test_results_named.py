"""Commands that write results end by naming where (``results in runs/x/``), and a run folder
is left without its ``.lock`` once the run has ended."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from uno_env.files import FolderInUseError, FolderLock
from unolab.cli import main as uno_lab
from unolab.train.exploit.run import RESULT_FILE

TOURNAMENT = ["tournament", "--name", "t", "--participants", "random", "mixbot"]
TOURNAMENT += ["--deal-sets", "2", "--seed", "3", "--no-progress", "--no-plots"]


def last_line(text: str) -> str:
    return text.rstrip("\n").splitlines()[-1]


def test_a_tournament_names_its_folder_last_and_leaves_no_lock(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert uno_lab([*TOURNAMENT, "--output-dir", str(tmp_path)]) == 0
    folder = tmp_path / "t"
    assert last_line(capsys.readouterr().out) == f"results in {folder}/"
    assert (folder / "summary.json").is_file() and (folder / "leaderboard.csv").is_file()
    assert not (folder / FolderLock.LOCK_NAME).exists()
    # Resumed (nothing left to play): the same line, still no lock left behind.
    assert uno_lab([*TOURNAMENT, "--output-dir", str(tmp_path)]) == 0
    assert last_line(capsys.readouterr().out) == f"results in {folder}/"
    assert not (folder / FolderLock.LOCK_NAME).exists()


def test_a_tournament_refused_by_another_run_leaves_its_lock_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "t"
    folder.mkdir()
    with FolderLock(folder, "tournament run"):
        assert uno_lab([*TOURNAMENT, "--output-dir", str(tmp_path)]) == 2
        assert f"pid {os.getpid()}" in capsys.readouterr().err
        assert (folder / FolderLock.LOCK_NAME).read_text().strip() == str(os.getpid())
        # The holder still holds it: a third run is refused too.
        with pytest.raises(FolderInUseError):
            FolderLock(folder).acquire()


def test_exploit_names_its_result_file_last(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "copy.json"
    argv = ["exploit", "random", "--method", "search", "--rollouts", "2", "--search-hands", "4"]
    argv += ["--runs-dir", str(tmp_path), "--no-progress", "--out", str(out)]
    assert uno_lab(argv) == 0
    run_dir = tmp_path / "exploit_random_2p"
    said = last_line(capsys.readouterr().out)
    assert said == f"results in {run_dir}/ ({RESULT_FILE}); also written to {out}"
    assert json.loads((run_dir / RESULT_FILE).read_text())["run_dir"] == str(run_dir)
