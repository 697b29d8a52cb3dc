"""The routes of games already played, shown frame by frame: the saved web games, an
uploaded record, and the games of tournament runs (:func:`add_replay_routes`,
:func:`add_run_routes`).
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Query, Request

from unolab.web.catalogue import Catalogue
from unolab.web.lab_files import MAX_ID_CHARS
from unolab.web.replays import replay_saved, replay_upload
from unolab.web.runs import RunFinder
from unolab.web.store import GameStore
from unolab.web.warming import NEEDS_ENGINE, NEEDS_SEARCHES

__all__ = ["add_replay_routes", "add_run_routes"]


def add_replay_routes(app: FastAPI, catalogue: Catalogue, store: GameStore) -> None:
    """Add the routes of the saved web games and of uploaded records to ``app``.

    Args:
        app: The app of :func:`unolab.web.app.create_app`.
        catalogue: The agents on offer (a replay names the agents of its game).
        store: Where the finished web games are saved.
    """

    @app.get("/api/replays")
    def saved_games() -> list[dict[str, Any]]:
        """The saved web games, newest first."""
        return store.listing()

    @app.get("/api/replays/{game_id}", dependencies=[NEEDS_ENGINE])
    def replay_game(game_id: str) -> dict[str, Any]:
        """A saved web game, frame by frame."""
        return replay_saved(catalogue, store, game_id)

    @app.post("/api/replay-file", dependencies=[NEEDS_ENGINE])
    async def replay_file(request: Request) -> dict[str, Any]:
        """An uploaded record (the JSON of ``uno-lab play --record``), frame by frame."""
        body = await request.body()
        return replay_upload(catalogue, body)


def add_run_routes(app: FastAPI, runs: RunFinder) -> None:
    """Add the routes of the tournament runs under the runs folder to ``app``.

    Args:
        app: The app of :func:`unolab.web.app.create_app`.
        runs: Finds the runs, reads their games and plays one again.
    """

    @app.get("/api/runs")
    def run_list() -> list[str]:
        """The tournament runs under the runs folder (ids: paths relative to it)."""
        return sorted(runs.runs())

    @app.get("/api/runs/games")
    def run_games(
        run: str = Query(..., max_length=MAX_ID_CHARS),
        offset: int = Query(0, ge=0),
        limit: int = Query(100, ge=1, le=1000),
    ) -> dict[str, Any]:
        """The games of a run (from ``offset``): seats, ranks, turns, how each ended."""
        records = runs.records(run)
        return {
            "run": run,
            "total": len(records),
            "games": [
                {
                    "game": offset + i,
                    "seed": str(r.key),  # the deal's 64-bit key, as digits
                    "seats": list(r.seats),
                    "ranks": list(r.ranks),
                    "turns": r.turns,
                    "end": r.end,
                }
                for i, r in enumerate(records[offset : offset + limit])
            ],
        }

    @app.get("/api/runs/replay", dependencies=[NEEDS_SEARCHES])
    def run_replay(
        run: str = Query(..., max_length=MAX_ID_CHARS), game: int = Query(..., ge=0)
    ) -> dict[str, Any]:
        """One game of a run, played again exactly and shown frame by frame."""
        return runs.replay(run, game)
