"""``uno-lab agents``: every name a user can give, and a card for each (and for a file)."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from unolab.agent_cards import agent_card, agent_listing, print_markdown
from unolab.agents import BOT_NAMES, SEARCH_NAMES
from unolab.agents.registry import SHIPPED_DIR, shipped_agent_names
from unolab.cli import main as uno_lab
from unolab.web.catalogue import ABOUT, bot_strength


def test_the_list_names_every_bot_search_and_network_and_the_file_form(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert uno_lab(["agents"]) == 0
    listed = capsys.readouterr().out
    names = {line.split()[0] for line in listed.splitlines() if line.startswith("  ")}
    assert {*BOT_NAMES, *SEARCH_NAMES, *shipped_agent_names()} <= names
    assert "mixbot" in names and "pimc_guided" in names
    assert ".safetensors" in listed and ".json" in listed
    # What a bot is and how strong it measured come from the package's data.
    mixbot = next(line for line in listed.splitlines() if line.split()[:1] == ["mixbot"])
    assert ABOUT["mixbot"] in mixbot and bot_strength()["mixbot"] in mixbot


def test_the_expert_iteration_network_says_so_in_the_list_and_its_card() -> None:
    line = next(
        row for row in agent_listing().splitlines() if row.split()[:1] == ["ppo_official_2p_exit"]
    )
    assert "imitation network refined by expert iteration" in line
    card = agent_card("ppo_official_2p_exit")
    assert "Imitation network refined by expert iteration" in card.splitlines()[2]
    # A plain clone of a bot is not expert iteration.
    assert "expert iteration" not in agent_card("ppo_official_2p")


@pytest.mark.parametrize("name", ["mixbot", "random", "card_ranking", "pimc_guided", "ismcts"])
def test_bots_and_searches_have_a_card(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert uno_lab(["agents", name]) == 0
    card = capsys.readouterr().out
    assert card.startswith(f"# {name}\n") and ABOUT[name][1:] in card
    assert bot_strength()[name] in card
    kind = "search" if name in SEARCH_NAMES else "bot"
    assert f"| Kind | {kind}:" in card


def test_a_search_card_names_its_budget_and_checks_options() -> None:
    card = agent_card("pimc_guided")
    assert "`pimc_guided:N`" in card and "ppo_official_2p_exit" in card  # its 2-player guide
    assert "rollouts=2048" in agent_card("pimc:2048")
    with pytest.raises(ValueError, match="not an option of pimc"):
        agent_card("pimc:colour=red")


def test_a_path_to_an_agent_file_shows_its_metadata(tmp_path: Path) -> None:
    for suffix in (".safetensors", ".json"):
        shutil.copy(SHIPPED_DIR / f"ppo_official_4p{suffix}", tmp_path / f"mine{suffix}")
    for given in ("mine.safetensors", "mine.json", "mine"):
        card = agent_card(str(tmp_path / given))
        assert card.startswith("# ppo_official_4p\n")
        assert str(tmp_path / "mine.safetensors") in card and "4 players" in card


def test_bad_names_and_files_get_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert uno_lab(["agents", "nobody"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown agent 'nobody'" in err and "mixbot" in err
    assert uno_lab(["agents", str(tmp_path / "gone.safetensors")]) == 2
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "odd.safetensors").write_bytes(b"")
    (tmp_path / "odd.json").write_text(json.dumps({"name": "odd", "extra": []}))
    assert uno_lab(["agents", str(tmp_path / "odd.safetensors")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "odd.json" in err and "not an exported agent" in err


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_markdown_is_rendered_on_a_terminal_and_left_as_text_otherwise() -> None:
    text = agent_card("mixbot")
    plain = io.StringIO()
    print_markdown(text, plain)
    assert plain.getvalue() == text
    shown = _Terminal()
    print_markdown(text, shown)
    rendered = shown.getvalue()
    assert "mixbot" in rendered and "\x1b[" in rendered  # styled by rich
    assert "# mixbot" not in rendered and "|---|" not in rendered
