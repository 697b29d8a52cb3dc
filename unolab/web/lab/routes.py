"""The Lab tab (:func:`lab_router`): the runs under the runs folder, by id, their plots and
curves, and the shipped agents, all read only.

Nothing here writes, trains or plays: a tournament is shown from its ``summary.json`` and
plots (:mod:`unolab.web.lab.runs`), a training run from its checkpoints' metadata and
``evaluations.jsonl`` (:mod:`unolab.web.lab.runs`), an agent from its model card
(:mod:`unolab.agents.model_card`). A run id is the run folder's path relative to the runs
folder, ``/``-separated; an id is looked up among the runs the bounded walk of
:func:`unolab.web.lab.files.find_runs` finds, so no id reaches the file system.

A path with a run id in it matches the longest route first: the routes of a run's plots and
curve are added before the route of the run itself, whose ``{run_id:path}`` would take
``<id>/plots/<name>`` whole. A run folder may itself be named like a plot or a curve
(``x/plots/y``, ``x/curve.png``): as runs do not nest, when the part before ``/plots/`` or
``/curve.png`` is no run but the whole path is, the answer is that run (every run the
listing shows opens).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter
from fastapi import Path as PathParam
from fastapi.responses import JSONResponse, Response

from unolab.agents.model_card import model_card
from unolab.agents.registry import SHIPPED_DIR
from unolab.human_games import human_results
from unolab.web.guard import NotFound, one_line
from unolab.web.lab.files import MAX_ID_CHARS, RunFiles, find_runs, integer, rate, rules_name
from unolab.web.lab.runs import (
    curve_png,
    tournament_detail,
    tournament_entry,
    tournament_plot,
    training_detail,
    training_entry,
)

__all__ = ["LabRuns", "lab_router", "shipped_agents"]

RunId = Annotated[str, PathParam(max_length=MAX_ID_CHARS)]
"""A run id in a path: the run folder relative to the runs folder (``tournaments/x``)."""

PlotName = Annotated[str, PathParam(max_length=255)]
"""A plot's file name (or the last folder of a run named like a plot's path)."""

_NO_STORE = {"Cache-Control": "no-store"}
"""A run's files change while it runs: a plot or curve is never answered from a cache."""


class LabRuns:
    """The tournament and training runs under one folder, read only.

    Args:
        folder: The runs folder of ``serve --runs-dir``.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    def listing(self) -> dict[str, list[dict[str, Any]]]:
        """Every run found, newest first: ``{"tournaments": [...], "training": [...]}``."""
        found = find_runs(self.folder)
        tournaments = [tournament_entry(run) for run in found.tournaments.values()]
        training = [training_entry(run) for run in found.training.values()]
        return {
            "tournaments": sorted(tournaments, key=lambda r: (-r["modified"], r["id"])),
            "training": sorted(training, key=lambda r: (-r["modified"], r["id"])),
        }

    def is_tournament(self, run_id: str) -> bool:
        """Whether ``run_id`` is a tournament run under the runs folder."""
        return run_id in find_runs(self.folder).tournaments

    def is_training(self, run_id: str) -> bool:
        """Whether ``run_id`` is a training run under the runs folder."""
        return run_id in find_runs(self.folder).training

    def _tournament(self, run_id: str) -> RunFiles:
        run = find_runs(self.folder).tournaments.get(run_id)
        if run is None:
            raise NotFound(f"no tournament run {_shown_id(run_id)} under the runs folder")
        return run

    def _training(self, run_id: str) -> RunFiles:
        run = find_runs(self.folder).training.get(run_id)
        if run is None:
            raise NotFound(f"no training run {_shown_id(run_id)} under the runs folder")
        return run

    def tournament(self, run_id: str) -> dict[str, Any]:
        """A tournament's leaderboard, rules and plots (see ``docs/web.md``).

        Raises:
            NotFound: for an id that is not a tournament run.
            Invalid: for a summary that cannot be read.
        """
        return tournament_detail(self._tournament(run_id))

    def plot(self, run_id: str, name: str) -> bytes:
        """The PNG bytes of one of a tournament's plots.

        Raises:
            NotFound: for an unknown run or a name its detail does not list.
            Invalid: for a plot too large or not a PNG.
        """
        return tournament_plot(self._tournament(run_id), name)

    def training(self, run_id: str) -> dict[str, Any]:
        """A training run and its learning curve (see ``docs/web.md``).

        Raises:
            NotFound: for an id that is not a training run.
            Invalid: for metadata or an evaluation log that cannot be read.
        """
        return training_detail(self._training(run_id))

    def curve(self, run_id: str) -> bytes:
        """A training run's learning curve as a PNG (raises as :meth:`training`)."""
        return curve_png(self._training(run_id))


def _shown_id(run_id: str) -> str:
    """An id from a request, quoted and cut short for a message."""
    return one_line(repr(run_id), 120)


def shipped_agents(folder: Path = SHIPPED_DIR) -> list[dict[str, Any]]:
    """The shipped agents, by name, as their model cards describe them.

    An agent whose metadata the card cannot read is still listed, with what its JSON holds
    and ``null`` (or an empty text) for the rest.

    Args:
        folder: The shipped agents' folder (each ``<name>.json`` beside its weights).
    """
    names = sorted(
        meta.stem for meta in folder.glob("*.json") if meta.with_suffix(".safetensors").is_file()
    )
    return [_agent(folder / f"{name}.json") for name in names]


def _agent(meta_path: Path) -> dict[str, Any]:
    try:
        card = model_card(meta_path)
    except (OSError, ValueError, TypeError, KeyError):
        return _bare_agent(meta_path)
    # The card's recipe is Markdown for the docs: the tab shows it as text, a stage a line.
    recipe = "\n".join(
        f"{number}. {stage.replace('`', '')}" for number, stage in enumerate(card.stages, 1)
    )
    return {
        "name": card.name,
        "title": card.title,
        "rules": card.rules,
        "num_players": card.num_players,
        "observation_version": card.observation_version,
        "algorithm": card.algorithm,
        "recipe": recipe,
        "training_steps": card.training_steps,
        "strength": [
            {
                "opponent": row.opponent,
                "win_rate": row.win_rate,
                "ci_low": row.ci_low,
                "ci_high": row.ci_high,
                "games": row.games,
                "seed": card.seed,
            }
            for row in card.strength
        ],
    }


def _bare_agent(meta_path: Path) -> dict[str, Any]:
    """What an agent's JSON holds when it is no complete model card."""
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        meta = {}
    meta = meta if isinstance(meta, dict) else {}
    rules, extra = meta.get("rules"), meta.get("extra")
    players = integer(rules.get("num_players")) if isinstance(rules, dict) else None
    steps = integer(extra.get("steps")) if isinstance(extra, dict) else None
    algorithm = meta.get("algorithm")
    return {
        "name": meta_path.stem,
        "title": meta_path.stem,
        "rules": rules_name(rules),
        "num_players": players or 0,
        "observation_version": integer(meta.get("obs_version")),
        "algorithm": algorithm if isinstance(algorithm, str) else "",
        "recipe": "",
        "training_steps": steps,
        "strength": _bare_strength(extra.get("strength") if isinstance(extra, dict) else None),
    }


def _bare_strength(measured: Any) -> list[dict[str, Any]]:
    """The measured pairings that hold a win rate, an interval and a game count."""
    if not isinstance(measured, dict):
        return []
    seed = integer(measured.get("seed"))
    rows = []
    for opponent, row in measured.items():
        if not isinstance(row, dict):
            continue
        numbers = [rate(row.get(key)) for key in ("win_rate", "ci_low", "ci_high")]
        games = integer(row.get("games"))
        if games is None or any(n is None for n in numbers):
            continue
        rate, low, high = numbers
        rows.append(
            {
                "opponent": str(opponent),
                "win_rate": rate,
                "ci_low": low,
                "ci_high": high,
                "games": games,
                "seed": seed,
            }
        )
    return rows


def lab_router(
    runs_dir: Path, shipped_dir: Path = SHIPPED_DIR, games_dir: Path | None = None
) -> APIRouter:
    """The routes of the Lab tab, for :func:`unolab.web.app.create_app`.

    Args:
        runs_dir: The runs folder of ``serve --runs-dir``.
        shipped_dir: The shipped agents (default: ``agents/pretrained``).
        games_dir: The games folder of ``serve --games-dir``, whose games kept as data
            give people's results against each agent (``None``: none).
    """
    lab = LabRuns(runs_dir)
    router = APIRouter()

    @router.get("/api/lab/runs")
    def lab_runs() -> dict[str, list[dict[str, Any]]]:
        """The tournament and training runs under the runs folder, newest first."""
        return lab.listing()

    @router.get(
        "/api/lab/tournaments/{run_id:path}/plots/{name}",
        response_class=Response,
        responses={200: {"content": {"image/png": {}}}},
    )
    def lab_plot(run_id: RunId, name: PlotName) -> Response:
        """One of the PNG plots a tournament run wrote (a name its detail lists)."""
        whole = f"{run_id}/plots/{name}"
        if not lab.is_tournament(run_id) and lab.is_tournament(whole):
            return JSONResponse(lab.tournament(whole))
        return Response(lab.plot(run_id, name), media_type="image/png", headers=_NO_STORE)

    @router.get("/api/lab/tournaments/{run_id:path}")
    def lab_tournament(run_id: RunId) -> dict[str, Any]:
        """A tournament run: its leaderboard, rules and plots."""
        return lab.tournament(run_id)

    @router.get(
        "/api/lab/training/{run_id:path}/curve.png",
        response_class=Response,
        responses={200: {"content": {"image/png": {}}}},
    )
    def lab_curve(run_id: RunId) -> Response:
        """A training run's learning curve, drawn from its files now."""
        whole = f"{run_id}/curve.png"
        if not lab.is_training(run_id) and lab.is_training(whole):
            return JSONResponse(lab.training(whole))
        return Response(lab.curve(run_id), media_type="image/png", headers=_NO_STORE)

    @router.get("/api/lab/training/{run_id:path}")
    def lab_training(run_id: RunId) -> dict[str, Any]:
        """A training run and its learning curve."""
        return lab.training(run_id)

    @router.get("/api/lab/agents")
    def lab_agents() -> list[dict[str, Any]]:
        """The shipped agents: what each is, how it was made and how strong it measured."""
        return shipped_agents(shipped_dir)

    @router.get("/api/lab/humans")
    def lab_humans() -> list[dict[str, Any]]:
        """People against each agent, from the games kept as data: per agent, finished
        matches, the people's win rate and its Wilson 95% interval."""
        return [] if games_dir is None else human_results(games_dir)

    return router
