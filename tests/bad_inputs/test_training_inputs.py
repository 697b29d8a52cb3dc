"""Bad inputs to training runs: each must end in one clear line, nothing lost.

Every case runs ``uno-lab train ppo`` / ``uno-lab train dqn`` / ``python -m unolab.train.export`` in-process
(``main(argv)``, a few through a real subprocess for the exit path) on a folder prepared
by its ``setup``, and checks that

* the command exits with status 2 (never a bare exception of Python or a library);
* the last line of stderr is the error, and stderr names the bad input (``names``);
* no "Traceback" is printed;
* every file of the folder is still there with the same bytes, and nothing was added (a
  refused run writes nothing: no ``tb/ppo_2`` next to ``tb/ppo_1``).

The ``--resume`` cases work on copies of a finished quick run (trained once): each change of
a fixed setting (by ``--set`` or by editing ``config.yaml``) is refused naming the key and
both values, a budget not above the steps done is one line, and a run none of whose
checkpoints is good names each file.

Then the cases that are not refusals: a damaged ``latest.zip`` with a good ``previous.zip``
(one warning line, and the run resumes from it), ``--resume`` in a folder that holds no
run, and two faults of the machine rather than the input: a run folder held by another run
(refused, naming its pid), and a checkpoint that cannot be written (a full disk: one line
naming the file, exit status 1, and ``--resume`` continues from the last good checkpoint).
"""

from __future__ import annotations

import atexit
import errno
import hashlib
import io
import json
import os
import shutil
import struct
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import torch
from stable_baselines3.common.base_class import BaseAlgorithm
from support import ROOT
from support.bad_inputs import args, nothing, run_entry, snapshot, train_args, write_file

from uno_env.files import FolderLock
from unolab.train import export, run_cli
from unolab.train.imitate import run as imitate
from unolab.train.run import train_algorithm

PPO_TINY = ROOT / "configs" / "ppo" / "tiny.yaml"
DQN_TINY = ROOT / "configs" / "dqn" / "tiny.yaml"
IMITATE_TINY = ROOT / "configs" / "imitate" / "tiny.yaml"
ENTRIES: dict[str, Callable[[list[str]], object]] = {
    "ppo": lambda argv: run_cli.main("ppo", argv),
    "dqn": lambda argv: run_cli.main("dqn", argv),
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
        subprocess: Run in a real process (``uno-lab train <entry>``, ``python -m
            unolab.train.<entry>``).
        one_line: stderr holds the error line alone (no warning line before it).
    """

    id: str
    entry: str
    argv: Callable[[Path], list[str]]
    names: str
    setup: Callable[[Path], None] = field(default=nothing)
    subprocess: bool = False
    one_line: bool = False


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


_QUICK = (
    "num_envs=4", "ppo.n_steps=16", "ppo.batch_size=64", "total_steps=128", "eval.every=64",
    "eval.games=10", "opponents.snapshot_every=64",
)  # fmt: skip
"""A run of two rollouts of 64 steps, each followed by an evaluation and a checkpoint."""

_DQN_QUICK = (
    "num_envs=4", "total_steps=128", "eval.every=64", "eval.games=10",
    "opponents.snapshot_every=64", "dqn.learning_starts=32",
)  # fmt: skip
"""The same for DQN: ``latest`` at 128 steps, ``previous`` at 64."""

_TRAINED: dict[str, Path] = {}
"""Finished quick runs by algorithm, trained once per test process (cases copy them)."""


def _trained_run(algorithm: str) -> Path:
    """The folder of a finished quick run of ``algorithm`` (trained silently, once)."""
    if algorithm not in _TRAINED:
        runs = Path(tempfile.mkdtemp(prefix="uno_quick_runs_"))
        atexit.register(shutil.rmtree, runs, True)
        config, quick = (PPO_TINY, _QUICK) if algorithm == "ppo" else (DQN_TINY, _DQN_QUICK)
        result = train_algorithm(
            algorithm, config, [f"runs_dir={runs}", *quick], progress_bar=False, log=None
        )
        _TRAINED[algorithm] = result.run_dir
    return _TRAINED[algorithm]


def _finished(algorithm: str, *changes: Callable[[Path], None]) -> Callable[[Path], None]:
    """A finished quick run in ``runs/<algorithm>_tiny`` (128 steps done; ``previous`` at
    64), then each change applied to its folder."""

    def setup(folder: Path) -> None:
        run = folder / "runs" / f"{algorithm}_tiny"
        shutil.copytree(_trained_run(algorithm), run)
        for change in changes:
            change(run)

    return setup


def _truncated(name: str) -> Callable[[Path], None]:
    def change(run: Path) -> None:
        (run / name).write_bytes((run / name).read_bytes()[:1000])

    return change


def _bit_flipped(name: str) -> Callable[[Path], None]:
    def change(run: Path) -> None:
        data = bytearray((run / name).read_bytes())
        data[len(data) // 2] ^= 0x10
        (run / name).write_bytes(bytes(data))

    return change


def _emptied(name: str) -> Callable[[Path], None]:
    def change(run: Path) -> None:
        (run / name).write_bytes(b"")

    return change


def _compressed_unreadably(name: str, member: str = "data") -> Callable[[Path], None]:
    """``member`` of the zip ``name`` marked as compressed by deflate64 (method 9, which
    zipfile cannot read), and the zip's record signed again: only reading it shows it."""

    def change(run: Path) -> None:
        path = run / name
        raw = bytearray(path.read_bytes())
        with zipfile.ZipFile(path) as archive:
            local = archive.getinfo(member).header_offset
        struct.pack_into("<H", raw, local + 8, 9)  # the local header's method
        central = raw.find(b"PK\x01\x02")
        while central != -1:  # the central directory's entry of the member
            size = struct.unpack_from("<H", raw, central + 28)[0]
            if bytes(raw[central + 46 : central + 46 + size]) == member.encode():
                struct.pack_into("<H", raw, central + 10, 9)
            central = raw.find(b"PK\x01\x02", central + 4)
        path.write_bytes(bytes(raw))
        _record(path.with_suffix(".json").name, sha256=hashlib.sha256(raw).hexdigest())(run)

    return change


def _tensors_changed(
    name: str, member: str, change: Callable[[Any], None]
) -> Callable[[Path], None]:
    """The tensors of ``member`` of the zip ``name`` changed in place by ``change``, and
    the zip's record signed again: only reading the values shows the damage."""

    def damage(run: Path) -> None:
        path = run / name
        with zipfile.ZipFile(path) as archive:
            members = {item: archive.read(item) for item in archive.namelist()}
        state = torch.load(io.BytesIO(members[member]), weights_only=True)
        change(state)
        buffer = io.BytesIO()
        torch.save(state, buffer)
        members[member] = buffer.getvalue()
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
            for item, data in members.items():
                archive.writestr(item, data)
        path.write_bytes(out.getvalue())
        digest = hashlib.sha256(out.getvalue()).hexdigest()
        _record(path.with_suffix(".json").name, sha256=digest)(run)

    return damage


def _nan_first_weight(state: Any) -> None:
    key = next(key for key in state if key.endswith("weight"))
    state[key] = torch.full_like(state[key], float("nan"))


def _optimizer_eps(value: Any) -> Callable[[Any], None]:
    def change(state: Any) -> None:
        state["param_groups"][0]["eps"] = value

    return change


def _linked(name: str, target: str) -> Callable[[Path], None]:
    return lambda run: os.symlink(target, run / name)


def _logs_replaced_by_a_file(run: Path) -> None:
    shutil.rmtree(run / "tb", ignore_errors=True)
    (run / "tb").write_text("not a folder")


def _removed(*names: str) -> Callable[[Path], None]:
    def change(run: Path) -> None:
        for name in names:
            (run / name).unlink()

    return change


def _edited(name: str, old: str, new: str) -> Callable[[Path], None]:
    def change(run: Path) -> None:
        (run / name).write_text((run / name).read_text().replace(old, new))

    return change


def _replaced(name: str, text: str) -> Callable[[Path], None]:
    def change(run: Path) -> None:
        (run / name).write_text(text)

    return change


def _record(name: str, **values: Any) -> Callable[[Path], None]:
    """A checkpoint record (``latest.json``) with some of its values replaced."""

    def change(run: Path) -> None:
        record = json.loads((run / name).read_text())
        (run / name).write_text(json.dumps({**record, **values}))

    return change


def _not_a_file(name: str, kind: str) -> Callable[[Path], None]:
    """``name`` in the run replaced by a named pipe (``fifo``) or a folder."""

    def change(run: Path) -> None:
        (run / name).unlink(missing_ok=True)
        if kind == "fifo":
            os.mkfifo(run / name)
        else:
            (run / name).mkdir()

    return change


def _run_folder_replaced(kind: str) -> Callable[[Path], None]:
    """``runs/ppo_tiny`` made a named pipe (``fifo``) or a symlink to nothing."""

    def setup(folder: Path) -> None:
        (folder / "runs").mkdir()
        if kind == "fifo":
            os.mkfifo(folder / "runs" / "ppo_tiny")
        else:
            os.symlink("no_such_folder", folder / "runs" / "ppo_tiny")

    return setup


def _resume(algorithm: str, *overrides: str) -> Callable[[Path], list[str]]:
    """``--resume runs/<algorithm>_tiny`` with ``--set`` items."""
    line = ["--resume", f"{{folder}}/runs/{algorithm}_tiny", "--no-progress"]
    for item in overrides:
        line += ["--set", item]
    return args(*line)


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
        "uno-lab train dqn",
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
        "set_an_evaluation_bot_twice",
        "ppo",
        train_args(PPO_TINY, "eval.bots=[random, random]"),
        "error: --set eval.bots=[random, random]: 'random' is given twice; name each bot once",
    ),
    Case(
        "set_value_named_as_the_option",
        "ppo",
        train_args(PPO_TINY, "seed=1.5"),
        "error: --set seed=1.5: expected an integer, got 1.5",
    ),
    Case(
        "set_section_value_named_as_the_option",
        "ppo",
        train_args(PPO_TINY, "eval.games=10000000000000"),
        "error: --set eval.games=10000000000000: 10000000000000 is out of range",
    ),
    Case(
        "set_the_algorithm_of_another_command",
        "ppo",
        train_args(PPO_TINY, "algorithm=dqn"),
        "error: --set algorithm=dqn: this command trains ppo; train a dqn run with uno-lab "
        "train dqn",
    ),
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
    # ------------------------------- --resume: a fixed setting changed (the run's contract)
    Case(
        "resume_changes_the_network",
        "ppo",
        _resume("ppo", "total_steps=256", "ppo.net_arch=[64, 64]"),
        "ppo.net_arch is [32, 32] in the run, [64, 64] given",
        _finished("ppo"),
    ),
    Case(
        "resume_changes_the_seed",
        "ppo",
        _resume("ppo", "total_steps=256", "seed=7"),
        "seed is 1 in the run, 7 given",
        _finished("ppo"),
    ),
    Case(
        "resume_changes_the_table_size",
        "ppo",
        _resume("ppo", "total_steps=256", "num_players=4"),
        "num_players is 2 in the run, 4 given",
        _finished("ppo"),
    ),
    Case(
        "resume_changes_the_batched_games",
        "dqn",
        _resume("dqn", "total_steps=256", "num_envs=8"),
        "num_envs is 4 in the run, 8 given",
        _finished("dqn"),
    ),
    Case(
        "resume_changes_the_rules",
        "ppo",
        _resume("ppo", "total_steps=256", "rules=seven_zero"),
        "rules.seven_zero is false in the run, true given",
        _finished("ppo"),
    ),
    Case(
        "resume_changes_the_opponents",
        "ppo",
        _resume("ppo", "total_steps=256", "opponents.bots={{random: 1, mixbot: 1}}"),
        'opponents.bots is {"random": 1.0} in the run',
        _finished("ppo"),
    ),
    Case(
        "resume_changes_self_play",
        "dqn",
        _resume("dqn", "total_steps=256", "opponents.pool_size=3"),
        "opponents.pool_size is 2 in the run, 3 given",
        _finished("dqn"),
    ),
    Case(
        "resume_changes_the_learner_seat",
        "ppo",
        _resume("ppo", "total_steps=256", "learner_seat='0'"),
        'learner_seat is "random" in the run, "0" given',
        _finished("ppo"),
    ),
    Case(
        "resume_changes_a_hyper_parameter",
        "dqn",
        _resume("dqn", "total_steps=256", "dqn.gamma=0.9"),
        "dqn.gamma is 0.99 in the run, 0.9 given",
        _finished("dqn"),
    ),
    Case(
        "resume_changes_the_evaluation_bots",
        "ppo",
        _resume("ppo", "total_steps=256", "eval.bots=[mixbot, random]"),
        'eval.bots is ["random"] in the run, ["mixbot", "random"] given',
        _finished("ppo"),
    ),
    Case(
        "resume_after_editing_the_network_in_config_yaml",
        "ppo",
        _resume("ppo", "total_steps=256"),
        "ppo.net_arch is [32, 32] in the run, [48, 48] given",
        _finished("ppo", _edited("config.yaml", "- 32\n", "- 48\n")),
    ),
    Case(
        "resume_after_editing_the_seed_in_config_yaml",
        "dqn",
        _resume("dqn", "total_steps=256"),
        "seed is 1 in the run, 5 given",
        _finished("dqn", _edited("config.yaml", "seed: 1\n", "seed: 5\n")),
    ),
    Case(
        "resume_changes_the_algorithm",
        "ppo",
        _resume("ppo", "total_steps=256", "algorithm=dqn"),
        'cannot resume {folder}/runs/ppo_tiny: algorithm is "ppo" in the run, "dqn" given',
        _finished("ppo"),
    ),
    Case(
        "resume_with_a_set_value_of_the_wrong_type",
        "dqn",
        _resume("dqn", "total_steps=256", "seed=1.5"),
        "error: --set seed=1.5: expected an integer, got 1.5",
        _finished("dqn"),
    ),
    Case(
        "resume_moves_the_run",
        "ppo",
        _resume("ppo", "total_steps=256", "name=elsewhere"),
        "--set name: a resumed run stays in its folder",
        _finished("ppo"),
    ),
    Case(
        "resume_a_dqn_run_as_ppo",
        "ppo",
        _resume("dqn", "total_steps=256"),
        "train it with uno-lab train dqn",
        _finished("dqn"),
    ),
    # ------------------------------------------------------ --resume: no steps left to train
    Case(
        "resume_a_finished_run",
        "ppo",
        _resume("ppo"),
        "run ppo_tiny has done 128 steps; total_steps=128 is not more: raise total_steps",
        _finished("ppo"),
    ),
    Case(
        "resume_with_a_budget_below_the_steps_done",
        "dqn",
        _resume("dqn", "total_steps=100"),
        "run dqn_tiny has done 128 steps; total_steps=100 is not more",
        _finished("dqn"),
    ),
    # --------------------------------------- --resume: damaged checkpoints, none left good
    Case(
        "resume_a_truncated_checkpoint_without_a_previous_one",
        "ppo",
        _resume("ppo", "total_steps=256"),
        "latest.zip does not match the SHA-256 recorded in latest.json",
        _finished("ppo", _truncated("latest.zip"), _removed("previous.zip", "previous.json")),
    ),
    Case(
        "resume_a_bit_flipped_checkpoint_without_a_previous_one",
        "dqn",
        _resume("dqn", "total_steps=256"),
        "latest.zip does not match the SHA-256",
        _finished("dqn", _bit_flipped("latest.zip"), _removed("previous.zip", "previous.json")),
    ),
    Case(
        "resume_an_empty_checkpoint_without_a_previous_one",
        "ppo",
        _resume("ppo", "total_steps=256"),
        "latest.zip is empty",
        _finished("ppo", _emptied("latest.zip"), _removed("previous.zip")),
    ),
    Case(
        "resume_with_both_checkpoints_compressed_unreadably",
        "ppo",
        _resume("ppo", "total_steps=256"),
        "previous.zip is not a readable ppo checkpoint (That compression method is not supported)",
        _finished(
            "ppo", _compressed_unreadably("latest.zip"), _compressed_unreadably("previous.zip")
        ),
        one_line=True,
    ),
    Case(
        "export_a_checkpoint_compressed_unreadably",
        "export",
        args("{folder}/runs/ppo_tiny/latest.zip", "{folder}/out/agent"),
        "latest.zip is not a readable ppo checkpoint",
        _finished("ppo", _compressed_unreadably("latest.zip", "policy.pth")),
        one_line=True,
    ),
    Case(
        "resume_a_run_whose_config_is_a_device",
        "ppo",
        _resume("ppo", "total_steps=256"),
        "config.yaml is not a regular file (a folder, a device or a pipe)",
        _finished("ppo", _removed("config.yaml"), _linked("config.yaml", "/dev/zero")),
        one_line=True,
    ),
    Case(  # killed before its first checkpoint: nothing to resume, and what to do
        "resume_a_run_that_saved_nothing",
        "ppo",
        _resume("ppo", "total_steps=256"),
        "saved anything; start it again with --overwrite",
        _run_config("runs/ppo_tiny/config.yaml"),
        one_line=True,
    ),
    Case(
        "resume_with_both_checkpoints_holding_nan_weights",
        "dqn",
        _resume("dqn", "total_steps=256"),
        "previous.zip: the network's q_net.q_net.0.weight holds NaN or infinite values",
        _finished(
            "dqn",
            _tensors_changed("latest.zip", "policy.pth", _nan_first_weight),
            _tensors_changed("previous.zip", "policy.pth", _nan_first_weight),
        ),
        one_line=True,
    ),
    Case(
        "resume_with_both_optimizers_edited",
        "ppo",
        _resume("ppo", "total_steps=256"),
        "latest.zip: the optimiser's eps is 'x', but the run's config makes it 1e-05",
        _finished(
            "ppo",
            _tensors_changed("latest.zip", "policy.optimizer.pth", _optimizer_eps("x")),
            _tensors_changed("previous.zip", "policy.optimizer.pth", _optimizer_eps(0.5)),
        ),
        one_line=True,
    ),
    Case(
        "export_a_checkpoint_holding_nan_weights",
        "export",
        args("{folder}/runs/ppo_tiny/latest.zip", "{folder}/out/agent"),
        "latest.zip: the network's mlp_extractor.policy_net.0.weight holds NaN",
        _finished("ppo", _tensors_changed("latest.zip", "policy.pth", _nan_first_weight)),
        one_line=True,
    ),
    Case(
        "resume_when_the_tensorboard_folder_is_a_file",
        "ppo",
        _resume("ppo", "total_steps=256"),
        "runs/ppo_tiny/tb is not a folder",
        _finished("ppo", _logs_replaced_by_a_file),
        one_line=True,
    ),
    Case(
        "resume_with_both_checkpoints_damaged",
        "ppo",
        _resume("ppo", "total_steps=256"),
        "previous.zip does not match the SHA-256",
        _finished("ppo", _bit_flipped("latest.zip"), _bit_flipped("previous.zip")),
        one_line=True,
    ),
    Case(
        "resume_with_both_records_counting_steps_past_the_bound",
        "ppo",
        _resume("ppo", "total_steps=256"),
        "previous.json: steps is 1000",
        _finished(
            "ppo", _record("latest.json", steps=10**400), _record("previous.json", steps=10**400)
        ),
        one_line=True,
    ),
    Case(
        "resume_with_both_records_holding_a_version_as_text",
        "dqn",
        _resume("dqn", "total_steps=256"),
        "previous.json: obs_version is '4', not an observation version",
        _finished(
            "dqn",
            _record("latest.json", obs_version="4"),
            _record("previous.json", obs_version="4"),
        ),
        one_line=True,
    ),
    Case(
        "resume_with_both_records_holding_a_config_that_is_no_mapping",
        "ppo",
        _resume("ppo", "total_steps=256"),
        "previous.json: its config is not a mapping; no good checkpoint is left",
        _finished("ppo", _record("latest.json", config=[1]), _record("previous.json", config=[1])),
        one_line=True,
    ),
    Case(
        "resume_with_both_records_missing",
        "dqn",
        _resume("dqn", "total_steps=256"),
        "previous.zip has no record previous.json",
        _finished("dqn", _removed("latest.json", "previous.json")),
    ),
    Case(
        "resume_a_checkpoint_whose_record_is_not_json",
        "ppo",
        _resume("ppo", "total_steps=256"),
        "latest.json is not JSON: Expecting property name enclosed in double quotes at line",
        _finished(
            "ppo",
            _edited("latest.json", '"steps"', "steps"),
            _removed("previous.zip", "previous.json"),
        ),
    ),
    Case(
        "resume_with_both_records_nested_too_deeply",
        "ppo",
        _resume("ppo", "total_steps=256"),
        "previous.json is not JSON: it is nested too deeply to read",
        _finished(
            "ppo",
            _replaced("latest.json", "[" * 100_000 + "]" * 100_000),
            _replaced("previous.json", "[" * 100_000 + "]" * 100_000),
        ),
    ),
    Case(
        "resume_with_best_json_nested_too_deeply",
        "ppo",
        _resume("ppo", "total_steps=256"),
        "best.json is not JSON: it is nested too deeply to read",
        _finished("ppo", _replaced("best.json", "[" * 100_000 + "]" * 100_000)),
    ),
    Case(
        "resume_with_best_json_not_json",
        "ppo",
        _resume("ppo", "total_steps=256"),
        "best.json is not JSON: Expecting property name enclosed in double quotes at line 1 "
        "column 2",
        _finished("ppo", _replaced("best.json", "{nonsense")),
    ),
    Case(
        "resume_with_a_best_win_rate_that_is_not_a_number",
        "ppo",
        _resume("ppo", "total_steps=256"),
        "win_rate 'high' vs random is not a number",
        _finished(
            "ppo",
            _replaced("best.json", json.dumps({"evaluations": {"random": {"win_rate": "high"}}})),
        ),
    ),
    Case(
        "resume_with_latest_json_a_named_pipe",
        "ppo",
        _resume("ppo", "total_steps=256"),
        "latest.json is not a regular file, and the run writes it; remove or rename it",
        _finished("ppo", _not_a_file("latest.json", "fifo")),
    ),
    Case(
        "resume_with_the_evaluation_log_a_folder",
        "dqn",
        _resume("dqn", "total_steps=256"),
        "evaluations.jsonl is not a regular file",
        _finished("dqn", _not_a_file("evaluations.jsonl", "folder")),
    ),
    Case(
        "resume_with_a_league_slot_a_named_pipe",
        "ppo",
        _resume("ppo", "total_steps=256"),
        "league_slot0.json is not a regular file",
        _finished("ppo", _not_a_file("league_slot0.json", "fifo")),
    ),
    # --------------------------------------------------------------------------- export
    Case(
        "export_a_checkpoint_that_fails_its_checksum",
        "export",
        args("{folder}/runs/ppo_tiny/best.zip", "{folder}/out/agent"),
        "best.zip does not match the SHA-256 recorded in best.json",
        _finished("ppo", _bit_flipped("best.zip")),
    ),
    Case(
        "export_a_named_pipe_as_the_checkpoint",
        "export",
        args("{folder}/runs/ppo_tiny/latest.zip", "{folder}/out/agent"),
        "latest.zip' is not a regular file (a pipe, device or socket)",
        _finished("ppo", _not_a_file("latest.zip", "fifo")),
    ),
    Case(
        "export_with_the_run_config_a_named_pipe",
        "export",
        args("{folder}/runs/ppo_tiny/latest.zip", "{folder}/out/agent"),
        "config.yaml' is not a regular file",
        _finished("ppo", _not_a_file("config.yaml", "fifo")),
    ),
    Case(
        "export_an_exported_agent",
        "export",
        args("{folder}/runs/ppo_tiny/ppo_tiny.safetensors", "{folder}/out/agent"),
        "ppo_tiny.safetensors' is an exported agent, not a checkpoint (a .zip)",
        _finished("ppo"),
    ),
    Case(
        "export_over_a_folder_where_the_metadata_goes",
        "export",
        args("{folder}/runs/ppo_tiny/latest.zip", "{folder}/out/agent", "--overwrite"),
        "OUT {folder}/out/agent.json is a folder; give a file name",
        _both(_finished("ppo"), write_file("out/agent.json/keep.txt", b"x")),
    ),
    Case(
        "export_name_with_a_newline",
        "export",
        args("{folder}/runs/x/latest.zip", "{folder}/out/agent", "--name", "a\nb"),
        "--name: 'a\\nb' holds a control character",
    ),
    Case(
        "export_empty_out",
        "export",
        args("{folder}/runs/x/latest.zip", ""),
        "'' is an empty path",
    ),
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
    # ---------------------------------------- an OUT that names no file the export can write
    Case(
        "export_out_is_the_parent_folder",
        "export",
        args("{folder}/runs/ppo_tiny/latest.zip", "{folder}/out/.."),
        "OUT '{folder}/out/..' names a folder",
        _both(_run_config("runs/ppo_tiny/config.yaml"), write_file("out/keep", b"x")),
    ),
    Case(
        "export_out_is_the_current_folder",
        "export",
        args("{folder}/runs/ppo_tiny/latest.zip", "{folder}/out/."),
        "OUT '{folder}/out/.' names a folder",
        _both(_run_config("runs/ppo_tiny/config.yaml"), write_file("out/keep", b"x")),
    ),
    Case(
        "export_out_under_a_file",
        "export",
        args("{folder}/runs/ppo_tiny/latest.zip", "{folder}/runs/ppo_tiny/config.yaml/agent"),
        "ppo_tiny/config.yaml is a file",
        _both(
            _run_config("runs/ppo_tiny/config.yaml"),
            write_file("runs/ppo_tiny/latest.zip", CORRUPT_ZIP),
        ),
        one_line=True,
    ),
    Case(  # OUT itself fits, OUT.safetensors does not
        "export_out_name_too_long_with_its_suffix",
        "export",
        args("{folder}/runs/ppo_tiny/latest.zip", "{folder}/" + "a" * 250),
        "too long for the file system",
        _both(
            _run_config("runs/ppo_tiny/config.yaml"),
            write_file("runs/ppo_tiny/latest.zip", CORRUPT_ZIP),
        ),
        one_line=True,
    ),
    # ------------------------------- an evaluation agent's file, checked before the run starts
    Case(
        "eval_bot_agent_damaged",
        "ppo",
        train_args(PPO_TINY, "eval.bots=[random, {folder}/agent.safetensors]"),
        "eval.bots: {folder}/agent.safetensors: the header length",
        _both(
            write_file(
                "agent.json", (ROOT / "agents/pretrained/ppo_official_2p.json").read_bytes()
            ),
            write_file("agent.safetensors", b"\xc0\x01" + bytes(98)),
        ),
        one_line=True,
    ),
    # ------------------------------------------ a run folder that is no folder, a runs_dir
    Case(
        "overwrite_when_the_run_folder_is_a_pipe",
        "ppo",
        lambda folder: [*train_args(PPO_TINY)(folder), "--overwrite"],
        "runs/ppo_tiny is a pipe, a device or a socket, not a folder",
        _run_folder_replaced("fifo"),
        one_line=True,
    ),
    Case(
        "overwrite_when_the_run_folder_is_a_dangling_link",
        "ppo",
        lambda folder: [*train_args(PPO_TINY)(folder), "--overwrite"],
        "runs/ppo_tiny is a symlink to 'no_such_folder', which does not exist; remove",
        _run_folder_replaced("dangling link"),
        one_line=True,
    ),
    Case(
        "run_folder_is_a_file",
        "dqn",
        train_args(DQN_TINY),
        "runs/dqn_tiny is a file, not a folder",
        write_file("runs/dqn_tiny", b"notes"),
        one_line=True,
    ),
    Case(
        "runs_dir_where_no_folder_can_be_made",
        "ppo",
        train_args(PPO_TINY, "runs_dir=/proc/self/runs"),
        "runs_dir: the run folder /proc/self/runs/ppo_tiny cannot be made",
        one_line=True,
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
    if case.subprocess and case.entry in ("ppo", "dqn"):  # uno-lab train <entry> ...
        module, argv = "unolab", ["train", case.entry, *argv]
    else:
        module = f"unolab.train.{case.entry}"
    return run_entry(module, ENTRIES[case.entry], argv, capsys, in_subprocess=case.subprocess)


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
    assert len(lines) == 1 or not case.one_line, err
    assert case.names.replace("{folder}", str(tmp_path)) in err, err
    assert snapshot(tmp_path) == before, "files changed, appeared or were lost"


# --- a damaged checkpoint with a good one before it ---------------------------------------


@pytest.mark.parametrize(
    "damage",
    [_truncated("latest.zip"), _bit_flipped("latest.zip"), _emptied("latest.zip"),
     _removed("latest.json"), _record("latest.json", steps=10**400),
     _record("latest.json", obs_version="4"), _compressed_unreadably("latest.zip")],
    ids=["truncated", "bit_flipped", "empty", "record_missing", "steps_past_the_bound",
         "version_as_text", "compressed_unreadably"],
)  # fmt: skip
def test_a_damaged_checkpoint_falls_back_to_the_previous_one_with_a_warning(
    damage: Callable[[Path], None], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _finished("dqn", damage)(tmp_path)
    run_dir = tmp_path / "runs" / "dqn_tiny"
    result = run_cli.main(
        "dqn", ["--resume", str(run_dir), "--no-progress", "--set", "total_steps=192"]
    )
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and str(run_dir / "latest") in warnings[0]
    assert warnings[0].endswith(f"trying {run_dir / 'previous.zip'}")
    assert result.steps == 192  # from the 64 steps of previous.zip


# --- --resume where there is no run -------------------------------------------------------


@pytest.mark.parametrize("given", [[], ["."]], ids=["alone", "dot"])
def test_resume_in_a_folder_that_holds_no_run_is_one_line(
    given: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run_entry("unolab", ENTRIES["ppo"], ["--resume", *given], capsys)
    assert code == 2 and "Traceback" not in out + err
    last = err.strip().splitlines()[-1]
    assert f"cannot resume: {tmp_path / 'config.yaml'} does not exist" in last
    assert "expected a string" not in err
    assert snapshot(tmp_path) == {}


# --- a checkpoint that cannot be written ------------------------------------------------------

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
    code, out, err = run_entry("unolab", ENTRIES["ppo"], argv, capsys)
    assert code == 1, (code, err)
    assert "Traceback" not in out + err
    last = err.strip().splitlines()[-1]
    assert last.startswith("uno-lab train ppo: error: cannot write ")
    assert f"{run_dir / 'latest.zip'}: no space left on device" in last
    assert "--overwrite" in last
    assert not (run_dir / "latest.zip").exists()
    assert not list(run_dir.glob("*.partial")), "no temporary file is left behind"

    # Started over, the disk fills at the second checkpoint: the first one is intact.
    monkeypatch.setattr(BaseAlgorithm, "save", _disk_full_at(128))
    code, out, err = run_entry("unolab", ENTRIES["ppo"], [*argv, "--overwrite"], capsys)
    assert code == 1, (code, err)
    last = err.strip().splitlines()[-1]
    assert f"{run_dir / 'latest.zip'}: no space left on device" in last
    assert f"--resume {run_dir}" in last and "Traceback" not in out + err
    assert json.loads((run_dir / "latest.json").read_text())["steps"] == 64
    assert not list(run_dir.glob("*.partial"))

    # Space again: the run continues from the checkpoint of step 64 to its end.
    monkeypatch.undo()
    resumed = run_cli.main("ppo", ["--resume", str(run_dir), "--no-progress"])
    assert resumed.steps == 128
    assert json.loads((run_dir / "latest.json").read_text())["steps"] == 128
    assert "resuming ppo" in capsys.readouterr().err
