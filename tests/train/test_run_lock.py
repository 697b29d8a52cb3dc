"""A training or imitation run holds its folder's lock while it runs and leaves no ``.lock``
file behind when it ends (finished, stopped, or refused after its start)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support import ROOT

from uno_env.files import FolderInUseError, FolderLock
from uno_env.folders import RunFolder
from unolab.train import run_cli
from unolab.train.imitate import run as imitate

PPO_TINY = ROOT / "configs" / "ppo" / "tiny.yaml"
IMITATE_TINY = ROOT / "configs" / "imitate" / "tiny.yaml"


def test_releasing_a_run_lock_removes_its_file_but_never_another_runs(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    mine = RunFolder(run_dir, "training run")
    mine.hold()
    assert (run_dir / FolderLock.LOCK_NAME).is_file()
    mine.release()
    assert not (run_dir / FolderLock.LOCK_NAME).exists() and run_dir.is_dir()
    # A run refused because another one holds the folder leaves that one's file alone.
    with FolderLock(run_dir, "training run"):
        refused = RunFolder(run_dir, "training run")
        with pytest.raises(FolderInUseError, match=f"pid {os.getpid()}"):
            refused.hold()
        refused.release()
        assert (run_dir / FolderLock.LOCK_NAME).read_text().strip() == str(os.getpid())


def test_a_finished_training_run_leaves_no_lock_file(tmp_path: Path) -> None:
    overrides = [f"runs_dir={tmp_path}", "total_steps=1024", "eval.every=1024"]
    result = run_cli.main(
        "ppo",
        ["--config", str(PPO_TINY), "--no-progress", *(f for o in overrides for f in ("--set", o))],
    )
    assert (result.run_dir / "latest.zip").is_file()
    assert not (result.run_dir / FolderLock.LOCK_NAME).exists()


def test_a_finished_imitation_run_leaves_no_lock_file(tmp_path: Path) -> None:
    overrides = [f"runs_dir={tmp_path}", "samples=1000"]
    result = imitate.main(
        [
            "--config",
            str(IMITATE_TINY),
            "--no-progress",
            *(f for o in overrides for f in ("--set", o)),
        ]
    )
    assert result.policy.is_file()
    assert not (result.run_dir / FolderLock.LOCK_NAME).exists()
