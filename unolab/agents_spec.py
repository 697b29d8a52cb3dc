"""Turning a participant spec (a bot name or an exported agent path) into a policy."""

from __future__ import annotations

from pathlib import Path

from agents import BOT_NAMES, make_agent
from agents.base import Policy
from agents.learned import load_policy
from uno_env.rules import Rules

__all__ = ["load_participant"]


def load_participant(spec: str, rules: Rules, seed: int = 0) -> Policy:
    """A bot by name, or an exported agent (``.safetensors`` + ``.json``) by path.

    Raises:
        ValueError: naming the bots and the expected file forms when ``spec`` is neither.
    """
    if spec in BOT_NAMES:
        return make_agent(spec, seed)
    path = Path(spec)
    if path.with_suffix(".safetensors").is_file():
        return load_policy(path, rules=rules, seed=seed)
    raise ValueError(
        f"unknown agent {spec!r}: give a bot name ({', '.join(BOT_NAMES)}) or the path of an "
        "exported agent (a .safetensors file with its .json metadata beside it)"
    )
