"""Fixtures of the browser-table tests: an app over scratch folders, a tiny learned agent."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.agents import write_tiny_agent
from support.optional import require

require("fastapi", "the browser table (pip install -e .[web])")

from fastapi.testclient import TestClient  # noqa: E402

from unolab.web.app import create_app  # noqa: E402
from unolab.web.settings import ServeConfig  # noqa: E402


@pytest.fixture(scope="module")
def agents_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the tiny agent."""
    folder = tmp_path_factory.mktemp("agents")
    write_tiny_agent(folder)
    return folder


TEST_HOST = "testserver"
"""The host name the ASGI test client addresses its requests to."""


def make_config(root: Path, agents_dir: Path | None = None, **changes: Any) -> ServeConfig:
    """A server config whose folders are under ``root``, answering the test client's host."""
    changes.setdefault("allowed_hosts", (TEST_HOST,))
    return ServeConfig(
        agents_dir=agents_dir, games_dir=root / "games", runs_dir=root / "runs", **changes
    )


@pytest.fixture
def client(tmp_path: Path, agents_dir: Path) -> Iterator[TestClient]:
    """A test client of a fresh server over ``tmp_path``."""
    with TestClient(create_app(make_config(tmp_path, agents_dir))) as test_client:
        yield test_client


def play_to_end(
    client: TestClient, view: dict[str, Any], rng: random.Random, whole_match: bool = False
) -> dict[str, Any]:
    """Play random legal moves, and ask a language model's seat for its move when the view
    names it ``thinking``, until the hand (or the match) is over; return the last view."""
    while True:
        if view["hand_over"]:
            if view["match_over"] or not whole_match:
                return view
            answer = client.post(f"/api/games/{view['id']}/next-hand", json={"seq": view["seq"]})
        elif view.get("thinking") is not None:
            answer = client.post(f"/api/games/{view['id']}/agent-move", json={"seq": view["seq"]})
        else:
            move = rng.choice(view["moves"])
            answer = client.post(
                f"/api/games/{view['id']}/moves",
                json={"action": move["action"], "seq": view["seq"]},
            )
        assert answer.status_code == 200, answer.text
        view = answer.json()
