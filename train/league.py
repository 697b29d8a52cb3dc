"""The self-play league: an opponent pool of bots and frozen snapshots of the learner."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import torch

from uno_env.envs.opponents import OpponentPool
from uno_env.policy import Policy
from uno_env.rules import Rules
from unolab.agents import policy_factory
from unolab.agents.learned import TorchPolicy, load_policy, save_policy
from unolab.train.config_sections import OpponentMix
from unolab.train.export import snapshot_policy

__all__ = ["League", "SnapshotSlot"]


class SnapshotSlot:
    """A pool entry that plays as the newest snapshot put in it, or as a bot until then.

    The env's pool keeps a fixed list of policies with fixed weights; the league refills
    these slots in place when it freezes the learner, so the env needs no rebuilding.
    """

    def __init__(self, index: int, fallback: Policy) -> None:
        self.index = index
        self.fallback = fallback
        self.snapshot: TorchPolicy | None = None
        self.steps = 0
        self.name = f"snapshot{index}"

    def act(
        self, observations: npt.NDArray[np.float32], masks: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.int64]:
        """Act as the snapshot, or as the fallback bot while the slot is empty."""
        player = self.snapshot if self.snapshot is not None else self.fallback
        return player.act(observations, masks)

    def reset(self, games: npt.NDArray[np.bool_] | None = None) -> None:
        """Stateless."""


class League:
    """Bots and up to ``pool_size`` snapshots, sampled per opponent seat and hand.

    Args:
        mix: The configured mix.
        rules: The rules of the run.
        seed: Seeds the bots.
    """

    def __init__(self, mix: OpponentMix, rules: Rules, seed: int) -> None:
        self.mix = mix
        self.rules = rules
        self.bot_names = [name for name, w in mix.bots.items() if w > 0]
        # A bot by name, or a frozen exported agent (checked against the run's rules).
        self.bots = [policy_factory(name, rules)(seed + i) for i, name in enumerate(self.bot_names)]
        weights = [mix.bots[name] for name in self.bot_names]
        self.slots: list[SnapshotSlot] = []
        if mix.self_play > 0:
            self.slots = [SnapshotSlot(i, self.bots[0]) for i in range(mix.pool_size)]
            weights += [mix.self_play / mix.pool_size] * mix.pool_size
        self.pool = OpponentPool([*self.bots, *self.slots], weights)
        self.snapshots_taken = 0

    def snapshot(self, model: Any, algorithm: str, steps: int) -> None:
        """Freeze the learner into the oldest slot."""
        if not self.slots:
            return
        slot = self.slots[self.snapshots_taken % len(self.slots)]
        slot.snapshot = snapshot_policy(model, f"snapshot@{steps}", algorithm, self.rules)
        slot.steps = steps
        self.snapshots_taken += 1

    def save(self, run_dir: Path) -> None:
        """Persist the filled slots (for ``--resume``) as safetensors policies."""
        for slot in self.slots:
            if slot.snapshot is not None:
                layers = [
                    (m.weight.detach(), m.bias.detach())
                    for m in slot.snapshot.net.layers
                    if isinstance(m, torch.nn.Linear)
                ]
                save_policy(run_dir / f"league_slot{slot.index}", layers, slot.snapshot.meta)

    def load(self, run_dir: Path) -> None:
        """Refill the slots saved by :meth:`save`."""
        for slot in self.slots:
            path = run_dir / f"league_slot{slot.index}.safetensors"
            if path.is_file():
                slot.snapshot = load_policy(path, rules=self.rules)
                self.snapshots_taken += 1

    def describe(self) -> str:
        """One line for logs."""
        filled = sum(slot.snapshot is not None for slot in self.slots)
        bots = ", ".join(f"{name}:{self.mix.bots[name]}" for name in self.bot_names)
        return f"bots {bots}; snapshots {filled}/{len(self.slots)} (weight {self.mix.self_play})"
