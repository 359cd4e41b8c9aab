"""The multi-board view and the index page against a real ``livegain serve``."""

from __future__ import annotations

import math
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from ._live import ReplayThread, Serve, board_id_of, wait_settled

pytestmark = [pytest.mark.browser, pytest.mark.engine, pytest.mark.slow]


def js_round(x: float) -> int:
    return math.floor(x + 0.5)


def test_multi_board_view_lists_every_board(
    live_round: tuple[Serve, ReplayThread], page_factory: Any
) -> None:
    serve, replay = live_round
    page = page_factory()
    page.goto(f"{serve.url}/overlay/boards")
    expect(page.get_by_test_id("status")).to_have_attribute("data-state", "live")
    games = replay.replay.games
    expect(page.get_by_test_id("board-card")).to_have_count(len(games))

    replay.advance(replay.total_plies)
    for g in games:
        bid = board_id_of(serve, g.full.white.name)
        state = wait_settled(serve, bid, len(g.full.moves))
        card = page.locator(f'[data-testid="board-card"][data-board-id="{bid}"]')
        expect(card.get_by_test_id("white-name")).to_have_text(state["white"]["name"])
        expect(card.get_by_test_id("black-name")).to_have_text(state["black"]["name"])
        for color in ("white", "black"):
            per = state[f"{color}_perceived"]
            expect(card.get_by_test_id(f"{color}-perceived")).to_have_text(
                str(js_round(per["rating"]))
            )
        expect(card.get_by_test_id("eval-cp")).to_have_attribute(
            "data-cp", str(state["eval"]["cp"])
        )
        result = state["result"]
        expect(card.get_by_test_id("result")).to_have_text("LIVE" if result == "*" else result)
    # board numbers in order
    numbers = [c.inner_text() for c in page.get_by_test_id("board-no").all()]
    assert numbers == sorted(numbers, key=int)


def test_index_lists_boards_with_overlay_urls_and_preview(
    live_round: tuple[Serve, ReplayThread], page_factory: Any
) -> None:
    serve, replay = live_round
    page = page_factory()
    page.goto(f"{serve.url}/")
    expect(page.get_by_test_id("status")).to_have_attribute("data-state", "live")
    rows = page.get_by_test_id("board-row")
    expect(rows).to_have_count(len(replay.replay.games))
    expect(page.get_by_test_id("tournament-name").first).to_contain_text("Overlay Test Open")

    bid = board_id_of(serve, "Polgar, Judit")
    row = page.locator(f'[data-testid="board-row"][data-board-id="{bid}"]')
    url = row.get_by_test_id("board-url").input_value()
    parts = urlsplit(url)
    assert parts.path == "/overlay/board"
    assert parse_qs(parts.query)["board"] == [bid]

    # the picker changes every URL
    page.get_by_test_id("pick-layout").select_option("lower-third")
    page.get_by_test_id("pick-theme").select_option("light")
    page.get_by_test_id("pick-transparent").check()
    url = row.get_by_test_id("board-url").input_value()
    q = parse_qs(urlsplit(url).query)
    assert q["layout"] == ["lower-third"]
    assert q["theme"] == ["light"]
    assert q["bg"] == ["transparent"]

    # preview shows that very URL, live
    row.get_by_role("button", name="Preview").click()
    frame = page.get_by_test_id("preview")
    expect(frame).to_have_attribute("src", url)
    inner = page.frame_locator('[data-testid="preview"]')
    expect(inner.get_by_test_id("white-name")).to_have_text("Polgar, Judit")

    # the copied URL opens the same overlay
    page.goto(url)
    expect(page.get_by_test_id("white-name")).to_have_text("Polgar, Judit")
    assert page.evaluate("document.body.dataset.layout") == "lower-third"
