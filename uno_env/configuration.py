"""Strict loading of frozen dataclass configs from mappings and YAML.

One place for the validation every config in uno-lab needs: unknown keys are rejected with
the list of allowed keys, values are type-checked against the annotations (``Literal`` types
name the allowed values), numbers are range-checked by :func:`check_int` and
:func:`check_float`, and errors say which file, key and value were wrong, in one line.

This module reads the files and the command line: a YAML file checked before and while it is
parsed (:func:`load_yaml_mapping`), the ``--set`` overrides (:func:`apply_overrides`) and the
options every command shares (:func:`add_config_options`). The checks of the values, and
:class:`ConfigError`, are :mod:`uno_env.config_values`'s, importable from here too.
"""

from __future__ import annotations

import argparse
import copy
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from uno_env.config_values import (
    ConfigError,
)
from uno_env.files import UnreadableFileError, read_regular_file, shown, why_missing

__all__ = [
    "MAX_CONFIG_BYTES",
    "MAX_CONFIG_VALUES",
    "add_config_options",
    "apply_overrides",
    "load_yaml_mapping",
]

MAX_CONFIG_BYTES = 10 * 2**20
"""A config file larger than 10 MiB is refused unread: real configs are a few hundred bytes,
and a huge file is a wrong path (a data set, a checkpoint), not a config."""


class _StrictLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a key written twice in one mapping (YAML would keep
    the last one silently, so a typo'd copy of a key would hide the first)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, Any] = {}
        for key_node, _ in node.value:
            # Merge keys ("<<") may repeat keys on purpose; complex keys are left to YAML.
            if key_node.tag == "tag:yaml.org,2002:merge" or not isinstance(
                key_node, yaml.ScalarNode
            ):
                continue
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"key {key!r} is given twice (first at line {seen[key].line + 1})",
                    key_node.start_mark,
                )
            seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)


def _yaml_error_line(path: Path, err: yaml.YAMLError) -> str:
    """One line: the file, the line and column of the problem, and what is wrong."""
    mark = getattr(err, "problem_mark", None)
    problem = getattr(err, "problem", None) or " ".join(str(err).split())
    context = getattr(err, "context", None)
    where = f"{path}" if mark is None else f"{path}, line {mark.line + 1}, column {mark.column + 1}"
    detail = f"{problem} ({context})" if context else problem
    return f"{where}: invalid YAML: {detail}"


MAX_CONFIG_VALUES = 100_000
"""The most values a config may hold once YAML's aliases are expanded: aliases of aliases
grow exponentially ("a billion laughs"), and a real config holds a few hundred."""


def _check_expanded_size(path: Path, data: Any) -> None:
    """Refuse YAML whose aliases expand past :data:`MAX_CONFIG_VALUES` or refer to themselves.

    An alias is the same Python object as its anchor, so the size of each object is counted
    once and reused: this costs one visit per distinct object, however large the expansion.
    """
    sizes: dict[int, int] = {}
    in_progress: set[int] = set()
    aliased = False  # an object met twice: an alias (a plain file has none)

    def size(value: Any) -> int:
        nonlocal aliased
        if not isinstance(value, (list, dict)):
            return 1
        key = id(value)
        if key in sizes:
            aliased = True
            return sizes[key]
        if key in in_progress:
            raise ConfigError(f"{path}: invalid YAML: an alias refers to itself (a cycle)")
        in_progress.add(key)
        children = list(value.keys()) + list(value.values()) if isinstance(value, dict) else value
        total = 1
        for child in children:
            total += size(child)
            if total > MAX_CONFIG_VALUES:
                break
        in_progress.discard(key)
        sizes[key] = min(total, MAX_CONFIG_VALUES + 1)
        return sizes[key]

    try:
        total = size(data)
    except RecursionError:
        raise ConfigError(f"{path}: invalid YAML: nested too deeply") from None
    if total > MAX_CONFIG_VALUES and aliased:
        raise ConfigError(
            f"{path}: the YAML's aliases expand to more than {MAX_CONFIG_VALUES:,} values; "
            "a config holds a few hundred: write the values out"
        )
    if total > MAX_CONFIG_VALUES:  # written out: name the largest list or section
        key, count = _largest_part(data)
        raise ConfigError(
            f"{path}: holds more than {MAX_CONFIG_VALUES:,} values, {count:,} of them in "
            f"{key or 'its top level'}; a config holds a few hundred: list fewer values"
        )


def _largest_part(data: Any, prefix: str = "") -> tuple[str, int]:
    """The dotted key of the list or mapping with the most entries, and how many."""
    best = (prefix, len(data) if isinstance(data, (list, dict)) else 0)
    if isinstance(data, dict):
        for key, value in data.items():
            found = _largest_part(value, f"{prefix}.{key}" if prefix else str(key))
            best = max(best, found, key=lambda item: item[1])
    return best


def load_yaml_mapping(path: str | Path) -> dict[str, Any]:
    """Read a YAML file that must hold a mapping of keys to values.

    Args:
        path: The YAML file.

    Returns:
        The mapping.

    Raises:
        ConfigError: one line naming the file, for a file that does not exist, a folder, an
            unreadable or non-UTF-8 file, a file over :data:`MAX_CONFIG_BYTES`, invalid YAML
            (with the line and column), a key given twice, an empty file or a top level that
            is not a mapping.
    """
    p = Path(path)
    if "\0" in str(path):
        raise ConfigError(f"config file {str(path)!r}: the path contains a NUL character")
    if p.is_dir():
        raise ConfigError(f"config file {str(p)!r} is a folder; give the path of a YAML file")
    if not p.exists():
        raise ConfigError(f"config file {str(p)!r} {why_missing(p)}")
    if not p.is_file():
        raise ConfigError(f"config file {str(p)!r} is not a regular file; give a YAML file")
    try:
        size = p.stat().st_size
        if size > MAX_CONFIG_BYTES:
            raise ConfigError(
                f"config file {str(p)!r} is {size:,} bytes, too large for a config "
                f"(limit {MAX_CONFIG_BYTES:,}); is it the right file?"
            )
        # Checked again on the open file: it may have been swapped for a pipe since.
        raw = read_regular_file(p, MAX_CONFIG_BYTES, "config file")
    except UnreadableFileError as err:
        raise ConfigError(str(err)) from None
    except OSError as err:
        raise ConfigError(f"config file {str(p)!r} cannot be read: {err.strerror}") from err
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(
            f"config file {str(p)!r} is not UTF-8 text (byte 0x{raw[err.start]:02x} at offset "
            f"{err.start}); save it as UTF-8"
        ) from None
    try:
        data = yaml.load(text, Loader=_StrictLoader)  # a SafeLoader: no code runs
    except yaml.YAMLError as err:
        raise ConfigError(_yaml_error_line(p, err)) from None
    except RecursionError:
        raise ConfigError(f"{p}: invalid YAML: nested too deeply") from None
    except (ValueError, TypeError, OverflowError) as err:
        # A tag that does not fit its text (e.g. "!!int abc") fails in the constructor.
        raise ConfigError(f"{p}: invalid YAML value: {' '.join(str(err).split())}") from None
    _check_expanded_size(p, data)
    if data is None:
        raise ConfigError(
            f"config file {str(p)!r} is empty; it should hold a mapping of keys to values "
            "(e.g. 'num_players: 2')"
        )
    if not isinstance(data, dict):
        raise ConfigError(
            f"{p}: expected a mapping of keys to values at the top level, got a "
            f"{type(data).__name__} ({shown(data)})"
        )
    return data


def apply_overrides(
    data: Mapping[str, Any], overrides: typing.Sequence[str], example: str = "seed=3"
) -> dict[str, Any]:
    """A copy of ``data`` with ``key=value`` overrides applied (the ``--set`` of the commands).

    Dotted keys reach nested sections (``ppo.learning_rate=1e-4``) and create missing ones.
    Values are read as YAML, so ``true``, ``3``, ``[a, b]`` and ``{x: 1}`` keep their types.
    A ``rules`` section given as a preset name or file (``rules: street``) counts as
    ``{preset: street}``, so ``rules.jump_in=false`` changes one switch of that preset.

    Args:
        data: The config as read from its file (not changed).
        overrides: ``key=value`` items, applied in order.
        example: An override of the command's own, shown when an item is malformed.

    Raises:
        ConfigError: for an item without ``=`` or with an empty key part, a key that reaches
            into a value that is not a section, or a value that is not valid YAML.
    """
    out = copy.deepcopy(dict(data))
    for item in overrides:
        key, sep, raw = item.partition("=")
        parts = key.strip().split(".")
        if not sep or not all(parts):
            raise ConfigError(f"--set expects key=value (e.g. {example}), got {shown(item)}")
        node = out
        for depth, part in enumerate(parts[:-1]):
            child = node.get(part)
            if child is None:
                child = node[part] = {}
            elif part == "rules" and depth == 0 and isinstance(child, (str, Path)):
                child = node[part] = {"preset": str(child)}
            elif not isinstance(child, dict):
                where = ".".join(parts[: depth + 1])
                raise ConfigError(
                    f"--set {shown(key)}: {where} is {shown(child)}, not a section with keys"
                )
            node = child
        try:
            node[parts[-1]] = yaml.safe_load(raw)
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            at = f" at column {mark.column + 1}" if mark is not None else ""
            problem = getattr(err, "problem", None) or " ".join(str(err).split())
            raise ConfigError(
                f"--set {shown(item)}: the value is not valid YAML{at}: {problem} (quote a "
                "string, e.g. key='text')"
            ) from None
        except (RecursionError, ValueError, TypeError, OverflowError) as err:
            raise ConfigError(f"--set {shown(item)}: the value cannot be read: {err}") from None
    return out


def add_config_options(
    parser: argparse.ArgumentParser, config_example: str, set_example: str, run: str = ""
) -> None:
    """Add the options every command that runs from a config shares.

    ``--config FILE`` (a path; ``uno-lab`` also takes a shipped config's name), ``--set
    KEY=VALUE`` (repeatable, into ``overrides``; see :func:`apply_overrides`) and, when
    ``run`` names what the command writes, ``--overwrite``.

    Args:
        parser: The command's parser.
        config_example: A config the help names (``configs/ppo/quick.yaml``).
        set_example: An override the help shows (``ppo.learning_rate=1e-4``).
        run: What ``--overwrite`` replaces (``runs/<name>``); empty: no ``--overwrite``.
    """
    parser.add_argument("--config", type=Path, help=f"YAML config (e.g. {config_example})")
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help=f"override a field, dotted for nested ones (e.g. --set {set_example})",
    )
    if run:
        parser.add_argument(
            "--overwrite", action="store_true", help=f"replace the files of {run} if it exists"
        )
