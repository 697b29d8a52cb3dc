"""RunFolder, the one job folder of every long job: its lock against a second process, the
check that it holds no other run (``--resume`` / ``--overwrite`` / ``--fresh``), and writes
that leave the previous file whole when the writer dies half-way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from uno_env.config_values import ConfigError
from uno_env.files import FolderInUseError
from uno_env.folders import RunExistsError, RunFolder

HOLDER = """
import sys
from uno_env.folders import RunFolder
folder = RunFolder(sys.argv[1], "training run")
folder.hold()
print("held", flush=True)
sys.stdin.readline()
folder.release()
"""

CRASH = """
import os, sys
from uno_env.folders import RunFolder
def half(tmp):
    with open(tmp, "w") as out:
        out.write('{"steps": 2, "tru')
        out.flush()
    os._exit(9)  # killed mid-write: nothing after this runs, no clean-up
RunFolder(sys.argv[1], "training run").write("record.json", half)
"""


def _folder(path: Path) -> RunFolder:
    return RunFolder(
        path,
        "training run",
        files=["config.yaml", "latest.zip", "slot*.json"],
        resume=f"continue it with --resume {path}",
        rename="give the new run another name with --set name=...",
    )


def test_a_second_process_holding_the_folder_is_named_and_refused(tmp_path: Path) -> None:
    run_dir = tmp_path / "runs" / "a"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(run_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        mine = _folder(run_dir)
        with pytest.raises(FolderInUseError, match=f"pid {holder.pid}") as refused:
            mine.hold()
        assert str(run_dir) in str(refused.value) and "\n" not in str(refused.value)
        mine.release(undo=True)  # the holder's folder and lock file stay
        assert (run_dir / ".lock").read_text().strip() == str(holder.pid)
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(timeout=60)
    assert not (run_dir / ".lock").exists(), "a run that ended leaves no lock file"
    mine.hold()  # free now
    assert mine.held and (run_dir / ".lock").read_text().strip() == str(os.getpid())
    mine.release()
    assert not mine.held and not (run_dir / ".lock").exists()


def test_a_refused_start_removes_only_the_folders_it_made(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "runs" / "a")
    folder.hold()
    folder.release(undo=True)
    assert not (tmp_path / "runs").exists()
    folder.hold()
    (folder.path / "notes.txt").write_text("kept")
    folder.release(undo=True)
    assert (folder.path / "notes.txt").read_text() == "kept"


def test_a_new_run_over_a_run_is_refused_unless_it_starts_over(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "a")
    assert folder.check_new(overwrite=False) == []  # no folder yet: nothing to refuse
    folder.path.mkdir()
    (folder.path / "notes.txt").write_text("not the run's")
    assert folder.check_new(overwrite=False) == []  # only the job's own files make a run
    for name in ("config.yaml", "slot0.json", "slot1.json"):
        (folder.path / name).write_text("{}")
    with pytest.raises(RunExistsError) as refused:
        folder.check_new(overwrite=False)
    message = str(refused.value)
    assert message.startswith(f"{folder.path} already holds a run (config.yaml, slot0.json")
    assert f"--resume {folder.path}" in message and "--overwrite" in message
    assert "--set name=" in message and "\n" not in message
    stale = folder.check_new(overwrite=True)  # --overwrite: what it removes
    assert [p.name for p in stale] == ["config.yaml", "slot0.json", "slot1.json"]
    folder.remove(stale)
    assert [p.name for p in folder.path.iterdir()] == ["notes.txt"]
    assert folder.check_new(overwrite=False) == []


def test_a_run_recorded_with_another_fingerprint_is_refused_until_fresh(tmp_path: Path) -> None:
    folder = RunFolder(
        tmp_path / "t",
        "tournament run",
        files=["games.jsonl"],
        start_over="rerun with --fresh to discard its games",
        rename="use another name",
    )
    folder.path.mkdir()
    record = {"fingerprint": "aaa", "seed": 3}

    def differences(old: dict[str, object]) -> str:
        return f"seed {old['seed']} -> 4"

    assert folder.check_record("config.json", "aaa", differences) is None  # no record yet
    folder.write("config.json", json.dumps(record))
    assert folder.check_record("config.json", "aaa", differences) == record  # resumes
    with pytest.raises(ConfigError) as refused:
        folder.check_record("config.json", "bbb", differences)
    message = str(refused.value)
    assert str(folder.path) in message and "config.json differs: seed 3 -> 4" in message
    assert "--fresh" in message and "use another name" in message
    # A difference that does not matter ("" in words) is no refusal.
    assert folder.check_record("config.json", "bbb", lambda old: "") == record
    # A record that is not one is named, with the way out.
    folder.write("config.json", '{"finger')
    with pytest.raises(ConfigError, match=r"config\.json cannot be read.*--fresh"):
        folder.check_record("config.json", "aaa", differences)
    folder.write("config.json", "[1, 2]")
    with pytest.raises(ConfigError, match="not a run record"):
        folder.check_record("config.json", "aaa", differences)
    # --fresh: the job's files go, and the next run starts from nothing.
    (folder.path / "games.jsonl").write_text("{}\n")
    folder.remove(folder.existing())
    assert not (folder.path / "games.jsonl").exists()


def test_a_writer_killed_mid_write_leaves_the_previous_file_whole(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "a")
    folder.path.mkdir()
    folder.write("record.json", json.dumps({"steps": 1}))
    crashed = subprocess.run([sys.executable, "-c", CRASH, str(folder.path)], check=False)
    assert crashed.returncode == 9
    assert json.loads((folder.path / "record.json").read_text()) == {"steps": 1}
    # The same in process: a write that fails leaves the old file and no scratch file.
    scratch = sorted(p.name for p in folder.path.iterdir() if p.name.endswith(".partial"))
    assert len(scratch) == 1, "the killed writer's scratch file, beside the whole record"

    def fails(tmp: Path) -> None:
        tmp.write_text('{"steps": 3')
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match=r"cannot write .*record\.json: no space left") as err:
        folder.write("record.json", fails)
    assert "free space" in str(err.value) and "\n" not in str(err.value)
    assert json.loads((folder.path / "record.json").read_text()) == {"steps": 1}
    assert sorted(p.name for p in folder.path.iterdir() if p.name.endswith(".partial")) == scratch
    assert folder.write("record.json", b'{"steps": 4}') == folder.path / "record.json"
    assert json.loads((folder.path / "record.json").read_text()) == {"steps": 4}


@pytest.mark.parametrize(
    ("there", "named"),
    [("file", "is a file, not a folder"), ("dangling", "which does not exist")],
)
def test_a_folder_path_that_holds_no_folder_is_named(
    tmp_path: Path, there: str, named: str
) -> None:
    path = tmp_path / "a"
    if there == "file":
        path.write_text("notes")
    else:
        path.symlink_to(tmp_path / "gone")
    folder = _folder(path)
    with pytest.raises(ConfigError, match=named) as refused:
        folder.hold()
    assert str(path) in str(refused.value) and "--set name=" in str(refused.value)
    assert not folder.held


def test_a_folder_that_cannot_be_made_names_the_setting_and_where_else(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    folder = RunFolder(
        tmp_path / "afile" / "runs" / "a",
        "training run",
        place="runs_dir",
        relocate="choose another folder with --set runs_dir=...",
    )
    with pytest.raises(ConfigError, match=r"^runs_dir: the run folder .* cannot be made") as err:
        folder.hold()
    assert "--set runs_dir=" in str(err.value)
