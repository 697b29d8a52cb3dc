"""Resuming a run as a contract: safe changes recorded, fixed ones refused, damaged
checkpoints skipped, and nothing in a run folder unpickled."""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import pickle
import re
import shutil
import zipfile
from pathlib import Path

import pytest
import torch
from support import ROOT
from support.bad_inputs import snapshot

from uno_env.envs.vec_env import UnoVecEnv
from unolab import cli
from unolab.train import algorithms, run_cli
from unolab.train.checkpoint_files import (
    DamagedCheckpointError,
    file_digest,
    verify_checkpoint,
)
from unolab.train.checkpoint_state import restore_checkpoint
from unolab.train.config import TrainConfig, load_config
from unolab.train.config_sections import DQNParams, EvalConfig, OpponentMix, PPOParams
from unolab.train.export import export_checkpoint
from unolab.train.resume import (
    FIXED_ON_RESUME,
    RUN_FOLDER_KEYS,
    SAFE_ON_RESUME,
    ResumeRefusedError,
    config_changes,
    read_history,
)
from unolab.train.run import train, train_algorithm
from unolab.train.run_folder import HISTORY_FILE, append_lines

PPO_TINY = ROOT / "configs" / "ppo" / "tiny.yaml"
DQN_TINY = ROOT / "configs" / "dqn" / "tiny.yaml"
QUICK = (
    "num_envs=4", "ppo.n_steps=16", "ppo.batch_size=64", "total_steps=128", "eval.every=64",
    "eval.games=10", "opponents.snapshot_every=64",
)  # fmt: skip
"""Two rollouts of 64 steps, each followed by an evaluation and a checkpoint: ``latest``
at 128 steps, ``previous`` at 64."""
DQN_QUICK = (
    "num_envs=4", "total_steps=128", "eval.every=64", "eval.games=10",
    "opponents.snapshot_every=64", "dqn.learning_starts=32",
)  # fmt: skip


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished quick PPO run (trained once; each test works on a copy)."""
    runs = tmp_path_factory.mktemp("trained")
    result = train_algorithm(
        "ppo", PPO_TINY, [f"runs_dir={runs}", *QUICK], progress_bar=False, log=None
    )
    assert result.steps == 128
    return result.run_dir


@pytest.fixture
def run_dir(trained: Path, tmp_path: Path) -> Path:
    """A copy of the trained run, ``<tmp>/runs/ppo_tiny``."""
    copy = tmp_path / "runs" / "ppo_tiny"
    shutil.copytree(trained, copy)
    return copy


def _resume_config(run_dir: Path, *overrides: str) -> TrainConfig:
    """The run's config.yaml with ``overrides``, in its folder."""
    return load_config(
        run_dir / "config.yaml", [f"runs_dir={run_dir.parent}", f"name={run_dir.name}", *overrides]
    )


# ---------------------------------------------------------------------------- the contract


def _keys(config: TrainConfig) -> list[str]:
    sections = {"opponents": OpponentMix, "eval": EvalConfig, "ppo": PPOParams, "dqn": DQNParams}
    keys = []
    for field in dataclasses.fields(config):
        if field.name in sections:
            keys += [f"{field.name}.{f.name}" for f in dataclasses.fields(sections[field.name])]
        else:
            keys.append(field.name)
    return keys


def test_every_config_key_is_classified_once() -> None:
    """A key added to the config must be classified: safe, the run's folder, or fixed."""
    for key in _keys(load_config(PPO_TINY)):
        classes = [
            key in SAFE_ON_RESUME,
            key in RUN_FOLDER_KEYS,
            key in FIXED_ON_RESUME or key.partition(".")[0] in FIXED_ON_RESUME,
        ]
        assert sum(classes) == 1, key
    assert not SAFE_ON_RESUME & set(FIXED_ON_RESUME)


def test_the_training_docs_list_the_safe_keys() -> None:
    docs = (ROOT / "docs" / "training.md").read_text()
    contract = docs[docs.index("## Resuming a run") :]
    for key in SAFE_ON_RESUME:
        assert f"`{key}`" in contract, key


def test_changes_are_named_by_key_and_rules_compared_as_rules() -> None:
    saved = load_config(PPO_TINY)
    spelled = load_config(PPO_TINY, [f"rules={ROOT / 'configs' / 'rules' / 'official.yaml'}"])
    assert config_changes(saved, spelled) == []  # the same rules, from a file
    changed = load_config(PPO_TINY, ["rules=seven_zero", "seed=7", "ppo.net_arch=[64, 64]"])
    assert [(c.key, c.old, c.new) for c in config_changes(saved, changed)] == [
        ("rules.seven_zero", False, True),
        ("seed", 1, 7),
        ("ppo.net_arch", [32, 32], [64, 64]),
    ]


def test_safe_changes_are_recorded_and_the_config_follows(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The history holds each accepted change; config.yaml and the checkpoints the new values."""
    overrides = ["total_steps=192", "eval.every=32", "eval.games=12", "torch_threads=2"]
    argv = ["--resume", str(run_dir), "--no-progress"]
    for item in overrides:
        argv += ["--set", item]
    result = run_cli.main("ppo", argv)
    assert result.steps == 192
    history = read_history(run_dir)
    assert [(h["key"], h["old"], h["new"]) for h in history] == [
        ("total_steps", 128, 192),
        ("torch_threads", 1, 2),
        ("eval.every", 64, 32),
        ("eval.games", 10, 12),
    ]
    assert all(h["steps"] == 128 and h["time"].endswith("+00:00") for h in history)
    config = load_config(run_dir / "config.yaml")
    assert (config.total_steps, config.eval.every, config.eval.games) == (192, 32, 12)
    assert json.loads((run_dir / "latest.json").read_text())["config"]["eval"]["games"] == 12
    # Resumed again with nothing changed: nothing more to record.
    run_cli.main("ppo", ["--resume", str(run_dir), "--no-progress", "--set", "total_steps=256"])
    assert [h["key"] for h in read_history(run_dir)][4:] == ["total_steps"]
    assert "resuming ppo" in capsys.readouterr().err


def test_a_history_without_a_final_line_break_gets_its_next_entry_on_a_line_of_its_own(
    run_dir: Path,
) -> None:
    entry = {"time": "2026-01-01T00:00:00+00:00", "steps": 1, "key": "total_steps"}
    (run_dir / HISTORY_FILE).write_text(json.dumps({**entry, "old": 1, "new": 2}))
    run_cli.main("ppo", ["--resume", str(run_dir), "--no-progress", "--set", "total_steps=192"])
    history = read_history(run_dir)
    assert [(h["key"], h["old"], h["new"]) for h in history] == [
        ("total_steps", 1, 2),
        ("total_steps", 128, 192),
    ]
    append_lines(run_dir / HISTORY_FILE, ["{}"], run_dir)
    assert (run_dir / HISTORY_FILE).read_text().endswith("}\n{}\n")


@pytest.mark.parametrize(
    ("override", "named"),
    [
        ("ppo.net_arch=[64, 64]", "ppo.net_arch is [32, 32] in the run, [64, 64] given"),
        ("seed=7", "seed is 1 in the run, 7 given"),
        ("num_envs=8", "num_envs is 4 in the run, 8 given"),
        ("num_players=3", "num_players is 2 in the run, 3 given"),
        ("rules=street", "rules.stack_draw_two is false in the run, true given"),
        ("learner_seat='1'", 'learner_seat is "random" in the run, "1" given'),
        ("opponents.self_play=0", "opponents.self_play is 0.5 in the run, 0.0 given"),
        ("opponents.snapshot_every=32", "opponents.snapshot_every is 64 in the run, 32 given"),
        ("eval.bots=[mixbot]", 'eval.bots is ["random"] in the run, ["mixbot"] given'),
        ("ppo.learning_rate=0.001", "ppo.learning_rate is 0.0003 in the run, 0.001 given"),
        ("dqn.buffer_size=4096", "dqn.buffer_size is 200000 in the run, 4096 given"),
    ],
)
def test_a_fixed_setting_is_refused_naming_both_values(
    run_dir: Path, override: str, named: str
) -> None:
    before = snapshot(run_dir)
    with pytest.raises(ResumeRefusedError) as err:
        train(_resume_config(run_dir, override), resume=True, progress_bar=False, log=None)
    message = str(err.value)
    assert named in message and "\n" not in message
    assert "may change only device, eval.every, eval.games, torch_threads, total_steps" in message
    assert snapshot(run_dir) == before


def test_an_edited_config_yaml_is_refused(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The saved values are the checkpoint's record, not the config file a user can edit."""
    edited = (run_dir / "config.yaml").read_text().replace("- 32\n", "- 48\n")
    (run_dir / "config.yaml").write_text(edited)
    before = snapshot(run_dir)
    with pytest.raises(SystemExit) as exit_info:
        run_cli.main("ppo", ["--resume", str(run_dir), "--no-progress", "--set", "total_steps=192"])
    assert exit_info.value.code == 2
    assert "ppo.net_arch is [32, 32] in the run, [48, 48] given" in capsys.readouterr().err
    assert snapshot(run_dir) == before


def test_a_record_written_before_a_key_existed_resumes(run_dir: Path) -> None:
    """A key (or a rule switch) missing from an older record has its default: no change."""
    for tag in ("latest", "previous"):
        path = run_dir / f"{tag}.json"
        record = json.loads(path.read_text())
        del record["config"]["dqn"]["hand_size_shaping"], record["config"]["imitate"]
        del record["rules"]["seat_draw_streams"]
        path.write_text(json.dumps(record))
    config = _resume_config(run_dir, "total_steps=192")
    assert train(config, resume=True, progress_bar=False, log=None).steps == 192
    assert [h["key"] for h in read_history(run_dir)] == ["total_steps"]


@pytest.mark.parametrize("budget", [128, 100])
def test_a_budget_that_is_not_more_than_the_steps_done_is_one_line(
    run_dir: Path, budget: int
) -> None:
    before = snapshot(run_dir)
    with pytest.raises(ResumeRefusedError) as err:
        config = _resume_config(run_dir, f"total_steps={budget}")
        train(config, resume=True, progress_bar=False, log=None)
    assert str(err.value).endswith(
        f"run ppo_tiny has done 128 steps; total_steps={budget} is not more: raise "
        "total_steps to resume (e.g. --set total_steps=256)"
    )
    assert snapshot(run_dir) == before


def test_resume_in_the_current_folder(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(run_dir)
    assert cli.main(["train", "ppo", "--resume", "--no-progress", "--set", "total_steps=192"]) == 0
    assert cli.main(["train", "--resume", ".", "--no-progress", "--set", "total_steps=256"]) == 0
    assert json.loads((run_dir / "latest.json").read_text())["steps"] == 256
    config = load_config(run_dir / "config.yaml")
    assert config.run_dir.resolve() == run_dir.resolve()
    err = capsys.readouterr().err
    assert "expected a string" not in err and "resuming ppo" in err


def test_a_resumed_run_stays_in_its_folder(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        run_cli.main("ppo", ["--resume", str(run_dir), "--no-progress", "--set", "name=other"])
    assert exit_info.value.code == 2
    assert "--set name: a resumed run stays in its folder" in capsys.readouterr().err


# ------------------------------------------------------------------------------ checkpoints


def test_checkpoints_record_their_checksum_and_keep_the_previous_one(run_dir: Path) -> None:
    latest, previous = (verify_checkpoint(run_dir, tag) for tag in ("latest", "previous"))
    assert (latest.steps, previous.steps) == (128, 64)
    assert latest.record["sha256"] == file_digest(run_dir / "latest.zip")
    assert verify_checkpoint(run_dir, "best").record["sha256"] == file_digest(run_dir / "best.zip")


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


DAMAGES = {
    "truncated": _truncate,
    "bit_flipped": _flip,
    "empty": lambda path: path.write_bytes(b""),
    "not_a_zip": lambda path: path.write_bytes(b"a checkpoint, honest"),
    "record_missing": lambda path: path.with_suffix(".json").unlink(),
    "record_not_json": lambda path: path.with_suffix(".json").write_text("{steps: 1"),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_latest_falls_back_to_the_previous_checkpoint(
    run_dir: Path, damage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    DAMAGES[damage](run_dir / "latest.zip")
    result = run_cli.main(
        "ppo", ["--resume", str(run_dir), "--no-progress", "--set", "total_steps=192"]
    )
    err = capsys.readouterr().err
    warning = next(line for line in err.splitlines() if line.startswith("warning:"))
    assert str(run_dir / "latest") in warning and f"trying {run_dir / 'previous.zip'}" in warning
    assert "resuming ppo to 192 steps" in err  # from step 64: two rollouts
    assert result.steps == 192
    # The damaged checkpoint was replaced, never kept as the fallback.
    assert verify_checkpoint(run_dir, "latest").steps == 192
    assert verify_checkpoint(run_dir, "previous").steps == 128


def test_with_no_good_checkpoint_the_error_names_each_file(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _flip(run_dir / "latest.zip")
    _truncate(run_dir / "previous.zip")
    before = snapshot(run_dir)
    with pytest.raises(SystemExit) as exit_info:
        run_cli.main("ppo", ["--resume", str(run_dir), "--no-progress", "--set", "total_steps=192"])
    assert exit_info.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert f"{run_dir / 'latest.zip'} does not match the SHA-256" in last
    assert f"{run_dir / 'previous.zip'} does not match the SHA-256" in last
    assert "no good checkpoint is left" in last
    assert snapshot(run_dir) == before


def test_a_write_after_a_fallback_never_keeps_the_damaged_checkpoint(run_dir: Path) -> None:
    _flip(run_dir / "latest.zip")
    run_cli.main("ppo", ["--resume", str(run_dir), "--no-progress", "--set", "total_steps=192"])
    for tag in ("latest", "previous"):
        verify_checkpoint(run_dir, tag)


# ------------------------------------------------------------------- no code from a file


class _Marker:
    """Unpickled, it would create the file named (what a crafted checkpoint could do)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, (f"touch {self.path}",))


def _craft(run_dir: Path, marker: Path, member: str) -> None:
    """Put a pickle that runs code into ``member`` of latest.zip, its checksum recorded."""
    path = run_dir / "latest.zip"
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    payload = pickle.dumps(_Marker(marker), protocol=2)
    if member == "data":
        data = json.loads(members["data"])
        data["lr_schedule"] = {":type:": "x", ":serialized:": base64.b64encode(payload).decode()}
        members["data"] = json.dumps(data).encode()
    else:
        members[member] = payload
    with zipfile.ZipFile(path, "w") as archive:
        for name, raw in members.items():
            archive.writestr(name, raw)
    record = json.loads((run_dir / "latest.json").read_text())
    record["sha256"] = file_digest(path)
    (run_dir / "latest.json").write_text(json.dumps(record))


def test_a_crafted_checkpoint_runs_no_code_on_resume(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "ran"
    _craft(run_dir, marker, "data")  # SB3's load would unpickle this entry
    result = run_cli.main(
        "ppo", ["--resume", str(run_dir), "--no-progress", "--set", "total_steps=192"]
    )
    assert result.steps == 192 and not marker.exists()
    _craft(run_dir, marker, "policy.pth")
    run_cli.main("ppo", ["--resume", str(run_dir), "--no-progress", "--set", "total_steps=256"])
    assert not marker.exists()
    assert "latest.zip holds objects other than tensors" in capsys.readouterr().err


def test_a_crafted_checkpoint_runs_no_code_on_export_or_load(run_dir: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    _craft(run_dir, marker, "policy.optimizer.pth")
    with pytest.raises(ValueError, match=re.escape("latest.zip holds objects other than tensors")):
        export_checkpoint(run_dir / "latest.zip", tmp_path / "agent")
    config = load_config(run_dir / "config.yaml")
    with pytest.raises(DamagedCheckpointError):
        restore_checkpoint(run_dir / "latest.zip", UnoVecEnv(2, config.build_rules()))
    assert not marker.exists()


def test_a_restored_model_equals_the_one_saved(run_dir: Path) -> None:
    """The pickle-free restore gives SB3's own load's tensors and counters."""
    config = load_config(run_dir / "config.yaml")
    restored = restore_checkpoint(run_dir / "latest.zip", UnoVecEnv(4, config.build_rules()))
    reference = algorithms.load_checkpoint(run_dir / "latest.zip", "ppo")
    pairs = zip(
        restored.policy.state_dict().values(), reference.policy.state_dict().values(), strict=True
    )
    assert all(torch.equal(a, b) for a, b in pairs)
    assert (restored.num_timesteps, restored._n_updates) == (128, reference._n_updates)
    moments = restored.policy.optimizer.state_dict()["state"]
    expected = reference.policy.optimizer.state_dict()["state"]
    assert moments and all(
        torch.equal(moments[k]["exp_avg"], expected[k]["exp_avg"]) for k in expected
    )


def test_a_dqn_run_resumes_with_its_counters(tmp_path: Path) -> None:
    result = train_algorithm(
        "dqn", DQN_TINY, [f"runs_dir={tmp_path}", *DQN_QUICK], progress_bar=False, log=None
    )
    reference = algorithms.load_checkpoint(result.run_dir / "latest.zip", "dqn")
    config = load_config(result.run_dir / "config.yaml")
    restored = restore_checkpoint(result.run_dir / "latest.zip", UnoVecEnv(4, config.build_rules()))
    assert restored._n_calls == reference._n_calls > 0
    with pytest.raises(ResumeRefusedError, match=re.escape("dqn.n_step is 1 in the run, 2 given")):
        train(_resume_config(result.run_dir, "dqn.n_step=2"), resume=True, log=None)
    resumed = train_algorithm(
        "dqn",
        result.run_dir / "config.yaml",
        [f"runs_dir={tmp_path}", "total_steps=192"],
        resume=True,
        progress_bar=False,
        log=None,
    )
    assert resumed.steps == 192
