"""Warm starts by imitation: ``python -m unolab.train.imitate --config configs/imitate/<name>.yaml``.

An imitation run clones a teacher (any bot, an exported agent, or a weighted mix of them)
into a network of the PPO policy's architecture, so that a PPO run can start from a player
that is already strong instead of a random one (``init_from``). Read it top to bottom:

1. :func:`~unolab.train.imitation_data.generate_demonstrations` plays thousands of games side by
   side with the teachers and records (observation, legal mask, teacher action) at each of
   their decisions;
2. :func:`fit_clone` trains an MLP (``net_arch``, tanh: MaskablePPO's policy network) on
   them by minibatch Adam, minimising the cross-entropy of the masked logits (illegal
   actions get no probability, as in MaskablePPO), on all games but a held-out share;
3. :func:`agreement` scores the clone on the held-out games: how often it picks the
   teacher's action, overall and per kind of decision (play, draw, wild colour,
   challenge, ...);
4. the clone and each teacher play ``eval_games`` hands against each ``eval_bots`` bot on
   the same deals (:func:`unolab.agents.arena.evaluate_vs`, Wilson intervals);
5. everything is written to ``runs/<name>/``: the clone as a pickle-free policy
   (``<name>.safetensors`` + ``<name>.json``, algorithm ``imitation``, the teachers and the
   accuracy in its ``extra``), ``imitation_report.json`` (the table printed at the end) and
   ``config.yaml``.

A PPO run starts from the clone with ``init_from: runs/<name>/<name>.safetensors`` (same
rules and ``ppo.net_arch``): its policy branch and action head receive the clone's layers,
its value head starts fresh. A masked DQN run can start from a clone made with
``activation: relu`` and the DQN's ``net_arch``; the Q-values then start as the clone's
logits.

A refused run writes nothing. The clone is written as soon as it is fitted (then again with
its measured strength), and with ``keep_demonstrations: true`` the recording as soon as it
is made (``demonstrations.npz``, :mod:`unolab.train.demonstration_files`): an interrupted run loses
neither an hour of search nor a fitted clone. Later runs train on kept recordings with
``include`` (``samples: 0`` records nothing new), and with ``value_targets`` imitate a search
teacher's estimates instead of its one noisy pick. An existing run is replaced only with
``--overwrite``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TextIO

import numpy as np
import numpy.typing as npt
import torch
from torch import nn
from tqdm.auto import tqdm

from uno_env import cards as C
from uno_env.configuration import add_config_options
from uno_env.files import FolderInUseError, RunFolderLock, write_atomically
from uno_env.observation import OBS_DIM, OBS_VERSION
from uno_env.rules import Rules
from unolab.agents.arena import EvalResult, evaluate_vs
from unolab.agents.learned import MLPNet, PolicyMetadata, TorchPolicy, save_policy
from unolab.train.demonstration_files import (
    DEMONSTRATIONS_FILE,
    concat_demonstrations,
    load_demonstrations,
    save_demonstrations,
)
from unolab.train.export import git_commit
from unolab.train.imitate_config import ImitateConfig, load_imitate_config
from unolab.train.imitation_data import (
    DECISION_KINDS,
    Demonstrations,
    decision_kinds,
    generate_demonstrations,
    teacher_factory,
)

__all__ = [
    "ALGORITHM",
    "REPORT_NAME",
    "ImitationResult",
    "agreement",
    "clone_path",
    "fit_clone",
    "imitate",
    "main",
    "run_files",
    "train",
    "validation_split",
]

ALGORITHM = "imitation"
"""The ``algorithm`` of a clone's metadata."""

REPORT_NAME = "imitation_report.json"
"""The report's file name in the run folder."""

_EVAL_SEED_OFFSET = 7919
"""Added to the run's seed for the strength measurement (as training runs do): its deals
are never those the clone was trained on."""

_INFERENCE_ROWS = 65_536
"""Rows per forward pass when scoring (bounded memory for any validation size)."""


@dataclass(frozen=True)
class ImitationResult:
    """What an imitation run produced.

    Attributes:
        run_dir: The run's folder.
        policy: The clone's weights (``<run_dir>/<name>.safetensors``).
        report: The report as written to ``imitation_report.json``.
    """

    run_dir: Path
    policy: Path
    report: dict[str, Any]


def clone_path(config: ImitateConfig) -> Path:
    """Where the clone is written, without suffix: ``<run_dir>/<name>`` (``clone`` when the
    name would take the report's file)."""
    stem = config.name if config.name != Path(REPORT_NAME).stem else "clone"
    return config.run_dir / stem


def run_files(config: ImitateConfig) -> list[Path]:
    """The files of an imitation run that exist in ``config.run_dir`` (what it would write)."""
    stem = clone_path(config)
    named = [
        stem.with_suffix(".safetensors"),
        stem.with_suffix(".json"),
        config.run_dir / REPORT_NAME,
        config.run_dir / "config.yaml",
        config.run_dir / DEMONSTRATIONS_FILE,
    ]
    return [p for p in named if p.exists() or p.is_symlink()]


def _check_run_dir(config: ImitateConfig, overwrite: bool) -> None:
    """Refuse to replace an earlier run by accident (before minutes of work, not after).

    Raises:
        FileExistsError: naming the folder and the ways out.
    """
    existing = run_files(config)
    if existing and not overwrite:
        shown = ", ".join(p.name for p in existing)
        raise FileExistsError(
            f"{config.run_dir} already holds a run ({shown}): replace it with --overwrite, or "
            "give the new run another name with --set name=..."
        )


# ----------------------------------------------------------------------------------------
# Fitting
# ----------------------------------------------------------------------------------------


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
    with torch.no_grad():
        for begin in range(0, observations.shape[0], _INFERENCE_ROWS):
            rows = slice(begin, begin + _INFERENCE_ROWS)
            obs = torch.from_numpy(observations[rows])
            legal = torch.from_numpy(masks[rows])
            logits = net(obs).masked_fill(~legal, float("-inf"))
            out[rows] = logits.argmax(dim=1).numpy()
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
        progress: Show a progress bar (hidden anyway when not a terminal).

    Returns:
        The trained network, and per epoch its mean training loss, validation loss and
        validation agreement.
    """
    torch.manual_seed(config.seed)
    net = MLPNet(OBS_DIM, config.net_arch, C.NUM_ACTIONS, config.activation)
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
    with tqdm(
        total=steps_per_epoch * config.epochs,
        desc="fitting the clone",
        unit="batch",
        disable=None if progress else True,
    ) as bar:
        for epoch in range(config.epochs):
            net.train()
            order = train_index[torch.randperm(train_index.numel(), generator=generator)]
            total, seen = 0.0, 0
            for begin in range(0, order.numel(), config.batch_size):
                rows = order[begin : begin + config.batch_size]
                log_probs = _masked_log_probs(net, obs[rows], masks[rows])
                targets = None
                if values is not None and temperature is not None:
                    targets = soft_targets(values[rows], actions[rows], temperature)
                loss = _loss(log_probs, masks[rows], actions[rows], config.label_smoothing, targets)
                optimiser.zero_grad(set_to_none=True)
                loss.backward()
                optimiser.step()
                total += float(loss.detach()) * rows.numel()
                seen += rows.numel()
                bar.update(1)
                if bar.n % 50 == 0:
                    bar.set_postfix(epoch=epoch + 1, loss=f"{total / seen:.3f}")
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
            bar.set_postfix(epoch=epoch + 1, loss=f"{total / max(seen, 1):.3f}", val=accuracy)
    return net.eval(), history


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
    with torch.no_grad():
        for begin in range(0, rows.size, _INFERENCE_ROWS):
            part = rows[begin : begin + _INFERENCE_ROWS]
            masks = torch.from_numpy(demos.masks[part])
            log_probs = _masked_log_probs(net, torch.from_numpy(demos.observations[part]), masks)
            actions = torch.from_numpy(demos.actions[part])
            targets = None
            if temperature is not None and demos.values is not None:
                values = torch.from_numpy(demos.values[part])
                targets = soft_targets(values, actions, temperature)
            total += float(_loss(log_probs, masks, actions, smooth, targets)) * part.size
    return total / max(rows.size, 1)


# ----------------------------------------------------------------------------------------
# Strength, report, export
# ----------------------------------------------------------------------------------------


def _strength(
    config: ImitateConfig, rules: Rules, clone: TorchPolicy, progress: bool
) -> dict[str, dict[str, dict[str, Any]]]:
    """Win rates of the clone and (with ``eval_teachers``) of each teacher against each
    evaluation bot, on the same deals."""
    seed = config.seed + _EVAL_SEED_OFFSET
    players: dict[str, Any] = {"clone": clone}
    for name, weight in config.teachers.items():
        if weight > 0 and config.eval_teachers:
            players[name] = teacher_factory(name, rules, config.teacher_budget)(seed)
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for label, player in players.items():
        out[label] = {}
        for bot in config.eval_bots:
            result: EvalResult = evaluate_vs(
                rules, player, bot, config.eval_games, seed=seed, progress=progress
            )
            out[label][bot] = result.to_dict()
    return out


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


def _metadata(config: ImitateConfig, rules: Rules, extra: dict[str, Any]) -> PolicyMetadata:
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


def _export(config: ImitateConfig, rules: Rules, net: MLPNet, report: dict[str, Any]) -> Path:
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
    return save_policy(clone_path(config), layers, _metadata(config, rules, extra))


def imitate(
    config: ImitateConfig,
    *,
    overwrite: bool = False,
    progress: bool = True,
    log: TextIO | None = sys.stderr,
) -> ImitationResult:
    """Run an imitation: record, fit, score, measure, export (see the module docstring).

    Args:
        config: The run.
        overwrite: Replace the files of an earlier run of the same name.
        progress: Show progress bars (hidden anyway when not a terminal).
        log: Where to say what runs now (None: silent).

    Returns:
        The run's folder, the clone's weights and the report.

    Raises:
        FileExistsError: if ``config.run_dir`` holds a run and ``overwrite`` is not set.
        ValueError: for a teacher that cannot be loaded (an agent file trained under other
            rules, a malformed one) or that plays an illegal action.
    """

    def say(message: str) -> None:
        if log is not None:
            print(f"[{config.name}] {message}", file=log, flush=True)

    torch.set_num_threads(config.torch_threads)
    rules = config.build_rules()
    _check_run_dir(config, overwrite)  # before any work; checked again under the lock
    lock = RunFolderLock(config.run_dir, "imitation run")
    lock.take()  # one run per folder: a second one is refused, naming this one's pid
    try:
        _check_run_dir(config, overwrite)
        result = _imitate(config, rules, progress, say)
    except BaseException:
        lock.release(undo=not run_files(config))  # a refused start leaves nothing behind
        raise
    lock.release()
    return result


def _imitate(
    config: ImitateConfig, rules: Rules, progress: bool, say: Callable[[str], None]
) -> ImitationResult:
    """:func:`imitate`'s work, with the run folder held."""
    for teacher in config.teachers:  # an agent file that does not fit fails now, named
        teacher_factory(teacher, rules, config.teacher_budget)
    if config.behaviour is not None and config.samples:
        teacher_factory(config.behaviour, rules)
    teachers_label = "+".join(config.teachers)
    parts = []
    for path in config.include:  # a file of other rules fails now, before any recording
        parts.append(load_demonstrations(path, rules))
        say(
            f"included {len(parts[-1]):,} decisions of {'+'.join(parts[-1].teacher_names)} "
            f"from {path}"
        )
    if config.samples:
        say(f"recording {config.samples:,} decisions of {teachers_label}...")
        recorded = generate_demonstrations(
            rules,
            config.teachers,
            config.samples,
            opponents=config.opponents,
            seed=config.seed,
            games_per_batch=config.games_per_batch,
            progress=progress,
            teacher_budget=config.teacher_budget,
            behaviour=config.behaviour,
            behaviour_share=config.behaviour_share,
        )
        if config.keep_demonstrations:  # kept at once: an hour of search is not lost
            config.run_dir.mkdir(parents=True, exist_ok=True)
            kept = save_demonstrations(config.run_dir / DEMONSTRATIONS_FILE, recorded, rules)
            say(f"kept the recording in {kept}")
        parts.append(recorded)
    demos = concat_demonstrations(parts)
    if config.value_targets is not None and demos.values is None:
        say(
            "value_targets: no teacher recorded estimates (only search teachers do); "
            "imitating the chosen actions"
        )
    train_rows, valid_rows = validation_split(demos, config.validation, config.seed)
    say(
        f"fitting {config.net_arch} on {train_rows.size:,} decisions, "
        f"{valid_rows.size:,} held out..."
    )
    start = time.perf_counter()
    net, history = fit_clone(config, demos, train_rows, valid_rows, progress=progress)
    fit_seconds = time.perf_counter() - start
    predicted = predict(net, demos.observations[valid_rows], demos.masks[valid_rows])
    report: dict[str, Any] = {
        "name": config.name,
        "teachers_label": teachers_label,
        "teachers": dict(config.teachers),
        "opponents": config.opponents,
        "behaviour": (
            None
            if config.behaviour is None
            else {"agent": config.behaviour, "share": config.behaviour_share}
        ),
        "rules": rules.to_dict(),
        "obs_version": OBS_VERSION,
        "data": {
            "decisions": len(demos),
            "games": demos.num_games,
            "forced_skipped": demos.forced,
            "train": int(train_rows.size),
            "validation": int(valid_rows.size),
            "seconds": demos.seconds,
            "included": list(config.include),
            "with_estimates": (
                0 if demos.values is None else int((~np.isnan(demos.values)).any(axis=1).sum())
            ),
        },
        "fit": {
            "value_targets": config.value_targets,
            "epochs": config.epochs,
            "seconds": fit_seconds,
            "history": history,
        },
        "accuracy": agreement(predicted, demos, valid_rows),
    }
    del demos  # the observations take gigabytes at a few million decisions
    # The clone is written before the measurement (minutes with a search teacher), so that
    # an interrupted measurement loses no fitted clone; it is written again with its figures.
    config.run_dir.mkdir(parents=True, exist_ok=True)
    _export(config, rules, net, report)
    say(f"measuring the clone and its teacher(s) against {list(config.eval_bots)}...")
    clone = TorchPolicy(net, _metadata(config, rules, {}))
    report["strength"] = _strength(config, rules, clone, progress)
    weights = _export(config, rules, net, report)
    report["policy"] = str(weights)
    write_atomically(config.run_dir / REPORT_NAME, json.dumps(report, indent=2))
    write_atomically(config.run_dir / "config.yaml", config.to_yaml())
    return ImitationResult(config.run_dir, weights, report)


# ----------------------------------------------------------------------------------------
# Command line
# ----------------------------------------------------------------------------------------


def train(
    config: ImitateConfig | str | Path | Mapping[str, Any],
    overrides: Sequence[str] = (),
    *,
    overwrite: bool = False,
    progress: bool = True,
    log: TextIO | None = sys.stderr,
) -> ImitationResult:
    """Clone teachers from a script or a notebook, as ``uno-lab train imitate --config FILE``.

    Args:
        config: An :class:`~unolab.train.imitate_config.ImitateConfig`, the path of a YAML config
            or a mapping of its keys.
        overrides: ``key=value`` items applied on top, as ``--set`` (``decisions=2000``).
        overwrite: Replace the files of an earlier run of the same name.
        progress: Show progress bars.
        log: Where to say what runs now (None: silent).

    Returns:
        The run's folder, the clone's weights and the report.

    Raises:
        ConfigError: for an invalid config.
        FileExistsError: if the run folder holds a run and ``overwrite`` is not set.
    """
    if isinstance(config, ImitateConfig):
        if overrides:
            config = load_imitate_config(None, overrides, base=config.to_dict())
    elif isinstance(config, Mapping):
        config = load_imitate_config(None, overrides, base=config)
    else:
        config = load_imitate_config(config, overrides)
    return imitate(config, overwrite=overwrite, progress=progress, log=log)


def _fail(err: BaseException, prog: str) -> NoReturn:
    """Bad input: ``<prog>: error: <message>`` on stderr (argparse's form), exit 2."""
    print(f"{prog}: error: {' '.join(str(err).split()) or type(err).__name__}", file=sys.stderr)
    raise SystemExit(2)


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    """The options of ``python -m unolab.train.imitate`` (and ``uno-lab train imitate``)."""
    parser = argparse.ArgumentParser(
        prog=prog or "python -m unolab.train.imitate",
        description="Clone a bot (or a weighted mix of bots) into a network that a PPO run can "
        "start from (init_from: runs/<name>/<name>.safetensors).",
    )
    add_config_options(
        parser, "configs/imitate/mixbot_2p.yaml", "samples=200000", run="runs/<name>"
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    return parser


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> ImitationResult:
    """Command line: ``python -m unolab.train.imitate --config FILE [--set KEY=VALUE] [--overwrite]``.

    Bad input ends with one line ``<prog>: error: ...`` on stderr and exit status 2, having
    written nothing; Ctrl-C exits 130, naming what was written before it (a kept recording,
    a fitted clone) or saying that nothing was.
    """
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    if args.config is None:
        parser.error("give --config FILE (e.g. configs/imitate/mixbot_2p.yaml)")
    config: ImitateConfig | None = None
    try:
        config = load_imitate_config(args.config, args.overrides)
        result = imitate(config, overwrite=args.overwrite, progress=not args.no_progress)
    except KeyboardInterrupt:
        written = [] if config is None else [p.name for p in run_files(config)]
        kept = f"; kept in {config.run_dir}: {', '.join(written)}" if written and config else ""
        print(f"interrupted{kept or ': nothing was written'}", file=sys.stderr)
        raise SystemExit(130) from None
    except (ValueError, OSError, FolderInUseError) as err:
        _fail(err, parser.prog)
    print(format_report(result.report))
    print(
        f"wrote the clone {result.policy} and {result.run_dir / REPORT_NAME}; start a PPO run "
        f"from it with init_from: {result.policy}"
    )
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
