"""A delayed broadcast says so on screen, and by how much: the board overlay
(in its header, or in a corner when the layout has no header) and each
widget page; nothing while the board is live; ``hide=delay`` leaves it out."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from ._live import StaticServer
from .test_rendering import board

pytestmark = [pytest.mark.browser]


def opened(static_server: StaticServer, page_factory: Any, path: str) -> Any:
    page = page_factory()
    page.goto(f"{static_server.url}{path}")
    expect(page.locator("main")).to_have_attribute("data-fresh", "true")
    return page


def test_the_delay_is_shown_on_the_overlay_and_the_widgets(
    static_server: StaticServer, page_factory: Any
) -> None:
    static_server.set_board(board(board_id="late-15", delay=900))
    static_server.set_board(board(board_id="late-45s", delay=45))
    static_server.set_board(board(board_id="live", delay=0))

    full = opened(static_server, page_factory, "/overlay/board?board=late-15")
    badge = full.get_by_test_id("delay")
    expect(badge).to_have_text("Delayed 15 min")
    expect(badge).to_be_visible()
    expect(badge).to_have_attribute("data-seconds", "900")
    # in the header, beside the status
    assert full.evaluate("() => !!document.querySelector('header [data-testid=delay]')"), (
        "the badge is not in the header"
    )

    corner = opened(static_server, page_factory, "/overlay/board?board=late-45s&layout=corner")
    expect(corner.get_by_test_id("delay")).to_have_text("Delayed 45 s")
    expect(corner.get_by_test_id("delay")).to_be_visible()  # no header: in a corner

    for widget in ("board", "evalbar", "evalgraph"):
        page = opened(
            static_server, page_factory, f"/overlay/static/widget-{widget}.html?board=late-15"
        )
        expect(page.get_by_test_id("delay")).to_have_text("Delayed 15 min")
        expect(page.get_by_test_id("delay")).to_be_visible()

    live = opened(static_server, page_factory, "/overlay/board?board=live")
    expect(live.get_by_test_id("status")).to_have_text("LIVE")
    expect(live.get_by_test_id("delay")).to_have_count(0)

    hidden = opened(static_server, page_factory, "/overlay/board?board=late-15&hide=delay")
    expect(hidden.get_by_test_id("delay")).to_be_hidden()
