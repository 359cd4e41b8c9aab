"""The time-use strip under the evaluation graph and the time-trouble mark on
the clocks (docs/maths.md, "Time use"), in Debian's Chromium, through the real
server component."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from livegain.publish import schema

from ._live import StaticServer

pytestmark = [pytest.mark.browser]

# (san, uci, clock after the move, seconds spent), 90+30: in trouble under 300 s
MOVES = [
    ("e4", "e2e4", 5399, 31),
    ("e5", "e7e5", 5405, 25),
    ("Nf3", "g1f3", 3000, 2429),
    ("Nc6", "b8c6", 280, 5155),
    ("Bb5", "f1b5", 2990, 40),
]


def state(n: int) -> schema.BoardState:
    moves = [
        schema.Ply(
            ply=i + 1,
            san=san,
            uci=uci,
            color="white" if i % 2 == 0 else "black",
            clock=clock,
            spent=spent,
        )
        for i, (san, uci, clock, spent) in enumerate(MOVES[:n])
    ]
    white = [m.clock for m in moves if m.color == "white"][-1]
    black = [m.clock for m in moves if m.color == "black"][-1]
    return schema.BoardState(
        board_id="t1-b1",
        tournament="Clock Cup",
        round="1",
        board=1,
        white=schema.Player(name="White, A", rating=2400),
        black=schema.Player(name="Black, B", rating=2400),
        result="*",
        status="live",
        fen="r1bqkbnr/pppp1ppp/2n5/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3"
        if n == 5
        else "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
        moves=moves,
        white_trace=[],
        black_trace=[],
        clocks=schema.Clocks(
            white=white,
            black=black,
            running="black" if n % 2 else "white",
            white_time_trouble=white is not None and white < 300,
            black_time_trouble=black is not None and black < 300,
            time_trouble_below=300,
        ),
        engine="Stockfish 15.1 depth 10",
        engine_rating=2860,
        seq=n,
    )


def bars(page: Any) -> list[list[Any]]:
    return list(
        page.eval_on_selector_all(
            '[data-testid="timestrip-bar"]',
            "bs => bs.map(b => [Number(b.dataset.ply), b.dataset.color, "
            "Number(b.dataset.spent), b.dataset.trouble, Number(b.getAttribute('height'))])",
        )
    )


def test_time_strip_and_time_trouble(static_server: StaticServer, page_factory: Any) -> None:
    static_server.set_board(state(4))
    page = page_factory()
    page.goto(f"{static_server.url}/overlay/board?board=t1-b1")
    expect(page.get_by_test_id("board-overlay")).to_have_attribute("data-fresh", "true")
    expect(page.locator('[data-testid="timestrip-bar"]')).to_have_count(4)
    drawn = bars(page)
    assert [b[:4] for b in drawn] == [
        [1, "white", 31, "false"],
        [2, "black", 25, "false"],
        [3, "white", 2429, "false"],
        [4, "black", 5155, "true"],
    ]
    # the longest move is the tallest bar; White's bars rise above the middle, Black's hang below
    heights = [b[4] for b in drawn]
    assert max(heights) == heights[3] and heights[2] > heights[0]
    ys = page.eval_on_selector_all(
        '[data-testid="timestrip-bar"]', "bs => bs.map(b => Number(b.getAttribute('y')))"
    )
    assert ys[0] < ys[1]
    # the strip shares the evaluation graph's x axis, under it
    box = page.get_by_test_id("timestrip").bounding_box()
    graph = page.get_by_test_id("evalgraph-plot").bounding_box()
    assert box is not None and graph is not None
    assert box["y"] >= graph["y"] + graph["height"] - 1
    assert abs(box["width"] - graph["width"]) < 2
    # Black is in time trouble: his clock is marked, White's not
    expect(page.get_by_test_id("black-clock")).to_have_attribute("data-trouble", "true")
    expect(page.get_by_test_id("white-clock")).to_have_attribute("data-trouble", "false")
    tip = page.locator('[data-testid="timestrip-bar"][data-ply="4"] title').text_content()
    assert tip == "2… Nc6: 1:25:55, 4:40 left (time trouble)"

    # the next move arrives: one more bar
    static_server.set_board(state(5))
    expect(page.locator('[data-testid="timestrip-bar"]')).to_have_count(5)
    assert bars(page)[4][:4] == [5, "white", 40, "false"]
