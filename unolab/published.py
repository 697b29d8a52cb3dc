"""Regenerate the pages made from data: ``python -m unolab.published`` (``--check`` compares).

The model cards of the shipped agents (``docs/agents/``) are written from the agents' JSON
metadata (:mod:`unolab.agents.model_card`), so what the docs say about an agent is what the
agent's file records. ``--check`` writes nothing and exits 1 naming each page that differs
from what its data gives (the test suite runs it).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from unolab.agents.model_card import card_markdown, model_cards

__all__ = ["main", "pages"]

ROOT = Path(__file__).resolve().parent.parent
"""The repository's root (the docs are not part of the installed package)."""


def pages(root: Path = ROOT) -> dict[Path, str]:
    """Every generated page, by its path, with the text its data gives now."""
    cards = model_cards()
    folder = root / "docs" / "agents"
    out = {folder / f"{card.name}.md": card_markdown(card) for card in cards}
    index = [
        "# Shipped agents",
        "",
        "Each card is generated from the agent's metadata (`python -m unolab.published`).",
        "",
        "| agent | what it is | vs `random` |",
        "|---|---|---|",
    ]
    for card in cards:
        versus = {row.opponent: row for row in card.strength}.get("random")
        rate = f"{versus.win_rate:.1%}" if versus else "-"
        index.append(f"| [{card.name}]({card.name}.md) | {card.title} | {rate} |")
    out[folder / "index.md"] = "\n".join(index) + "\n"
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Write (or with ``--check`` compare) the generated pages; return the exit status."""
    parser = argparse.ArgumentParser(prog="python -m unolab.published", description=__doc__)
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 on a difference")
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository's checkout")
    args = parser.parse_args(argv)
    root: Path = args.root
    if not (root / "docs").is_dir() or not (root / "pyproject.toml").is_file():
        print(
            f"python -m unolab.published: {root} is not a checkout of uno-lab (no docs/ beside "
            "pyproject.toml); run it from the repository",
            file=sys.stderr,
        )
        return 2
    stale = []
    for path, text in pages(root).items():
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current == text:
            continue
        if args.check:
            stale.append(path.relative_to(root).as_posix())
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(root).as_posix()}")
    if stale:
        print(
            f"out of date: {', '.join(stale)}; regenerate with python -m unolab.published",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
