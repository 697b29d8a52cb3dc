"""From SB3 models to the lab's own pickle-free policies (safetensors + JSON metadata).

Training exports each run's best checkpoint by itself (``runs/<name>/<name>.*``, also as
``runs/<name>/best_policy.*``). Any other checkpoint of a run exports with::

    python -m unolab.train.export runs/<name>/latest.zip agents/pretrained/<agent>

An existing output is replaced only with ``--overwrite``.

The rules and the algorithm are read from the run's ``config.yaml``, next to the checkpoint.

Which layers form an algorithm's acting network, and how its checkpoint loads, is the
registry's knowledge (:mod:`unolab.train.algorithms`); :func:`policy_layers` and
:func:`load_policy_layers` are re-exported from there.
"""

from __future__ import annotations

import argparse
import os
import stat
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from uno_env.cards import NUM_ACTIONS
from uno_env.config_values import check_folder_name, check_switch
from uno_env.console import check_output_file, path_argument, run_main
from uno_env.envs.vec_env import UnoVecEnv
from uno_env.files import check_writable_target, shown, why_missing
from uno_env.observation import OBS_DIM, OBS_VERSION
from uno_env.rules import Rules
from unolab.agents.agent_files import agent_stem
from unolab.agents.learned import MLPNet, TorchPolicy, save_policy
from unolab.agents.policy_metadata import PolicyMetadata
from unolab.train.algorithms import ALGORITHMS, algorithm_for_model, policy_layers
from unolab.train.checkpoint_files import DamagedCheckpointError, verify_checkpoint
from unolab.train.checkpoint_state import restore_checkpoint
from unolab.train.config import config_beside

__all__ = [
    "as_policy",
    "export_checkpoint",
    "export_policy",
    "git_commit",
    "metadata_for",
    "snapshot_policy",
]


def git_commit() -> str:
    """The commit of the working tree, or ``unknown`` outside a git checkout."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parent,
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return out.stdout.strip()


def metadata_for(
    model: Any, name: str, algorithm: str, rules: Rules, extra: dict[str, Any]
) -> PolicyMetadata:
    """The metadata of an exported policy (the architecture is read off the model; the
    algorithm's description from the registry, for model cards)."""
    layers, activation = policy_layers(model)
    trained = ALGORITHMS.get(algorithm)
    described = {} if trained is None else {"algorithm_description": trained.description}
    return PolicyMetadata(
        name=name,
        algorithm=algorithm,
        obs_version=OBS_VERSION,
        obs_dim=OBS_DIM,
        num_actions=NUM_ACTIONS,
        hidden=tuple(int(w.shape[0]) for w, _ in layers[:-1]),
        activation=activation,
        rules=rules.to_dict(),
        extra={"git_commit": git_commit(), **described, **extra},
    )


def export_policy(
    model: Any, path: str | Path, name: str, algorithm: str, rules: Rules, extra: dict[str, Any]
) -> Path:
    """Write ``<path>.safetensors`` + ``<path>.json`` for an SB3 model; return the weights path."""
    layers, _ = policy_layers(model)
    return save_policy(path, layers, metadata_for(model, name, algorithm, rules, extra))


def snapshot_policy(model: Any, name: str, algorithm: str, rules: Rules) -> TorchPolicy:
    """A frozen copy of the model's current policy (deterministic argmax), in memory."""
    layers, activation = policy_layers(model)
    meta = metadata_for(model, name, algorithm, rules, {})
    net = MLPNet(OBS_DIM, meta.hidden, NUM_ACTIONS, activation)
    for linear, (weight, bias) in zip(net.linears(), layers, strict=True):
        linear.weight.data.copy_(weight)
        linear.bias.data.copy_(bias)
    return TorchPolicy(net, meta)


def as_policy(model: Any, rules: Rules, name: str | None = None) -> TorchPolicy:
    """A trained SB3 model (MaskablePPO or MaskedDQN) as a lab policy, for evaluations.

    The one-line adapter between SB3 and the lab: ``evaluate_vs(rules, as_policy(model,
    rules), "random", 1000)``, or a tournament participant. It is a frozen copy: later
    training does not change it.

    Args:
        model: The SB3 model.
        rules: The rules it was trained under.
        name: Its name in results (default: the algorithm, ``ppo`` or ``dqn``).

    Raises:
        TypeError: for a model of an algorithm the lab does not train.
    """
    algorithm = algorithm_for_model(model).name  # a TypeError names the algorithms it takes
    return snapshot_policy(model, name or algorithm, algorithm, rules)


_CHECKPOINT_HINT = (
    "give a checkpoint of a training run (runs/<name>/latest.zip or best.zip, with the "
    "run's config.yaml next to it)"
)


def _check_checkpoint_path(path: Path) -> None:
    """Refuse a path that is no checkpoint file, saying what it is.

    Raises:
        FileNotFoundError: nothing is there (or a dangling link, a link loop).
        ValueError: an exported agent, a file that is not a ``.zip``, a folder or a file
            that is not regular (a pipe, a device).
    """
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):  # ValueError: a NUL in the path
        raise FileNotFoundError(f"{str(path)!r} {why_missing(path)}: {_CHECKPOINT_HINT}") from None
    if stat.S_ISDIR(mode):
        raise ValueError(f"{str(path)!r} is a folder, not a checkpoint: {_CHECKPOINT_HINT}")
    if not stat.S_ISREG(mode):
        raise ValueError(
            f"{str(path)!r} is not a regular file (a pipe, device or socket): {_CHECKPOINT_HINT}"
        )
    if path.suffix != ".zip":
        what = "an exported agent, " if path.suffix == ".safetensors" else ""
        raise ValueError(f"{str(path)!r} is {what}not a checkpoint (a .zip): {_CHECKPOINT_HINT}")


def _output_stem(out: str | Path) -> Path:
    """The path of the files to write, without suffix: ``out`` must name a file.

    Raises:
        ValueError: for an empty ``out`` or one that names a folder (``.``, ``..``,
            ``agents/``), naming it.
    """
    text = os.fspath(out)
    target = agent_stem(out)
    folder_like = text.endswith(("/", os.sep, "/.", "/..")) or text in (".", "..")
    if not text.strip() or target.name in ("", ".", "..") or folder_like:
        raise ValueError(
            f"OUT {shown(text, 300)} names a folder, not a file; give the path of the files to "
            "write, without suffix (e.g. agents/pretrained/my_agent)"
        )
    return target


def export_checkpoint(
    checkpoint: str | Path, out: str | Path, name: str | None = None, overwrite: bool = False
) -> Path:
    """Export an SB3 checkpoint of a training run as a pickle-free policy.

    The checkpoint is read without unpickling (:func:`~unolab.train.checkpoint_state.restore_checkpoint`:
    the model is built from the run's config and given the zip's tensors), so no code runs
    from it; a checkpoint with a record beside it (``latest.json``) must match its checksum.

    Args:
        checkpoint: ``runs/<name>/<something>.zip``; the run's ``config.yaml`` must be next to it.
        out: Where to write ``<out>.safetensors`` and ``<out>.json``.
        name: The policy's name (default: the file name of ``out``).
        overwrite: Replace an existing ``<out>.safetensors`` / ``<out>.json``.

    Returns:
        The path of the weights written.

    Raises:
        FileNotFoundError: if the checkpoint or the run's config.yaml is missing.
        FileExistsError: if ``out`` exists and ``overwrite`` is not set.
        UnwritableFileError: if ``<out>.safetensors`` or ``<out>.json`` is there and is not
            a regular file (a folder, a link, a pipe): nothing is written.
        ConfigError: if the run's config.yaml is invalid (naming it), or for a ``name``
            that is no plain one-line name or an ``overwrite`` that is not a bool.
        ValueError: if the checkpoint is not a checkpoint file (an exported agent, a folder,
            a pipe) or cannot be read as the config's algorithm (naming it), or ``out``
            names a folder (``.``, ``..``), a path under a file or a name too long.
        TypeError: for a ``checkpoint`` or an ``out`` that is no text or path.
    """
    for argument, value in (("checkpoint", checkpoint), ("out", out)):
        if not isinstance(value, (str, os.PathLike)):
            raise TypeError(f"{argument}: expected a path (text or a Path), got {shown(value)}")
    if name is not None:  # shown in tables and cards: one plain line, as a run's name
        check_folder_name("name", name)
    overwrite = check_switch("overwrite", overwrite)
    target = _output_stem(out)
    path = Path(checkpoint)
    _check_checkpoint_path(path)
    config = config_beside(path)
    outputs = [target.with_name(f"{target.name}{end}") for end in (".safetensors", ".json")]
    for output in outputs:  # a file in place of a folder, a name too long: said in words
        check_output_file(output, "OUT")
    taken = [p for p in outputs if p.exists()]
    if taken and not overwrite:
        raise FileExistsError(
            f"{taken[0]} exists: choose another output path, or replace it with --overwrite"
        )
    for output in outputs:  # both checked before the model is read and either is written
        check_writable_target(output, "output")
    rules = config.build_rules()
    try:
        if path.with_suffix(".json").is_file():  # its record: the checksum to check first
            verify_checkpoint(path.parent, path.stem)
        model = restore_checkpoint(path, UnoVecEnv(1, rules), config)
    except DamagedCheckpointError as err:
        raise ValueError(f"{err}; give a run's latest.zip or best.zip") from None
    extra = {"steps": int(model.num_timesteps), "checkpoint": str(path), "seed": config.seed}
    return export_policy(model, target, name or target.name, config.algorithm, rules, extra)


def _out_argument(text: str) -> Path:
    """OUT as typed, checked before ``Path`` drops a trailing ``/`` or ``/.`` (``out/.``
    would write ``out.safetensors`` beside the folder ``out``).

    Raises:
        argparse.ArgumentTypeError: naming OUT and what to give.
    """
    path = path_argument(text)
    try:
        _output_stem(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return path


def main(argv: Sequence[str] | None = None) -> Path:
    """Command line: ``python -m unolab.train.export CHECKPOINT OUT [--name NAME] [--overwrite]``.

    Bad input ends with one line ``error: ...`` on stderr and exit status 2.
    """
    parser = argparse.ArgumentParser(
        prog="python -m unolab.train.export",
        description="Export a checkpoint of a training run as safetensors + JSON (no pickle).",
    )
    parser.add_argument("checkpoint", type=path_argument, help="runs/<name>/latest.zip or best.zip")
    parser.add_argument(
        "out",
        type=_out_argument,
        help="output path without suffix, e.g. agents/pretrained/my_agent",
    )
    parser.add_argument("--name", help="the policy's name (default: the output file name)")
    parser.add_argument(
        "--overwrite", action="store_true", help="replace OUT.safetensors / OUT.json if they exist"
    )
    args = parser.parse_args(argv)
    if args.name is not None:
        try:  # the name is shown in tables and cards: one plain line, as a run's name
            check_folder_name("--name", args.name)
        except ValueError as err:
            parser.error(str(err))
    try:
        weights = export_checkpoint(args.checkpoint, args.out, args.name, args.overwrite)
    except (ValueError, OSError) as err:
        print(f"error: {' '.join(str(err).split())}", file=sys.stderr)
        raise SystemExit(2) from None
    print(f"exported {weights} and {weights.with_suffix('.json')}")
    return weights


if __name__ == "__main__":
    run_main(main, "python -m unolab.train.export")
