"""The bots by name: :data:`BOT_NAMES`, :data:`SEARCH_NAMES` and :func:`make_agent`.

:data:`BOT_NAMES` are the bots that act on observations (``act``), the ones every list of
"all the bots" rates. The search agents of :data:`SEARCH_NAMES` (``pimc``, ``pimc_strong``,
``pimc_guided`` and ``ismcts``) act on the state (``needs_state``, see :mod:`uno_env.play`)
and cost milliseconds per decision, so they are built by name like a bot but are not in
those lists; :data:`AGENT_NAMES` holds both.

A search's name may carry its options after a colon: its budget alone, in its own unit
(``pimc:2048`` rollouts per candidate action, ``ismcts:8192`` iterations per decision), or
``key=value`` pairs of its constructor (``pimc:rollouts=1024,prior_weight=0.1``). Each
value is read by its option's type (a switch is exactly ``true``, ``false``, ``1`` or ``0``,
in any case), each option may be given once, the agent's constructor checks each value, and
the agent plays under the spec's name.

A bot of the user's own is named by its class, ``path/to/file.py:ClassName`` or
``package.module:ClassName`` (:mod:`unolab.agents.python_bots`); :func:`make_agent` builds it
like any other.

The agents that ship with the lab are named here too (:func:`shipped_agent_names`): each is an
exported policy (``.safetensors`` weights with their ``.json`` metadata) in the package's
``pretrained`` folder, installed with the package, so a name such as ``ppo_official_2p`` works
wherever an agent is asked for (:func:`unolab.agents.resolve.policy_factory` and
:func:`unolab.agents.learned.load_policy` look it up).
"""

from __future__ import annotations

import importlib
import inspect
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from uno_env.config_values import check_int
from uno_env.files import shown
from uno_env.policy import Policy, Seed
from unolab.agents.bots import PLAIN_BOTS
from unolab.agents.python_bots import (
    CLASS_FORMS,
    canonical_class_spec,
    is_class_spec,
    make_class_agent,
)

__all__ = [
    "AGENT_NAMES",
    "AGENT_SEED_LIMIT",
    "BOT_NAMES",
    "SEARCH_BUDGETS",
    "SEARCH_NAMES",
    "SHIPPED_DIR",
    "agent_seed",
    "canonical_agent_spec",
    "is_agent_spec",
    "make_agent",
    "parse_agent_spec",
    "shipped_agent_names",
    "shipped_agent_path",
]

_REGISTRY: dict[str, Callable[[Seed], Policy]] = dict(PLAIN_BOTS)
_SEARCH: dict[str, tuple[str, str]] = {
    "pimc": ("unolab.agents.search", "PimcAgent"),
    "pimc_strong": ("unolab.agents.search", "strong_pimc"),
    "pimc_guided": ("unolab.agents.search", "guided_pimc"),
    "ismcts": ("unolab.agents.ismcts", "IsmctsAgent"),
}
"""Each search's builder, by module and name: imported when first built, since loading
the searches' compiled code takes a second that a game between other agents need not wait."""


def _search(name: str) -> Callable[..., Policy]:
    module, attribute = _SEARCH[name]
    build: Callable[..., Policy] = getattr(importlib.import_module(module), attribute)
    return build


BOT_NAMES: tuple[str, ...] = tuple(_REGISTRY)
"""The bots that act on observations (the lists of "every bot")."""
SEARCH_NAMES: tuple[str, ...] = tuple(_SEARCH)
"""The search agents, which act on the state (``needs_state``)."""
AGENT_NAMES: tuple[str, ...] = BOT_NAMES + SEARCH_NAMES
"""Names accepted by :func:`make_agent`."""

SEARCH_BUDGETS: dict[str, str] = {
    "pimc": "rollouts",
    "pimc_strong": "rollouts",
    "pimc_guided": "rollouts",
    "ismcts": "iterations",
}
"""The option a bare number after a search's name sets (``pimc:2048``)."""


_FLAG_WORDS = {"true": True, "1": True, "false": False, "0": False}
"""How a switch is written in a spec (any case): nothing else is read as one."""


def _value(spec: str, key: str, text: str, annotation: str) -> Any:
    """An option's value, read by the type of the constructor's parameter (``annotation``,
    as written in its signature): a switch is exactly true/false/1/0, a number an integer
    or a number, ``none`` is None where the option may be None, anything else the text.

    Raises:
        ValueError: for a switch written otherwise, naming the spec, the option and the text.
    """
    kinds = set(annotation.replace("|", " ").split())
    lowered = text.strip().lower()
    if lowered in ("none", "null") and "None" in kinds:
        return None
    if kinds == {"bool"}:
        if lowered not in _FLAG_WORDS:
            raise ValueError(
                f"agent spec {spec!r}: {key} is a switch: give true, false, 1 or 0, "
                f"got {text.strip()!r}"
            )
        return _FLAG_WORDS[lowered]
    if kinds & {"int", "float"}:
        for kind in (int, float):
            try:
                number = kind(text)
            except ValueError:
                continue
            if isinstance(number, float) and not math.isfinite(number):
                # "1e400" would reach the constructor as inf: name the text as written.
                raise ValueError(
                    f"agent spec {spec!r}: {key} must be a finite number, got {text.strip()!r}"
                )
            return number
    # The constructor refuses what does not fit, naming the option and the value.
    return text.strip()


def parse_agent_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split ``NAME[:OPTIONS]`` into the agent's name and its options.

    Args:
        spec: ``pimc``, ``pimc:2048`` or ``pimc:rollouts=1024,prior_weight=0.1``.

    Returns:
        The name and the options (empty without a colon).

    Raises:
        ValueError: for options on a bot that takes none, an unknown option, a malformed one,
            an option given twice (the budget alone counts as its option) or a switch that is
            not true/false/1/0; the message names the spec and the option.
    """
    name, colon, text = spec.partition(":")
    if not colon:
        return name, {}
    if name not in _SEARCH:
        takes = ", ".join(f"{n}:{SEARCH_BUDGETS[n]}" for n in SEARCH_NAMES)
        raise ValueError(
            f"agent spec {spec!r}: {name!r} takes no options (only the searches do: {takes})"
        )
    allowed = _options_of(name)
    options: dict[str, Any] = {}
    for item in text.split(","):
        key, equals, value = item.partition("=")
        if not equals:
            key, value = SEARCH_BUDGETS[name], item
        key = key.strip()
        if key not in allowed or not value.strip():
            raise ValueError(
                f"agent spec {spec!r}: {item.strip()!r} is not an option of {name}; give its "
                f"{SEARCH_BUDGETS[name]} ({name}:N) or key=value pairs of {', '.join(allowed)}"
            )
        if key in options:
            # Which of two values was meant cannot be known: neither silently wins.
            raise ValueError(f"agent spec {spec!r}: {key} is given twice; give each option once")
        options[key] = _value(spec, key, value, allowed[key])
    return name, options


def canonical_agent_spec(spec: str) -> str:
    """One spelling of an agent spec, so that two spellings of one agent compare equal.

    A search's options are written ``key=value`` in the order of their names, each value as
    it is read (``pimc:4`` and ``pimc:rollouts=4`` are both ``pimc:rollouts=4``;
    ``prune_draws=TRUE`` is ``prune_draws=true``); a Python class's file is made absolute
    (:func:`~unolab.agents.python_bots.canonical_class_spec`); a bot's name is itself.
    Options left at their defaults are not filled in: ``pimc`` and ``pimc:64`` differ.

    Raises:
        ValueError: for a search's options that :func:`parse_agent_spec` refuses.
    """
    name = spec.partition(":")[0]
    if name not in _SEARCH:
        return canonical_class_spec(spec)
    base, options = parse_agent_spec(spec)
    if not options:
        return base
    return f"{base}:" + ",".join(f"{k}={_spelled(options[k])}" for k in sorted(options))


def _spelled(value: Any) -> str:
    """An option's value as one spelling: ``true``/``false``, ``none``, ``4`` for ``4.0``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _options_of(name: str) -> dict[str, str]:
    """The keyword options of a search's constructor (its seed and rules excluded), each with
    its annotation as written in the signature (``"bool"``, ``"float | None"``)."""
    cls = _search("ismcts" if name == "ismcts" else "pimc")
    return {
        p.name: p.annotation if isinstance(p.annotation, str) else _type_text(p.annotation)
        for p in inspect.signature(cls.__init__).parameters.values()
        if p.name not in _NOT_OPTIONS
    }


def _type_text(annotation: object) -> str:
    """An evaluated annotation as its source would write it (``bool``, ``float | None``)."""
    return annotation.__name__ if isinstance(annotation, type) else str(annotation)


_NOT_OPTIONS = ("self", "seed", "rules")


def is_agent_spec(spec: str) -> bool:
    """Whether ``spec`` names a bot, a search (with or without options) or a Python class
    (``my_bots.py:MyBot``, by its form: nothing is imported), not an exported agent's file."""
    name, colon, _ = str(spec).partition(":")
    if name in AGENT_NAMES:
        return not colon or name in _SEARCH
    return is_class_spec(spec)


AGENT_SEED_LIMIT = 2**64
"""An agent's integer seed is in ``0 <= seed < 2**64``: NumPy's generators take any of them,
and a tournament derives 64-bit seeds for its participants."""


def agent_seed(seed: object) -> Seed:
    """An agent's seed, checked: ``None``, a NumPy ``Generator``, or an integer (NumPy's
    too, not a bool) in ``0 <= seed < 2**64`` (:data:`AGENT_SEED_LIMIT`).

    Raises:
        ValueError: naming the seed as given.
    """
    if seed is None or isinstance(seed, np.random.Generator):
        return seed
    return check_int("seed", seed, 0, AGENT_SEED_LIMIT - 1, "a 64-bit seed")


def make_agent(name: str, seed: Seed = None) -> Policy:
    """Build a bot or a search by name, a search's options included (``pimc:2048``).

    Args:
        name: One of :data:`AGENT_NAMES`, a search with options after a colon, a Python
            class (``my_bots.py:MyBot``, ``package.module:MyBot``; see
            :mod:`unolab.agents.python_bots`), or a language model's spec file
            (``my_model.yaml``, :mod:`unolab.agents.llm.spec`).
        seed: Seed of the bot's random choices (the heuristic bots are deterministic and
            ignore it; ``pimc`` seeds its determinizations with it; a class gets it as
            ``seed=`` when its constructor takes one).

    Returns:
        A fresh :class:`~uno_env.policy.Policy`.

    Raises:
        ValueError: for an unknown name (the message lists the valid names), options the
            agent does not take or refuses (naming the option and its bounds), a class
            that cannot be built (one line saying why), or a seed :func:`agent_seed`
            refuses.
        TypeError: for a name that is not a string.
    """
    if not isinstance(name, str):
        raise TypeError(f"an agent's name must be a string, got {shown(name)}")
    seed = agent_seed(seed)
    if name.lower().endswith((".yaml", ".yml")):  # a language model's spec file, by name:
        # unolab.agents.llm is no source of the searches' machine code (uno_env.jit_sources)
        from_file: Callable[[str, Seed], Policy] = importlib.import_module(
            "unolab.agents.llm.agent"
        ).agent_from_file
        return from_file(name, seed)
    known = name.partition(":")[0] in AGENT_NAMES
    if not known and is_class_spec(name):
        return make_class_agent(name, seed)
    base, options = parse_agent_spec(name) if known else (name, {})
    build = _REGISTRY.get(base) or (_search(base) if base in _SEARCH else None)
    if build is None:
        raise ValueError(
            f"unknown bot {name!r}; valid names are: {', '.join(AGENT_NAMES)}, or {CLASS_FORMS}"
        )
    if not options:
        return build(seed)
    try:
        agent = build(seed, **options)
    except ValueError as err:  # the constructor names the option: the message names the spec
        raise ValueError(f"agent spec {name!r}: {err}") from err
    agent.name = name  # the spec names the configuration on leaderboards
    return agent


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
