"""The configs that ship with the lab, by name: ``ppo/quick``, ``tournament/bots_round_robin``.

They are installed with the package, so ``uno-lab train ppo --config quick`` works from any
folder; ``uno-lab config list`` shows them and ``uno-lab config show NAME`` prints one to
copy and edit. A name is the file's path under the configs folder without ``.yaml``; where
the command knows the kind (``train ppo``, ``tournament``), the kind may be left out.
A file that exists is always taken first, and a file whose name is also a shipped config's
is named in a note, so it is clear which one was used. A path that does not exist but names
a shipped config the way a checkout of the lab holds it (``configs/ppo/quick.yaml``,
``ppo/quick.yaml``) is that shipped config, with a note; any other missing file is an error
that says so and points at ``uno-lab config list``.
"""

from __future__ import annotations

import sys
from pathlib import Path, PurePath

__all__ = [
    "CONFIGS_DIR",
    "SMALL_CONFIG_NAMES",
    "config_description",
    "resolve_config",
    "shipped_configs",
]

CONFIGS_DIR = Path(__file__).resolve().parent / "configs"
"""The folder of the shipped configs (one folder per kind)."""

SMALL_CONFIG_NAMES = ("quick", "tiny")
"""The names of the small configs a kind ships (``ppo/quick``, ``dqn/tiny``): the example a
message about a missing file gives."""


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
        spec: What was typed: a path, ``ppo/quick`` or, with ``kind``, ``quick``; a path
            that does not exist may name a shipped config (``configs/ppo/quick.yaml``).
        kind: The folder of configs the command reads (``ppo``, ``tournament``), if known.
        quiet: Do not say (on stderr) that a file was taken over a shipped config of the
            same name.

    Returns:
        The path to read.

    Raises:
        ValueError: one line, for a file that does not exist (pointing at ``uno-lab config
            list``) or a name that is no shipped config (listing them).
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
        exists, is_file = Path(spec).exists(), Path(spec).is_file()
    except (OSError, ValueError):  # a name too long for the file system, a NUL
        exists = is_file = False
    if is_file:
        if shipped is not None and not quiet:
            print(
                f"note: reading the file {spec}, not the shipped config of that name",
                file=sys.stderr,
            )
        return spec
    if shipped is not None:
        return str(shipped)
    if exists:
        return spec  # a folder, say: its loader says what it is, naming it
    if kind is None and len(stems) > 1:
        raise ValueError(
            f"{spec!r} names several shipped configs ({', '.join(stems)}); give one of them"
        )
    kinds = {name.partition("/")[0] for name in configs}
    wanted = [name for name in configs if kind is None or name.startswith(f"{kind}/")]
    if spec.endswith((".yaml", ".yml")) or ("/" in spec and spec.partition("/")[0] not in kinds):
        named = _shipped_name_of_path(spec, kind, configs)
        if named is not None:
            # A command copied from a checkout's docs (configs/ppo/quick.yaml) run elsewhere.
            print(
                f"note: no file {spec} here; using the shipped config {named} "
                f"(--config {named} names it from any folder)",
                file=sys.stderr,
            )
            return str(configs[named])
        small = [n for n in wanted if kind and n.rpartition("/")[2] in SMALL_CONFIG_NAMES]
        example = (small or wanted or ["ppo/quick"])[0]
        raise ValueError(
            f"config file {spec!r} does not exist; uno-lab config list shows the shipped "
            f"configs, which --config takes by name (--config {example})"
        )
    raise ValueError(
        f"unknown config {spec!r}: not a file, nor a shipped config "
        f"({', '.join(wanted) or 'none installed'}); uno-lab config list shows them all"
    )


def _shipped_name_of_path(spec: str, kind: str | None, configs: dict[str, Path]) -> str | None:
    """The shipped config a missing relative path names, as a checkout lays them out.

    ``configs/ppo/quick.yaml``, ``./configs/ppo/quick.yaml`` and ``ppo/quick.yaml`` name
    ``ppo/quick``; with ``kind`` ``ppo``, so does ``quick.yaml``. An absolute path names no
    shipped config: it points at a file of the user's own.
    """
    path = PurePath(spec)
    if path.is_absolute() or path.suffix not in (".yaml", ".yml"):
        return None
    parts = [part for part in path.with_suffix("").parts if part not in (".", "")]
    if "configs" in parts:  # what follows the last configs/ folder
        parts = parts[len(parts) - parts[::-1].index("configs") :]
    name = "/".join(parts)
    for candidate in (name, f"{kind}/{name}" if kind is not None else None):
        if candidate in configs:
            return candidate
    return None
