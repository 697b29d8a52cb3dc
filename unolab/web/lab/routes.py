"""The routes of the Lab tab (:func:`lab_router`): runs, their plots and curves, and the
shipped agents, all read only.

A path with a run id in it matches the longest route first: the routes of a run's plots and
curve are added before the route of the run itself, whose ``{run_id:path}`` would take
``<id>/plots/<name>`` whole. A run folder may itself be named like a plot or a curve
(``x/plots/y``, ``x/curve.png``): as runs do not nest, when the part before ``/plots/`` or
``/curve.png`` is no run but the whole path is, the answer is that run (every run the
listing shows opens).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter
from fastapi import Path as PathParam
from fastapi.responses import JSONResponse, Response

from unolab.agents.shipped import SHIPPED_DIR
from unolab.web.lab.files import MAX_ID_CHARS
from unolab.web.lab.reader import LabRuns, shipped_agents

__all__ = ["lab_router"]

RunId = Annotated[str, PathParam(max_length=MAX_ID_CHARS)]
"""A run id in a path: the run folder relative to the runs folder (``tournaments/x``)."""

PlotName = Annotated[str, PathParam(max_length=255)]
"""A plot's file name (or the last folder of a run named like a plot's path)."""

_NO_STORE = {"Cache-Control": "no-store"}
"""A run's files change while it runs: a plot or curve is never answered from a cache."""


def lab_router(runs_dir: Path, shipped_dir: Path = SHIPPED_DIR) -> APIRouter:
    """The routes of the Lab tab, for :func:`unolab.web.app.create_app`.

    Args:
        runs_dir: The runs folder of ``serve --runs-dir``.
        shipped_dir: The shipped agents (default: ``agents/pretrained``).
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

    return router
