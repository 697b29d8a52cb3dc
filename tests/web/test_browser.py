"""The table in a real browser (headless Chromium through Selenium): play a hand, replay it.

Needs Debian's ``chromium`` and ``chromium-driver`` (``make browser`` installs them). On a
user's machine without them the test skips; in CI (``UNO_LAB_CI=1``) it fails instead.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import make_config
from support.optional import require, require_program

require("selenium", "the browser test drives Chromium with Selenium (pip install -e .[dev])")
require("uvicorn", "the browser test serves the table (pip install -e .[web])")

import uvicorn  # noqa: E402
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

from unolab.web.app import create_app  # noqa: E402

WHY = "the browser test needs Chromium and its driver (make browser installs them)"
SCREENSHOTS_TO = "UNO_LAB_SCREENSHOTS"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """The table served by uvicorn in a thread; yields its address."""
    port = _free_port()
    config = uvicorn.Config(
        create_app(make_config(tmp_path)), host="127.0.0.1", port=port, log_level="warning"
    )
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not running.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/"
    running.should_exit = True
    thread.join(timeout=10)


@pytest.fixture
def browser() -> Iterator[Any]:
    """Headless Chromium."""
    chromium = require_program("chromium", WHY, ("/usr/bin/chromium",))
    driver_path = require_program("chromedriver", WHY, ("/usr/bin/chromedriver",))
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    options.add_argument("--window-size=1200,1000")
    options.binary_location = str(chromium)
    driver = webdriver.Chrome(service=Service(str(driver_path)), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def _idle(driver: Any) -> None:
    WebDriverWait(driver, 30).until(
        lambda d: d.execute_script("return document.body.dataset.busy") == "0"
    )


def _visible(driver: Any, css: str) -> bool:
    return bool(
        driver.execute_script(
            f"return !document.querySelector('{css}').classList.contains('hidden')"
        )
    )


def _click_a_move(driver: Any) -> None:
    """Click what a player would: UNO when offered, a playable card, else the first button."""
    if _visible(driver, "#colour-picker"):
        driver.find_elements(By.CSS_SELECTOR, "#colour-picker button")[0].click()
        return
    uno = driver.find_elements(By.CSS_SELECTOR, "#moves button[data-action='uno']")
    if uno:
        uno[0].click()
        return
    cards = driver.find_elements(By.CSS_SELECTOR, "#hand button.card.playable")
    if cards:
        cards[0].click()
        return
    driver.find_elements(By.CSS_SELECTOR, "#moves button")[0].click()


def test_play_a_hand_and_replay_it_in_chromium(
    server: str, browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    browser.get(server)
    WebDriverWait(browser, 30).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#opponents select option")
    )
    assert (
        Select(
            browser.find_element(By.CSS_SELECTOR, "#opponents select")
        ).first_selected_option.get_attribute("value")
        == "mixbot"
    )
    browser.find_element(By.ID, "seed").send_keys("2024")
    browser.find_element(By.ID, "start").click()
    WebDriverWait(browser, 30).until(lambda d: _visible(d, "#table-view"))
    _idle(browser)
    assert "seed 2024" in browser.find_element(By.ID, "table-info").text
    assert browser.find_elements(By.CSS_SELECTOR, "#hand .card")
    seat_names = [s.text for s in browser.find_elements(By.CSS_SELECTOR, "#seats .seat .who")]
    assert seat_names == ["you", "player_1 (mixbot)"]
    assert browser.find_element(By.CSS_SELECTOR, "#centre .pile").text.isdigit()
    browser.save_screenshot(str(tmp_path / "table_start.png"))
    clicks = 0
    while not _visible(browser, "#reveal"):
        seq = browser.execute_script("return document.body.dataset.seq")
        colour_choice = _visible(browser, "#colour-picker")
        playable = browser.find_elements(By.CSS_SELECTOR, "#hand button.card.playable")
        disabled = browser.find_elements(By.CSS_SELECTOR, "#hand button.card:not(.playable)")
        assert all(not card.is_enabled() for card in disabled)  # only legal moves click
        if clicks >= 2 and playable and not (tmp_path / "table.png").exists():
            browser.save_screenshot(str(tmp_path / "table.png"))
        _click_a_move(browser)
        clicks += 1
        if not colour_choice and playable and _visible(browser, "#colour-picker"):
            continue  # a wild: the colour is chosen next
        WebDriverWait(browser, 30).until(
            lambda d, seq=seq: (
                d.execute_script("return document.body.dataset.seq") != seq
                or _visible(d, "#reveal")
            )
        )
        _idle(browser)
        assert clicks < 400, "the hand does not end"
        assert not browser.find_element(By.ID, "error").text
    reveal = browser.find_element(By.ID, "reveal").text
    assert "points this hand" in reveal and "Hand over" in reveal
    assert len(browser.find_elements(By.CSS_SELECTOR, "#reveal .revealed")) == 2
    assert browser.find_elements(By.CSS_SELECTOR, "#log li")
    browser.save_screenshot(str(tmp_path / "table_end.png"))

    # Replay the saved game, step by step.
    browser.find_element(By.ID, "tab-replay").click()
    WebDriverWait(browser, 30).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#saved-games option")
    )
    browser.find_element(By.ID, "open-saved").click()
    WebDriverWait(browser, 30).until(lambda d: _visible(d, "#player"))
    frame = lambda: int(browser.execute_script("return document.body.dataset.frame"))  # noqa: E731
    assert frame() == 0
    for _ in range(3):
        browser.find_element(By.ID, "replay-next").click()
    assert frame() == 3
    browser.find_element(By.ID, "replay-prev").click()
    assert frame() == 2
    seats = browser.find_elements(By.CSS_SELECTOR, "#replay-seats .seat")
    assert len(seats) == 2 and all(s.find_elements(By.CSS_SELECTOR, ".card") for s in seats)
    jump = browser.find_element(By.ID, "replay-jump")
    jump.clear()
    jump.send_keys("5\n")
    assert frame() == 5
    assert "Next move, by" in browser.find_element(By.ID, "decision").text
    browser.find_element(By.ID, "replay-last").click()
    assert "End of the hand" in browser.find_element(By.ID, "decision").text
    browser.save_screenshot(str(tmp_path / "replay.png"))
    browser.find_element(By.ID, "show-hands").click()
    assert not browser.find_elements(By.CSS_SELECTOR, "#replay-seats .card")
    for name in ("table_start.png", "table_end.png", "replay.png"):
        assert (tmp_path / name).stat().st_size > 1000
