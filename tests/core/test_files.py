"""The lab's file helpers: atomic writes keep permissions, run folders are held by one run."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from uno_env.files import FolderInUseError, RunFolderLock, write_atomically


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_a_new_file_gets_the_mode_of_a_plain_open(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        write_atomically(tmp_path / "new.json", "{}")
        (tmp_path / "plain.json").write_text("{}")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "new.json") == _mode(tmp_path / "plain.json") == 0o666 & ~umask
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_rewritten_file_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "summary.json"
    path.write_text("old")
    path.chmod(0o640)
    write_atomically(path, b"new")
    assert path.read_bytes() == b"new" and _mode(path) == 0o640


def test_a_run_folder_is_held_by_one_run_and_a_refused_start_leaves_nothing(
    tmp_path: Path,
) -> None:
    run_dir = tmp_path / "runs" / "a"
    first = RunFolderLock(run_dir, "training run")
    first.take()
    second = RunFolderLock(run_dir, "training run")
    with pytest.raises(FolderInUseError, match=f"pid {os.getpid()}"):
        second.take()
    first.release(undo=True)  # nothing written: the folders it made go too
    assert not (tmp_path / "runs").exists()
    second.take()
    (run_dir / "config.yaml").write_text("name: a\n")
    second.release(undo=True)  # something written: the folder stays
    assert (run_dir / "config.yaml").is_file()
