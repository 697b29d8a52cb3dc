"""What the envs share with the ecosystem: the Gymnasium registration, the illegal-action modes.

``uno_env/Uno-v0`` is registered when ``uno_env`` is imported; the entry point is a string,
so Gymnasium imports the env module only when ``gymnasium.make("uno_env/Uno-v0")`` is called.
"""

from __future__ import annotations

from typing import Literal

import gymnasium

__all__ = ["DEFAULT_ILLEGAL_ACTION", "ENV_ID", "IllegalActionMode", "register_envs"]

ENV_ID = "uno_env/Uno-v0"

IllegalActionMode = Literal["terminate", "raise"]
"""What an env does with an illegal action: end the episode with ``illegal_reward`` for the
offender (PettingZoo's ``TerminateIllegalWrapper``), or raise ``IllegalActionError``."""

DEFAULT_ILLEGAL_ACTION: IllegalActionMode = "terminate"
"""The PettingZoo and Gymnasium envs' default, as in PettingZoo's classic games: tools that
try random actions (Gymnasium's ``check_env``) see a penalty, not a crash."""


def register_envs() -> None:
    """Register ``uno_env/Uno-v0`` with Gymnasium (idempotent)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="uno_env.envs.gym_env:UnoGymEnv")
