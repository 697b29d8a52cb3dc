"""Checking config values: numbers in their ranges, and a mapping against a dataclass.

Every config of uno-lab is a frozen dataclass built by :func:`from_mapping`: unknown keys
are rejected with the list of allowed keys, values are type-checked against the annotations
(``Literal`` types name the allowed values), numbers are range-checked by :func:`check_int`
and :func:`check_float`, and every error is one :class:`ConfigError` line naming the key and
the value that were wrong. Reading configs from files is :mod:`uno_env.configuration`'s job.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

import numpy as np

from uno_env.files import shown

T = TypeVar("T")

__all__ = [
    "MAX_FOLDER_NAME_BYTES",
    "SEED_LIMIT",
    "ConfigError",
    "check_float",
    "check_folder",
    "check_folder_name",
    "check_int",
    "check_seed",
    "check_switch",
    "from_mapping",
]

SEED_LIMIT = 2**63
"""Seeds must be in ``0 <= seed < SEED_LIMIT``: they become unsigned 64-bit random keys, and
NumPy and torch take at most 63 bits without wrapping around."""


class ConfigError(ValueError):
    """A configuration value or key is invalid. The message names the key and what is allowed."""


def _is_int(value: Any) -> bool:
    """An integer, Python's or NumPy's (``np.int64(3)``), but not a bool (a switch is no count)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _plain(value: Any) -> Any:
    """A NumPy scalar as the Python value it holds (``np.int64(3)`` is ``3``, ``np.True_`` is
    ``True``), so that a value read from an array fits wherever the Python value does; any
    other value as it is."""
    if isinstance(value, (np.bool_, np.integer, np.floating, np.str_)):
        return value.item()
    return value


def check_int(key: str, value: Any, low: int, high: int, why: str = "") -> int:
    """Check that ``value`` is an integer (Python's or NumPy's; not a bool or a float) in
    ``low..high``.

    Args:
        key: The key, as the message names it (e.g. ``"num_envs"``).
        value: The value to check.
        low: The smallest allowed value.
        high: The largest allowed value.
        why: The reason for the bounds, appended to the message.

    Returns:
        ``value`` as a Python int.

    Raises:
        ConfigError: ``"<key>: <value> is out of range; allowed <low>..<high> (<why>)"``,
            the value as it was given.
    """
    if not _is_int(value):
        raise ConfigError(f"{key}: expected an integer, got {shown(value)}")
    if not low <= value <= high:
        reason = f" ({why})" if why else ""
        raise ConfigError(f"{key}: {shown(value)} is out of range; allowed {low}..{high}{reason}")
    return int(value)


def check_float(
    key: str,
    value: Any,
    low: float,
    high: float,
    *,
    low_open: bool = False,
    high_open: bool = False,
    why: str = "",
) -> float:
    """Check that ``value`` is a finite number (Python's or NumPy's; not a bool) in the
    interval from low to high.

    Args:
        key: The key, as the message names it (e.g. ``"ppo.gamma"``).
        value: The value to check.
        low: The lower end of the interval.
        high: The upper end of the interval.
        low_open: Exclude ``low`` itself (``(low, ...``).
        high_open: Exclude ``high`` itself (``..., high)``).
        why: The reason for the bounds, appended to the message.

    Returns:
        ``value`` as a float.

    Raises:
        ConfigError: naming the key, the value and the interval (NaN and infinities are
            always refused).
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        raise ConfigError(f"{key}: expected a number, got {shown(value)}")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    above = number > low if low_open else number >= low
    below = number < high if high_open else number <= high
    if not (math.isfinite(number) and above and below):
        interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        reason = f" ({why})" if why else ""
        raise ConfigError(f"{key}: {shown(value)} is out of range; allowed {interval}{reason}")
    return number


def check_switch(key: str, value: Any) -> bool:
    """Check a switch: ``True`` or ``False`` (NumPy's too), never a word or a number that
    Python would read as true.

    Raises:
        ConfigError: naming ``key`` and the value as given.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise ConfigError(f"{key}: expected True or False, got {shown(value)}")
    return bool(value)


def check_seed(key: str, value: Any) -> int:
    """Check a seed: an integer with ``0 <= seed < 2**63`` (see :data:`SEED_LIMIT`)."""
    if _is_int(value) and not 0 <= value < SEED_LIMIT:
        raise ConfigError(
            f"{key}: {shown(value)} is out of range; seeds must be 0 <= seed < 2**63 (a 63-bit key)"
        )
    return check_int(key, value, 0, SEED_LIMIT - 1)


def check_folder(key: str, path: str | Path) -> None:
    """Check that the folder ``path`` exists or can be created: no part of it is a file.

    Raises:
        ConfigError: naming the key, the path and the file in the way.
    """
    text = str(path)
    if not text.strip():  # Path("") is ".": a forgotten value would write into the working folder
        raise ConfigError(f"{key}: {shown(text)} is empty; give a folder (e.g. runs)")
    if "\0" in text:
        raise ConfigError(f"{key}: {shown(text)} contains a NUL character")
    for part in (Path(text), *Path(text).parents):
        if part.exists() or part.is_symlink():
            if not part.is_dir():
                raise ConfigError(
                    f"{key}: {shown(text)} cannot be a folder: {str(part)!r} is a file; "
                    "choose another folder"
                )
            return


MAX_FOLDER_NAME_BYTES = 200
"""Longest name of a folder the lab creates (a run, a tournament, a sweep), in UTF-8 bytes:
file systems allow 255, and the lab adds suffixes to some."""


def check_folder_name(key: str, name: object) -> None:
    """Check a name the lab gives a folder it creates (a training run, a tournament, a sweep).

    It must be one plain, visible folder name: not empty or blank, not ``.`` or ``..``, no
    ``/`` or ``\\``, no control character (a newline would split every log line that names
    the run), no space at either end (invisible in a listing), valid Unicode, at most
    :data:`MAX_FOLDER_NAME_BYTES` bytes.

    Raises:
        ConfigError: naming the key, the name as given and what is wrong with it.
    """
    if not isinstance(name, str):
        raise ConfigError(f"{key}: expected a string, got {shown(name)}")
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        size = -1
    problem = (
        "is empty" if not name.strip()
        else "names the current or the parent folder" if name in (".", "..")
        else "holds a '/' or a '\\'" if any(c in name for c in "/\\")
        else "is not valid Unicode text" if size < 0
        else "holds a control character (a newline, a tab, a NUL...)" if not name.isprintable()
        else "starts or ends with a space" if name != name.strip()
        else f"is {size} bytes long, more than {MAX_FOLDER_NAME_BYTES}"
        if size > MAX_FOLDER_NAME_BYTES
        else None
    )  # fmt: skip
    if problem is not None:
        raise ConfigError(f"{key}: {shown(name)} {problem}; give a plain folder name")


def _type_name(annotation: Any) -> str:
    """An annotation in a user's words: ``a number``, ``a list``, ``a mapping``."""
    words = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}
    if annotation in words:
        return words[annotation]
    origin = get_origin(annotation)
    if origin in (tuple, list):
        return "a list"
    if origin is dict or dataclasses.is_dataclass(annotation):
        return "a mapping"
    if origin is Literal:
        return "one of " + ", ".join(repr(choice) for choice in get_args(annotation))
    return str(annotation)


def _check_value(where: str, value: Any, annotation: Any) -> Any:
    # A NumPy scalar counts as the Python value it holds: np.int64(3) where an integer goes,
    # np.True_ where a switch goes (a bool is still no integer, whichever library made it).
    value = _plain(value)
    origin = get_origin(annotation)
    if origin is Literal:
        allowed = get_args(annotation)
        if not any(value == choice and type(value) is type(choice) for choice in allowed):
            raise ConfigError(
                f"{where}: {shown(value)} is not allowed; choose one of {list(allowed)}"
            )
        return value
    if origin in (Union, types.UnionType):
        errors: list[ConfigError] = []
        options = [option for option in get_args(annotation) if option is not type(None)]
        if value is None and len(options) < len(get_args(annotation)):
            return None
        for option in options:
            try:
                return _check_value(where, value, option)
            except ConfigError as err:
                errors.append(err)
        # One real option (an optional setting), or a mapping for the one dataclass option:
        # its own reason says what is wrong, where "does not fit X | None" would hide it.
        fitting = [
            err
            for option, err in zip(options, errors, strict=True)
            if len(options) == 1
            or (isinstance(value, Mapping) and dataclasses.is_dataclass(option))
        ]
        if len(fitting) == 1:
            raise fitting[0]
        names = " or ".join(_type_name(option) for option in options)
        none = ", or null" if len(options) < len(get_args(annotation)) else ""
        raise ConfigError(f"{where}: expected {names}{none}, got {shown(value)}")
    if origin in (tuple, list):
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{where}: expected a list, got {shown(value)}")
        args = get_args(annotation)
        item = args[0] if args else Any
        return tuple(_check_value(f"{where}[{i}]", v, item) for i, v in enumerate(value))
    if origin is dict:
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where}: expected a mapping, got {shown(value)}")
        key_type, value_type = get_args(annotation) or (Any, Any)
        return {
            _check_value(f"{where} key", k, key_type): _check_value(f"{where}.{k}", v, value_type)
            for k, v in value.items()
        }
    if annotation is Any:
        return value
    if annotation is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: expected true or false, got {shown(value)}")
        return value
    if annotation is int:
        if not _is_int(value):
            raise ConfigError(f"{where}: expected an integer, got {shown(value)}")
        return int(value)
    if annotation is float:
        if isinstance(value, str):
            # YAML 1.1 reads "1e-4" (no dot) as a string: accept what Python reads as a number.
            try:
                number = float(value)
            except ValueError:
                raise ConfigError(f"{where}: expected a number, got {shown(value)}") from None
        elif isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{where}: expected a number, got {shown(value)}")
        else:
            try:
                number = float(value)
            except OverflowError:
                number = math.inf
        # No setting of the lab means anything at NaN or infinity: refuse them everywhere.
        if not math.isfinite(number):
            raise ConfigError(f"{where}: expected a finite number, got {shown(value)}")
        return number
    if annotation is str:
        if not isinstance(value, str):
            raise ConfigError(f"{where}: expected a string, got {shown(value)}")
        return value
    if dataclasses.is_dataclass(annotation) and isinstance(annotation, type):
        if dataclasses.is_dataclass(value) and isinstance(value, annotation):
            return value
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where}: expected a mapping, got {shown(value)}")
        return from_mapping(annotation, value, where=where)
    return value


def from_mapping(cls: type[T], data: Mapping[str, Any], where: str = "config") -> T:
    """Build the frozen dataclass ``cls`` from ``data``, validating every key and value.

    Args:
        cls: A dataclass type whose field annotations describe the allowed values.
        data: The raw mapping (e.g. parsed YAML).
        where: A prefix for error messages (e.g. the file name).

    Returns:
        An instance of ``cls``. Its ``__post_init__`` runs the range and cross-field checks.

    Raises:
        ConfigError: naming ``where``, the unknown or invalid key and the allowed keys or
            values.
    """
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where}: expected a mapping of keys to values, got {shown(data)}")
    assert dataclasses.is_dataclass(cls)
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    # Keys are compared as they are: a YAML key such as 1 or null is unknown, not a crash.
    unknown = sorted((key for key in data if key not in fields), key=repr)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {unknown}; allowed keys are {sorted(fields)}")
    kwargs = {
        name: _check_value(f"{where}.{name}", value, hints[name]) for name, value in data.items()
    }
    try:
        return cls(**kwargs)
    except (TypeError, ValueError, ArithmeticError) as err:
        # The cross-field checks of __post_init__ name the keys; add the file or section.
        raise ConfigError(f"{where}: {err}") from err
