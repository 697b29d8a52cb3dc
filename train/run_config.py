"""What the config of a run in a folder of its own shares: its folder, its rules, its YAML.

A training run (:class:`~unolab.train.config.TrainConfig`) and an imitation run
(:class:`~unolab.train.imitate.config.ImitateConfig`) each write into ``<runs_dir>/<name>/``,
play under the rules that ``rules`` and ``num_players`` name, and save the config they ran
with as plain data and YAML. :class:`RunConfig` is that part of both, written once.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, ClassVar

import yaml

from uno_env.rules import Rules, load_rules

__all__ = ["RunConfig"]


class RunConfig:
    """The base of a frozen dataclass config with the keys ``name``, ``rules``,
    ``num_players`` and ``runs_dir``: its run's folder, its rules and its plain data."""

    __dataclass_fields__: ClassVar[dict[str, Any]]  # the subclass is a dataclass
    name: str
    rules: str
    num_players: int
    runs_dir: str

    def build_rules(self) -> Rules:
        """The rules of this run (preset or YAML, with ``num_players``)."""
        return load_rules(self.rules, num_players=self.num_players)

    @property
    def run_dir(self) -> Path:
        """``<runs_dir>/<name>``."""
        return Path(self.runs_dir) / self.name

    def to_dict(self) -> dict[str, Any]:
        """The config as plain data, lists for tuples (for YAML, records and reports)."""
        return json.loads(json.dumps(dataclasses.asdict(self)))

    def to_yaml(self) -> str:
        """The config as YAML."""
        return yaml.safe_dump(self.to_dict(), sort_keys=False)
