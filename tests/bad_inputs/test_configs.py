"""Bad configs: rules, training, tournament and sweep YAML, and ``--set`` overrides.

Each case of :data:`CASES` writes one bad config to a temporary folder and loads it through
the public loader (:func:`uno_env.rules.load_rules`, :func:`unolab.train.config.load_config`,
:func:`unolab.tournament.config.load_config`,
:func:`unolab.train.sweep.config.load_sweep_config`). A bad ``--set`` value is named as
the ``--set`` item, not as the file it overrides. It must raise :class:`~uno_env.ConfigError` (a
``ValueError``) in one line naming the file, the key or the value, leave every file in the
folder as it was, and leave the loader working for the next, valid config.

Each case of :data:`CLI_CASES` runs a real command line in-process (``uno-lab``,
``python -m unolab.tournament``, ``uno-lab train ppo``) on a bad config: exit status 2, the file
or key named on stderr, no traceback, nothing written. One of them runs as a subprocess, for
the real exit path.
"""

from __future__ import annotations

import math
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from support import ROOT

import unolab.tournament.config
import unolab.train.config
from uno_env import ConfigError
from uno_env.rules import Rules, load_rules
from unolab.train.sweep.config import load_sweep_config

FILE = {
    "rules": "rules.yaml",
    "train": "train.yaml",
    "tournament": "tournament.yaml",
    "sweep": "sweep.yaml",
}
"""The file each loader's case is written to (``{dir}`` in a case is the temporary folder)."""

BASE: dict[str, dict[str, Any]] = {
    "rules": {},
    "train": {"name": "t", "algorithm": "ppo", "num_players": 2, "runs_dir": "{dir}/runs"},
    "tournament": {
        "name": "t",
        "participants": ["random", "mixbot"],
        "num_players": 2,
        "output_dir": "{dir}/out",
    },
    "sweep": {
        "name": "s",
        "train_config": str(ROOT / "configs" / "ppo" / "tiny.yaml"),
        "search_space": {"ppo.learning_rate": {"grid": [1.0e-4, 3.0e-4]}},
        "output_dir": "{dir}/sweeps",
    },
}
"""A valid config of each loader; a case given as a mapping is merged into it."""

FORBIDDEN = (KeyError, TypeError, AttributeError, ZeroDivisionError, RecursionError, MemoryError)
"""Exceptions that are never a proper answer to a bad config (nor a library's own)."""


@dataclass(frozen=True)
class Case:
    """One bad config.

    Attributes:
        id: The test id.
        loader: ``rules``, ``train``, ``tournament`` or ``sweep``.
        content: The file's text or bytes, or a mapping merged into :data:`BASE` (nested
            mappings merge too), or ``None`` to write no file.
        names: Words the message must contain (``{dir}``: the temporary folder).
        overrides: ``--set`` items (train and tournament loaders).
        files: Other files to write first (name -> text; a name ending in ``/`` is a folder).
    """

    id: str
    loader: str
    content: str | bytes | Mapping[str, Any] | None
    names: tuple[str, ...]
    overrides: tuple[str, ...] = ()
    files: Mapping[str, str] = field(default_factory=dict)


R, T, U, S = "rules", "train", "tournament", "sweep"
NAN, INF = math.nan, math.inf
DQN = {"algorithm": "dqn"}

CASES: list[Case] = [
    # --- rules YAML: the file itself ---
    Case("rules-unclosed-list", R, "jump_in: [true\nseven_zero: true\n", ("rules.yaml", "line 2")),
    Case("rules-unclosed-quote", R, 'draw_rule: "one\n', ("rules.yaml", "line ")),
    Case("rules-bad-indent", R, "jump_in: true\n  seven_zero: true\n", ("rules.yaml", "line 2")),
    Case("rules-tab-indent", R, "jump_in:\n\t- true\n", ("rules.yaml", "line 2")),
    Case("rules-top-level-list", R, "- jump_in\n- seven_zero\n", ("rules.yaml", "list")),
    Case("rules-top-level-scalar", R, "street\n", ("rules.yaml", "str")),
    Case("rules-empty-file", R, "", ("rules.yaml", "empty")),
    Case("rules-only-comments", R, "# nothing here\n", ("rules.yaml", "empty")),
    Case("rules-missing-file", R, None, ("rules.yaml", "does not exist")),
    Case("rules-a-folder", R, None, ("rules.yaml", "folder"), files={"rules.yaml/": ""}),
    Case("rules-not-utf8", R, b"jump_in: true\n# caf\xe9\n", ("rules.yaml", "UTF-8", "0xe9")),
    Case("rules-key-twice", R, "jump_in: true\njump_in: false\n", ("rules.yaml", "jump_in")),
    Case("rules-bad-int-tag", R, "uno_penalty: !!int abc\n", ("rules.yaml", "abc")),
    Case(
        "rules-python-tag",
        R,
        "jump_in: !!python/object/apply:os.system ['echo pwned']\n",
        ("rules.yaml", "python/object"),
    ),
    Case("rules-deep-nesting", R, "a: " + "[" * 5000 + "]" * 5000 + "\n", ("rules.yaml",)),
    Case("rules-integer-key", R, "1: true\n", ("rules.yaml", "unknown key", "1")),
    Case("rules-unknown-key", R, {"stack_draw_2": True}, ("rules.yaml", "stack_draw_2")),
    # --- rules YAML: bounds of the integer parameters ---
    Case("rules-uno-penalty-1e20", R, {"uno_penalty": 10**20}, ("uno_penalty", str(10**20))),
    Case("rules-uno-penalty-negative", R, {"uno_penalty": -1}, ("uno_penalty", "-1")),
    Case("rules-uno-penalty-float", R, {"uno_penalty": 2.5}, ("uno_penalty", "2.5")),
    Case("rules-uno-penalty-bool", R, {"uno_penalty": True}, ("uno_penalty", "True")),
    Case("rules-uno-penalty-nan", R, {"uno_penalty": NAN}, ("uno_penalty", "nan")),
    Case("rules-hand-size-zero", R, {"hand_size": 0}, ("hand_size", "0")),
    Case("rules-hand-size-huge", R, {"hand_size": 10**6}, ("hand_size", "1000000")),
    Case("rules-num-players-one", R, {"num_players": 1}, ("num_players", "1")),
    Case("rules-num-players-float", R, {"num_players": 4.0}, ("num_players", "4.0")),
    Case("rules-target-score-huge", R, {"target_score": 10**12}, ("target_score", str(10**12))),
    Case("rules-target-score-zero", R, {"target_score": 0}, ("target_score", "0")),
    Case("rules-max-turns-negative", R, {"max_turns": -5}, ("max_turns", "-5")),
    Case("rules-draw-cap-huge", R, {"draw_cap": 10**9}, ("draw_cap", str(10**9))),
    # --- rules YAML: presets ---
    Case("rules-preset-itself", R, "preset: {dir}/rules.yaml\n", ("cycle", "rules.yaml")),
    Case(
        "rules-preset-cycle",
        R,
        "preset: {dir}/other.yaml\n",
        ("cycle", "rules.yaml", "other.yaml"),
        files={"other.yaml": "preset: {dir}/rules.yaml\n"},
    ),
    Case("rules-preset-unknown", R, {"preset": "streetz"}, ("streetz",)),
    Case("rules-preset-number", R, {"preset": 5}, ("preset", "5")),
    Case(
        "rules-preset-bad-file",
        R,
        "preset: {dir}/other.yaml\n",
        ("other.yaml", "line 2"),
        files={"other.yaml": "jump_in: [\n"},
    ),
    # --- training YAML: the file ---
    Case("train-unclosed-mapping", T, "name: t\nppo: {gamma: 0.9\n", ("train.yaml", "line ")),
    Case("train-top-level-list", T, "- name\n- t\n", ("train.yaml", "list")),
    Case("train-empty-file", T, "", ("train.yaml", "empty")),
    Case("train-not-utf8", T, b"name: \xff\xfe\n", ("train.yaml", "UTF-8")),
    Case("train-key-twice", T, "name: a\nname: b\nalgorithm: ppo\n", ("train.yaml", "name")),
    # --- training YAML: bounds ---
    Case("train-net-arch-negative", T, {"ppo": {"net_arch": [-4]}}, ("net_arch", "-4")),
    Case("train-net-arch-zero", T, {"ppo": {"net_arch": [0]}}, ("net_arch", "0")),
    Case("train-net-arch-empty", T, {"ppo": {"net_arch": []}}, ("net_arch", "[]")),
    Case("train-net-arch-huge", T, {"ppo": {"net_arch": [10**7]}}, ("net_arch", "10000000")),
    Case("train-net-arch-deep", T, {"ppo": {"net_arch": [8] * 100}}, ("net_arch",)),
    Case("train-weight-nan", T, {"opponents": {"bots": {"random": NAN}}}, ("random", "nan")),
    Case("train-weight-inf", T, {"opponents": {"bots": {"random": INF}}}, ("random", "inf")),
    Case("train-weight-negative", T, {"opponents": {"bots": {"random": -1}}}, ("random", "-1")),
    Case("train-weight-text", T, {"opponents": {"bots": {"random": "lots"}}}, ("random", "lots")),
    Case("train-self-play-inf", T, {"opponents": {"self_play": INF}}, ("self_play", "inf")),
    Case("train-dqn-train-freq-zero", T, {**DQN, "dqn": {"train_freq": 0}}, ("train_freq", "0")),
    Case("train-dqn-n-step-zero", T, {**DQN, "dqn": {"n_step": 0}}, ("n_step", "0")),
    Case(
        "train-dqn-n-step-past-buffer",
        T,
        {**DQN, "dqn": {"n_step": 1000, "buffer_size": 2000}},
        ("n_step", "1000"),
    ),
    Case(
        "train-dqn-shaping-too-large",
        T,
        {**DQN, "dqn": {"hand_size_shaping": 2}},
        ("hand_size_shaping", "2"),
    ),
    Case("train-dqn-gamma-zero", T, {**DQN, "dqn": {"gamma": 0}}, ("gamma", "0")),
    Case(
        "train-dqn-exploration-negative",
        T,
        {**DQN, "dqn": {"exploration_fraction": -0.1}},
        ("exploration_fraction", "-0.1"),
    ),
    Case(
        "train-dqn-batch-above-buffer",
        T,
        {**DQN, "dqn": {"buffer_size": 100, "batch_size": 200}},
        ("buffer_size", "100", "200"),
    ),
    Case(
        "train-dqn-buffer-huge",
        T,
        {**DQN, "dqn": {"buffer_size": 10**10}},
        ("buffer_size", str(10**10)),
    ),
    Case("train-clip-range-negative", T, {"ppo": {"clip_range": -0.2}}, ("clip_range", "-0.2")),
    Case("train-gamma-two", T, {"ppo": {"gamma": 2}}, ("gamma", "2")),
    Case("train-learning-rate-zero", T, {"ppo": {"learning_rate": 0}}, ("learning_rate", "0")),
    Case("train-learning-rate-nan", T, {"ppo": {"learning_rate": NAN}}, ("learning_rate", "nan")),
    Case(
        "train-learning-rate-text", T, {"ppo": {"learning_rate": "fast"}}, ("learning_rate", "fast")
    ),
    Case("train-batch-size-one", T, {"ppo": {"batch_size": 1}}, ("batch_size", "1")),
    Case("train-n-epochs-zero", T, {"ppo": {"n_epochs": 0}}, ("n_epochs", "0")),
    Case(
        "train-rollout-of-one",
        T,
        {"num_envs": 1, "ppo": {"n_steps": 1}},
        ("n_steps", "num_envs", "1"),
    ),
    Case("train-pool-size-huge", T, {"opponents": {"pool_size": 10**9}}, ("pool_size", "1000")),
    Case("train-num-envs-huge", T, {"num_envs": 10**9}, ("num_envs", "1000000000", "65536")),
    Case("train-num-envs-zero", T, {"num_envs": 0}, ("num_envs", "0")),
    Case("train-total-steps-float", T, {"total_steps": 1.5e6}, ("total_steps", "1500000.0")),
    Case("train-seed-negative", T, {"seed": -1}, ("seed", "-1")),
    Case("train-seed-2-63", T, {"seed": 2**63}, ("seed", str(2**63))),
    Case("train-eval-games-zero", T, {"eval": {"games": 0}}, ("games", "0")),
    Case("train-learner-seat-5-of-2", T, {"learner_seat": "5"}, ("learner_seat", "5")),
    Case("train-learner-seat-word", T, {"learner_seat": "left"}, ("learner_seat", "left")),
    Case(
        "train-init-from-missing",
        T,
        {"init_from": "{dir}/nowhere.zip"},
        ("init_from", "nowhere.zip", "does not exist"),
    ),
    Case(
        "train-init-from-folder",
        T,
        {"init_from": "{dir}/stage1.zip"},
        ("init_from", "stage1.zip", "folder"),
        files={"stage1.zip/": ""},
    ),
    Case(
        "train-runs-dir-under-file",
        T,
        {"runs_dir": "{dir}/README.md/runs"},
        ("runs_dir", "README.md"),
        files={"README.md": "# a file\n"},
    ),
    Case("train-name-dotdot", T, {"name": ".."}, ("name", "'..'")),
    Case(
        "train-rules-file-out-of-range",
        T,
        {"rules": "{dir}/house.yaml"},
        ("house.yaml", "uno_penalty", str(10**20)),
        files={"house.yaml": f"uno_penalty: {10**20}\n"},
    ),
    # --- training: --set overrides ---
    Case("train-set-bad-yaml", T, {}, ("ppo.net_arch",), overrides=("ppo.net_arch=[1,",)),
    Case("train-set-empty-part", T, {}, ("ppo..gamma",), overrides=("ppo..gamma=0.9",)),
    Case("train-set-gamma-two", T, {}, ("gamma", "2"), overrides=("ppo.gamma=2",)),
    Case("train-set-seed-negative", T, {}, ("seed", "-1"), overrides=("seed=-1",)),
    Case("train-set-num-envs-huge", T, {}, ("num_envs",), overrides=("num_envs=1e9",)),
    Case(
        "train-set-seed-fraction",
        T,
        {},
        ("--set seed=1.5: expected an integer, got 1.5",),
        overrides=("seed=1.5",),
    ),
    Case(
        "train-set-eval-games-huge",
        T,
        {},
        ("--set eval.games=10000000000000: 10000000000000 is out of range",),
        overrides=("eval.games=10000000000000",),
    ),
    Case(
        "train-set-batch-size-and-rollout",
        T,
        {},
        ("--set ppo.n_steps=1 --set num_envs=1: ppo.n_steps * num_envs: 1 is out of range",),
        overrides=("ppo.n_steps=1", "num_envs=1"),
    ),
    Case(
        "train-set-init-from-missing",
        T,
        {},
        ("--set init_from=nowhere/none.zip: 'nowhere/none.zip' does not exist",),
        overrides=("init_from=nowhere/none.zip",),
    ),
    Case(
        "train-eval-bot-twice",
        T,
        {"eval": {"bots": ["random", "mixbot", "random"]}},
        ("train.yaml.eval: bots: 'random' is given twice",),
    ),
    Case(
        "train-set-eval-bot-twice",
        T,
        {},
        ("--set eval.bots=[random, random]: 'random' is given twice",),
        overrides=("eval.bots=[random, random]",),
    ),
    # --- tournament YAML ---
    Case("tournament-unclosed-list", U, "name: t\nparticipants: [random\n", ("tournament.yaml",)),
    Case("tournament-top-level-scalar", U, "42\n", ("tournament.yaml", "int")),
    Case("tournament-empty-file", U, "", ("tournament.yaml", "empty")),
    Case("tournament-not-utf8", U, b"name: t\xc3\n", ("tournament.yaml", "UTF-8")),
    Case("tournament-deal-sets-huge", U, {"deal_sets": 10**12}, ("deal_sets", str(10**12))),
    Case("tournament-deal-sets-zero", U, {"deal_sets": 0}, ("deal_sets", "0")),
    Case("tournament-bootstrap-huge", U, {"bootstrap": 10**9}, ("bootstrap", str(10**9))),
    Case("tournament-bootstrap-negative", U, {"bootstrap": -1}, ("bootstrap", "-1")),
    Case("tournament-seed-negative", U, {"seed": -1}, ("seed", "-1")),
    Case("tournament-seed-float", U, {"seed": 0.5}, ("seed", "0.5")),
    Case("tournament-games-per-chunk-huge", U, {"games_per_chunk": 10**9}, ("games_per_chunk",)),
    Case("tournament-workers-zero", U, {"workers": 0}, ("workers", "0")),
    Case(
        "tournament-output-dir-under-file",
        U,
        {"output_dir": "{dir}/README.md/x"},
        ("output_dir", "README.md"),
        files={"README.md": "# a file\n"},
    ),
    Case("tournament-sprt-elo-nan", U, {"sprt": {"elo1": NAN}}, ("elo1", "nan")),
    Case("tournament-rules-penalty", U, {"rules": {"uno_penalty": 10**20}}, ("uno_penalty",)),
    Case(
        "tournament-rules-preset-cycle",
        U,
        {"rules": "{dir}/loop.yaml"},
        ("cycle", "loop.yaml"),
        files={"loop.yaml": "preset: {dir}/loop.yaml\n"},
    ),
    Case("tournament-name-blank", U, {"name": " "}, ("name", "' '", "empty")),
    Case("tournament-name-newline", U, {"name": "a\nb"}, ("name", "'a\\nb'", "control")),
    Case("tournament-name-too-long", U, {"name": "n" * 300}, ("name", "300 bytes")),
    Case("tournament-output-dir-empty", U, {"output_dir": ""}, ("output_dir", "''", "empty")),
    Case("train-name-trailing-space", T, {"name": "run "}, ("name", "'run '", "space")),
    Case("train-runs-dir-blank", T, {"runs_dir": "  "}, ("runs_dir", "'  '", "empty")),
    Case("tournament-set-deal-sets-zero", U, {}, ("deal_sets", "0"), overrides=("deal_sets=0",)),
    Case("tournament-set-empty-key", U, {}, ("=5",), overrides=("=5",)),
    Case("tournament-set-seed-huge", U, {}, ("seed",), overrides=(f"seed={2**64}",)),
    # --- hostile YAML: aliases that expand without end, cycles, huge or odd values ---
    Case(
        "rules-alias-bomb",
        R,
        "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n",
        ("rules.yaml", "aliases expand"),
    ),
    Case(
        "train-alias-bomb",
        T,
        "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\nname: *g\nalgorithm: ppo\n",
        ("train.yaml", "aliases expand"),
    ),
    Case("rules-alias-cycle", R, "a: &a [*a]\n", ("rules.yaml", "refers to itself")),
    Case(
        "train-list-written-out-huge",
        T,
        {"name": "x", "algorithm": "ppo", "eval": {"bots": ["random"] * 100_001}},
        ("train.yaml", "100,001 of them in eval.bots", "list fewer values"),
    ),
    Case("train-name-alias-list", T, "name: &x [1, 2]\nalgorithm: ppo\n", ("name", "[1, 2]")),
    Case("rules-value-huge-list", R, {"jump_in": list(range(10_000))}, ("jump_in", "...")),
    Case("rules-preset-empty", R, {"preset": ""}, ("rules.yaml", "empty rules preset")),
    Case("rules-preset-too-long", R, {"preset": "p" * 300}, ("rules.yaml", "unknown rules preset")),
    Case(
        "rules-preset-relative-is-beside-the-file",
        R,
        {"preset": "missing_base.yaml"},
        ("{dir}/missing_base.yaml", "does not exist"),
    ),
    Case("train-name-nul", T, {"name": "t\0x"}, ("name", "'t\\x00x'")),
    Case("train-rules-empty", T, {"rules": ""}, ("rules", "empty rules preset")),
    Case("tournament-sprt-alpha-nan", U, {"sprt": {"alpha": NAN}}, ("alpha", "nan")),
    # --- sweep YAML: an override at fault is named as the item, not the training config ---
    Case(
        "sweep-override-out-of-range",
        S,
        {"overrides": ["eval.every=-1"]},
        ("sweep.yaml: overrides: eval.every=-1: -1 is out of range",),
    ),
    # --- sweep YAML: a dimension that every trial sets itself would vary nothing ---
    Case(
        "sweep-varies-the-run-name",
        S,
        {"search_space": {"name": {"grid": ["a", "b"]}}},
        ("sweep.yaml: search_space.name: name is set by the sweep for every trial",),
    ),
    Case(
        "sweep-varies-the-runs-folder",
        S,
        {"search_space": {"runs_dir": {"grid": ["{dir}/x", "{dir}/y"]}}},
        ("sweep.yaml: search_space.runs_dir: runs_dir is set by the sweep",),
    ),
    # --- sweep YAML: a key set twice, a value listed twice ---
    Case(
        "sweep-key-in-overrides-and-search-space",
        S,
        {"overrides": ["ppo.learning_rate=1.0e-3"]},
        ("sweep.yaml", "'ppo.learning_rate'", "overrides", "search_space"),
    ),
    Case(
        "sweep-section-in-overrides-key-in-search-space",
        S,
        {"overrides": ["ppo={n_epochs: 1}"]},
        ("sweep.yaml", "'ppo'", "search_space (ppo.learning_rate)"),
    ),
    Case(
        "sweep-grid-value-twice",
        S,
        {"search_space": {"seed": {"grid": [1, 1]}}},
        ("sweep.yaml: search_space.seed.grid: the value 1 is given twice",),
    ),
    Case(
        "sweep-choice-list-twice",
        S,
        {"search_space": {"ppo.net_arch": {"choice": [[32, 32], [64], [32, 32]]}}},
        ("search_space.ppo.net_arch.choice: the value [32, 32] is given twice",),
    ),
    Case(
        "sweep-varies-the-torch-threads",
        S,
        {"search_space": {"torch_threads": {"choice": [1, 2]}}},
        ("sweep.yaml: search_space.torch_threads: torch_threads is set by the sweep",),
    ),
]
"""The catalogue: one bad config each (see :class:`Case`)."""


def _fill(value: Any, folder: Path) -> Any:
    """``value`` with ``{dir}`` replaced by the temporary folder, in every string."""
    if isinstance(value, str):
        return value.replace("{dir}", str(folder))
    if isinstance(value, Mapping):
        return {k: _fill(v, folder) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_fill(v, folder) for v in value]
    return value


def _merge(base: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in changes.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _write(case: Case, folder: Path) -> Path:
    """Write the case's files into ``folder``; return the path of the config to load."""
    for name, text in case.files.items():
        if name.endswith("/"):
            (folder / name).mkdir(parents=True)
        else:
            (folder / name).write_text(_fill(text, folder))
    path = folder / FILE[case.loader]
    if isinstance(case.content, bytes):
        path.write_bytes(case.content)
    elif isinstance(case.content, str):
        path.write_text(_fill(case.content, folder))
    elif case.content is not None:
        data = _fill(_merge(BASE[case.loader], case.content), folder)
        path.write_text(yaml.safe_dump(data))
    return path


def _load(loader: str, path: Path, overrides: tuple[str, ...] = ()) -> object:
    if loader == "rules":
        return load_rules(path)
    if loader == "train":
        return unolab.train.config.load_config(path, overrides)
    if loader == "sweep":
        return load_sweep_config(path)
    return unolab.tournament.config.load_config(path, overrides)


def _snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every file and folder under ``folder``: what "nothing lost or overwritten" compares."""
    return {
        str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(folder.rglob("*"))
    }


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_config_is_one_clear_config_error(case: Case, tmp_path: Path) -> None:
    folder = tmp_path / "cfg"
    folder.mkdir()
    path = _write(case, folder)
    before = _snapshot(folder)

    error: Exception | None = None
    try:
        _load(case.loader, path, case.overrides)
    except ConfigError as err:
        error = err
    except FORBIDDEN as err:  # pragma: no cover - the failure being reported
        pytest.fail(f"{type(err).__name__} instead of ConfigError: {err}")
    if error is None:
        pytest.fail(f"{case.id}: the bad config loaded")

    # (a) a domain error; (b) it names the file, the key or the value, in one line.
    assert isinstance(error, ValueError)
    message = str(error)
    assert "\n" not in message, message
    for word in case.names:
        assert _fill(word, folder) in message, f"{word!r} not in {message!r}"
    # (d) nothing lost, overwritten or created, and the loader still takes a valid config.
    assert _snapshot(folder) == before
    valid = tmp_path / "valid.yaml"
    valid.write_text(yaml.safe_dump(_fill(BASE[case.loader], tmp_path)))
    assert _load(case.loader, valid) is not None


def test_the_catalogue_is_large_enough() -> None:
    assert len(CASES) >= 40
    assert len({c.id for c in CASES}) == len(CASES)


def test_shipped_configs_still_load() -> None:
    for path in sorted((ROOT / "configs" / "rules").glob("*.yaml")):
        assert isinstance(load_rules(path), Rules)
    for folder in ("ppo", "dqn"):
        for path in sorted((ROOT / "configs" / folder).glob("*.yaml")):
            assert unolab.train.config.load_config(path).algorithm == folder
    for path in sorted((ROOT / "configs" / "tournament").glob("*.yaml")):
        assert unolab.tournament.config.load_config(path).name


def test_init_from_under_runs_dir_is_checked_when_training_starts(tmp_path: Path) -> None:
    # A stage-2 config names the output of stage 1, which does not exist yet.
    config = unolab.train.config.load_config(
        None,
        [f"runs_dir={tmp_path}", f"init_from={tmp_path}/stage1/latest.zip"],
        base=BASE["train"],
    )
    assert config.init_from == f"{tmp_path}/stage1/latest.zip"


# --- the command lines ---------------------------------------------------------------------


def _run_unolab(argv: list[str]) -> int:
    from unolab.cli import main

    return main(argv)


def _run_tournament(argv: list[str]) -> int:
    from unolab.tournament.cli import main

    return main(argv)


def _run_train(argv: list[str]) -> int:
    from unolab.train.run_cli import main

    main("ppo", argv)
    return 0


@dataclass(frozen=True)
class CliCase:
    """One bad config given to a command line (``{file}``: the config's path)."""

    id: str
    run: Callable[[list[str]], int]
    argv: tuple[str, ...]
    case: Case
    names: tuple[str, ...]


CLI_CASES: list[CliCase] = [
    CliCase(
        "uno-lab-rules-malformed",
        _run_unolab,
        ("rules", "--preset", "{file}"),
        Case("", R, "jump_in: [true\n", ()),
        ("rules.yaml", "line "),
    ),
    CliCase(
        "uno-lab-rules-preset-cycle",
        _run_unolab,
        ("rules", "--preset", "{file}"),
        Case("", R, "preset: {dir}/rules.yaml\n", ()),
        ("cycle", "rules.yaml"),
    ),
    CliCase(
        "uno-lab-rules-penalty-1e20",
        _run_unolab,
        ("rules", "--preset", "{file}"),
        Case("", R, {"uno_penalty": 10**20}, ()),
        ("uno_penalty", str(10**20)),
    ),
    CliCase(
        "uno-lab-play-rules-malformed",
        _run_unolab,
        ("play", "--rules", "{file}"),
        Case("", R, "- a list\n", ()),
        ("rules.yaml", "list"),
    ),
    CliCase(
        "uno-lab-train-malformed",
        _run_unolab,
        ("train", "ppo", "--config", "{file}", "--no-progress"),
        Case("", T, "name: t\nppo: {gamma: 0.9\n", ()),
        ("train.yaml", "line "),
    ),
    CliCase(
        "uno-lab-train-init-from-missing",
        _run_unolab,
        ("train", "ppo", "--config", "{file}", "--no-progress"),
        Case("", T, {"init_from": "{dir}/nowhere.zip"}, ()),
        ("init_from", "nowhere.zip"),
    ),
    CliCase(
        "train-ppo-set-gamma-two",
        _run_train,
        ("--config", "{file}", "--set", "ppo.gamma=2", "--no-progress"),
        Case("", T, {}, ()),
        ("gamma", "2"),
    ),
    CliCase(
        "uno-lab-tournament-malformed",
        _run_unolab,
        ("tournament", "--config", "{file}", "--no-progress"),
        Case("", U, "name: t\nparticipants: [random\n", ()),
        ("tournament.yaml", "line "),
    ),
    CliCase(
        "tournament-set-bootstrap-huge",
        _run_tournament,
        ("--config", "{file}", "--set", f"bootstrap={10**9}", "--no-progress"),
        Case("", U, {}, ()),
        ("bootstrap", str(10**9)),
    ),
    CliCase(
        "tournament-output-dir-under-file",
        _run_tournament,
        ("--config", "{file}", "--output-dir", "{dir}/README.md/runs", "--no-progress"),
        Case("", U, {}, (), files={"README.md": "# a file\n"}),
        ("output_dir", "README.md"),
    ),
]
"""Bad configs through the real command lines, in-process."""


@pytest.mark.parametrize("cli", CLI_CASES, ids=[c.id for c in CLI_CASES])
def test_cli_reports_a_bad_config_in_one_line(
    cli: CliCase, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "cfg"
    folder.mkdir()
    path = _write(cli.case, folder)
    before = _snapshot(folder)
    argv = [_fill(a, folder).replace("{file}", str(path)) for a in cli.argv]

    try:
        status = cli.run(argv)
    except SystemExit as exit_:
        status = exit_.code  # type: ignore[assignment]
    out, err = capsys.readouterr()

    assert status == 2, (status, out, err)
    assert "Traceback" not in out + err
    for word in cli.names:
        assert _fill(word, folder) in err, f"{word!r} not in {err!r}"
    assert _snapshot(folder) == before
    assert not (folder / "runs").exists() and not (folder / "out").exists()


def test_uno_lab_subprocess_exits_2_without_a_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "rules.yaml"
    bad.write_text("jump_in: true\n  seven_zero: [\n")
    command = "import sys, unolab.cli; sys.exit(unolab.cli.main())"
    done = subprocess.run(
        [sys.executable, "-c", command, "rules", "--preset", str(bad)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert "rules.yaml" in done.stderr and "line 2" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
