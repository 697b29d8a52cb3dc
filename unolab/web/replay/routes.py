"""The routes of games already played, shown frame by frame (:func:`replay_router`): the
saved web games, an uploaded record, and the games of tournament runs.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request

from unolab.web.catalogue import Catalogue
from unolab.web.lab.files import MAX_ID_CHARS
from unolab.web.replay.records import PAGE_FRAMES, replay_saved, replay_upload
from unolab.web.replay.tournament import RunFinder
from unolab.web.store import GameStore
from unolab.web.warming import NEEDS_ENGINE, NEEDS_SEARCHES

__all__ = ["replay_router"]


def replay_router(catalogue: Catalogue, store: GameStore, runs: RunFinder) -> APIRouter:
    """The routes of the saved web games, of uploaded records and of the tournament runs
    under the runs folder, for :func:`unolab.web.app.create_app`.

    Args:
        catalogue: The agents on offer (a replay names the agents of its game).
        store: Where the finished web games are saved.
        runs: Finds the tournament runs, reads their games and plays one again.
    """
    router = APIRouter()

    @router.get("/api/replays")
    def saved_games() -> list[dict[str, Any]]:
        """The saved web games, newest first."""
        return store.listing()

    @router.get("/api/replays/{game_id}", dependencies=[NEEDS_ENGINE])
    def replay_game(
        game_id: str,
        offset: int = Query(0, ge=0),
        limit: int = Query(PAGE_FRAMES, ge=1, le=PAGE_FRAMES),
    ) -> dict[str, Any]:
        """A saved web game, frame by frame: a page of frames from ``offset`` (``total``
        frames in all; ``next`` is where the next page starts, ``null`` after the last)."""
        return replay_saved(catalogue, store, game_id, offset, limit)

    @router.post("/api/replay-file", dependencies=[NEEDS_ENGINE])
    async def replay_file(
        request: Request,
        offset: int = Query(0, ge=0),
        limit: int = Query(PAGE_FRAMES, ge=1, le=PAGE_FRAMES),
    ) -> dict[str, Any]:
        """An uploaded record (the JSON of ``uno-lab play --record``), frame by frame: a
        page from ``offset``, as for a saved game (send the file again for each page)."""
        body = await request.body()
        return replay_upload(catalogue, body, offset, limit)

    @router.get("/api/runs")
    def run_list() -> list[str]:
        """The tournament runs under the runs folder (ids: paths relative to it)."""
        return sorted(runs.runs())

    @router.get("/api/runs/games")
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

    @router.get("/api/runs/replay", dependencies=[NEEDS_SEARCHES])
    def run_replay(
        run: str = Query(..., max_length=MAX_ID_CHARS),
        game: int = Query(..., ge=0),
        offset: int = Query(0, ge=0),
        limit: int = Query(PAGE_FRAMES, ge=1, le=PAGE_FRAMES),
    ) -> dict[str, Any]:
        """One game of a run, played again exactly and shown frame by frame: a page from
        ``offset``, as for a saved game."""
        return runs.replay(run, game, offset, limit)

    return router
