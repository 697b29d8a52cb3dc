"""Where a request's work on a game runs: in the server's event loop when every agent of the
game answers at once (bots and networks), in a worker thread otherwise (a search, a language
model, or the game's lock held by another request)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import make_config
from fastapi.testclient import TestClient

from unolab.web.app import create_app
from unolab.web.catalogue import Catalogue
from unolab.web.game.games import run_locked
from unolab.web.game.table import WebGame


class _Game:
    def __init__(self) -> None:
        self.lock = threading.Lock()


def _in_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def test_work_runs_in_the_loop_only_when_quick_and_the_lock_is_free() -> None:
    game: Any = _Game()

    async def main() -> list[tuple[bool, bool]]:
        seen = []
        for at_once in (True, False):
            seen.append(await run_locked(game, lambda: (_in_loop(), game.lock.locked()), at_once))
        game.lock.acquire()
        asyncio.get_running_loop().call_later(0.05, game.lock.release)
        seen.append(await run_locked(game, lambda: (_in_loop(), game.lock.locked()), True))
        return seen

    # The lock is held while the work runs, wherever it runs; taken by another request,
    # the work waits for it in a thread, never blocking the loop.
    assert asyncio.run(main()) == [(True, True), (False, True), (False, True)]
    assert not game.lock.locked()


def test_an_error_of_the_work_releases_the_lock_on_both_paths() -> None:
    game: Any = _Game()

    def fail() -> None:
        raise ValueError("refused")

    for at_once in (True, False):
        with pytest.raises(ValueError, match="refused"):
            asyncio.run(run_locked(game, fail, at_once))
        assert not game.lock.locked()


def test_bots_and_networks_answer_at_once_searches_and_unknown_agents_do_not() -> None:
    catalogue = Catalogue()
    assert catalogue.answers_at_once([None, "mixbot", "random", "shipped:ppo_official_2p"])
    assert not catalogue.answers_at_once([None, "mixbot", "pimc"])
    assert not catalogue.answers_at_once([None, "ismcts"])
    assert not catalogue.answers_at_once([None, "no_such_agent"])


def test_a_move_against_bots_is_played_in_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    places: list[bool] = []
    human_move = WebGame.human_move

    def recorded(self: WebGame, *args: Any, **kwargs: Any) -> None:
        places.append(_in_loop())
        human_move(self, *args, **kwargs)

    monkeypatch.setattr(WebGame, "human_move", recorded)
    app = create_app(make_config(tmp_path))
    with TestClient(app) as http:
        view = http.post("/api/games", json={"opponents": ["mixbot"], "seed": 3}).json()
        answer = http.post(
            f"/api/games/{view['id']}/moves",
            json={"action": view["moves"][0]["action"], "seq": view["seq"]},
        )
        assert answer.status_code == 200, answer.text
        assert answer.json()["seq"] > view["seq"]
    assert places == [True]
