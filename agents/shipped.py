"""The agents that ship with the lab, by name.

Each shipped agent is an exported policy (``.safetensors`` weights with their ``.json``
metadata) in the package's ``pretrained`` folder, installed with the package, so a name such
as ``ppo_official_2p`` works wherever an agent is asked for: the command line, tournaments,
the browser table, :func:`unolab.agents.learned.load_policy` and :func:`unolab.agents.resolve_policy`.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["SHIPPED_DIR", "shipped_agent_names", "shipped_agent_path"]

SHIPPED_DIR = Path(__file__).resolve().parent / "pretrained"
"""The folder of the shipped agents."""


def shipped_agent_names() -> tuple[str, ...]:
    """The names of the shipped agents (the stems of their files), sorted."""
    if not SHIPPED_DIR.is_dir():
        return ()
    return tuple(
        sorted(
            meta.stem
            for meta in SHIPPED_DIR.glob("*.json")
            if meta.with_suffix(".safetensors").is_file()
        )
    )


def shipped_agent_path(name: str) -> Path | None:
    """The weights of the shipped agent ``name``, or ``None`` if no shipped agent has it."""
    if name not in shipped_agent_names():
        return None
    return SHIPPED_DIR / f"{name}.safetensors"
