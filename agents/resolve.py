"""Turning what a user types (a bot name, a Python class, an exported agent's path or a
language model's spec file) into policies.

The envs, the play loop and the tournament runner take policy objects; resolving names and
files is the job of their callers. This module is the one resolver they share:

* :func:`resolve_policy`: one policy, built now (the CLI, the terminal game);
* :func:`policy_factory`: a :class:`~uno_env.policy.PolicyFactory` that builds fresh seeded
  policies on demand (the envs seed it from their own seed, tournaments per chunk);
* :func:`resolve_opponents`: the ``opponents`` argument of the learner envs from names.

    >>> from unolab.agents import resolve_opponents
    >>> from uno_env.envs.gym_env import UnoGymEnv
    >>> env = UnoGymEnv(num_players=3, opponents=resolve_opponents(["mixbot", "random"]))
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from uno_env.console import name_too_long, portable_path
from uno_env.files import shown, why_missing
from uno_env.policy import Policy, PolicyFactory, Seed, searches_from_state
from uno_env.rules import Rules, load_rules
from unolab.agents.agent_files import MissingAgentFileError
from unolab.agents.python_bots import CLASS_FORMS, canonical_class_spec
from unolab.agents.registry import (
    AGENT_NAMES,
    BOT_NAMES,
    SEARCH_NAMES,
    agent_seed,
    is_agent_spec,
    make_agent,
    shipped_agent_names,
    shipped_agent_path,
)

if TYPE_CHECKING:
    from unolab.agents.learned import MLPNet
    from unolab.agents.policy_metadata import PolicyMetadata

__all__ = [
    "UnknownAgentError",
    "agent_forms",
    "is_agent_file",
    "policy_factory",
    "resolve_opponents",
    "resolve_policy",
]


def _agent_file(spec: str | Path, suffix: str) -> Path | None:
    """The ``suffix`` file of the agent ``spec`` names (its weights, its metadata or stem)."""
    path = portable_path(spec)  # a path from another system's config: either separator
    given = path.suffix.lower()
    if given == suffix:  # the file named, in its own spelling (B.SAFETENSORS)
        return path
    base = path.with_suffix("") if given in (".safetensors", ".json") else path
    if not base.name:
        return None
    lower, upper = base.with_name(base.name + suffix), base.with_name(base.name + suffix.upper())
    return upper if not lower.exists() and upper.is_file() else lower


def is_agent_file(spec: str | Path) -> bool:
    """Whether ``spec`` names an exported agent (``.safetensors`` with its ``.json``).

    ``spec`` may be either file or the path without suffix, as for
    :func:`unolab.agents.learned.load_policy`. A path the file system cannot hold (a name
    too long, a NUL character) names no agent.

    Raises:
        TypeError: for a ``spec`` that is no text or path.
    """
    if not isinstance(spec, (str, os.PathLike)):
        raise TypeError(f"spec: expected an agent's path (text or a Path), got {shown(spec)}")
    try:
        weights, meta = _agent_file(spec, ".safetensors"), _agent_file(spec, ".json")
        return weights is not None and weights.is_file() and meta is not None and meta.is_file()
    except (OSError, ValueError):  # a name too long for the file system, a NUL character
        return False


_AGENT_FORMS = (
    "an exported agent is a .safetensors file with its .json metadata beside it "
    "(python -m unolab.train.export CHECKPOINT OUT writes both)"
)


class UnknownAgentError(ValueError):
    """A spec that names no agent: no bot, search, shipped agent, Python class or file.

    Its message lists what is accepted (:func:`agent_forms`); a caller that takes more
    forms (a search's ``"fast"`` rollout) can tell this error from a bad file's.
    """


def agent_forms(allow_search: bool = True) -> str:
    """The forms of agent spec :func:`policy_factory` takes, as its messages list them."""
    bots = ", ".join(BOT_NAMES if not allow_search else AGENT_NAMES)
    searches = "; a search with its budget, e.g. pimc:2048 or ismcts:8192" if allow_search else ""
    model = f", {_LLM_FORM}" if allow_search else ""
    return (
        f"a bot name ({bots}{searches}), a shipped agent ({', '.join(shipped_agent_names())}), "
        f"{CLASS_FORMS}{model} or the path of an exported agent (a .safetensors file with its "
        ".json metadata beside it)"
    )


_LLM_FORM = "a language model's spec file (my_model.yaml holding llm: with model and base_url)"


def _unknown(spec: str, allow_search: bool) -> UnknownAgentError:
    return UnknownAgentError(f"unknown agent {spec!r}: give {agent_forms(allow_search)}")


def _not_an_agent(spec: str, allow_search: bool) -> ValueError:
    """The error for a ``spec`` that is no bot name and no complete exported agent."""
    too_long = name_too_long(spec)
    if too_long:  # named as such, not as a file that is missing
        return ValueError(f"agent {too_long}")
    path = Path(spec)
    try:
        is_dir = path.is_dir()
    except (OSError, ValueError):  # a name too long for the file system, a NUL character
        return ValueError(
            f"agent {shown(spec)} is neither a bot name nor a path the file system can hold; "
            f"{_AGENT_FORMS}"
        )
    if is_dir:
        return ValueError(f"agent {spec!r} is a directory; {_AGENT_FORMS}")
    if path.suffix == ".zip":
        return ValueError(
            f"agent {spec!r} is an SB3 checkpoint, which runs code when loaded: export it "
            "(python -m unolab.train.export CHECKPOINT OUT) and give the .safetensors file, or play "
            "it in a tournament with allow_pickle"
        )
    looks_like_path = path.suffix in (".safetensors", ".json") or any(
        sep in spec for sep in ("/", "\\")
    )
    weights = _agent_file(spec, ".safetensors")
    if weights is not None and weights.is_file():
        meta = _agent_file(spec, ".json")
        return MissingAgentFileError(
            f"agent file {str(meta)!r} {why_missing(str(meta))}; {_AGENT_FORMS}"
        )
    if looks_like_path and spec.rpartition(":")[2].isidentifier():
        return ValueError(f"agent {spec!r} is neither an exported agent nor {CLASS_FORMS}")
    if looks_like_path:
        return MissingAgentFileError(f"agent file {spec!r} {why_missing(spec)}; {_AGENT_FORMS}")
    return _unknown(spec, allow_search)


def policy_factory(
    spec: str | Path,
    rules: Rules | str | Mapping[str, Any] | None = None,
    *,
    allow_search: bool = True,
    deterministic: bool = True,
) -> PolicyFactory:
    """A factory of fresh policies for a bot name, a Python class, an exported agent's path
    or a language model's spec file.

    This is the one resolver: the command line, tournaments, the envs' opponents, the
    arena, the web table and a search's own options (its rollout policy, its prior) all
    turn what a user typed into players here.

    An exported agent is loaded (and checked) once, here, so a bad file fails now rather
    than when the first game starts; the policies built share its network. A class is
    loaded and built once, here, for the same reason; the factory names it by an absolute
    path, so it rebuilds the same class from any working folder.

    Args:
        spec: A name of :data:`unolab.agents.AGENT_NAMES` (bots and search agents; a
            search with its options, ``pimc:2048``), a shipped agent's name
            (``ppo_official_2p``), a Python class (``my_bots.py:MyBot`` or
            ``package.module:MyBot``, :mod:`unolab.agents.python_bots`), the path of an
            exported agent, or a language model's spec file (a ``.yaml``/``.yml`` file
            holding ``llm:``, :mod:`unolab.agents.llm.spec`; its agents act from the state,
            so it needs ``allow_search``).
        rules: The rules the agent will play (Rules, a preset name, a YAML path or a
            mapping); an exported agent must have been trained under them. Unused for bots.
        allow_search: Whether a search agent (one that acts from the state) may be named:
            ``False`` where the policy plays inside a search (its rollouts, its prior).
        deterministic: Whether an exported agent plays its argmax (``True``) or samples
            from its action probabilities. Unused for bots.

    Raises:
        UnknownAgentError: (a ValueError) naming ``spec`` when it is neither a bot name
            nor an existing exported agent (the accepted forms are listed).
        ValueError: naming ``spec`` for a search where ``allow_search`` is off, or a class
            that cannot be loaded or built (one line saying why).
        unolab.agents.agent_files.MissingAgentFileError: (a ValueError and a
            FileNotFoundError) for a path that names no file.
        unolab.agents.agent_files.AgentFileError: (a ValueError) if the agent's files are
            malformed.
        unolab.agents.policy_metadata.CheckpointMismatchError: (a ValueError) if it was
            trained under other rules or another observation encoding.
        uno_env.config_values.ConfigError: (a ValueError) for a spec file with a missing
            key, an unknown one or a value out of bounds, naming the file, key and value.
        unolab.agents.llm.client.LLMSetupError: (a ValueError) for a spec file when
            ``openai`` is not installed or its key's variable is not set.
        TypeError: for a ``deterministic`` or ``allow_search`` that is not a bool.
    """
    for switch, value in (("allow_search", allow_search), ("deterministic", deterministic)):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{switch} must be True or False, got {shown(value)}")
    text = str(spec)
    if not text.strip():
        raise UnknownAgentError(
            f"an empty agent name ({text!r}): give {agent_forms(bool(allow_search))}"
        )
    if rules is not None and not isinstance(rules, Rules):
        rules = load_rules(rules)  # a preset name, a YAML path or a mapping
    if _llm("spec").spec_suffix(text):
        return _llm_factory(text, bool(allow_search))
    shipped = shipped_agent_path(text) if not is_agent_file(text) else None
    if shipped is not None:  # a shipped agent by name; a file of that name comes first
        text = str(shipped)
    if is_agent_spec(text):
        if not allow_search and text.partition(":")[0] in SEARCH_NAMES:
            raise _a_search(text)
        # A search's options are checked now, naming the bad one; a class is built now.
        built = make_agent(text, 0)
        if not allow_search and searches_from_state(built):
            raise _a_search(text)
        # A file's class by its absolute path: built again in another working folder (a
        # worker process), it is the same class.
        return PolicyFactory(text, _BuildBot(canonical_class_spec(text)))
    if is_agent_file(text):
        from unolab.agents.learned import load_policy  # torch only for learned agents

        loaded = load_policy(text, rules=rules, deterministic=bool(deterministic))
        name = Path(text).stem if shipped is None else str(spec)
        return PolicyFactory(name, _BuildLearned(loaded.net, loaded.meta, bool(deterministic)))
    raise _not_an_agent(text, bool(allow_search))


def _a_search(spec: str) -> ValueError:
    return ValueError(
        f"agent {spec!r} is a search agent, which cannot play inside a search (its rollouts "
        "or its prior): give a bot, a Python class that acts on observations or an exported "
        "agent"
    )


def _llm_factory(text: str, allow_search: bool) -> PolicyFactory:
    """The factory of a language model's spec file, checked (and one agent built) now."""
    path = portable_path(text)
    too_long = name_too_long(text)
    if too_long:
        raise ValueError(f"agent {too_long}")
    try:
        exists = path.is_file() or path.exists()
    except (OSError, ValueError):  # a NUL character
        exists = False
    if not exists:
        raise MissingAgentFileError(f"agent spec file {text!r} {why_missing(text)}; {_LLM_FORM}")
    if not allow_search:
        raise ValueError(
            f"agent {text!r} is a language model, which cannot play inside a search (its "
            "rollouts or its prior): give a bot, a Python class that acts on observations or "
            "an exported agent"
        )
    factory: PolicyFactory = _llm("agent").spec_factory(path)
    return factory


def _llm(module: str) -> ModuleType:
    """A module of :mod:`unolab.agents.llm`, imported by name: the compiled searches import
    this module, and their machine code is keyed by every source it imports, which the
    language-model agents need not be (:mod:`uno_env.jit_sources`)."""
    return importlib.import_module(f"unolab.agents.llm.{module}")


@dataclass(frozen=True)
class _BuildBot:
    """Builds a named bot (a class, not a closure, so the envs holding it can be pickled)."""

    name: str

    def __call__(self, seed: Seed) -> Policy:
        return make_agent(self.name, seed)


@dataclass(frozen=True)
class _BuildLearned:
    """Builds policies sharing one loaded network (picklable, as :class:`_BuildBot`)."""

    net: MLPNet
    meta: PolicyMetadata
    deterministic: bool = True

    def __call__(self, seed: Seed) -> Policy:
        from unolab.agents.learned import TorchPolicy

        return TorchPolicy(self.net, self.meta, deterministic=self.deterministic, seed=seed)


def resolve_policy(
    spec: str | Path, rules: Rules | str | Mapping[str, Any] | None = None, seed: Seed = 0
) -> Policy:
    """One policy for a bot name, a Python class, an exported agent's path or a language
    model's spec file, built and seeded now (see :func:`policy_factory` for the forms of ``spec``).

    Raises:
        ValueError: as :func:`policy_factory` (an unknown name, a missing file, a malformed
            agent file, mismatched rules), naming ``spec``.
    """
    return policy_factory(spec, rules)(agent_seed(seed))


def resolve_opponents(
    specs: str | Path | Sequence[str | Path], rules: Rules | None = None
) -> PolicyFactory | list[PolicyFactory]:
    """Opponents for the learner envs from names: one factory (for one name) or a list.

    The envs build the factories' policies from their own seed, so a seeded env replays
    exactly.

    Raises:
        ValueError: as :func:`policy_factory` (an unknown name, a missing file, a malformed
            agent file, mismatched rules), naming the spec.
    """
    if isinstance(specs, (str, Path)):
        return policy_factory(specs, rules)
    if isinstance(specs, (bytes, bytearray)) or not isinstance(specs, Sequence):
        raise TypeError(  # bytes are a sequence too: of numbers, no names
            f"opponents must be a bot name, an agent path or a list of them, got {shown(specs)}"
        )
    return [policy_factory(spec, rules) for spec in specs]
