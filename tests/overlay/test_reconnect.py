"""The overlay survives a server restart: it says so, dims what it shows, and
comes back with a fresh snapshot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from ._live import (
    GAME_B,
    ReplayThread,
    Serve,
    board_id_of,
    headline,
    model_for_pictures,
    save_artifact,
    wait_settled,
)

pytestmark = [pytest.mark.browser, pytest.mark.engine, pytest.mark.slow]

# the opacity of the figure as drawn (the dimming sits on its .live-value wrapper)
OPACITY = "Number(getComputedStyle(e.closest('.live-value')).opacity)"


def test_page_recovers_after_server_restart(
    tmp_path: Path, engine_path: str, chromium_path: str, page_factory: Any
) -> None:
    replay = ReplayThread(GAME_B)
    # the shipped model if there is one: this test takes the docs' picture
    serve = Serve(tmp_path, replay.url, engine_path, perceived_model=model_for_pictures(tmp_path))
    try:
        serve.start()
        replay.advance(6)
        bid = board_id_of(serve, "Polgar, Judit")
        state = wait_settled(serve, bid, 6)
        page = page_factory()
        page.goto(f"{serve.url}/overlay/board?board={bid}")
        status = page.get_by_test_id("status")
        overlay = page.get_by_test_id("board-overlay")
        # the large number: White's form (she is rated), else the moves alone
        perceived = page.get_by_test_id("white-headline")
        expect(status).to_have_attribute("data-state", "live")
        expect(overlay).to_have_attribute("data-fresh", "true")
        expect(page.locator('[data-testid="trace-white-point"]')).to_have_count(
            len(state["white_trace"])
        )

        serve.stop()
        expect(status).to_have_attribute("data-state", "reconnecting", timeout=10_000)
        expect(status).to_have_text("RECONNECTING…")
        expect(overlay).to_have_attribute("data-fresh", "false")
        # the last values stay readable but are not presented as live
        page.wait_for_function(f"e => {OPACITY} < 0.6", arg=perceived.element_handle())
        save_artifact(page, "board-reconnecting.png")

        replay.advance(4)  # the game goes on while the server is down
        serve.start()  # same port, same data directory
        state = wait_settled(serve, bid, 10)
        expect(status).to_have_attribute("data-state", "live", timeout=25_000)
        expect(overlay).to_have_attribute("data-fresh", "true")
        per = headline(state, "white")
        assert per is not None
        # no number while too early
        hidden = per["early"]
        shown = "" if hidden else str(per["rating"]).removesuffix(".0")
        expect(perceived).to_have_attribute("data-value", shown)
        expect(page.locator('[data-testid="trace-white-point"]')).to_have_count(
            len(state["white_trace"])
        )
        expect(page.locator('[data-testid="trace-black-point"]')).to_have_count(
            len(state["black_trace"])
        )
        page.wait_for_function(f"e => {OPACITY} === 1", arg=perceived.element_handle())
    finally:
        serve.stop()
        replay.close()
