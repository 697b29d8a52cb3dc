"""The table in a real browser (headless Chromium through Selenium): play hands, reload,
replay, the phone layout, the Lab tab, the first start while the engine compiles; the
browser's console stays free of errors.

Needs Debian's ``chromium`` and ``chromium-driver`` (``make browser`` installs them). On a
user's machine without them the test skips; in CI (``UNO_LAB_CI=1``) it fails instead.
Screenshots go to ``$UNO_LAB_SCREENSHOTS`` when it is set, else to the test's temporary
folder.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import make_config, play_to_end
from support.optional import require, require_program
from support.warmup import PARTS, FakeWarmup

require("selenium", "the browser test drives Chromium with Selenium (pip install -e .[dev])")
require("uvicorn", "the browser test serves the table (pip install -e .[web])")

import uvicorn  # noqa: E402
from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import TimeoutException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

from uno_env.text.view import seat_view  # noqa: E402
from unolab.warmup import WARMUP_SECONDS, WarmupStatus  # noqa: E402
from unolab.web.app import create_app  # noqa: E402
from unolab.web.game import seats as seating  # noqa: E402
from unolab.web.warming import start_warmup  # noqa: E402

WHY = "the browser test needs Chromium and its driver (make browser installs them)"
SCREENSHOTS_TO = "UNO_LAB_SCREENSHOTS"
RED = (215, 38, 0)
"""``--red`` of table.css: a red card's face, playable or not."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _serve(root: Path, warmup: WarmupStatus | None = None) -> Iterator[str]:
    """The table over the folders under ``root``, served by uvicorn in a thread (with the
    engine's ``warmup`` running, if given)."""
    yield from _serve_app(create_app(make_config(root), warmup=warmup))


def _serve_app(app: Any) -> Iterator[str]:
    """``app`` served by uvicorn in a thread; yields its address, then stops it."""
    port = _free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
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
def server(tmp_path: Path) -> Iterator[str]:
    """The table served by uvicorn in a thread; yields its address."""
    yield from _serve(tmp_path)


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    """Where the screenshots go."""
    folder = Path(os.environ.get(SCREENSHOTS_TO) or tmp_path / "shots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _chromium() -> Any:
    """A headless Chromium of its own (its own profile: its own storage)."""
    chromium = require_program("chromium", WHY, ("/usr/bin/chromium",))
    driver_path = require_program("chromedriver", WHY, ("/usr/bin/chromedriver",))
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    options.add_argument("--window-size=1280,900")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    options.binary_location = str(chromium)
    return webdriver.Chrome(service=Service(str(driver_path)), options=options)


@pytest.fixture
def browser() -> Iterator[Any]:
    """Headless Chromium; at the end, its console must hold no error (a failed request, an
    uncaught exception, a 404 of the favicon all count)."""
    driver = _chromium()
    try:
        yield driver
        _console_is_clean(driver)
    finally:
        driver.quit()


@pytest.fixture
def friend_browser() -> Iterator[Any]:
    """A second headless Chromium (another person at the same table); its console too must
    stay clean."""
    driver = _chromium()
    try:
        yield driver
        _console_is_clean(driver)
    finally:
        driver.quit()


def _console_is_clean(driver: Any) -> None:
    errors = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors


def _idle(driver: Any) -> None:
    """Wait until the page asks nothing of the server and no card is in flight: a card that
    flies into the hand moves under the pointer, and a click aimed at where it was found a
    moment before lands beside it (a person clicks a card that has landed)."""
    WebDriverWait(driver, 60).until(
        lambda d: d.execute_script(
            "return document.body.dataset.busy === '0' && document.getAnimations().every("
            "(a) => a.playState !== 'running' || a.effect.getComputedTiming().endTime === Infinity)"
        )
    )


def _visible(driver: Any, css: str) -> bool:
    return bool(
        driver.execute_script(
            "const n = document.querySelector(arguments[0]);"
            "return n !== null && !n.classList.contains('hidden')",
            css,
        )
    )


def _text(driver: Any, css: str) -> str:
    return str(driver.find_element(By.CSS_SELECTOR, css).text)


def _seq(driver: Any) -> str:
    return str(driver.execute_script("return document.body.dataset.seq"))


def _load(driver: Any, url: str) -> None:
    driver.get(url)
    WebDriverWait(driver, 30).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#opponent-list select option")
    )
    _idle(driver)


def _set_speed(driver: Any, delay: str) -> None:
    """Choose how long each bot's move is shown (the table's speed menu, set before the
    table is on screen)."""
    driver.execute_script(
        "const s = document.getElementById('speed'); s.value = arguments[0];"
        "s.dispatchEvent(new Event('change'));",
        delay,
    )


def _watch_bots(driver: Any) -> None:
    """Record, in the page, each seat that lights up as acting (the bots' moves shown one
    by one) and each card that arrives on the pile."""
    driver.execute_script(
        """
        window.acted = window.acted || [];
        new MutationObserver(() => {
          const seat = document.querySelector('#seats .seat.acting');
          const top = document.querySelector('#top');
          const step = [seat ? seat.dataset.seat : null, top ? top.dataset.card : null];
          const last = window.acted[window.acted.length - 1];
          if (seat && (!last || last[0] !== step[0] || last[1] !== step[1])) window.acted.push(step);
        }).observe(document.querySelector('#table-view'), {subtree: true, childList: true});
        """
    )


def _deal(driver: Any, seed: str, players: int = 2) -> None:
    if players != 2:
        count = driver.find_element(By.ID, "num-players")
        count.clear()
        count.send_keys(str(players), Keys.TAB)
    driver.find_element(By.ID, "seed").send_keys(seed)
    driver.find_element(By.ID, "start").click()
    WebDriverWait(driver, 30).until(lambda d: _visible(d, "#table-view"))
    _idle(driver)


def _red_of(driver: Any, element: Any) -> tuple[int, int, int]:
    """A card's face colour as shown: its background, with nothing that fades or filters it
    (an opacity below 1 would blend the felt's green into the red)."""
    colour, opacity, filtered = driver.execute_script(
        "const s = getComputedStyle(arguments[0]);return [s.backgroundColor, s.opacity, s.filter]",
        element,
    )
    assert opacity == "1" and filtered == "none", (opacity, filtered)
    found = re.findall(r"\d+", colour)
    return int(found[0]), int(found[1]), int(found[2])


def _take_a_turn(driver: Any, use_keys: bool) -> None:
    """Do what a player would: UNO when prompted, a playable card, else the pile or a button;
    by keys (1-9, D, U, P and colour letters) when ``use_keys``."""
    keys = driver.find_element(By.TAG_NAME, "body")
    if _visible(driver, "#colour-picker"):
        if use_keys:
            colour = driver.find_elements(By.CSS_SELECTOR, "#colour-picker button")[0]
            keys.send_keys(colour.get_attribute("data-colour").lower())
        else:
            driver.find_elements(By.CSS_SELECTOR, "#colour-picker button")[0].click()
        return
    if driver.find_elements(By.CSS_SELECTOR, "#moves button[data-kind='uno']"):
        assert "press UNO!" in _text(driver, "#situation")
        (
            keys.send_keys("u")
            if use_keys
            else driver.find_element(By.CSS_SELECTOR, "#moves button[data-kind='uno']").click()
        )
        return
    if driver.find_elements(By.CSS_SELECTOR, "#hand button.card.playable"):
        if use_keys:
            keys.send_keys("1")
        else:
            driver.find_elements(By.CSS_SELECTOR, "#hand button.card.playable")[0].click()
        return
    if driver.find_element(By.ID, "pile").is_enabled():
        if use_keys:
            keys.send_keys("d")
        else:
            driver.find_element(By.ID, "pile").click()
        return
    driver.find_elements(By.CSS_SELECTOR, "#moves button")[0].click()


def _play_until(
    driver: Any, done: Callable[[Any], bool], use_keys: bool = False, limit: int = 400
) -> dict[str, int]:
    """Take turns until ``done``; check on the way that only legal cards click and that a
    card that cannot be played keeps its colour. Returns what was seen."""
    seen = {"turns": 0, "locked_red": 0, "uno_prompts": 0}
    while not done(driver):
        seq = _seq(driver)
        colour_choice = _visible(driver, "#colour-picker")
        playable = driver.find_elements(By.CSS_SELECTOR, "#hand button.card.playable")
        locked = driver.find_elements(By.CSS_SELECTOR, "#hand button.card.locked")
        assert all(not card.is_enabled() for card in locked)  # only legal moves click
        for card in driver.find_elements(By.CSS_SELECTOR, "#hand button.card.locked.R"):
            red = _red_of(driver, card)
            assert all(abs(a - b) <= 12 for a, b in zip(red, RED, strict=True)), red
            seen["locked_red"] += 1
        if driver.find_elements(By.CSS_SELECTOR, "#moves button[data-kind='uno']"):
            seen["uno_prompts"] += 1
        _take_a_turn(driver, use_keys and seen["turns"] % 2 == 0)
        seen["turns"] += 1
        if not colour_choice and playable and _visible(driver, "#colour-picker"):
            continue  # a wild: the colour is chosen next
        try:
            WebDriverWait(driver, 60).until(
                lambda d, seq=seq: _seq(d) != seq or _visible(d, "#result")
            )
        except TimeoutException:
            raise AssertionError(f"the move was not answered: {_page_state(driver)}") from None
        _idle(driver)
        assert seen["turns"] < limit, "the hand does not end"
        assert not _visible(driver, "#error-box"), _text(driver, "#error")
    return seen


def _page_state(driver: Any) -> dict[str, Any]:
    """What the page shows and holds, for the message of a failed wait."""
    state = driver.execute_script(
        """
        const text = (css) => { const n = document.querySelector(css); return n ? n.textContent : null; };
        return {seq: document.body.dataset.seq, busy: document.body.dataset.busy,
          error: text('#error'), situation: text('#situation'), ticker: text('#ticker'),
          moves: [...document.querySelectorAll('#moves button')].map((b) => [b.dataset.kind, b.disabled]),
          hand: [...document.querySelectorAll('#hand .card')].map((c) => [c.dataset.card, c.className, c.disabled]),
          pile: document.getElementById('pile').disabled,
          picker: !document.getElementById('colour-picker').classList.contains('hidden')};
        """
    )
    state["console"] = [e["message"] for e in driver.get_log("browser")][-10:]
    return dict(state)


def _hand_over(driver: Any) -> bool:
    return _visible(driver, "#result")


def test_play_a_hand_and_replay_it_in_chromium(
    server: str, browser: Any, shots: Path, tmp_path: Path
) -> None:
    _load(browser, server)
    first = Select(browser.find_element(By.CSS_SELECTOR, "#opponent-list select"))
    assert first.first_selected_option.get_attribute("value") == "mixbot"
    assert "strength" in _text(browser, "#opponent-list .opponent .about")
    _set_speed(browser, "0")
    target = browser.find_element(By.ID, "target-score")
    target.clear()
    target.send_keys("1")
    _deal(browser, "2024")
    assert "seed 2024" in _text(browser, "#table-line")
    assert browser.find_elements(By.CSS_SELECTOR, "#hand .card")
    seat_names = [s.text for s in browser.find_elements(By.CSS_SELECTOR, "#seats .seat .who")]
    assert seat_names == ["you", "player_1 (mixbot)"]
    assert browser.find_element(By.ID, "pile-count").text.isdigit()
    assert browser.current_url.endswith(
        "#game=" + browser.execute_script("return document.body.dataset.game")
    )
    seen = _play_until(browser, _hand_over, use_keys=True)
    assert seen["turns"] > 0

    # The result: who won and by how much, the score against the target, the winner marked,
    # every hand once (yours is not repeated under the result).
    result = _text(browser, "#result")
    assert re.search(r"(You win|player_1 \(mixbot\) wins) the match \d+-\d+", result), result
    assert re.search(r"wins? the hand, \+\d+", result), result
    assert "first to 1 wins" in result, result
    assert len(browser.find_elements(By.CSS_SELECTOR, "#result tr.revealed")) == 2
    assert len(browser.find_elements(By.CSS_SELECTOR, "#seats .seat.winner")) == 1
    assert not browser.find_elements(By.CSS_SELECTOR, "#hand .card")
    assert browser.find_elements(By.CSS_SELECTOR, "#log li")
    browser.save_screenshot(str(shots / "table_end.png"))

    # Replay the saved game, step by step: buttons, the move box, the arrow keys.
    browser.find_element(By.ID, "tab-replay").click()
    WebDriverWait(browser, 30).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#saved-games option")
    )
    _idle(browser)
    browser.find_element(By.ID, "open-saved").click()
    WebDriverWait(browser, 30).until(lambda d: _visible(d, "#player"))
    frame = lambda: int(browser.execute_script("return document.body.dataset.frame"))  # noqa: E731
    assert frame() == 0
    for _ in range(3):
        browser.find_element(By.ID, "replay-next").click()
    assert frame() == 3
    browser.find_element(By.ID, "replay-prev").click()
    assert frame() == 2
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.ARROW_RIGHT)
    body.send_keys(Keys.ARROW_RIGHT)
    assert frame() == 4
    body.send_keys(Keys.ARROW_LEFT)
    assert frame() == 3
    seats = browser.find_elements(By.CSS_SELECTOR, "#replay-seats .seat")
    assert len(seats) == 2 and all(s.find_elements(By.CSS_SELECTOR, ".card") for s in seats)
    jump = browser.find_element(By.ID, "replay-jump")
    jump.clear()
    jump.send_keys("5\n")
    assert frame() == 5
    assert "Next move, by" in _text(browser, "#decision")
    browser.find_element(By.ID, "replay-last").click()
    assert "End of the hand" in _text(browser, "#decision")
    browser.save_screenshot(str(shots / "replay.png"))
    browser.find_element(By.ID, "show-hands").click()
    assert not browser.find_elements(By.CSS_SELECTOR, "#replay-seats .card")

    # A record cut short says so at its last frame.
    saved = next((tmp_path / "games").glob("*.json"))
    record = json.loads(saved.read_text())
    record["hands"] = [record["hands"][0][:6]]
    cut = tmp_path / "cut.json"
    cut.write_text(json.dumps(record))
    browser.find_element(By.ID, "record-file").send_keys(str(cut))
    WebDriverWait(browser, 30).until(lambda d: frame() == 0 and "cut" not in _text(d, "#decision"))
    body.send_keys(Keys.END)
    assert frame() == 6
    assert "cut short" in _text(browser, "#decision")
    assert "End of the hand" not in _text(browser, "#decision")
    for name in ("table_end.png", "replay.png"):
        assert (shots / name).stat().st_size > 1000


def test_four_players_with_jump_in_reload_and_result(
    server: str, browser: Any, shots: Path
) -> None:
    _load(browser, server)
    count = browser.find_element(By.ID, "num-players")
    count.clear()
    count.send_keys("4", Keys.TAB)
    # At 4 players under the official rules the shipped 4-player agent sits; a house rule
    # takes it out, and the page says why.
    seat = Select(browser.find_elements(By.CSS_SELECTOR, "#opponent-list select")[0])
    seat.select_by_value("shipped:ppo_official_4p")
    browser.find_element(By.CSS_SELECTOR, "#house-rules summary").click()
    groups = [g.text for g in browser.find_elements(By.CSS_SELECTOR, ".rule-group legend")]
    assert {"Stacking", "Jump-in", "Seven-zero", "Wild Draw Four"} <= set(groups)
    assert "jump_in" not in _text(browser, "#switches")
    # Conflicts cannot be chosen: adding up penalties needs a stacking rule first.
    cumulative = browser.find_element(By.CSS_SELECTOR, "[data-rule='stack_cumulative']")
    assert not cumulative.is_enabled()
    browser.find_element(By.CSS_SELECTOR, "[data-rule='stack_draw_two']").click()
    assert cumulative.is_enabled()
    browser.find_element(By.CSS_SELECTOR, "[data-rule='stack_draw_two']").click()
    assert not cumulative.is_enabled()
    browser.find_element(By.CSS_SELECTOR, "[data-rule='jump_in']").click()
    note = _text(browser, "#agent-note")
    assert "ppo_official_4p" in note and "mixbot sits there instead" in note, note
    assert "Jump in" in note, note
    seat = Select(browser.find_elements(By.CSS_SELECTOR, "#opponent-list select")[0])
    options = [o.get_attribute("value") for o in seat.options]
    assert not any(v.startswith("shipped:") for v in options)
    target = browser.find_element(By.ID, "target-score")
    target.clear()
    target.send_keys("30")
    _set_speed(browser, "150")
    browser.find_element(By.ID, "seed").send_keys("77")
    browser.find_element(By.ID, "start").click()
    WebDriverWait(browser, 30).until(lambda d: _visible(d, "#table-view"))
    _idle(browser)
    assert len(browser.find_elements(By.CSS_SELECTOR, "#seats .seat")) == 4
    browser.set_window_size(1280, 900)
    browser.save_screenshot(str(shots / "table_1280x900.png"))

    # A few turns, then a reload: the same match comes back, at the same move.
    _watch_bots(browser)
    seen = _play_until(browser, lambda d: int(_seq(d)) >= 12 or _hand_over(d))
    acted = browser.execute_script("return window.acted")
    assert {step[0] for step in acted} >= {"1", "2", "3"}, acted  # each bot shown acting
    game_id = browser.execute_script("return document.body.dataset.game")
    seq, hand = (
        _seq(browser),
        browser.execute_script(
            "return [...document.querySelectorAll('#hand .card')].map(c => c.dataset.card)"
        ),
    )
    browser.refresh()
    WebDriverWait(browser, 30).until(lambda d: _visible(d, "#table-view"))
    _idle(browser)
    assert browser.execute_script("return document.body.dataset.game") == game_id
    assert _seq(browser) == seq
    assert hand == browser.execute_script(
        "return [...document.querySelectorAll('#hand .card')].map(c => c.dataset.card)"
    )
    assert browser.find_elements(By.CSS_SELECTOR, "#log li")

    # New game asks before abandoning the match; keep playing.
    if not _hand_over(browser):
        browser.find_element(By.ID, "new-game").click()
        WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "confirm").is_displayed())
        browser.find_element(By.ID, "confirm-no").click()
        assert _visible(browser, "#table-view") and game_id in browser.current_url

    more = _play_until(browser, _hand_over)
    assert seen["locked_red"] + more["locked_red"] > 0  # the hue check ran
    result = _text(browser, "#result")
    assert re.search(r"wins? the (hand|match)", result), result
    assert re.search(r"(first to 30 wins)", result), result
    assert len(browser.find_elements(By.CSS_SELECTOR, "#result tr.revealed")) == 4
    assert browser.find_elements(By.CSS_SELECTOR, "#seats .seat.winner")
    browser.save_screenshot(str(shots / "table_result_4p.png"))


def test_the_phone_layout_has_no_sideways_scroll(server: str, browser: Any, shots: Path) -> None:
    browser.set_window_size(390, 844)
    _load(browser, server)
    _set_speed(browser, "0")
    _deal(browser, "5", players=4)
    browser.save_screenshot(str(shots / "table_390x844.png"))
    width = browser.execute_script(
        "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert width[0] <= width[1], width
    tops = browser.execute_script(
        "return [...document.querySelectorAll('#seats .seat')].map(s => s.offsetTop)"
    )
    assert len(tops) == 4 and len(set(tops)) == 1, tops  # one row
    hand_top = browser.execute_script(
        "return document.querySelector('#hand').getBoundingClientRect().top"
    )
    assert hand_top < 844, hand_top  # your cards are on the first screen
    browser.find_element(By.ID, "tab-replay").click()
    _idle(browser)
    width = browser.execute_script("return document.documentElement.scrollWidth")
    assert width <= 390


def test_the_lab_tab_lists_runs_and_agents(tmp_path: Path, browser: Any, shots: Path) -> None:
    from unolab.tournament.config import load_config
    from unolab.tournament.runner import run_tournament

    config = {
        "name": "bots",
        "participants": ["random", "mixbot", "card_ranking"],
        "deal_sets": 4,
        "games_per_chunk": 6,
        "bootstrap": 10,
        "seed": 5,
        "output_dir": str(tmp_path / "runs" / "tournaments"),
    }
    run_tournament(load_config(config), progress=False, plots=False, print_table=False)
    for url in _serve(tmp_path):
        _load(browser, url)
        browser.find_element(By.ID, "tab-lab").click()
        WebDriverWait(browser, 30).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, "#lab-tournaments button")
        )
        _idle(browser)
        assert not _visible(browser, "#lab-empty")
        assert "bots" in _text(browser, "#lab-tournaments")
        browser.find_element(By.CSS_SELECTOR, "#lab-tournaments button").click()
        WebDriverWait(browser, 30).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, "#lab-detail .leaderboard tbody tr")
        )
        rows = browser.find_elements(By.CSS_SELECTOR, "#lab-detail .leaderboard tbody tr")
        assert len(rows) == 3
        assert {"random", "mixbot", "card_ranking"} <= {
            r.find_elements(By.TAG_NAME, "td")[1].text for r in rows
        }
        assert re.search(r"\d+(\.\d)?%", _text(browser, "#lab-detail"))
        assert len(browser.find_elements(By.CSS_SELECTOR, "#lab-agents .agent-card")) >= 4
        browser.save_screenshot(str(shots / "lab.png"))
        browser.set_window_size(390, 844)
        width = browser.execute_script("return document.documentElement.scrollWidth")
        assert width <= 390, width
        browser.save_screenshot(str(shots / "lab_390x844.png"))


def test_the_lab_says_when_there_are_no_runs(tmp_path: Path, browser: Any) -> None:
    for url in _serve(tmp_path):
        _load(browser, url)
        browser.find_element(By.ID, "tab-lab").click()
        WebDriverWait(browser, 30).until(lambda d: _visible(d, "#lab-empty"))
        assert "No runs yet" in _text(browser, "#lab-empty")


def _opponent(driver: Any, agent: str) -> None:
    Select(driver.find_element(By.CSS_SELECTOR, "#opponent-list select")).select_by_value(agent)


def test_the_page_shows_the_engine_compiling_and_deals_as_soon_as_it_can(
    tmp_path: Path, browser: Any, shots: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeWarmup()
    fake.install(monkeypatch)
    status = start_warmup(lambda line: None)
    for url in _serve(tmp_path, status):
        _load(browser, url)  # the page and the game's settings load while it compiles
        assert _visible(browser, "#warmup")
        banner = _text(browser, "#warmup")
        assert banner.startswith("Preparing the game engine (first start of this install"), banner
        assert f"step 1 of 3: {PARTS[0]}" in banner and f"of about {WARMUP_SECONDS} s" in banner
        start = browser.find_element(By.ID, "start")
        assert start.is_enabled() and start.text == "Deal"
        browser.save_screenshot(str(shots / "warmup.png"))
        fake.step()
        WebDriverWait(browser, 10).until(
            lambda d: f"step 2 of 3: {PARTS[1]}" in _text(d, "#warmup")
        )
        # A Deal clicked now waits in the page (the server would refuse it) ...
        browser.find_element(By.ID, "seed").send_keys("7")
        start.click()
        assert not start.is_enabled() and "when the engine is ready" in start.text
        assert "dealt as soon as it is ready" in _text(browser, "#warmup")
        browser.save_screenshot(str(shots / "warmup_deal_waits.png"))
        assert not _visible(browser, "#table-view")
        fake.step()
        # ... and is dealt as soon as the engine can play it, the searches still compiling.
        WebDriverWait(browser, 10).until(lambda d: _visible(d, "#table-view"))
        _idle(browser)
        assert not _visible(browser, "#error-box"), _text(browser, "#error")
        banner = _text(browser, "#warmup")
        assert banner.startswith("The game engine is ready to play. The searches"), banner
        assert f"step 3 of 3: {PARTS[2]}" in banner
        # A game against a search waits for the searches; with another opponent it deals.
        browser.find_element(By.ID, "new-game").click()
        browser.find_element(By.ID, "confirm-yes").click()
        WebDriverWait(browser, 10).until(lambda d: _visible(d, "#setup"))
        _opponent(browser, "pimc")
        start = browser.find_element(By.ID, "start")
        start.click()
        assert not start.is_enabled() and "when the engine is ready" in start.text
        assert "Your game is dealt as soon as they are ready" in _text(browser, "#warmup")
        time.sleep(1.5)  # a poll or two: still waiting
        assert _visible(browser, "#setup") and not start.is_enabled()
        _opponent(browser, "mixbot")
        WebDriverWait(browser, 10).until(lambda d: _visible(d, "#table-view"))
        _idle(browser)
        fake.step()
        WebDriverWait(browser, 10).until(lambda d: not _visible(d, "#warmup"))
        browser.find_element(By.ID, "new-game").click()
        browser.find_element(By.ID, "confirm-yes").click()
        WebDriverWait(browser, 10).until(lambda d: _visible(d, "#setup"))
        start = browser.find_element(By.ID, "start")
        assert start.is_enabled() and start.text == "Deal"


def test_the_page_shows_a_failed_compile_in_one_line(
    tmp_path: Path, browser: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeWarmup(fail=PARTS[2])
    fake.install(monkeypatch)
    status = start_warmup(lambda line: None)
    for url in _serve(tmp_path, status):
        _load(browser, url)
        fake.step(3)
        WebDriverWait(browser, 10).until(lambda d: "could not be compiled" in _text(d, "#warmup"))
        assert f"compiling {PARTS[2]} failed: MemoryError: out of memory" in _text(
            browser, "#warmup"
        )
        assert len(_text(browser, "#warmup").splitlines()) == 1
        assert browser.find_element(By.ID, "start").is_enabled()


def _is_active(button: Any) -> Callable[[Any], bool]:
    """Whether a run's button is marked as the one open (the page marks it once it opened)."""
    return lambda driver: "active" in (button.get_attribute("class") or "")


def test_every_listed_run_opens_in_the_lab(tmp_path: Path, browser: Any) -> None:
    """Runs with odd names open on a click; a run whose files are damaged opens a page that
    says what is wrong (its 422 is the only error in the console)."""
    runs = tmp_path / "runs"
    evaluation = {"random": {"win_rate": 0.5, "ci_low": 0.4, "ci_high": 0.6, "games": 100}}
    names = ["ünï cødé", "x/curve.png", "y" * 250 + "/" + "z" * 250, "dots..."]
    for name in [*names, "damaged"]:
        (runs / name).mkdir(parents=True)
        (runs / name / "config.yaml").write_text(f"name: {name.split('/')[-1][:20]}\n")
        line = {"steps": 100, "results": evaluation}
        (runs / name / "evaluations.jsonl").write_text(json.dumps(line) + "\n")
    (runs / "damaged" / "evaluations.jsonl").write_text('{"steps": 1' + "0" * 400 + "}\n")
    board = [{"name": "random", "elo": 1000.0, "games": 4, "win_rate": 0.5}]
    (runs / "t" / "plots" / "p").mkdir(parents=True)
    (runs / "t" / "plots" / "p" / "summary.json").write_text(json.dumps({"leaderboard": board}))
    for url in _serve(tmp_path):
        _load(browser, url)
        browser.find_element(By.ID, "tab-lab").click()
        WebDriverWait(browser, 30).until(
            lambda d: len(d.find_elements(By.CSS_SELECTOR, ".run-list button")) == 6
        )
        _idle(browser)
        for run_id in ["t/plots/p", *names]:
            button = browser.find_element(By.CSS_SELECTOR, f'button[data-run="{run_id}"]')
            button.click()
            _idle(browser)
            WebDriverWait(browser, 30).until(_is_active(button))
            shown = _text(browser, "#lab-detail")
            assert "cannot be shown" not in shown, (run_id, shown)
            assert len(browser.find_elements(By.CSS_SELECTOR, "#lab-detail tbody tr")) == 1
        browser.find_element(By.CSS_SELECTOR, 'button[data-run="damaged"]').click()
        _idle(browser)
        WebDriverWait(browser, 30).until(lambda d: "cannot be shown" in _text(d, "#lab-detail"))
        shown = _text(browser, "#lab-detail")
        assert "damaged/evaluations.jsonl line 1" in shown and "steps" in shown, shown
        severe = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
        assert severe and all("damaged" in m and "422" in m for m in severe), severe


# ---- the look of the table: cards, fans, motion, the panels on a desktop and a phone --------

DESKTOP, PHONE = (1280, 800), (390, 844)
CODE_WORDS = ("until_playable", "winner_takes", "penalty_points", "rlcard", "None", "True", "False")
"""Config values that the page's rule texts must never show (plus any ``snake_case`` key)."""


def _sized(driver: Any, size: tuple[int, int]) -> None:
    driver.set_window_size(*size)
    inner = driver.execute_script("return [window.innerWidth, window.innerHeight]")
    # The window's frame takes some of it: make the page itself this size.
    driver.set_window_size(2 * size[0] - inner[0], 2 * size[1] - inner[1])


def _no_sideways_scroll(driver: Any) -> None:
    width = driver.execute_script(
        "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert width[0] <= width[1], width


def _count_animations(driver: Any) -> None:
    """Record, in the page, the most animations running at once from now on."""
    driver.execute_script(
        "window.mostAnimations = 0; setInterval(() => { window.mostAnimations = Math.max("
        "window.mostAnimations, document.getAnimations().length); }, 15);"
    )


def _still(driver: Any) -> None:
    """Wait until nothing moves (a deal or a flight has landed) but what never stops."""
    WebDriverWait(driver, 10).until(
        lambda d: d.execute_script(
            "return document.getAnimations().every(a =>"
            " a.effect.getTiming().iterations === Infinity)"
        )
    )


def _house_rule(driver: Any, name: str, value: str) -> None:
    field = driver.find_element(By.CSS_SELECTOR, f"[data-rule='{name}']")
    field.clear()
    field.send_keys(value, Keys.TAB)


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_table_is_dealt_as_a_card_game(
    server: str, browser: Any, shots: Path, size: tuple[int, int]
) -> None:
    """Your hand is a fan (spread on a desktop, overlapping on a phone), each opponent a fan
    of backs as many as its cards, the deal moves, and the page never scrolls sideways."""
    _sized(browser, size)
    _load(browser, server)
    _set_speed(browser, "0")
    _count_animations(browser)
    _deal(browser, "5", players=4)
    boxes = browser.execute_script(
        "return [...document.querySelectorAll('#hand .card')].map(c => {"
        "const r = c.getBoundingClientRect(); return [c.offsetLeft, c.offsetWidth, r.left,"
        " r.right, getComputedStyle(c).rotate]})"
    )
    assert len(boxes) >= 7, boxes
    assert len({b[4] for b in boxes}) > 1, boxes  # tilted along an arc
    pairs = list(itertools.pairwise(boxes))
    if size == PHONE:
        assert all(b[2] < a[3] for a, b in pairs), boxes  # overlapping
    else:
        assert all(b[0] >= a[0] + a[1] for a, b in pairs), boxes  # spread apart
    assert all(b[3] <= size[0] for b in boxes) and boxes[0][2] >= 0, boxes
    seats = browser.execute_script(
        "return [...document.querySelectorAll('#seats .seat')].map(s => [s.dataset.seat,"
        " s.querySelector('.count').textContent, s.querySelectorAll('.backs .back').length])"
    )
    assert len(seats) == 4 and seats[0][2] == 0, seats  # your cards are in your hand
    for seat, count, backs in seats[1:]:
        assert count == f"{backs} cards", (seat, count, backs)
    assert browser.execute_script("return window.mostAnimations") > 0  # the deal moved
    assert _text(browser, "#direction").endswith("clockwise")
    _no_sideways_scroll(browser)
    _still(browser)
    name = "desktop" if size == DESKTOP else "phone"
    browser.save_screenshot(str(shots / f"table_{name}.png"))


def test_reduced_motion_moves_nothing(server: str, browser: Any) -> None:
    browser.execute_cdp_cmd(
        "Emulation.setEmulatedMedia",
        {"features": [{"name": "prefers-reduced-motion", "value": "reduce"}]},
    )
    _sized(browser, DESKTOP)
    _load(browser, server)
    _set_speed(browser, "150")
    _count_animations(browser)
    _deal(browser, "5", players=3)
    _play_until(browser, lambda d: int(_seq(d)) >= 8 or _hand_over(d))
    assert browser.execute_script("return window.mostAnimations") == 0
    assert browser.execute_script("return matchMedia('(prefers-reduced-motion: reduce)').matches")


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_end_of_a_hand_reads_on_a_phone(
    server: str, browser: Any, shots: Path, size: tuple[int, int]
) -> None:
    """Four hands of 12 cards, cut short at once: every hand shown, none in a column
    taller than the screen, nothing wider than it."""
    _sized(browser, size)
    _load(browser, server)
    _set_speed(browser, "0")
    count = browser.find_element(By.ID, "num-players")
    count.clear()
    count.send_keys("4", Keys.TAB)
    browser.find_element(By.CSS_SELECTOR, "#house-rules summary").click()
    _house_rule(browser, "hand_size", "12")
    _house_rule(browser, "max_turns", "1")
    _deal(browser, "3")
    _play_until(browser, _hand_over, use_keys=True)  # the middle of a fanned card is under the next
    assert len(browser.find_elements(By.CSS_SELECTOR, "#result tr.revealed")) == 4
    cells = browser.execute_script(
        "return [...document.querySelectorAll('#result td')].map(c => c.getBoundingClientRect().height)"
    )
    assert max(cells) < size[1] / 3, cells
    widths = browser.execute_script(
        "const r = document.querySelector('#result'); return [r.scrollWidth, r.clientWidth]"
    )
    assert widths[0] <= widths[1], widths
    _no_sideways_scroll(browser)
    browser.execute_script("document.querySelector('#result').scrollIntoView()")
    _still(browser)
    name = "desktop" if size == DESKTOP else "phone"
    browser.save_screenshot(str(shots / f"end_of_hand_{name}.png"))


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_house_rules_are_plain_words_without_overlaps(
    server: str, browser: Any, shots: Path, size: tuple[int, int]
) -> None:
    _sized(browser, size)
    _load(browser, server)
    browser.find_element(By.CSS_SELECTOR, "#house-rules summary").click()
    text = browser.execute_script("return document.querySelector('#switches').textContent")
    shown = [w for w in CODE_WORDS if re.search(rf"\b{w}\b", text)]
    assert not shown, shown
    assert not re.search(r"\w_\w|``", text), re.findall(r"\S*(?:\w_\w|``)\S*", text)
    # No control lies over the words of another rule or group, nor out of its group.
    clashes = browser.execute_script(
        """
        const box = (n) => n.getBoundingClientRect();
        const meet = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
        const out = [];
        const labels = [...document.querySelectorAll('#switches .rule, #switches legend')];
        for (const control of document.querySelectorAll('#switches [data-rule]')) {
          const mine = control.closest('.rule'), group = box(control.closest('fieldset'));
          const c = box(control);
          if (c.left < group.left || c.right > group.right) out.push([control.dataset.rule, 'out of its group']);
          for (const label of labels) {
            if (label === mine || label.contains(control)) continue;
            if (meet(c, box(label))) out.push([control.dataset.rule, label.textContent.slice(0, 40)]);
          }
        }
        return out;
        """
    )
    assert not clashes, clashes
    _no_sideways_scroll(browser)
    browser.execute_script(
        "document.querySelector('[data-for=\"wd4\"]').scrollIntoView({block: 'center'})"
    )
    name = "desktop" if size == DESKTOP else "phone"
    browser.save_screenshot(str(shots / f"house_rules_{name}.png"))


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_lab_agent_cards_lead_with_the_name_and_wrap(
    server: str, browser: Any, shots: Path, size: tuple[int, int]
) -> None:
    _sized(browser, size)
    _load(browser, server)
    browser.find_element(By.ID, "tab-lab").click()
    WebDriverWait(browser, 30).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#lab-agents .agent-card")
    )
    _idle(browser)
    cards = browser.execute_script(
        """
        return [...document.querySelectorAll('#lab-agents .agent-card')].map(card => [
          card.dataset.agent, card.innerText.trim().split('\\n')[0],
          card.querySelectorAll('ol.recipe li').length,
          [card, ...card.querySelectorAll('*')].filter(n => n.clientWidth > 0 &&
            n.scrollWidth > n.clientWidth + 1).map(n => n.tagName + ' ' + n.textContent.slice(0, 40))]);
        """
    )
    assert len(cards) >= 4, cards
    for agent, first_line, steps, overflowing in cards:
        assert first_line == agent, (agent, first_line)
        assert steps >= 1, agent
        assert not overflowing, (agent, overflowing)
    _no_sideways_scroll(browser)
    browser.execute_script("document.querySelector('#lab-agents').scrollIntoView()")
    name = "desktop" if size == DESKTOP else "phone"
    browser.save_screenshot(str(shots / f"lab_{name}.png"))


RECORD_ANSWERS = """
window.answers = [];
const fetched = window.fetch.bind(window);
window.fetch = async (...args) => {
  const response = await fetched(...args);
  const url = String(args[0]);
  if (url.startsWith('/api/tables')) {
    response.clone().text().then((text) => window.answers.push([url, text]));
  }
  return response;
};
"""
"""Recorded in each window before the page's own script runs: every answer of the tables'
API, as received (the network's JSON)."""


def _record_answers(driver: Any) -> None:
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD_ANSWERS})


def _answers(driver: Any) -> list[dict[str, Any]]:
    pairs = driver.execute_script("return window.answers")
    return [json.loads(text) for _, text in pairs]


def _my_turn(driver: Any) -> bool:
    return bool(
        driver.execute_script(
            "return document.querySelector('#situation').classList.contains('your-turn')"
            " && document.body.dataset.busy === '0'"
        )
    )


def _seat_cards_shown(driver: Any) -> dict[str, int]:
    """The card faces each other seat's box shows besides the card it played last."""
    found: dict[str, int] = driver.execute_script(
        "const out = {};"
        "for (const box of document.querySelectorAll('#seats .seat')) {"
        "  out[box.dataset.seat] = box.querySelectorAll('.card').length"
        "    - box.querySelectorAll('.last .card').length; }"
        "return out;"
    )
    return found


def _seq_past(seq: str) -> Callable[[Any], bool]:
    return lambda driver: _seq(driver) != seq


def _seq_reaches(seq: int) -> Callable[[Any], bool]:
    return lambda driver: int(_seq(driver)) >= seq


def _holds(cards: list[str]) -> Callable[[Any], bool]:
    """The window's hand shows exactly ``cards`` (sorted)."""

    def shown(driver: Any) -> bool:
        found = driver.find_elements(By.CSS_SELECTOR, "#hand .card")
        return sorted(str(c.get_attribute("data-card")) for c in found) == cards

    return shown


def _check_answers(answers: list[dict[str, Any]], seat: int) -> int:
    """Every answer a window got shows its own seat's cards and no one else's (until a
    hand ends; none at all while it watched, before taking its seat); returns how many
    answers of the seat held a table."""
    checked = 0
    for answer in answers:
        if "table" not in answer:
            continue  # an unchanged table: its version only
        if answer["shared"]["seat"] is None:
            assert all(s["cards"] is None for s in answer["table"]["seats"]), answer["table"]
            continue
        checked += 1
        assert answer["shared"]["seat"] == seat
        for shown in answer["table"]["seats"]:
            if answer["hand_over"]:
                continue
            if shown["seat"] == seat:
                assert shown["cards"] is not None
            else:
                assert shown["cards"] is None, shown
        for line in answer["log"] + [x for e in answer["events"] for x in e["lines"]]:
            assert re.search(r"\bdraws \d+: ", line) is None, line
    return checked


def test_two_friends_at_one_table_see_each_others_moves_never_cards(
    tmp_path: Path, browser: Any, friend_browser: Any, shots: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = create_app(make_config(tmp_path))
    served = _serve_app(app)
    address = next(served)
    # The tables' clock, which the test moves on to make a player count as away.
    ahead = [0.0]
    monkeypatch.setattr(seating, "now", lambda: time.time() + ahead[0])
    try:
        _play_with_a_friend(app, address, browser, friend_browser, shots)
        _leave_and_come_back(browser, friend_browser, ahead)
    finally:
        for driver in (browser, friend_browser):  # no poll left to fail as the server stops
            driver.get("about:blank")
        next(served, None)


def _play_with_a_friend(app: Any, address: str, ann: Any, bob: Any, shots: Path) -> None:
    for driver in (ann, bob):
        _record_answers(driver)
    _load(ann, address)
    _set_speed(ann, "0")
    count = ann.find_element(By.ID, "num-players")
    count.clear()
    count.send_keys("4", Keys.TAB)
    WebDriverWait(ann, 10).until(
        lambda d: len(d.find_elements(By.CSS_SELECTOR, "#opponent-list select")) == 3
    )
    Select(
        ann.find_element(By.CSS_SELECTOR, "#opponent-list select[data-seat='1']")
    ).select_by_value("person")
    assert _visible(ann, "#friends-setup")
    assert ann.find_element(By.ID, "start").text == "Open the table"
    ann.find_element(By.ID, "host-name").send_keys("Ann")
    turn = ann.find_element(By.ID, "turn-seconds")
    turn.clear()
    turn.send_keys("600")
    ann.find_element(By.ID, "seed").send_keys("11")
    ann.find_element(By.ID, "start").click()
    WebDriverWait(ann, 30).until(lambda d: _visible(d, "#friends"))
    link = ann.find_element(By.ID, "share-link").get_attribute("value")
    assert "#table=" in link
    table_id = link.split("#table=")[1]
    assert _visible(ann, "#start-table")

    # Bob opens the link: he watches (no cards anywhere) until he takes the open seat.
    bob.get(link)
    WebDriverWait(bob, 30).until(lambda d: _visible(d, "#join-form"))
    assert not bob.find_elements(By.CSS_SELECTOR, "#hand .card")
    bob.execute_script("document.getElementById('speed').value = '0'")
    bob.find_element(By.ID, "join-name").send_keys("Bob")
    bob.find_element(By.CSS_SELECTOR, "#join-form button").click()
    WebDriverWait(bob, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#hand .card"))
    assert not _visible(bob, "#start-table")
    # Ann's page learns of Bob without a reload.
    WebDriverWait(ann, 30).until(lambda d: "Bob" in _text(d, "#people"))
    ann.find_element(By.ID, "start-table").click()
    WebDriverWait(bob, 30).until(lambda d: "Waiting for the host" not in _text(d, "#situation"))

    # Two people and two bots play; each window sees the other's moves without a reload.
    moves = {"Ann": 0, "Bob": 0}
    deadline = time.monotonic() + 240
    while min(moves.values()) < 3 and time.monotonic() < deadline:
        for name, driver, other in (("Ann", ann, bob), ("Bob", bob, ann)):
            _idle(driver)
            if _hand_over(driver) or not _my_turn(driver):
                continue
            seq = _seq(driver)
            _take_a_turn(driver, use_keys=False)
            if _visible(driver, "#colour-picker"):
                _take_a_turn(driver, use_keys=False)
            WebDriverWait(driver, 30).until(_seq_past(seq))
            moves[name] += 1
            mine = int(_seq(driver))
            WebDriverWait(other, 30).until(_seq_reaches(mine))
            assert not _visible(driver, "#error-box"), _text(driver, "#error")
        if _hand_over(ann):
            break
        time.sleep(0.2)
    assert sum(moves.values()) >= 2, moves
    assert "Bob" in " ".join(li.text for li in ann.find_elements(By.CSS_SELECTOR, "#log li"))
    assert "Ann" in " ".join(li.text for li in bob.find_elements(By.CSS_SELECTOR, "#log li"))

    # The DOM: each window holds its own hand, as the engine deals it to that seat, and
    # only backs for the others.
    game = app.app.state.games.get(table_id)

    def engine_hand(seat: int) -> list[str]:
        with game.lock:
            hand: list[str] = seat_view(game.rules, game.game.state, seat)["hand"]
        return sorted(hand)

    for seat, driver in ((0, ann), (1, bob)):
        _idle(driver)
        if _hand_over(driver):
            continue
        WebDriverWait(driver, 10).until(_holds(engine_hand(seat)))
        assert all(n == 0 for s, n in _seat_cards_shown(driver).items() if s != str(seat))
    # The network: every answer a window got held its own cards and nobody else's.
    assert _check_answers(_answers(ann), 0) >= 3
    assert _check_answers(_answers(bob), 1) >= 3
    # The turn timer's bar shrinks smoothly, and in steps under reduced motion.
    transition = "return getComputedStyle(document.getElementById('turn-bar')).transitionDuration"
    assert ann.execute_script(transition) == "0.25s"
    ann.execute_cdp_cmd(
        "Emulation.setEmulatedMedia",
        {"features": [{"name": "prefers-reduced-motion", "value": "reduce"}]},
    )
    assert ann.execute_script(transition) == "0s"
    ann.save_screenshot(str(shots / "friends_desktop.png"))
    bob.save_screenshot(str(shots / "friends_guest_desktop.png"))
    # On a phone the link, the people and the timer fit the width.
    _sized(bob, PHONE)
    _no_sideways_scroll(bob)
    bob.save_screenshot(str(shots / "friends_phone.png"))


def _leave_and_come_back(ann: Any, bob: Any, ahead: list[float]) -> None:
    """Bob closes the page: after the away time his seat says a bot plays it, in Ann's
    window; he opens the link again and is back in his seat."""
    link = ann.find_element(By.ID, "share-link").get_attribute("value")
    bob.get("about:blank")
    ahead[0] += 121  # the host's away time is 120 seconds (the default)
    WebDriverWait(ann, 30).until(lambda d: "Bob \u00b7 away" in _text(d, "#people"))
    assert "mixbot plays" in _text(ann, "#people")
    assert "away: mixbot plays" in _text(ann, "#seats [data-seat='1']")
    bob.get(link)
    WebDriverWait(bob, 30).until(lambda d: "you \u00b7 here" in _text(d, "#people"))
    assert not _visible(bob, "#join-form")
    WebDriverWait(ann, 30).until(lambda d: "Bob \u00b7 here" in _text(d, "#people"))


def test_a_game_is_kept_as_data_only_when_the_player_ticks_the_box(
    tmp_path: Path, browser: Any, shots: Path
) -> None:
    import httpx

    app = create_app(make_config(tmp_path, collect_human_games=True))
    for url in _serve_app(app):
        with httpx.Client(base_url=url, timeout=30) as http:
            for seed, kept in (("11", True), ("12", False)):
                _load(browser, url)
                assert _visible(browser, "#data-consent")
                assert "no names and no addresses" in _text(browser, "#data-consent")
                keep = browser.find_element(By.ID, "keep-as-data")
                assert not keep.is_selected()  # nothing is kept unless the player says so
                target = browser.find_element(By.ID, "target-score")
                target.clear()
                target.send_keys("1")  # one hand is the whole match
                if kept:
                    keep.click()
                    browser.save_screenshot(str(shots / "data_consent.png"))
                _deal(browser, seed)
                # The page sent the choice with the deal; the hand is played out by the API.
                game_id = browser.execute_script("return document.body.dataset.game")
                view = http.get(f"/api/games/{game_id}").json()
                play_to_end(http, view, random.Random(int(seed)))  # type: ignore[arg-type]

        browser.find_element(By.ID, "tab-lab").click()
        WebDriverWait(browser, 30).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, "#lab-humans tr[data-agent]")
        )
        rows = browser.find_elements(By.CSS_SELECTOR, "#lab-humans tr[data-agent]")
        assert [r.get_attribute("data-agent") for r in rows] == ["mixbot"]
        cells = [c.text for c in rows[0].find_elements(By.TAG_NAME, "td")]
        assert cells[1] == "1", cells  # the declined game is not counted
        assert re.fullmatch(r"\[\d+(\.\d)?%, \d+(\.\d)?%\]", cells[3]), cells
    for url in _serve(tmp_path / "plain"):
        _load(browser, url)
        assert not _visible(browser, "#data-consent")  # a server that keeps nothing asks nothing
