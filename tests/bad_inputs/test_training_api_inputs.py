"""Bad arguments to training's Python API and to the learned policies it exports.

Each case calls one public function with one bad argument (or hands it one bad file) and
checks that the error is a ``ValueError`` (or a documented subclass) or a ``TypeError``, in
one line naming the argument and the value as given, and that nothing was written: the
config loaders' ``overrides``, ``path`` and ``base``; :func:`unolab.train.run.train`'s
config, switches and log, and :func:`unolab.train.imitate.imitate`'s;
:func:`unolab.train.export.export_checkpoint`'s arguments; a
learned policy's observations; an agent's metadata or a run's record that gives a key twice.
"""

from __future__ import annotations

import io
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support import ROOT

from unolab.agents.agent_files import AgentFileError
from unolab.agents.learned import load_policy
from unolab.agents.resolve import resolve_opponents
from unolab.train.checkpoint_files import parse_json
from unolab.train.config import config_for, load_config
from unolab.train.export import export_checkpoint
from unolab.train.imitate.config import load_imitate_config
from unolab.train.imitate.run import imitate
from unolab.train.run import train
from unolab.train.sweep.config import load_sweep_config

PPO_TINY = ROOT / "configs" / "ppo" / "tiny.yaml"
IMITATE_TINY = ROOT / "configs" / "imitate" / "tiny.yaml"
SHIPPED = ROOT / "agents" / "pretrained" / "ppo_official_2p"
OBS_DIM, NUM_ACTIONS = 648, 80


def _given(value: object) -> Any:
    """A value as a caller hands it over, whatever the annotations say."""
    return value


def _agent(folder: Path, edit: Callable[[str], str] = lambda text: text) -> Path:
    """A copy of a shipped agent in ``folder``, its metadata's text edited."""
    weights = folder / "agent.safetensors"
    shutil.copy(SHIPPED.with_suffix(".safetensors"), weights)
    meta = SHIPPED.with_suffix(".json").read_text()
    (folder / "agent.json").write_text(edit(meta))
    return weights


def _sampling_act(observations: Any) -> Callable[[Path], object]:
    def call(folder: Path) -> object:
        policy = load_policy(_agent(folder), deterministic=False)
        return policy.act(observations, np.ones((1, NUM_ACTIONS), bool))

    return call


def _probs(observations: Any, masks: Any) -> Callable[[Path], object]:
    return lambda folder: load_policy(_agent(folder)).action_probs(observations, masks)


def _config(folder: Path) -> Any:
    return load_config(PPO_TINY, [f"runs_dir={folder / 'runs'}", "total_steps=64"])


def _imitation(folder: Path) -> Any:
    return load_imitate_config(IMITATE_TINY, [f"runs_dir={folder / 'runs'}"])


def _twice(key: str) -> Callable[[str], str]:
    """Metadata whose first key is given again, with another value, before it."""
    return lambda text: text.replace("{", f'{{"{key}": [8], ', 1)


@dataclass(frozen=True)
class Case:
    """One bad argument.

    Attributes:
        id: The test id.
        call: Calls the function, given the case's temporary folder.
        error: The exception type expected.
        names: What the message must contain (the argument, the value as given).
    """

    id: str
    call: Callable[[Path], object]
    error: type[Exception] | tuple[type[Exception], ...]
    names: tuple[str, ...]


CASES = [
    # --- a config loader's overrides: a list of key=value strings ---
    Case(
        "overrides_a_string_not_a_list",
        lambda f: load_config(PPO_TINY, overrides=_given("seed=5")),
        TypeError,
        ("overrides", "'seed=5'"),
    ),
    Case(
        "overrides_item_a_number",
        lambda f: load_config(PPO_TINY, overrides=_given(["seed=1", 5])),
        TypeError,
        ("overrides", "item 5"),
    ),
    Case(
        "overrides_item_bytes",
        lambda f: load_config(PPO_TINY, overrides=_given([b"seed=1"])),
        TypeError,
        ("overrides", "b'seed=1'"),
    ),
    Case(
        "overrides_item_none",
        lambda f: load_config(PPO_TINY, overrides=_given([None])),
        TypeError,
        ("overrides", "None"),
    ),
    Case(
        "overrides_a_number",
        lambda f: config_for(PPO_TINY, "ppo", _given(7)),
        TypeError,
        ("overrides", "7"),
    ),
    Case(
        "imitate_overrides_a_string",
        lambda f: load_imitate_config(IMITATE_TINY, overrides=_given("samples=5")),
        TypeError,
        ("overrides", "'samples=5'"),
    ),
    # --- a config loader's path, base and source ---
    Case("config_path_a_number", lambda f: load_config(_given(5)), TypeError, ("path", "5")),
    Case(
        "config_base_a_list",
        lambda f: load_config(None, base=_given([1, 2])),
        TypeError,
        ("base", "[1, 2]"),
    ),
    Case(
        "imitate_base_a_list",
        lambda f: load_imitate_config(None, base=_given([1])),
        TypeError,
        ("base", "[1]"),
    ),
    Case(
        "sweep_path_a_number",
        lambda f: load_sweep_config(_given(5)),
        TypeError,
        ("path", "5"),
    ),
    Case(
        "config_for_source_a_number",
        lambda f: config_for(_given(5), "ppo"),
        TypeError,
        ("source", "5"),
    ),
    # --- train(): checked before anything is read or written ---
    Case("train_config_a_number", lambda f: train(_given(5)), TypeError, ("config", "5")),
    Case(
        "train_config_a_mapping",
        lambda f: train(_given({"name": "x"})),
        TypeError,
        ("config", "{'name': 'x'}"),
    ),
    Case(
        "train_resume_a_word",
        lambda f: train(_config(f), resume=_given("no"), log=None),
        ValueError,
        ("resume", "'no'"),
    ),
    Case(
        "train_overwrite_a_number",
        lambda f: train(_config(f), overwrite=_given(2), log=None),
        ValueError,
        ("overwrite", "2"),
    ),
    Case(
        "train_log_a_number",
        lambda f: train(_config(f), log=_given(5)),
        TypeError,
        ("log", "5"),
    ),
    Case(
        "train_log_a_binary_stream",
        lambda f: train(_config(f), log=_given(io.BytesIO())),
        TypeError,
        ("log", "BytesIO"),
    ),
    # --- imitate(): checked before anything is read or written ---
    Case(
        "imitate_config_a_path",
        lambda f: imitate(_given(str(IMITATE_TINY))),
        TypeError,
        ("config", "imitate/tiny.yaml"),
    ),
    Case(
        "imitate_overwrite_a_word",
        lambda f: imitate(_imitation(f), overwrite=_given("no"), log=None),
        ValueError,
        ("overwrite", "'no'"),
    ),
    Case(
        "imitate_progress_a_number",
        lambda f: imitate(_imitation(f), progress=_given(0), log=None),
        ValueError,
        ("progress", "0"),
    ),
    Case(
        "imitate_log_text",
        lambda f: imitate(_imitation(f), log=_given("log.txt")),
        TypeError,
        ("log", "'log.txt'"),
    ),
    # --- export_checkpoint(): checked before anything is read or written ---
    Case(
        "export_checkpoint_a_number",
        lambda f: export_checkpoint(_given(5), f / "o"),
        TypeError,
        ("checkpoint", "5"),
    ),
    Case(
        "export_out_a_number",
        lambda f: export_checkpoint(f / "latest.zip", _given(5)),
        TypeError,
        ("out", "5"),
    ),
    Case(
        "export_name_a_number",
        lambda f: export_checkpoint(f / "latest.zip", f / "o", name=_given(5)),
        ValueError,
        ("name", "5"),
    ),
    Case(
        "export_name_empty",
        lambda f: export_checkpoint(f / "latest.zip", f / "o", name=""),
        ValueError,
        ("name", "''", "empty"),
    ),
    Case(
        "export_overwrite_a_word",
        lambda f: export_checkpoint(f / "latest.zip", f / "o", overwrite=_given("no")),
        ValueError,
        ("overwrite", "'no'"),
    ),
    Case(
        "export_out_the_parent_folder",
        lambda f: export_checkpoint(f / "latest.zip", ".."),
        ValueError,
        ("OUT '..'", "names a folder"),
    ),
    # --- a learned policy's observations ---
    Case(
        "sampling_policy_nan_observations",
        _sampling_act(np.full((1, OBS_DIM), np.nan, np.float32)),
        ValueError,
        ("observations", "NaN or infinite"),
    ),
    Case(
        "sampling_policy_infinite_observations",
        _sampling_act(np.full((1, OBS_DIM), np.inf, np.float32)),
        ValueError,
        ("observations", "NaN or infinite"),
    ),
    Case(
        "action_probs_nan_observations",
        _probs(np.full((1, OBS_DIM), np.nan), np.ones((1, NUM_ACTIONS), bool)),
        ValueError,
        ("observations", "NaN or infinite"),
    ),
    Case(
        "ragged_observations",
        _probs([[0.0] * OBS_DIM, [0.0] * 10], np.ones((2, NUM_ACTIONS), bool)),
        ValueError,
        ("observations", "rows of equal length"),
    ),
    # --- agent files ---
    Case(
        "agent_path_too_long",
        lambda f: load_policy("x" * 5000 + ".safetensors"),
        ValueError,
        ("xxxx", "too long for the file system"),
    ),
    Case(
        "agent_metadata_key_twice",
        lambda f: load_policy(_agent(f, _twice("hidden"))),
        AgentFileError,
        ("agent.json", "the key 'hidden' is given twice"),
    ),
    Case(
        "agent_metadata_name_twice",
        lambda f: load_policy(_agent(f, _twice("name"))),
        AgentFileError,
        ("agent.json", "the key 'name' is given twice"),
    ),
    Case(
        "opponents_as_bytes",
        lambda f: resolve_opponents(_given(b"random")),
        TypeError,
        ("opponents", "b'random'"),
    ),
    # --- a run's JSON record ---
    Case(
        "run_record_key_twice",
        lambda f: parse_json('{"steps": 1, "steps": 2}', "runs/x/latest.json"),
        ValueError,
        ("runs/x/latest.json", "the key 'steps' is given twice"),
    ),
]


def _snapshot(folder: Path) -> dict[str, bytes | None]:
    return {
        str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(folder.rglob("*"))
    }


def test_the_catalogue_is_large_enough() -> None:
    assert len(CASES) >= 25
    assert len({case.id for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_bad_training_api_argument(
    case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    monkeypatch.chdir(workdir)  # a write to the current folder (or above it) would show
    before = _snapshot(tmp_path)
    with pytest.raises(case.error) as caught:
        case.call(tmp_path)
    message = str(caught.value)
    assert "\n" not in message, message
    for name in case.names:
        assert name in message, f"{name!r} not named in: {message}"
    after = _snapshot(tmp_path)
    assert {k: v for k, v in after.items() if not k.startswith("agent.")} == {
        k: v for k, v in before.items() if not k.startswith("agent.")
    }
