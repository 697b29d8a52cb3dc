"""What an imitation run writes: its files, the clone as a pickle-free policy, the report table.

The run folder ``runs/<name>/`` holds the clone (``<name>.safetensors`` + ``<name>.json``,
algorithm :data:`ALGORITHM`), the report (:data:`REPORT_NAME`, printed by
:func:`format_report`), ``config.yaml`` and, when kept, the recorded demonstrations.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from torch import nn

from uno_env import cards as C
from uno_env.folders import RunFolder
from uno_env.observation import OBS_DIM, OBS_VERSION
from uno_env.rules import Rules
from unolab.agents.learned import MLPNet, save_policy
from unolab.agents.policy_metadata import PolicyMetadata
from unolab.train.demonstration_files import DEMONSTRATIONS_FILE
from unolab.train.export import git_commit
from unolab.train.imitate_config import ImitateConfig

__all__ = [
    "ALGORITHM",
    "REPORT_NAME",
    "clone_metadata",
    "clone_path",
    "format_report",
    "run_folder",
    "write_clone",
]

ALGORITHM = "imitation"
"""The ``algorithm`` of a clone's metadata."""

REPORT_NAME = "imitation_report.json"
"""The report's file name in the run folder."""


def clone_path(config: ImitateConfig) -> Path:
    """Where the clone is written, without suffix: ``<run_dir>/<name>`` (``clone`` when the
    name would take the report's file)."""
    stem = config.name if config.name != Path(REPORT_NAME).stem else "clone"
    return config.run_dir / stem


def run_folder(config: ImitateConfig) -> RunFolder:
    """The run's folder (``config.run_dir``): its lock, and the files that make it a run's
    (what the run would write)."""
    stem = clone_path(config).name
    return RunFolder(
        config.run_dir,
        "imitation run",
        files=[
            f"{stem}.safetensors",
            f"{stem}.json",
            REPORT_NAME,
            "config.yaml",
            DEMONSTRATIONS_FILE,
        ],
        start_over="replace it with --overwrite",
        rename="give the new run another name with --set name=...",
        place="runs_dir",
        relocate="choose another folder with --set runs_dir=...",
    )


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def format_report(report: dict[str, Any]) -> str:
    """The report as a short plain-text table (what ``python -m unolab.train.imitate`` prints)."""
    data, acc = report["data"], report["accuracy"]
    lines = [
        f"clone of {report['teachers_label']}: {data['decisions']:,} decisions from "
        f"{data['games']:,} games ({data['seconds']:.0f} s), {report['fit']['epochs']} epochs "
        f"({report['fit']['seconds']:.0f} s)",
        f"agreement with the teacher on {acc['decisions']:,} held-out decisions: "
        f"{_percent(acc['overall'])}",
    ]
    kinds = [
        f"{kind} {_percent(v['accuracy'])} ({v['decisions']:,})"
        for kind, v in acc["kinds"].items()
        if v["decisions"]
    ]
    lines.append("  by kind: " + ", ".join(kinds))
    if len(acc["teachers"]) > 1:
        lines.append(
            "  by teacher: "
            + ", ".join(
                f"{t} {_percent(v['accuracy'])} ({v['decisions']:,})"
                for t, v in acc["teachers"].items()
            )
        )
    strength = report["strength"]
    bots = list(next(iter(strength.values())))
    games = next(iter(next(iter(strength.values())).values()))["games"]
    lines.append(
        f"strength ({games:,} hands per pairing, seats rotated, the same deals for every agent; "
        "Wilson 95% intervals):"
    )
    width = max(len(label) for label in strength) + len(" (teacher)")
    header = "".join(f"  {'vs ' + b:<22}" for b in bots)
    lines.append(("  " + "agent".ljust(width) + header).rstrip())
    for label, results in strength.items():
        shown = label if label == "clone" else f"{label} (teacher)"
        cells = "".join(
            f"  {r['win_rate']:.1%} [{r['ci_low']:.1%}, {r['ci_high']:.1%}]".ljust(24)
            for r in results.values()
        )
        lines.append("  " + shown.ljust(width) + cells.rstrip())
    return "\n".join(lines)


def clone_metadata(config: ImitateConfig, rules: Rules, extra: dict[str, Any]) -> PolicyMetadata:
    """The clone's metadata: algorithm ``imitation``, its network, the rules, ``extra``."""
    return PolicyMetadata(
        name=config.name,
        algorithm=ALGORITHM,
        obs_version=OBS_VERSION,
        obs_dim=OBS_DIM,
        num_actions=C.NUM_ACTIONS,
        hidden=tuple(config.net_arch),
        activation=config.activation,
        rules=rules.to_dict(),
        extra=extra,
    )


def write_clone(config: ImitateConfig, rules: Rules, net: MLPNet, report: dict[str, Any]) -> Path:
    """Write the clone as a pickle-free policy (safetensors + JSON); return the weights path.

    Its ``extra`` names the teachers and gives the accuracy and the clone's win rates.
    """
    layers = [
        (m.weight.detach().clone(), m.bias.detach().clone())
        for m in net.layers
        if isinstance(m, nn.Linear)
    ]
    accuracy = report["accuracy"]
    extra = {
        "git_commit": git_commit(),
        "teachers": dict(config.teachers),
        "opponents": None if config.opponents is None else dict(config.opponents),
        "accuracy": accuracy["overall"],
        "accuracy_by_kind": {k: v["accuracy"] for k, v in accuracy["kinds"].items()},
        "decisions": report["data"]["decisions"],
        "evaluations": report["strength"]["clone"] if "strength" in report else None,
        "seed": config.seed,
    }
    return save_policy(clone_path(config), layers, clone_metadata(config, rules, extra))
