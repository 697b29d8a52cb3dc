"""Replays of recorded games: saved web games and uploaded ``uno-lab play --record`` files.

Both are records of the same format; they are read by the terminal replay's own loader
(:func:`unolab.play.load_record`), so a file the terminal refuses is refused here with the
same message.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from uno_env.game import UnoGame
from uno_env.rules import Rules
from unolab.play import RecordError, load_record
from unolab.web.catalogue import Catalogue
from unolab.web.errors import Invalid, NotFound
from unolab.web.frames import Advisor, build_frames
from unolab.web.store import GameStore

__all__ = ["advisors_for", "replay_saved", "replay_upload"]

_LABEL = re.compile(r"\(([^()]+)\)$")


def advisors_for(
    catalogue: Catalogue, rules: Rules, agent_ids: Sequence[str | None]
) -> dict[int, Advisor]:
    """``action_probs`` of each seat held by a learned agent that fits ``rules``."""
    out: dict[int, Advisor] = {}
    for seat, agent_id in enumerate(agent_ids):
        if agent_id is None or agent_id not in catalogue.entries:
            continue
        if catalogue.entry(agent_id).rules is None:
            continue  # a bot: no network, no probabilities
        try:
            policy = catalogue.policy(agent_id, rules)
        except ValueError:
            continue  # trained for other rules: shown without probabilities
        probs = getattr(policy, "action_probs", None)
        if probs is not None:
            out[seat] = probs
    return out


def _replay(
    catalogue: Catalogue, path: Path, where: str, agent_ids: Sequence[str | None] | None
) -> dict[str, Any]:
    try:
        rules, seed, names, hands = load_record(path)
    except (RecordError, FileNotFoundError) as err:
        raise Invalid(str(err).replace(str(path), where)) from None
    if agent_ids is None or len(agent_ids) != len(names):
        # Older records keep only the seat names: "player_1 (mixbot)".
        agent_ids = []
        for name in names:
            found = _LABEL.search(name)
            entry = catalogue.entry_by_label(found.group(1)) if found else None
            agent_ids.append(entry.id if entry is not None else None)
    labels = [catalogue.entry(a).label if a is not None else None for a in agent_ids]
    advisors = advisors_for(catalogue, rules, agent_ids)
    first = UnoGame(rules, seed=seed).state
    frames = build_frames(rules, first, hands, names, labels, advisors, where=where)
    return {"title": where, "names": names, "seed": seed, "frames": frames}


def replay_saved(catalogue: Catalogue, store: GameStore, game_id: str) -> dict[str, Any]:
    """The replay of a saved web game.

    Raises:
        NotFound: for an id with no saved game.
        Invalid: if the saved file does not replay.
    """
    try:
        path = store.path(game_id)
    except KeyError:
        raise NotFound(f"no saved game {game_id!r}") from None
    if not path.is_file():
        raise NotFound(f"no saved game {game_id!r}")
    try:
        raw = json.loads(path.read_text(encoding="utf-8")).get("agents")
    except (OSError, ValueError, AttributeError):
        raw = None
    agent_ids = (
        raw if isinstance(raw, list) and all(isinstance(a, str | None) for a in raw) else None
    )
    return _replay(catalogue, path, f"saved game {game_id}", agent_ids)


def replay_upload(catalogue: Catalogue, body: bytes) -> dict[str, Any]:
    """The replay of an uploaded record (the contents of a ``--record`` file).

    Raises:
        Invalid: naming what makes the upload no recorded game.
    """
    fd, name = tempfile.mkstemp(prefix="uno-lab-upload-", suffix=".json")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(body)
        return _replay(catalogue, Path(name), "the uploaded file", None)
    finally:
        Path(name).unlink(missing_ok=True)
