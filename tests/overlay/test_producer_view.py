"""The producer's view (/overlay/producer) in Debian's Chromium through the
real server component: a board that gets a decisive blunder tops the ranking
within one poll, with the reason shown; a board in time trouble rises; one
click copies a board's overlay URL."""

from __future__ import annotations

from typing import Any

import chess
import pytest
from playwright.sync_api import expect

from livegain.core.board.registry import BoardRegistry
from livegain.core.evaluation import Evaluation
from livegain.core.rating import PAPER_ENGINE_RATING
from livegain.core.snapshot import GameSnapshot, PlayerInfo
from livegain.publish import convert

from ._live import StaticServer

pytestmark = [pytest.mark.browser]

BLUNDER = ["e4", "e5", "Qh5", "Nc6", "Bc4", "Nf6"]  # 3...Nf6?? allows 4.Qxf7#
QUIET = ["d4", "d5", "c4", "e6", "Nc3", "Nf6"]
POLL_S = 0.5
#: How long a change may take to show (a few polls: timings are not this test's).
UPDATED_MS = 10_000


def snap(board: int, moves: list[str], clocks: tuple[int, ...] = ()) -> GameSnapshot:
    return GameSnapshot(
        source="test",
        white=PlayerInfo(f"White {board}"),
        black=PlayerInfo(f"Black {board}"),
        moves=tuple(moves),
        clocks=clocks,
        round="1",
        board=board,
        event="Producer Open",
        tags=(("TimeControl", "5400+30"),),
    )


def evaluate(t: BoardRegistry) -> None:
    b = chess.Board()
    for m in BLUNDER:
        b.push_san(m)
    mated = b.fen()
    for _ in range(200):
        reqs = t.pending()
        if not reqs:
            return
        r = reqs[0]
        ev = Evaluation(cp=3900, mate=1, best="h5f7") if r.fen == mated else Evaluation(cp=15)
        t.record_eval(r.board_id, r.ply, r.fen, ev)
    raise AssertionError("evaluations never finished")


def publish(server: StaticServer, t: BoardRegistry, bid: str) -> None:
    server.set_board(convert.board_state(t.board(bid), engine="test"))


def order(page: Any) -> list[str]:
    return list(
        page.eval_on_selector_all(
            '[data-testid="producer-row"]', "rs => rs.map(r => r.dataset.board)"
        )
    )


def test_blunder_tops_time_trouble_rises_and_url_is_copied(
    static_server: StaticServer, page_factory: Any
) -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    ids = []
    for board in (1, 2, 3):
        bid = t.apply(snap(board, QUIET if board != 2 else BLUNDER[:5])).board_id
        assert bid is not None
        ids.append(bid)
    evaluate(t)
    for bid in ids:
        publish(static_server, t, bid)
    page = page_factory()
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(f"{static_server.url}/overlay/producer?poll={POLL_S}")
    rows = page.locator('[data-testid="producer-row"]')
    expect(rows).to_have_count(3)
    expect(page.get_by_test_id("producer-reason").first).to_have_text("quiet")

    # 3...Nf6?? on board 2: it tops the ranking at a following poll
    t.apply(snap(2, BLUNDER))
    evaluate(t)
    publish(static_server, t, ids[1])
    top = page.locator('[data-testid="producer-row"][data-rank="1"]')
    expect(top).to_have_attribute("data-board", ids[1], timeout=UPDATED_MS)
    expect(top).to_have_attribute("data-term", "swing")
    expect(top.get_by_test_id("producer-reason")).to_contain_text("swing: White's chances")

    # Black on board 3 falls into time trouble: board 3 rises above board 1
    assert order(page).index(ids[2]) > order(page).index(ids[0])
    t.apply(snap(3, QUIET, (5399, 5405, 3000, 1000, 2990, 250)))
    publish(static_server, t, ids[2])
    second = page.locator('[data-testid="producer-row"][data-rank="2"]')
    expect(second).to_have_attribute("data-board", ids[2], timeout=UPDATED_MS)
    expect(second.get_by_test_id("producer-reason")).to_have_text(
        "time trouble: Black 3 (4:10 left)"
    )

    # one click copies the board's overlay URL
    button = top.get_by_test_id("producer-copy")
    button.click()
    expect(button).to_have_attribute("data-copied", "true")
    copied = page.evaluate("() => navigator.clipboard.readText()")
    assert copied == f"{static_server.url}/overlay/board?board={ids[1]}"
