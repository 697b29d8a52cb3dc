"""The configs that ship with the lab, by name: ``ppo/quick``, ``tournament/bots_round_robin``.

They are installed with the package, so ``uno-lab train ppo --config quick`` works from any
folder; ``uno-lab config list`` shows them and ``uno-lab config show NAME`` prints one to
copy and edit. A name is the file's path under the configs folder without ``.yaml``; where
the command knows the kind (``train ppo``, ``tournament``), the kind may be left out.
A file that exists is always taken first, and a file whose name is also a shipped config's
is named in a note, so it is clear which one was used.
"""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = [
    "CONFIGS_DIR",
    "DEFAULT_TRAIN_CONFIGS",
    "config_description",
    "resolve_config",
    "shipped_configs",
]

CONFIGS_DIR = Path(__file__).resolve().parent / "configs"
"""The folder of the shipped configs (one folder per kind)."""

DEFAULT_TRAIN_CONFIGS = {"ppo": "ppo/quick", "dqn": "dqn/tiny", "imitate": "imitate/tiny"}
"""The config ``uno-lab train ALGORITHM`` uses when none is given."""


def shipped_configs() -> dict[str, Path]:
    """Every shipped config: name (``ppo/quick``) -> file, sorted by name."""
    if not CONFIGS_DIR.is_dir():
        return {}
    return {
        path.relative_to(CONFIGS_DIR).with_suffix("").as_posix(): path
        for path in sorted(CONFIGS_DIR.glob("*/*.yaml"))
    }


def config_description(path: Path) -> str:
    """The first comment line of a config (what it is for), or an empty string."""
    try:
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                if line.startswith("#"):
                    return line.lstrip("# ").strip()
                if line.strip():
                    break
    except (OSError, UnicodeDecodeError):
        pass
    return ""


def resolve_config(spec: str, kind: str | None = None, *, quiet: bool = False) -> str:
    """The file a ``--config`` value names: an existing file, or a shipped config's.

    Args:
        spec: What was typed: a path, ``ppo/quick`` or, with ``kind``, ``quick``.
        kind: The folder of configs the command reads (``ppo``, ``tournament``), if known.
        quiet: Do not say (on stderr) that a file was taken over a shipped config of the
            same name.

    Returns:
        The path to read.

    Raises:
        ValueError: one line listing the shipped configs, for a name that is neither a file
            nor a shipped config.
    """
    configs = shipped_configs()
    stems: list[str] = []
    if kind is not None:
        names = [spec, f"{kind}/{spec}"]
    else:  # any kind: a bare name must be the stem of exactly one shipped config
        stems = [name for name in configs if name.rpartition("/")[2] == spec]
        names = [spec, *stems] if len(stems) == 1 else [spec]
    shipped = next((configs[name] for name in names if name in configs), None)
    try:
        is_file = Path(spec).is_file()
    except (OSError, ValueError):  # a name too long for the file system, a NUL
        is_file = False
    if is_file:
        if shipped is not None and not quiet:
            print(
                f"note: reading the file {spec}, not the shipped config of that name",
                file=sys.stderr,
            )
        return spec
    if shipped is not None:
        return str(shipped)
    if kind is None and len(stems) > 1:
        raise ValueError(
            f"{spec!r} names several shipped configs ({', '.join(stems)}); give one of them"
        )
    kinds = {name.partition("/")[0] for name in configs}
    if spec.endswith((".yaml", ".yml")) or ("/" in spec and spec.partition("/")[0] not in kinds):
        return spec  # a path: its loader says that it does not exist, naming it
    wanted = [name for name in configs if kind is None or name.startswith(f"{kind}/")]
    raise ValueError(
        f"unknown config {spec!r}: not a file, nor a shipped config "
        f"({', '.join(wanted) or 'none installed'}); uno-lab config list shows them all"
    )
