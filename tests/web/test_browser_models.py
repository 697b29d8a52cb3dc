"""A language model at the table in a real browser (headless Chromium through Selenium),
against the scripted chat-completions server: the setup shows the model and its host, a
hand is played to its end while the page shows the model thinking, the replay shows what
the model wrote (markup in it as text, never run) and the Lab shows its telemetry.

Needs Debian's ``chromium`` and ``chromium-driver``, as ``test_browser.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import test_browser
from conftest import make_config
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from support.optional import require
from test_browser import (
    _deal,
    _hand_over,
    _idle,
    _load,
    _opponent,
    _play_until,
    _serve_app,
    _set_speed,
    _text,
    _visible,
)
from test_models import SCRIPT_ANSWER, hostile, model_folder, write_spec

from unolab.benchmarks.chat_server import ChatServer, Script, chat_server
from unolab.web.app import create_app

require("openai", "language-model agents (pip install -e .[llm])")

browser = test_browser.browser
shots = test_browser.shots
"""The fixtures of the table's browser test: headless Chromium whose console must stay free
of errors, and where the screenshots go."""


def _serve(root: Path, agents: Path) -> Iterator[str]:
    yield from _serve_app(create_app(make_config(root, agents)))


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with chat_server() as running:
        yield running


def _watch_thinking(driver: Any) -> None:
    driver.execute_script(
        """
        window.sawThinking = 0;
        new MutationObserver(() => {
          if (document.querySelector('#seats .seat.thinking .badge.thinking')) window.sawThinking++;
        }).observe(document.querySelector('#table-view'), {subtree: true, childList: true});
        """
    )


def test_a_hand_against_a_model_its_replay_and_its_telemetry(
    tmp_path: Path, server: ChatServer, browser: Any, shots: Path
) -> None:
    from unolab.tournament.config import load_config
    from unolab.tournament.runner import run_tournament

    agents = model_folder(tmp_path / "agents", server)
    spec = write_spec(tmp_path, "tourney_model", model="test-model", base_url=server.base_url)
    server.play(Script(invalid_every=4))
    run_tournament(
        load_config(
            {
                "name": "llm",
                "participants": [str(spec), "random"],
                "deal_sets": 2,
                "games_per_chunk": 4,
                "bootstrap": 0,
                "output_dir": str(tmp_path / "runs" / "tournaments"),
            }
        ),
        progress=False,
        plots=False,
        print_table=False,
    )
    served = server.play(Script(answer=hostile, delay_s=0.2))
    host = server.base_url.split("//")[1].split("/")[0]
    for url in _serve(tmp_path, agents):
        _load(browser, url)
        _set_speed(browser, "0")
        _opponent(browser, "folder:my_model")
        about = _text(browser, "#opponent-list .opponent .about")
        assert f"language model test-model at {host}" in about and "/v1" not in about
        hot = browser.find_element(By.CSS_SELECTOR, "#opponent-list option[value='folder:too_hot']")
        assert not hot.is_enabled()
        target = browser.find_element(By.ID, "target-score")
        target.clear()
        target.send_keys("1")
        _deal(browser, "31")
        _watch_thinking(browser)
        seen = _play_until(browser, _hand_over)
        assert seen["turns"] > 0 and served.answers > 0
        assert browser.execute_script("return window.sawThinking") > 0
        assert browser.execute_script("return window.pwned") is None
        names = [s.text for s in browser.find_elements(By.CSS_SELECTOR, "#seats .seat .who")]
        assert names == ["you", "player_1 (my_model)"]
        browser.save_screenshot(str(shots / "model_table.png"))

        # The replay: the model's text at its moves, markup shown as text.
        browser.find_element(By.ID, "tab-replay").click()
        WebDriverWait(browser, 30).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, "#saved-games option")
        )
        _idle(browser)
        browser.find_element(By.ID, "open-saved").click()
        WebDriverWait(browser, 30).until(lambda d: _visible(d, "#player"))
        for _ in range(400):
            if browser.find_elements(By.CSS_SELECTOR, "#decision .model-note"):
                break
            browser.find_element(By.ID, "replay-next").click()
        note = browser.find_element(By.CSS_SELECTOR, "#decision .model-note")
        answer = note.find_element(By.CSS_SELECTOR, "pre.model-text").text
        assert answer.startswith(SCRIPT_ANSWER.strip())  # the tags, as text
        assert not browser.find_elements(By.CSS_SELECTOR, "#decision script, #decision b")
        assert "What the model test-model wrote" in note.text and "tokens in" in note.text
        assert browser.execute_script("return window.pwned") is None
        browser.save_screenshot(str(shots / "model_replay.png"))

        # The Lab: the model's telemetry beside the leaderboard.
        browser.find_element(By.ID, "tab-lab").click()
        WebDriverWait(browser, 30).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, "#lab-tournaments button")
        )
        _idle(browser)
        browser.find_element(By.CSS_SELECTOR, "#lab-tournaments button").click()
        WebDriverWait(browser, 30).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, "#lab-detail table.telemetry tbody tr")
        )
        rows = browser.find_elements(By.CSS_SELECTOR, "#lab-detail table.telemetry tbody tr")
        cells = [c.text for c in rows[0].find_elements(By.TAG_NAME, "td")]
        assert len(rows) == 1 and cells[0] == "tourney_model"
        assert int(cells[1].replace(",", "")) > 0 and int(cells[2]) > 0  # decisions, invalid
        assert cells[7].endswith(" s")
        browser.save_screenshot(str(shots / "model_lab.png"))
