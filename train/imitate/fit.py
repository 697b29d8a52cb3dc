"""Fitting a clone to recorded teacher decisions, and scoring how often it agrees with them.

The clone is an MLP (``net_arch``, ``activation``) trained by minibatch Adam on the masked
cross-entropy of the teacher's actions (illegal actions get no probability, as in
MaskablePPO), or with ``value_targets`` on the softmax of a search teacher's estimates
(:func:`soft_targets`). Whole games are held out for validation (:func:`validation_split`),
and :func:`agreement` scores the clone's picks on them, overall and per kind of decision.

What a run writes is here too: the clone as a pickle-free policy (``<name>.safetensors`` +
``<name>.json``, algorithm :data:`ALGORITHM`), the report (:data:`REPORT_NAME`, printed by
:func:`format_report`), ``config.yaml`` and, when kept, the recorded demonstrations, all in
the run folder ``runs/<name>/`` (:func:`run_folder`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import torch
from torch import nn

from uno_env import cards as C
from uno_env.folders import RunFolder
from uno_env.observation import OBS_DIM, OBS_VERSION
from uno_env.rules import Rules
from unolab.agents.learned import MLPNet, save_policy
from unolab.agents.policy_metadata import PolicyMetadata
from unolab.agents.progress import progress_bar
from unolab.train.config_limits import resolve_device
from unolab.train.export import git_commit
from unolab.train.imitate.config import ImitateConfig
from unolab.train.imitate.data import DECISION_KINDS, Demonstrations, decision_kinds
from unolab.train.imitate.files import DEMONSTRATIONS_FILE

__all__ = [
    "ALGORITHM",
    "REPORT_NAME",
    "agreement",
    "clone_metadata",
    "clone_path",
    "fit_clone",
    "format_report",
    "predict",
    "run_folder",
    "soft_targets",
    "validation_split",
    "write_clone",
]

_INFERENCE_ROWS = 65_536
"""Rows per forward pass when scoring (bounded memory for any validation size)."""


def validation_split(
    demos: Demonstrations, share: float, seed: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Row indices of the training and validation decisions: whole games are held out.

    Decisions of one game are alike, so holding out rows instead of games would score the
    clone on positions it has nearly seen. Each game is held out with probability
    ``share``; both sides get at least one decision.
    """
    rng = np.random.default_rng([seed, 1])
    held_out_game = rng.random(demos.num_games) < share
    held = held_out_game[demos.games]
    if not held.any():
        held[-1] = True
    if held.all():
        held[0] = False
    return np.flatnonzero(~held), np.flatnonzero(held)


def _masked_log_probs(net: nn.Module, obs: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """Log-probabilities over the legal actions (illegal ones -inf), as MaskablePPO's."""
    logits = net(obs).masked_fill(~masks, float("-inf"))
    return torch.log_softmax(logits, dim=1)


def soft_targets(values: torch.Tensor, actions: torch.Tensor, temperature: float) -> torch.Tensor:
    """The distribution a clone imitates under ``value_targets``, one row per decision.

    Where the teacher estimated two actions or more: the softmax of its estimates divided
    by ``temperature``, over those actions. Elsewhere (no estimate: a bot teacher, a
    decision with one candidate): all mass on the chosen action.

    Args:
        values: The recorded estimates, (B, NUM_ACTIONS), NaN where none.
        actions: The teacher's actions, (B,).
        temperature: The softmax temperature (> 0).
    """
    values = values.float()
    known = ~torch.isnan(values)
    estimated = known.sum(dim=1) > 1
    target = torch.zeros(values.shape, dtype=torch.float32)
    target[torch.arange(actions.numel()), actions] = 1.0
    if bool(estimated.any()):
        scaled = values[estimated] / temperature
        target[estimated] = torch.softmax(scaled.masked_fill(~known[estimated], -torch.inf), dim=1)
    return target


def _loss(
    log_probs: torch.Tensor,
    masks: torch.Tensor,
    actions: torch.Tensor,
    smooth: float,
    targets: torch.Tensor | None = None,
) -> torch.Tensor:
    """Cross-entropy with the teacher's action (or ``targets``, a distribution over legal
    actions per row), label smoothing spread over legal actions."""
    if targets is None:
        chosen = -log_probs.gather(1, actions[:, None])[:, 0]
    else:
        chosen = -(targets * log_probs.masked_fill(targets <= 0, 0.0)).sum(dim=1)
    if smooth <= 0:
        return chosen.mean()
    legal_mean = -log_probs.masked_fill(~masks, 0.0).sum(1) / masks.sum(1)
    return ((1 - smooth) * chosen + smooth * legal_mean).mean()


def predict(
    net: nn.Module, observations: npt.NDArray[np.float32], masks: npt.NDArray[np.bool_]
) -> npt.NDArray[np.int64]:
    """The clone's greedy action (argmax of the legal logits) for each row."""
    out = np.empty(observations.shape[0], dtype=np.int64)
    device = _device_of(net)
    with torch.no_grad():
        for begin in range(0, observations.shape[0], _INFERENCE_ROWS):
            rows = slice(begin, begin + _INFERENCE_ROWS)
            obs = torch.from_numpy(observations[rows]).to(device)
            legal = torch.from_numpy(masks[rows]).to(device)
            logits = net(obs).masked_fill(~legal, float("-inf"))
            out[rows] = logits.argmax(dim=1).cpu().numpy()
    return out


def agreement(
    predicted: npt.NDArray[np.int64], demos: Demonstrations, rows: npt.NDArray[np.int64]
) -> dict[str, Any]:
    """How often the clone's action is the teacher's, overall, per kind and per teacher.

    ``overall`` is exact top-1 agreement. Per kind (:data:`DECISION_KINDS`): ``play`` counts
    the same card (a wild's colour aside); ``wild_colour`` the same colour, where both
    played the same wild or a Wild starter's colour is named; the others exact agreement.

    Returns:
        ``{"decisions": n, "overall": share, "kinds": {kind: {"decisions", "accuracy"}},
        "teachers": {name: {"decisions", "accuracy"}}}``; an accuracy is None with no
        decision.
    """
    teacher = demos.actions[rows]
    same = predicted == teacher
    kinds = decision_kinds(demos.phases[rows], teacher)
    face_t = C.ACTION_FACE[teacher]
    face_p = C.ACTION_FACE[predicted]
    scored: dict[str, npt.NDArray[np.bool_]] = {}
    for index, kind in enumerate(DECISION_KINDS):
        scored[kind] = kinds == index
    play = scored["play"]
    wild_play = play & (face_t >= C.WILD) & (face_p == face_t)
    correct = same.copy()
    correct[play] = face_p[play] == face_t[play]
    colour_rows = scored["wild_colour"] | wild_play
    scored["wild_colour"] = colour_rows

    def share(hit: npt.NDArray[np.bool_], where: npt.NDArray[np.bool_]) -> dict[str, Any]:
        n = int(np.count_nonzero(where))
        return {"decisions": n, "accuracy": float(hit[where].mean()) if n else None}

    kinds_out = {}
    for kind, where in scored.items():
        kinds_out[kind] = share(same if kind == "wild_colour" else correct, where)
    teachers_out = {
        name: share(same, demos.teachers[rows] == i) for i, name in enumerate(demos.teacher_names)
    }
    return {
        "decisions": int(rows.size),
        "overall": float(same.mean()) if rows.size else None,
        "kinds": kinds_out,
        "teachers": teachers_out,
    }


def fit_clone(
    config: ImitateConfig,
    demos: Demonstrations,
    train_rows: npt.NDArray[np.int64],
    valid_rows: npt.NDArray[np.int64],
    *,
    progress: bool = True,
) -> tuple[MLPNet, list[dict[str, float]]]:
    """Train the clone: minibatch Adam on the masked cross-entropy of the teacher's actions
    (or, with ``value_targets``, of the softmax of a search teacher's estimates,
    :func:`soft_targets`).

    Args:
        config: The run (``net_arch``, ``activation``, ``epochs``, ``batch_size``,
            ``learning_rate``, ``weight_decay``, ``label_smoothing``, ``seed``).
        demos: The recorded decisions.
        train_rows: The rows trained on.
        valid_rows: The held-out rows, scored after each epoch.
        progress: Show a progress bar (plain lines off a terminal).

    Returns:
        The trained network (on the CPU, whatever ``config.device``), and per epoch its
        mean training loss, validation loss and validation agreement.

    Raises:
        ConfigError: for ``device: cuda`` where torch sees no GPU.
    """
    device = torch.device(resolve_device(config.device))
    torch.manual_seed(config.seed)
    net = MLPNet(OBS_DIM, config.net_arch, C.NUM_ACTIONS, config.activation).to(device)
    optimiser = torch.optim.Adam(
        net.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay
    )
    obs = torch.from_numpy(demos.observations)
    masks = torch.from_numpy(demos.masks)
    actions = torch.from_numpy(demos.actions)
    temperature = config.value_targets
    values = (
        torch.from_numpy(demos.values)
        if temperature is not None and demos.values is not None
        else None
    )
    train_index = torch.from_numpy(train_rows)
    generator = torch.Generator().manual_seed(config.seed)
    steps_per_epoch = math.ceil(train_rows.size / config.batch_size)
    history: list[dict[str, float]] = []
    with progress_bar(
        "fitting the clone", steps_per_epoch * config.epochs, unit="batches", enabled=progress
    ) as bar:
        for epoch in range(config.epochs):
            net.train()
            order = train_index[torch.randperm(train_index.numel(), generator=generator)]
            total, seen = 0.0, 0
            for begin in range(0, order.numel(), config.batch_size):
                rows = order[begin : begin + config.batch_size]
                batch_masks, batch_actions = masks[rows].to(device), actions[rows].to(device)
                log_probs = _masked_log_probs(net, obs[rows].to(device), batch_masks)
                targets = None
                if values is not None and temperature is not None:
                    targets = soft_targets(values[rows].to(device), batch_actions, temperature)
                loss = _loss(log_probs, batch_masks, batch_actions, config.label_smoothing, targets)
                optimiser.zero_grad(set_to_none=True)
                loss.backward()
                optimiser.step()
                total += float(loss.detach()) * rows.numel()
                seen += rows.numel()
                bar.advance()
                if bar.completed % 50 == 0:
                    bar.update(note=f"epoch {epoch + 1}, loss {total / seen:.3f}")
            net.eval()
            valid = _validation_loss(net, demos, valid_rows, config.label_smoothing, temperature)
            predicted = predict(net, demos.observations[valid_rows], demos.masks[valid_rows])
            accuracy = float((predicted == demos.actions[valid_rows]).mean())
            history.append(
                {
                    "epoch": epoch + 1,
                    "train_loss": total / max(seen, 1),
                    "valid_loss": valid,
                    "valid_accuracy": accuracy,
                }
            )
            bar.update(
                note=f"epoch {epoch + 1}, loss {total / max(seen, 1):.3f}, "
                f"validation agreement {accuracy:.1%}"
            )
    return net.cpu().eval(), history


def _device_of(net: nn.Module) -> torch.device:
    """Where the network's weights are (the CPU for one without any)."""
    return next(net.parameters(), torch.empty(0)).device


def _validation_loss(
    net: nn.Module,
    demos: Demonstrations,
    rows: npt.NDArray[np.int64],
    smooth: float,
    temperature: float | None = None,
) -> float:
    """The mean loss on ``rows``, against the targets the clone trains on: the softmax of
    the estimates under ``value_targets`` (``temperature``), else the chosen actions."""
    total = 0.0
    device = _device_of(net)
    with torch.no_grad():
        for begin in range(0, rows.size, _INFERENCE_ROWS):
            part = rows[begin : begin + _INFERENCE_ROWS]
            masks = torch.from_numpy(demos.masks[part]).to(device)
            obs = torch.from_numpy(demos.observations[part]).to(device)
            log_probs = _masked_log_probs(net, obs, masks)
            actions = torch.from_numpy(demos.actions[part]).to(device)
            targets = None
            if temperature is not None and demos.values is not None:
                values = torch.from_numpy(demos.values[part]).to(device)
                targets = soft_targets(values, actions, temperature)
            total += float(_loss(log_probs, masks, actions, smooth, targets)) * part.size
    return total / max(rows.size, 1)


# What a run writes

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
    """The report as a short plain-text table (what ``uno-lab train imitate`` prints)."""
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
    layers = net.layer_weights()
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
