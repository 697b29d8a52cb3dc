"""Every player a user can name, and a card for each: ``uno-lab agents [NAME]``.

A name is one of three kinds, all accepted wherever an agent is asked for (``uno-lab play
--opponents``, a tournament's ``agents``, ``uno-lab exploit``):

* a **bot** (:data:`unolab.agents.BOT_NAMES`): a fixed rule on its seat's observation, any
  rules and any table size;
* a **search** (:data:`unolab.agents.SEARCH_NAMES`): plays out guessed deals of the hidden
  cards to choose each move, with its budget after a colon (``pimc:2048``);
* a **shipped network** (:mod:`unolab.agents.registry`), trained for one rules preset and
  table size; its card is its model card (:mod:`unolab.agents.model_card`).

The path of an exported agent (a ``.safetensors`` file with its ``.json`` metadata beside
it) works too; its card is made from its metadata. So does a Python class
(``my_bots.py:MyBot``, :mod:`unolab.agents.python_bots`): it is loaded and built as the
commands that play it do, and its card says what it is. What a bot does and how strong it
measured come from the package's own data (:data:`unolab.web.catalogue.ABOUT` and the
published strength lines, :func:`unolab.web.catalogue.bot_strength`), so the command, the
browser table and the docs say the same.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from unolab.agents.agent_files import agent_paths
from unolab.agents.model_card import ModelCard, card_markdown, model_card, model_cards
from unolab.agents.python_bots import load_bot_class, make_class_agent
from unolab.agents.registry import (
    BOT_NAMES,
    SEARCH_BUDGETS,
    SEARCH_NAMES,
    SHIPPED_DIR,
    is_agent_spec,
    parse_agent_spec,
    shipped_agent_names,
)
from unolab.agents.resolve import is_agent_file, policy_factory
from unolab.agents.search import GUIDED_PRIORS
from unolab.web.catalogue import ABOUT, bot_strength

__all__ = ["agent_card", "agent_listing", "print_markdown"]

_BOT_KIND = "bot: a fixed rule on its own seat's observation, microseconds a move"
_SEARCH_KIND = (
    "search: plays out guessed deals of the hidden cards (never the real ones) to choose "
    "each move, milliseconds a move"
)
_PATH_HINT = (
    "The path of an exported agent works too: its .safetensors file with the .json metadata "
    "beside it (python -m unolab.train.export CHECKPOINT OUT writes both; a training run "
    "exports runs/NAME/NAME.safetensors)."
)


def _network_strength(card: ModelCard) -> str:
    """``70.2% vs random, 54.7% vs mixbot`` from a card's measured rows (``""`` if none)."""
    rows = {row.opponent: row for row in card.strength}
    return ", ".join(
        f"{rows[name].win_rate:.1%} vs {name}" for name in ("random", "mixbot") if name in rows
    )


def agent_listing() -> str:
    """Every name a user can give, grouped by kind, one line each, then how to name a file."""
    strength = bot_strength()
    cards = model_cards()
    width = max(len(name) for name in (*BOT_NAMES, *SEARCH_NAMES, *shipped_agent_names()))

    def line(name: str, about: str, measured: str | None) -> str:
        return f"  {name:<{width}}  {about}" + (f"; {measured}" if measured else "")

    budgets = ", ".join(f"{name}:N ({SEARCH_BUDGETS[name]})" for name in SEARCH_NAMES)
    lines = ["Bots (any rules, any table size):"]
    lines += [line(name, ABOUT.get(name, ""), strength.get(name)) for name in BOT_NAMES]
    lines += ["", f"Searches (any rules, any table size; a budget after a colon: {budgets}):"]
    lines += [line(name, ABOUT.get(name, ""), strength.get(name)) for name in SEARCH_NAMES]
    lines += ["", "Shipped networks (each plays the rules and table size it was trained for):"]
    lines += [line(card.name, card.title, _network_strength(card)) for card in cards]
    lines += [
        "",
        _PATH_HINT,
        "",
        "uno-lab agents NAME (or PATH) prints its card; strengths are win rates at 2 players "
        "unless a card says otherwise.",
    ]
    return "\n".join(lines) + "\n"


def _bot_card(spec: str) -> str:
    """The Markdown card of a bot or a search (``spec`` may carry a search's options)."""
    name, options = parse_agent_spec(spec)  # a bad option is refused, naming it
    if options:  # the values too, as the commands that play it check them
        policy_factory(spec)
    search = name in SEARCH_NAMES
    about = ABOUT.get(name, "")
    lines = [f"# {name}", "", f"{about[:1].upper()}{about[1:]}." if about else "", ""]
    lines += [
        "| | |",
        "|---|---|",
        f"| Kind | {_SEARCH_KIND if search else _BOT_KIND} |",
        "| Plays | any rules, any table size |",
    ]
    if search:
        budget = SEARCH_BUDGETS[name]
        lines.append(
            f"| Budget | {budget}: `{name}:N` sets it (or `key=value` options after the colon) |"
        )
    if name == "pimc_guided":
        guides = "; ".join(
            f"at {players} players `{guide.path.stem}` (weight {guide.weight:g})"
            for players, guide in sorted(GUIDED_PRIORS.items())
        )
        lines.append(f"| Guide | {guides}; unguided at other table sizes or rules |")
    if options:
        given = ", ".join(f"{key}={value}" for key, value in options.items())
        lines.append(f"| Options given | {given} |")
    measured = bot_strength().get(name)
    lines += ["", "## Strength", ""]
    budget = ", at its default budget" if search else ""
    lines.append(
        f"{measured} (official rules{budget}; docs/results.md has the intervals)."
        if measured
        else "Not measured."
    )
    # exploit trains against an observation policy: the searches are not its targets.
    exploit = "" if search else f", `uno-lab exploit {spec}`"
    lines += [
        "",
        "## Use",
        "",
        f"Name it wherever an agent is asked for: `uno-lab play --opponents {spec}`, a "
        f"tournament's `agents`{exploit}.",
    ]
    return "\n".join(lines) + "\n"


def _class_card(spec: str) -> str:
    """The card of a Python class agent (``my_bots.py:MyBot``): it is loaded and built, as
    the commands that play it do, so a class that is no agent is refused the same way."""
    cls = load_bot_class(spec)  # a class that lacks act() or reset() is named
    agent = make_class_agent(spec, 0)  # its constructor and its name, checked
    source, _, class_name = spec.rpartition(":")
    doc = (cls.__doc__ or "").strip().split("\n\n")[0]
    about = " ".join(doc.split())
    searches = getattr(cls, "needs_state", False) is True
    lines = [f"# {class_name}", "", about, ""] if about else [f"# {class_name}", ""]
    lines += [
        "| | |",
        "|---|---|",
        f"| Kind | a Python class: `{class_name}` of `{source}` |",
        f"| Name | `{agent.name}` |",
        "| Sees | the whole game state (act_from_state) |"
        if searches
        else "| Sees | its seat's observation and legal moves (act) |",
        "| Plays | whatever rules and table sizes its code handles (not checked here) |",
        "",
        "## Use",
        "",
        f"Name it wherever an agent is asked for: `uno-lab play --opponents {spec}`, a "
        "tournament's `participants`. Loading it runs its file's code: name only your own.",
    ]
    return "\n".join(lines) + "\n"


def _file_card(spec: str) -> str:
    """The card of an exported agent's files, from its metadata."""
    weights, meta_path = agent_paths(spec)  # a missing partner file is named
    text = card_markdown(model_card(meta_path))
    heading, _, rest = text.partition("\n")
    where = f"An exported agent: `{weights}`, its metadata `{meta_path}`."
    return f"{heading}\n\n{where}\n{rest}"


def agent_card(spec: str) -> str:
    """The Markdown card of anything ``uno-lab agents`` lists, or of an exported agent's path.

    A file of that name comes first, as for :func:`unolab.agents.policy_factory`.

    Raises:
        ValueError: for a name that is none of these (the message says what is), bad
            options of a search, a Python class that is no agent or cannot be built, or a
            file that is not an exported agent's metadata.
        FileNotFoundError: for a path whose agent file, or its partner, is missing.
    """
    if is_agent_file(spec):
        return _file_card(spec)
    if spec in shipped_agent_names():
        return card_markdown(model_card(SHIPPED_DIR / f"{spec}.json"))
    if is_agent_spec(spec):
        known = spec.partition(":")[0] in (*BOT_NAMES, *SEARCH_NAMES)
        return _bot_card(spec) if known else _class_card(spec)
    looks_like_path = Path(spec).suffix.lower() in (".safetensors", ".json") or any(
        sep in spec for sep in ("/", "\\")
    )
    if looks_like_path:
        return _file_card(spec)
    raise ValueError(
        f"unknown agent {spec!r}: give a bot ({', '.join(BOT_NAMES)}), a search "
        f"({', '.join(SEARCH_NAMES)}), a shipped network ({', '.join(shipped_agent_names())}) "
        "or an exported agent's .safetensors file (its .json beside it); uno-lab agents "
        "describes them"
    )


def print_markdown(text: str, file: TextIO | None = None) -> None:
    """Print Markdown: rendered for a terminal (rich), the text itself otherwise (a pipe, a
    file), so that ``uno-lab agents NAME > card.md`` is the Markdown."""
    out = sys.stdout if file is None else file
    if out.isatty():
        from rich.console import Console
        from rich.markdown import Markdown

        Console(file=out).print(Markdown(text))
    else:
        out.write(text)
