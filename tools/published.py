"""Regenerate the pages made from data: ``python tools/published.py`` (``--check`` compares).

Every published figure lives in a JSON record, and the tables that show it are written from
the records, never typed by hand:

* ``docs/results.md``: the strength of the bots (``docs/bot_strength.json``, and against
  ``random_action``: ``docs/bot_strength_vs_random_action.json``), of the shipped
  agents (``docs/pretrained_strength.json``) and of the search agents
  (``docs/search_strength.json``; ``pimc`` by budget: ``docs/search_budgets.json``), and the speed figures (``docs/benchmarks.json``), each
  with its seed, hands, interval and date;
* the headline table of the README and of the docs' home page (``docs/index.md``), between
  their ``results`` markers (:data:`docs_tables.HEADLINE_PAGES`);
* the tables of a guide between ``<!-- table: KIND RECORD.json -->`` and
  ``<!-- end of table -->`` markers (:data:`docs_tables.TABLE_KINDS`; docs/bots.md has three;
  the guides are :data:`docs_tables.GUIDES_WITH_TABLES`);
* the table of each measured one-off experiment (the Ray backend's overhead, the LLM
  benchmark, the search's and training's findings...): kind ``measured``, one record per
  table under ``docs/data/`` (``<!-- table: measured data/ray_vs_local.json -->``) holding
  its ``columns``, its ``rows`` (each cell text, or a number with its format:
  ``{"value": 0.0751, "format": ".4f"}``), a ``description`` and ``measured_with`` (the
  ``command``, ``method``, ``machine`` and ``date``, those the measurement states; at least
  one). A new measured table gets a record and a marker, never typed figures (the test
  suite refuses a typed table of rates, ratios, speeds or times);
* the model cards of the shipped agents (``docs/agents/``), from the agents' JSON metadata
  (:mod:`unolab.agents.model_card`);
* the exploitability table of ``docs/exploitability.md`` (``docs/data/exploitability.json``,
  :mod:`exploit_table`, which also gathers the results);
* the OpenSpiel cross-check (``docs/data/openspiel_crosscheck.json``, written by
  :mod:`unolab.benchmarks.openspiel_crosscheck`), a table in results.md;
* the strength line of each bot in the browser's agent list (``unolab/web/strength.json``,
  shipped with the package), from the bots' and searches' records (measured by
  ``python tools/strength.py``);
* the learning curves (``docs/data/training_curves.json``, written by
  ``python tools/training_curves.py``): a picture per figure
  (``docs/img/curves/<name>.png``, shown by docs/training.md) and its table in results.md.

``--check`` writes nothing and exits 1 naming each page that differs from what its data
gives (the test suite runs it). A picture is checked by the digest of its data, which it
carries in a PNG text chunk (the pixels depend on the installed matplotlib).

Every record and page is read bounded, as a regular UTF-8 file (:mod:`docs_records`), and
every value a page shows is checked against what a measurement writes (its type, finite,
within its bounds: a rate in [0, 1] inside its interval, a count of hands non-negative, a
curve's name a plain file name; :mod:`record_checks`) before any page is written. A damaged record (truncated, empty, not UTF-8, a folder, a FIFO
or a link loop in its place, a list where an object belongs, NaN, a key missing...) is one
line naming the file and the key or the line, exit status 2; a page that cannot be written
is one line naming it, exit status 1.

This is a tool of the repository, not of the installed package: it reads and writes the
checkout (``--root``, by default the checkout it is in), and refuses a folder that is not
one. Its sibling modules are imported by name, as a script's folder is on ``sys.path``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import struct
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import exploit_table
from docs_records import (
    COMMAND,
    CURVE_PICTURES,
    CURVES,
    CURVES_RECORD,
    EXPLOIT_RECORD,
    MAX_RECORD_BYTES,
    ROOT,
    RecordError,
    checked,
    load_record,
    present,
    read_text,
    shown_path,
)
from docs_tables import (
    GUIDES_WITH_TABLES,
    HEADLINE_PAGES,
    bot_strength_lines,
    results_page,
    with_headline,
    with_tables,
)

from uno_env.console import path_argument, run_main
from uno_env.files import UnreadableFileError, read_regular_file, write_atomically
from unolab.agents.model_card import card_markdown, model_cards
from unolab.curves import Series, curves_png

__all__ = ["DIGEST_KEY", "curve_picture", "main", "pages", "png_text"]


DIGEST_KEY = "Data-SHA256"
"""The PNG text chunk holding the digest of the data a picture shows."""


def _digest(figure: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(figure, sort_keys=True).encode()).hexdigest()


def curve_picture(figure: dict[str, Any]) -> bytes:
    """A learning-curve figure of the record drawn as a PNG (its data's digest inside)."""
    series = []
    for line in figure["lines"]:
        opponents = list(dict.fromkeys(p["opponent"] for p in line["points"]))
        for opponent in opponents:
            points = [p for p in line["points"] if p["opponent"] == opponent]
            series.append(
                Series(
                    label=line["label"] if len(opponents) == 1 else f"{line['label']}, {opponent}",
                    steps=[p["steps"] for p in points],
                    win_rate=[p["win_rate"] for p in points],
                    ci_low=[p["ci_low"] for p in points],
                    ci_high=[p["ci_high"] for p in points],
                )
            )
    return curves_png(
        figure["title"],
        series,
        fair_share=figure.get("fair_share", 0.5),
        legend_title="run" if len(figure["lines"]) > 1 else "against",
        metadata={DIGEST_KEY: _digest(figure)},
    )


def png_text(data: bytes) -> dict[str, str]:
    """The ``tEXt`` chunks of a PNG file, by keyword ({} for anything that is not a PNG)."""
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return {}
    chunks, at = {}, 8
    while at + 8 <= len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        if kind == b"tEXt" and b"\0" in body:
            key, value = body.split(b"\0", 1)
            chunks[key.decode("latin-1")] = value.decode("latin-1")
        at += 12 + length
    return chunks


def pages(root: Path = ROOT) -> dict[Path, str | bytes]:
    """Every generated page, by its path, with the text (or picture) its data gives now."""
    out_pages: dict[Path, str | bytes] = {root / "docs" / "results.md": results_page(root)}
    for guide in GUIDES_WITH_TABLES:
        path = root / "docs" / guide
        if present(path):
            text = read_text(path, root, "page")
            try:
                out_pages[path] = with_tables(text, root)
            except RecordError:
                raise
            except ValueError as err:  # a broken marker: named with its page
                raise RecordError(f"{shown_path(path, root)}: {err}") from None
    web = root / "unolab" / "web"
    if web.is_dir():
        out_pages[web / "strength.json"] = json.dumps(bot_strength_lines(root), indent=2) + "\n"
    exploit_page = root / exploit_table.PAGE
    if present(exploit_page):
        page_text = read_text(exploit_page, root, "page")
        data = checked(root / exploit_table.DATA, root, EXPLOIT_RECORD)
        out_pages[exploit_page] = exploit_table.render_page(page_text, data)
    for page in HEADLINE_PAGES:
        if present(root / page):
            text = read_text(root / page, root, "page")
            out_pages[root / page] = with_headline(text, page, root)
    cards = model_cards()
    folder = root / "docs" / "agents"
    out = {folder / f"{card.name}.md": card_markdown(card) for card in cards}
    index = [
        "# Shipped agents",
        "",
        f"Each card is generated from the agent's metadata (`{COMMAND}`).",
        "",
        "| agent | what it is | vs `random` |",
        "|---|---|---|",
    ]
    for card in cards:
        versus = {row.opponent: row for row in card.strength}.get("random")
        rate = f"{versus.win_rate:.1%}" if versus else "-"
        index.append(f"| [{card.name}]({card.name}.md) | {card.title} | {rate} |")
    out[folder / "index.md"] = "\n".join(index) + "\n"
    pictures: dict[Path, str | bytes] = {
        root / "docs" / CURVE_PICTURES / f"{name}.png": curve_picture(figure)
        for name, figure in load_record(root, CURVES, CURVES_RECORD)["figures"].items()
    }
    return {**out_pages, **out, **pictures}


def _same(path: Path, page: str | bytes) -> bool:
    """Whether ``path`` holds ``page``: the same text, or a picture of the same data (a
    page that cannot be read, or is not UTF-8, differs)."""
    try:
        held = read_regular_file(path, MAX_RECORD_BYTES, "page")
    except UnreadableFileError:
        return False
    if isinstance(page, bytes):
        digest = png_text(page)[DIGEST_KEY]
        return png_text(held).get(DIGEST_KEY) == digest
    return held == page.encode("utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    """Write (or with ``--check`` compare) the generated pages; return the exit status."""
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__)
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 on a difference")
    parser.add_argument(
        "--root", type=path_argument, default=ROOT, help="the repository's checkout"
    )
    args = parser.parse_args(argv)
    root: Path = args.root
    if not (root / "docs").is_dir() or not (root / "pyproject.toml").is_file():
        print(
            f"{COMMAND}: {root} is not a checkout of uno-lab (no docs/ beside "
            "pyproject.toml); run it from the repository",
            file=sys.stderr,
        )
        return 2
    stale = []
    try:
        generated = pages(root)
    except (OSError, ValueError, RecursionError) as err:  # RecordError names file and key
        print(f"{COMMAND}: {' '.join(str(err).split())}", file=sys.stderr)
        return 2
    for path, page in generated.items():
        if _same(path, page):
            continue
        where = shown_path(path, root)
        if args.check:
            stale.append(where)
            continue
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(path, page)
        except (OSError, ValueError) as err:  # a folder in the way, a read-only checkout
            reason = getattr(err, "strerror", None) or " ".join(str(err).split())
            print(
                f"{COMMAND}: {where}: cannot be written ({reason})",
                file=sys.stderr,
            )
            return 1
        print(f"wrote {where}")
    if stale:
        print(
            f"out of date: {', '.join(stale)}; regenerate with {COMMAND}",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    run_main(main, COMMAND)
