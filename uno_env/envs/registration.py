"""What the envs share with the ecosystem: the Gymnasium registration, the illegal-action modes.

``uno_env/Uno-v0`` is registered when ``uno_env`` is imported; the entry point is a string,
so Gymnasium imports the env module only when ``gymnasium.make("uno_env/Uno-v0")`` is called.
"""

from __future__ import annotations

from typing import Literal

import gymnasium

from uno_env.config_values import check_float
from uno_env.files import shown

__all__ = [
    "DEFAULT_ILLEGAL_ACTION",
    "ENV_ID",
    "MAX_ILLEGAL_REWARD",
    "IllegalActionMode",
    "check_illegal_action",
    "register_envs",
]

ENV_ID = "uno_env/Uno-v0"

IllegalActionMode = Literal["terminate", "raise"]
"""What an env does with an illegal action: end the episode with ``illegal_reward`` for the
offender (PettingZoo's ``TerminateIllegalWrapper``), or raise ``IllegalActionError``."""

DEFAULT_ILLEGAL_ACTION: IllegalActionMode = "terminate"
"""The PettingZoo and Gymnasium envs' default, as in PettingZoo's classic games: tools that
try random actions (Gymnasium's ``check_env``) see a penalty, not a crash."""


MAX_ILLEGAL_REWARD = 1e6
"""The largest ``illegal_reward`` in size: a reward in the units of a hand's (about 1)."""


def check_illegal_action(illegal_action: object, illegal_reward: object) -> float:
    """Check an env's ``illegal_action`` mode and ``illegal_reward``.

    Returns:
        ``illegal_reward`` as a float.

    Raises:
        ValueError: for a mode that is not ``"terminate"`` or ``"raise"``, or a reward that
            is not a finite number within ``±MAX_ILLEGAL_REWARD`` (NaN would poison every
            return it enters), naming it.
    """
    if not isinstance(illegal_action, str) or illegal_action not in ("terminate", "raise"):
        raise ValueError(
            f"illegal_action must be 'terminate' or 'raise', got {shown(illegal_action)}"
        )
    return check_float(
        "illegal_reward",
        illegal_reward,
        -MAX_ILLEGAL_REWARD,
        MAX_ILLEGAL_REWARD,
        why="a reward in the units of a hand's",
    )


def register_envs() -> None:
    """Register ``uno_env/Uno-v0`` with Gymnasium (idempotent)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="uno_env.envs.gym_env:UnoGymEnv")
