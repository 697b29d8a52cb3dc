"""Bad inputs to training runs: each must end in one clear line, nothing lost.

Every case runs ``python -m unolab.train.ppo`` / ``unolab.train.dqn`` / ``unolab.train.export`` in-process
(``main(argv)``, a few through a real subprocess for the exit path) on a folder prepared
by its ``setup``, and checks that

* the command exits with status 2 (never a bare exception of Python or a library);
* the last line of stderr is the error, and stderr names the bad input (``names``);
* no "Traceback" is printed;
* every file of the folder is still there with the same bytes, and nothing was added (a
  refused run writes nothing: no ``tb/ppo_2`` next to ``tb/ppo_1``).

Two faults of the machine rather than the input follow the catalogue: a run folder held by
another run (refused, naming its pid), and a checkpoint that cannot be written (a full disk:
one line naming the file, exit status 1, and ``--resume`` continues from the last good
checkpoint).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from stable_baselines3.common.base_class import BaseAlgorithm
from support import ROOT
from support.bad_inputs import args, nothing, run_entry, snapshot, train_args, write_file

from uno_env.files import FolderLock
from unolab.train import dqn, export, imitate, ppo

PPO_TINY = ROOT / "configs" / "ppo" / "tiny.yaml"
DQN_TINY = ROOT / "configs" / "dqn" / "tiny.yaml"
IMITATE_TINY = ROOT / "configs" / "imitate" / "tiny.yaml"
ENTRIES: dict[str, Callable[[list[str]], object]] = {
    "ppo": ppo.main,
    "dqn": dqn.main,
    "export": export.main,
    "imitate": imitate.main,
}


@dataclass(frozen=True)
class Case:
    """One bad input.

    Attributes:
        id: The case's name.
        entry: ``ppo``, ``dqn``, ``export`` or ``imitate``: the command run.
        argv: The command line, given the case's folder.
        names: What the error message must contain (the file, key or value at fault).
        setup: Prepares the folder (an earlier run, a corrupt file...).
        subprocess: Run as ``python -m unolab.train.<entry>`` in a real process.
    """

    id: str
    entry: str
    argv: Callable[[Path], list[str]]
    names: str
    setup: Callable[[Path], None] = field(default=nothing)
    subprocess: bool = False


def _earlier_run(name: str, config: Path) -> Callable[[Path], None]:
    """The files of an earlier run ``runs/<name>`` (a config, checkpoints, TensorBoard logs)."""

    def setup(folder: Path) -> None:
        run = folder / "runs" / name
        (run / "tb" / f"{name.split('_')[0]}_1").mkdir(parents=True)
        shutil.copyfile(config, run / "config.yaml")
        (run / "latest.zip").write_bytes(b"PK\x03\x04 the first run's checkpoint")
        (run / "best.zip").write_bytes(b"PK\x03\x04 the first run's best checkpoint")
        (run / "best_policy.safetensors").write_bytes(b"the first run's agent")
        (run / "tb" / f"{name.split('_')[0]}_1" / "events.out.tfevents.1").write_bytes(b"log")

    return setup


def _both(*setups: Callable[[Path], None]) -> Callable[[Path], None]:
    def setup(folder: Path) -> None:
        for one in setups:
            one(folder)

    return setup


def _run_config(relative: str) -> Callable[[Path], None]:
    """A run folder holding only the tiny PPO config."""
    return write_file(relative, PPO_TINY.read_bytes())


_HELD: list[FolderLock] = []
"""Locks held by a case's set-up for the length of the case (released after it)."""


def _held(relative: str) -> Callable[[Path], None]:
    """Hold the lock of ``<folder>/<relative>`` as a run in progress would."""

    def setup(folder: Path) -> None:
        (folder / relative).mkdir(parents=True, exist_ok=True)
        lock = FolderLock(folder / relative, "training run")
        lock.acquire()
        _HELD.append(lock)

    return setup


@pytest.fixture(autouse=True)
def _release_held() -> Iterator[None]:
    yield
    while _HELD:
        _HELD.pop().release()


CORRUPT_ZIP = b"PK\x03\x04 this is not really a zip archive" + bytes(range(256))
CORRUPT_SAFETENSORS = b"\x08\x00\x00\x00\x00\x00\x00\x00{nonsense" + bytes(64)

CASES: list[Case] = [
    # ------------------------------------------------------- an earlier run of the same name
    Case(
        "second_ppo_run_without_resume_or_overwrite",
        "ppo",
        train_args(PPO_TINY),
        "--overwrite",
        _earlier_run("ppo_tiny", PPO_TINY),
    ),
    Case(
        "second_ppo_run_names_the_run_folder",
        "ppo",
        train_args(PPO_TINY),
        "ppo_tiny",
        _earlier_run("ppo_tiny", PPO_TINY),
    ),
    Case(
        "second_dqn_run_without_resume_or_overwrite",
        "dqn",
        train_args(DQN_TINY),
        "--resume",
        _earlier_run("dqn_tiny", DQN_TINY),
    ),
    Case(
        "second_run_after_a_crash_before_any_checkpoint",
        "ppo",
        train_args(PPO_TINY),
        "ppo_tiny",
        _run_config("runs/ppo_tiny/config.yaml"),
    ),
    Case(
        "resume_and_overwrite_together",
        "ppo",
        args("--resume", "{folder}/runs/ppo_tiny", "--overwrite", "--no-progress"),
        "--overwrite",
        _earlier_run("ppo_tiny", PPO_TINY),
    ),
    # ----------------------------------------------------------------- the config file
    Case("no_config_given", "ppo", args("--no-progress"), "--config"),
    Case("missing_config_file", "ppo", args("--config", "{folder}/nowhere.yaml"), "nowhere.yaml"),
    Case(
        "config_is_a_folder",
        "ppo",
        args("--config", "{folder}/configs"),
        "configs",
        write_file("configs/keep.txt", b"x"),
    ),
    Case(
        "config_is_not_yaml",
        "ppo",
        args("--config", "{folder}/broken.yaml"),
        "broken.yaml",
        write_file("broken.yaml", b"name: [unclosed\nalgorithm: ppo\n"),
    ),
    Case(
        "config_is_binary",
        "ppo",
        args("--config", "{folder}/binary.yaml"),
        "binary.yaml",
        write_file("binary.yaml", b"\xff\xfe\x00\x01garbage\x80\x81"),
    ),
    Case(
        "config_is_a_list",
        "ppo",
        args("--config", "{folder}/list.yaml"),
        "list.yaml",
        write_file("list.yaml", b"- name\n- algorithm\n"),
    ),
    Case(
        "ppo_config_given_to_dqn",
        "dqn",
        args("--config", str(PPO_TINY), "--no-progress"),
        "tiny.yaml",
    ),
    Case(
        "dqn_config_given_to_ppo",
        "ppo",
        args("--config", str(DQN_TINY), "--no-progress"),
        "python -m unolab.train.dqn",
    ),
    # ------------------------------------------------------------------- --set overrides
    Case("set_unknown_key", "ppo", train_args(PPO_TINY, "ppo.learnig_rate=1"), "learnig_rate"),
    Case("set_unknown_section", "ppo", train_args(PPO_TINY, "ppx.gamma=0.9"), "ppx"),
    Case("set_without_equals", "ppo", train_args(PPO_TINY, "total_steps"), "total_steps"),
    Case("set_bad_value_type", "ppo", train_args(PPO_TINY, "total_steps=lots"), "total_steps"),
    Case("set_value_not_yaml", "ppo", train_args(PPO_TINY, "seed=[1, 2"), "seed"),
    Case("set_unknown_algorithm", "ppo", train_args(PPO_TINY, "algorithm=a2c"), "a2c"),
    Case("set_unknown_rules_preset", "ppo", train_args(PPO_TINY, "rules=street2"), "street2"),
    Case(
        "set_num_players_out_of_range",
        "ppo",
        train_args(PPO_TINY, "num_players=11"),
        "num_players",
    ),
    Case("set_unknown_eval_bot", "ppo", train_args(PPO_TINY, "eval.bots=[nobody]"), "nobody"),
    Case(
        "set_unknown_opponent_bot",
        "dqn",
        train_args(DQN_TINY, "opponents.bots={{nobody: 1}}"),
        "nobody",
    ),
    Case(
        "learner_seat_out_of_range",
        "ppo",
        train_args(PPO_TINY, "learner_seat='5'"),
        "learner_seat",
    ),
    Case("learner_seat_not_a_seat", "ppo", train_args(PPO_TINY, "learner_seat=left"), "left"),
    Case("negative_seed", "ppo", train_args(PPO_TINY, "seed=-1"), "seed"),
    Case("run_name_dot_dot", "ppo", train_args(PPO_TINY, "name=.."), "name"),
    Case(
        "runs_dir_is_a_file",
        "ppo",
        args("--config", str(PPO_TINY), "--no-progress", "--set", "runs_dir={folder}/afile"),
        "afile",
        write_file("afile", b"not a folder"),
    ),
    # ------------------------------------------------------- a run folder held by a run
    Case(
        "resume_a_run_in_progress",
        "ppo",
        args("--resume", "{folder}/runs/ppo_tiny", "--no-progress"),
        f"in use by another process (pid {os.getpid()})",
        _both(_earlier_run("ppo_tiny", PPO_TINY), _held("runs/ppo_tiny")),
    ),
    Case(
        "overwrite_a_run_in_progress",
        "dqn",
        train_args(DQN_TINY),
        f"in use by another process (pid {os.getpid()})",
        _both(_earlier_run("dqn_tiny", DQN_TINY), _held("runs/dqn_tiny")),
    ),
    Case(
        "imitate_into_a_run_in_progress",
        "imitate",
        args("--config", str(IMITATE_TINY), "--overwrite", "--set", "runs_dir={folder}/runs"),
        f"in use by another process (pid {os.getpid()})",
        _held("runs/imitate_tiny"),
    ),
    # ----------------------------------------------------------------------- init_from
    Case(
        "init_from_missing",
        "ppo",
        train_args(PPO_TINY, "init_from={folder}/missing.zip"),
        "missing.zip",
    ),
    Case(
        "init_from_missing_export",
        "dqn",
        train_args(DQN_TINY, "init_from={folder}/missing.safetensors"),
        "missing.safetensors",
    ),
    Case(
        "init_from_wrong_suffix",
        "ppo",
        train_args(PPO_TINY, "init_from={folder}/agent.json"),
        "agent.json",
        write_file("agent.json", b"{}"),
    ),
    Case(
        "init_from_corrupt_zip",
        "ppo",
        train_args(PPO_TINY, "init_from={folder}/corrupt.zip"),
        "corrupt.zip is not a readable",
        write_file("corrupt.zip", CORRUPT_ZIP),
    ),
    Case(
        "init_from_corrupt_safetensors",
        "ppo",
        train_args(PPO_TINY, "init_from={folder}/agent.safetensors"),
        "agent",
        _both(
            write_file("agent.safetensors", CORRUPT_SAFETENSORS),
            write_file("agent.json", b'{"name": "agent", "oops": '),
        ),
    ),
    # -------------------------------------------------------------------------- --resume
    Case(
        "resume_a_folder_that_does_not_exist",
        "ppo",
        args("--resume", "{folder}/runs/ghost", "--no-progress"),
        "ghost",
    ),
    Case(
        "resume_a_run_without_checkpoint",
        "ppo",
        args("--resume", "{folder}/runs/ppo_tiny", "--no-progress"),
        "latest.zip",
        _run_config("runs/ppo_tiny/config.yaml"),
    ),
    Case(
        "resume_a_corrupt_checkpoint",
        "ppo",
        args("--resume", "{folder}/runs/ppo_tiny", "--no-progress"),
        "latest.zip",
        _both(
            _run_config("runs/ppo_tiny/config.yaml"),
            write_file("runs/ppo_tiny/latest.zip", CORRUPT_ZIP),
        ),
    ),
    # --------------------------------------------------------------------------- export
    Case(
        "export_missing_checkpoint",
        "export",
        args("{folder}/runs/x/latest.zip", "{folder}/out/agent"),
        "latest.zip",
    ),
    Case(
        "export_checkpoint_without_run_config",
        "export",
        args("{folder}/lone/latest.zip", "{folder}/out/agent"),
        "config.yaml",
        write_file("lone/latest.zip", CORRUPT_ZIP),
    ),
    Case(
        "export_corrupt_checkpoint",
        "export",
        args("{folder}/runs/ppo_tiny/latest.zip", "{folder}/out/agent"),
        "latest.zip",
        _both(
            _run_config("runs/ppo_tiny/config.yaml"),
            write_file("runs/ppo_tiny/latest.zip", CORRUPT_ZIP),
        ),
    ),
    Case(
        "export_with_an_invalid_run_config",
        "export",
        args("{folder}/runs/bad/latest.zip", "{folder}/out/agent"),
        "config.yaml",
        _both(
            write_file("runs/bad/config.yaml", b"name: bad\nalgorithm: ppo\nseed: [\n"),
            write_file("runs/bad/latest.zip", CORRUPT_ZIP),
        ),
    ),
    Case(
        "export_over_an_existing_agent",
        "export",
        args("{folder}/runs/ppo_tiny/latest.zip", "{folder}/out/agent"),
        "agent.safetensors",
        _both(
            _run_config("runs/ppo_tiny/config.yaml"),
            write_file("runs/ppo_tiny/latest.zip", CORRUPT_ZIP),
            write_file("out/agent.safetensors", b"an agent someone shipped"),
            write_file("out/agent.json", b"{}"),
        ),
    ),
    # ------------------------------------------------- the real exit path, in a subprocess
    Case(
        "subprocess_missing_config",
        "ppo",
        args("--config", "{folder}/nowhere.yaml"),
        "nowhere.yaml",
        subprocess=True,
    ),
    Case(
        "subprocess_second_run",
        "ppo",
        train_args(PPO_TINY),
        "--overwrite",
        _earlier_run("ppo_tiny", PPO_TINY),
        subprocess=True,
    ),
    Case(
        "subprocess_export_missing_checkpoint",
        "export",
        args("{folder}/nowhere.zip", "{folder}/out/agent"),
        "nowhere.zip",
        subprocess=True,
    ),
]


def _run(case: Case, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of the case's command."""
    return run_entry(
        f"train.{case.entry}", ENTRIES[case.entry], argv, capsys, in_subprocess=case.subprocess
    )


def test_the_catalogue_is_large_enough() -> None:
    assert len(CASES) >= 12
    assert len({case.id for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_bad_training_input(case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case.setup(tmp_path)
    before = snapshot(tmp_path)
    code, out, err = _run(case, case.argv(tmp_path), capsys)

    assert code == 2, (code, out, err)
    assert "Traceback" not in out + err, err
    lines = err.strip().splitlines()
    assert lines and "error:" in lines[-1], err
    assert case.names in err, err
    assert snapshot(tmp_path) == before, "files changed, appeared or were lost"


# --- a checkpoint that cannot be written ------------------------------------------------------

_QUICK = (
    "num_envs=4", "ppo.n_steps=16", "ppo.batch_size=64", "total_steps=128", "eval.every=64",
    "eval.games=10", "opponents.snapshot_every=64",
)  # fmt: skip
"""A run of two rollouts of 64 steps, each followed by an evaluation and a checkpoint."""


_SAVE = BaseAlgorithm.save
"""SB3's own ``save`` (the tests replace it)."""


def _disk_full_at(steps: int) -> Callable[..., Any]:
    """``BaseAlgorithm.save`` on a disk that fills when ``latest.zip`` of ``steps`` is written:
    part of the file is written, then the write fails as a full disk does."""
    real = _SAVE

    def save(self: BaseAlgorithm, path: Any, *args: Any, **kwargs: Any) -> None:
        if "latest.zip" in Path(path).name and self.num_timesteps >= steps:
            Path(path).write_bytes(b"PK\x03\x04 the first kilobytes of a checkpoint")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(self, path, *args, **kwargs)

    return save


def test_a_checkpoint_that_cannot_be_written_ends_in_one_line_and_the_run_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ["--config", str(PPO_TINY), "--no-progress", "--set", f"runs_dir={tmp_path}"]
    for item in _QUICK:
        argv += ["--set", item]
    run_dir = tmp_path / "ppo_tiny"

    # The disk fills at the first checkpoint: nothing to resume from, so start over.
    monkeypatch.setattr(BaseAlgorithm, "save", _disk_full_at(64))
    code, out, err = run_entry("unolab.train.ppo", ppo.main, argv, capsys)
    assert code == 1, (code, err)
    assert "Traceback" not in out + err
    last = err.strip().splitlines()[-1]
    assert last.startswith("python -m unolab.train.ppo: error: cannot write ")
    assert f"{run_dir / 'latest.zip'}: no space left on device" in last
    assert "--overwrite" in last
    assert not (run_dir / "latest.zip").exists()
    assert not list(run_dir.glob("*.partial")), "no temporary file is left behind"

    # Started over, the disk fills at the second checkpoint: the first one is intact.
    monkeypatch.setattr(BaseAlgorithm, "save", _disk_full_at(128))
    code, out, err = run_entry("unolab.train.ppo", ppo.main, [*argv, "--overwrite"], capsys)
    assert code == 1, (code, err)
    last = err.strip().splitlines()[-1]
    assert f"{run_dir / 'latest.zip'}: no space left on device" in last
    assert f"--resume {run_dir}" in last and "Traceback" not in out + err
    assert json.loads((run_dir / "latest.json").read_text())["steps"] == 64
    assert not list(run_dir.glob("*.partial"))

    # Space again: the run continues from the checkpoint of step 64 to its end.
    monkeypatch.undo()
    resumed = ppo.main(["--resume", str(run_dir), "--no-progress"])
    assert resumed.steps == 128
    assert json.loads((run_dir / "latest.json").read_text())["steps"] == 128
    assert "resuming ppo" in capsys.readouterr().err
