"""Strict loading of frozen dataclass configs from mappings and YAML.

One place for the validation every config in uno-lab needs: unknown keys are rejected with
the list of allowed keys, values are type-checked against the annotations (``Literal`` types
name the allowed values), and errors say which key was wrong.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

import yaml

T = TypeVar("T")

__all__ = ["ConfigError", "from_mapping", "load_yaml_mapping"]


class ConfigError(ValueError):
    """A configuration value or key is invalid. The message names the key and what is allowed."""


def _check_value(where: str, value: Any, annotation: Any) -> Any:
    origin = get_origin(annotation)
    if origin is Literal:
        allowed = get_args(annotation)
        if value not in allowed:
            raise ConfigError(f"{where}: {value!r} is not allowed; choose one of {list(allowed)}")
        return value
    if origin in (Union, types.UnionType):
        errors = []
        for option in get_args(annotation):
            if option is type(None):
                if value is None:
                    return None
                continue
            try:
                return _check_value(where, value, option)
            except ConfigError as err:
                errors.append(str(err))
        raise ConfigError(f"{where}: {value!r} does not fit {annotation}")
    if origin in (tuple, list):
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{where}: expected a list, got {value!r}")
        args = get_args(annotation)
        item = args[0] if args else Any
        return tuple(_check_value(f"{where}[{i}]", v, item) for i, v in enumerate(value))
    if origin is dict:
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where}: expected a mapping, got {value!r}")
        return dict(value)
    if annotation is Any:
        return value
    if annotation is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: expected true or false, got {value!r}")
        return value
    if annotation is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: expected an integer, got {value!r}")
        return value
    if annotation is float:
        if isinstance(value, str):
            # YAML 1.1 reads "1e-4" (no dot) as a string: accept what Python reads as a number.
            try:
                return float(value)
            except ValueError:
                pass
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{where}: expected a number, got {value!r}")
        return float(value)
    if annotation is str:
        if not isinstance(value, str):
            raise ConfigError(f"{where}: expected a string, got {value!r}")
        return value
    if dataclasses.is_dataclass(annotation) and isinstance(annotation, type):
        if dataclasses.is_dataclass(value) and isinstance(value, annotation):
            return value
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where}: expected a mapping, got {value!r}")
        return from_mapping(annotation, value, where=where)
    return value


def from_mapping(cls: type[T], data: Mapping[str, Any], where: str = "config") -> T:
    """Build the frozen dataclass ``cls`` from ``data``, validating every key and value.

    Args:
        cls: A dataclass type whose field annotations describe the allowed values.
        data: The raw mapping (e.g. parsed YAML).
        where: A prefix for error messages (e.g. the file name).

    Returns:
        An instance of ``cls``. Its ``__post_init__`` runs the cross-field checks.

    Raises:
        ConfigError: naming the unknown or invalid key and the allowed keys or values.
    """
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where}: expected a mapping of keys to values, got {data!r}")
    assert dataclasses.is_dataclass(cls)
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {unknown}; allowed keys are {sorted(fields)}")
    kwargs = {
        name: _check_value(f"{where}.{name}", value, hints[name]) for name, value in data.items()
    }
    try:
        return cls(**kwargs)
    except ConfigError:
        raise
    except (TypeError, ValueError) as err:
        raise ConfigError(f"{where}: {err}") from err


def load_yaml_mapping(path: str | Path) -> dict[str, Any]:
    """Read a YAML file that must hold a mapping; errors name the file."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"config file {str(p)!r} does not exist")
    with p.open() as f:
        data = yaml.safe_load(f)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{p}: expected a mapping at the top level, got {type(data).__name__}")
    return data
