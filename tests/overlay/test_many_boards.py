"""A round with more boards than a screen holds: the multi-board view shows
them a page at a time and cycles through every board."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from ._live import ReplayThread, Serve, model_for_pictures, save_artifact, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.engine, pytest.mark.slow]

BOARDS = 18
OPENINGS = ["1. e4 e5", "1. d4 d5", "1. c4 e5", "1. Nf3 d5", "1. e4 c5", "1. d4 Nf6"]


def big_round() -> str:
    games = []
    for i in range(BOARDS):
        games.append(
            f'[Event "Open A"]\n[Round "5"]\n[Board "{i + 1}"]\n'
            f'[White "Player W{i + 1:02d}"]\n[Black "Player B{i + 1:02d}"]\n'
            f'[WhiteElo "{2400 + i}"]\n[BlackElo "{2390 + i}"]\n[Result "*"]\n\n'
            f"{OPENINGS[i % len(OPENINGS)]} *\n"
        )
    return "\n".join(games)


@pytest.fixture(scope="module")
def many(
    tmp_path_factory: pytest.TempPathFactory, engine_path: str, chromium_path: str
) -> Iterator[Serve]:
    replay = ReplayThread(big_round())
    tmp = tmp_path_factory.mktemp("overlay-many")
    serve = Serve(tmp, replay.url, engine_path, perceived_model=model_for_pictures(tmp))
    try:
        serve.start()
        replay.advance(replay.total_plies)
        wait_until(lambda: len(serve.boards()) == BOARDS, 30, f"{BOARDS} boards")
        yield serve
    finally:
        serve.stop()
        replay.close()


CURRENT_PAGE = """() => {
  const cards = [...document.querySelectorAll('[data-testid="board-card"]:not([hidden])')];
  return {
    page: Number(document.querySelector('[data-testid="page"]').dataset.page),
    ids: cards.map((c) => c.dataset.boardId),
    bottom: Math.max(...cards.map((c) => c.getBoundingClientRect().bottom)),
    squeezed: cards.filter((c) => c.scrollHeight > c.clientHeight + 1).length,
  };
}"""


def visible_ids(page: Any) -> list[str]:
    ids: list[str] = page.eval_on_selector_all(
        '[data-testid="board-card"]:not([hidden])', "cs => cs.map(c => c.dataset.boardId)"
    )
    return ids


def test_pages_cycle_through_every_board(many: Serve, page_factory: Any) -> None:
    page = page_factory(1920, 1080)
    page.goto(f"{many.url}/overlay/boards?cycle=1")
    expect(page.get_by_test_id("board-card")).to_have_count(BOARDS)
    label = page.get_by_test_id("page")
    expect(label).to_have_text(re.compile(r"^page 1/\d+$"), timeout=5000)
    pages = int(label.get_attribute("data-pages") or 0)
    assert pages >= 2

    # read the page number and what it shows in one go (the page may turn at any time)
    by_page: dict[int, list[str]] = {}
    deadline = time.monotonic() + 30
    while len(by_page) < pages and time.monotonic() < deadline:
        snap = page.evaluate(CURRENT_PAGE)
        shown = snap["ids"]
        assert 0 < len(shown) < BOARDS
        assert snap["bottom"] <= 1080  # every card of the page inside the 1920x1080 frame
        assert snap["squeezed"] == 0  # and nothing squeezed out of a card
        if snap["page"] not in by_page:
            by_page[snap["page"]] = shown
            if snap["page"] == 1:
                save_artifact(page, "boards-many.png")
        page.wait_for_timeout(200)
    assert sorted(by_page) == list(range(1, pages + 1))
    seen = {i for ids in by_page.values() for i in ids}
    assert seen == {b["board_id"] for b in many.boards()}


def test_cycle_zero_turns_paging_off(many: Serve, page_factory: Any) -> None:
    page = page_factory(1920, 1080)
    page.goto(f"{many.url}/overlay/boards?cycle=0")
    expect(page.get_by_test_id("board-card")).to_have_count(BOARDS)
    assert len(visible_ids(page)) == BOARDS
    expect(page.get_by_test_id("page")).to_have_text("")


@pytest.fixture
def crowded() -> Iterator[Any]:
    """The real server with more boards than one page of the board list."""
    from publish.helpers import board_state

    from ._live import StaticServer

    srv = StaticServer()
    try:
        for i in range(CROWD):
            srv.set_board(board_state(f"crowd-{i:03d}").model_copy(update={"board": i + 1}))
        wait_until(lambda: len(srv.server.board_ids()) == CROWD, 10, f"{CROWD} boards")
        yield srv
    finally:
        srv.close()


CROWD = 250  # hello carries 100; the pages fetch the rest with list_boards


def test_pages_fetch_the_whole_board_list_and_follow_its_changes(
    crowded: Any, page_factory: Any
) -> None:
    index = page_factory(1920, 1080)
    index.goto(f"{crowded.url}/")
    expect(index.get_by_test_id("board-row")).to_have_count(CROWD, timeout=15_000)
    boards = page_factory(1920, 1080)
    boards.goto(f"{crowded.url}/overlay/boards?cycle=0")
    expect(boards.get_by_test_id("board-card")).to_have_count(CROWD, timeout=15_000)
    # A board removed on the server leaves both pages (a boards_diff).
    crowded.loop.call_soon_threadsafe(crowded.server.remove_board, "crowd-007")
    expect(index.get_by_test_id("board-row")).to_have_count(CROWD - 1)
    expect(boards.get_by_test_id("board-card")).to_have_count(CROWD - 1)
    assert "crowd-007" not in visible_ids(boards)
