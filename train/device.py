"""Where the networks train: a config's ``device`` key (``auto``, ``cpu`` or ``cuda``).

``auto`` is ``cuda`` when torch sees a GPU, else ``cpu``. The key is checked when a config
is loaded (a GPU config loads on any machine) and resolved when a run starts
(:func:`resolve_device`): ``cuda`` without a GPU is refused then, in one line. What a run
writes for others to load (exported agents, league snapshots, clones) is CPU tensors
whatever the device.
"""

from __future__ import annotations

from uno_env.config_values import ConfigError
from uno_env.files import shown

__all__ = ["DEVICES", "check_device_name", "resolve_device"]

DEVICES = ("auto", "cpu", "cuda")
"""The values of a config's ``device`` key."""


def check_device_name(key: str, device: object) -> str:
    """A ``device`` key's value, one of :data:`DEVICES`.

    Raises:
        ConfigError: naming ``key`` and the value as given.
    """
    if not isinstance(device, str) or device not in DEVICES:
        raise ConfigError(f"{key}: {shown(device)} is not allowed; choose one of {list(DEVICES)}")
    return device


def resolve_device(device: str, key: str = "device") -> str:
    """The torch device a ``device`` key names here: ``"cpu"`` or ``"cuda"``.

    Raises:
        ConfigError: for ``cuda`` on a machine where torch sees no GPU (one line naming
            ``key`` and what to set instead), or a value not in :data:`DEVICES`.
    """
    import torch  # only when a run starts: a config loads without torch

    check_device_name(key, device)
    has_gpu = torch.cuda.is_available()
    if device == "auto":
        return "cuda" if has_gpu else "cpu"
    if device == "cuda" and not has_gpu:
        raise ConfigError(
            f"{key}: cuda asks for a GPU, but torch sees none here (torch.cuda.is_available() "
            f"is False; torch {torch.__version__}); set {key}: cpu or {key}: auto"
        )
    return device
