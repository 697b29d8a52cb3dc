"""A bounded load test: 200 games played at once through the API, each to its end."""

from __future__ import annotations

import random
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from conftest import make_config
from fastapi.testclient import TestClient

from unolab.web.app import create_app

GAMES = 200
THREADS = 32


def _play(client: TestClient, number: int) -> tuple[list[float], dict[str, Any], str]:
    """Play one game to its end with random legal moves; check every answer is its own."""
    rng = random.Random(number)
    seed = 1000 + number
    body = {"opponents": ["mixbot"], "seed": seed, "switches": {"target_score": 1}}
    view = client.post("/api/games", json=body).json()
    game_id, times = view["id"], []
    while not view["hand_over"]:
        move = rng.choice(view["moves"])["action"]
        start = time.perf_counter()
        answer = client.post(
            f"/api/games/{game_id}/moves", json={"action": move, "seq": view["seq"]}
        )
        times.append(time.perf_counter() - start)
        assert answer.status_code == 200, answer.text
        new = answer.json()
        assert new["id"] == game_id and new["seed"] == str(seed) and new["seq"] > view["seq"]
        view = new
    return times, view, game_id


def test_200_concurrent_games_play_to_their_end(tmp_path: Path) -> None:
    app = create_app(make_config(tmp_path))
    with TestClient(app) as client, ThreadPoolExecutor(THREADS) as pool:
        start = time.perf_counter()
        results = list(pool.map(lambda n: _play(client, n), range(GAMES)))
        elapsed = time.perf_counter() - start
        # No cross-talk: each game is exactly the game its seed and its moves give.
        for number, (_, view, game_id) in enumerate(results):
            frames = client.get(f"/api/replays/{game_id}").json()["frames"]
            assert frames[-1]["table"]["seats"][0]["cards"] == view["table"]["seats"][0]["cards"]
            assert len(frames) == view["seq"] + 1, number
    moves = [t for times, _, _ in results for t in times]
    assert len({game_id for _, _, game_id in results}) == GAMES
    assert all(view["match_over"] for _, view, _ in results)
    batcher = app.app.state.batcher
    median_ms = 1000 * statistics.median(moves)
    print(
        f"\n{GAMES} games, {len(moves)} moves in {elapsed:.1f} s with {THREADS} clients: "
        f"median move round-trip {median_ms:.1f} ms, "
        f"p90 {1000 * statistics.quantiles(moves, n=10)[-1]:.1f} ms; agent decisions per "
        f"round {batcher.decisions / batcher.rounds:.2f}"
    )
    assert elapsed < 120
