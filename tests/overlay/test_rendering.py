"""How the board overlay draws particular situations: a big loss, a clamped
rating, a mate score, running clocks, match odds, a takeback, a finished game.

The boards are published through the real server component
(:class:`~livegain.publish.server.LiveServer`), exactly as the service does;
the test plays the feed and chooses the situation.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from livegain.publish import schema

from ._live import StaticServer

pytestmark = [pytest.mark.browser]


def perceived(rating: float, moves: int, bounded: bool = False) -> schema.Perceived:
    return schema.Perceived(
        rating=rating,
        low=rating - 120,
        high=rating + 120,
        difference=rating - 2860,
        expected=0.0 if bounded else 0.4,
        moves=moves,
        bounded=bounded,
    )


def point(ply: int, rating: float, bounded: bool = False) -> schema.TracePoint:
    return schema.TracePoint(
        ply=ply,
        rating=rating,
        low=rating - 120,
        high=rating + 120,
        difference=rating - 2860,
        bounded=bounded,
    )


def board(**kw: Any) -> schema.BoardState:
    moves = [
        schema.Ply(ply=1, san="e4", uci="e2e4", color="white", clock=5390, gain=0),
        schema.Ply(ply=2, san="f5", uci="f7f5", color="black", clock=5380, gain=-45),
        schema.Ply(ply=3, san="exf5", uci="e4f5", color="white", clock=5300, gain=20),
        schema.Ply(
            ply=4,
            san="g5",
            uci="g7g5",
            color="black",
            clock=5100,
            gain=-260,
            eval=schema.EvalInfo(cp=3900, mate=2, depth=10, best="Nf6"),
        ),
    ]
    base: dict[str, Any] = dict(
        board_id="r1-b1",
        tournament="Rendering Cup",
        round="1",
        board=1,
        white=schema.Player(name="Carlsen, Magnus", title="GM", federation="NOR", rating=2865),
        black=schema.Player(name="Nakamura, Hikaru", title="GM", federation="USA", rating=2760),
        result="*",
        status="live",
        fen="rnbqkbnr/ppppp2p/8/5Pp1/8/8/PPPP1PPP/RNBQKBNR w KQkq g6 0 3",
        moves=moves,
        eval=schema.EvalInfo(
            cp=3900, mate=2, wdl=schema.Wdl(win=1000, draw=0, loss=0), depth=10, best="Qh5#"
        ),
        white_perceived=perceived(2905.5, 2),
        black_perceived=perceived(2060, 2, bounded=True),
        white_trace=[point(1, 2860), point(3, 2905.5)],
        black_trace=[point(2, 2060, True), point(4, 2060, True)],
        head_to_head=schema.HeadToHead(
            white_expected=0.875,
            black_expected=0.125,
            difference=325,
            low=120,
            high=600,
            bounded=False,
        ),
        clocks=schema.Clocks(white=5300, black=5100, running="white"),
        match=schema.MatchOdds(
            a="Carlsen",
            b="Nakamura",
            score_a=1.5,
            score_b=0.5,
            games_left=2,
            a_wins=0.81,
            draw=0.12,
            b_wins=0.07,
        ),
        engine="Stockfish 15.1 depth 10",
        engine_rating=2860,
        seq=4,
    )
    base.update(kw)
    return schema.BoardState(**base)


@pytest.fixture
def page(static_server: StaticServer, page_factory: Any) -> Any:
    static_server.set_board(board())
    p = page_factory()
    p.goto(f"{static_server.url}/overlay/board?board=r1-b1")
    expect(p.get_by_test_id("board-overlay")).to_have_attribute("data-fresh", "true")
    return p


def test_big_loss_mate_clocks_odds(page: Any) -> None:
    box = page.get_by_test_id("last-move-box")
    expect(page.get_by_test_id("last-move")).to_have_text("2\u2026 g5")
    expect(box).to_have_attribute("data-severity", "big-loss")
    expect(page.get_by_test_id("last-move-mark")).to_have_text("??")
    expect(page.get_by_test_id("last-move-gain")).to_have_text("gain \u22122.60")
    expect(page.get_by_test_id("last-move-best")).to_have_text("engine preferred Nf6")
    # the big loss is red: its box has a red outline
    red = page.evaluate(
        "() => getComputedStyle(document.querySelector('[data-testid=last-move-mark]'))"
        ".backgroundColor"
    )
    assert red == "rgb(255, 66, 66)"
    # the smaller loss in the move list is marked too
    rows = page.locator('[data-testid="move"]')
    expect(rows).to_have_count(4)
    assert [r.get_attribute("data-severity") for r in rows.all()] == ["", "", "", "big-loss"]

    expect(page.get_by_test_id("eval-cp")).to_have_text("#2")
    width = page.evaluate(
        "() => document.querySelector('[data-testid=eval-bar-white]').style.width"
    )
    assert float(width.rstrip("%")) == 100
    expect(page.get_by_test_id("wdl-win")).to_have_text("100%")

    expect(page.get_by_test_id("white-clock")).to_have_text("1:28:20")
    expect(page.get_by_test_id("white-clock")).to_have_attribute("data-running", "true")
    expect(page.get_by_test_id("black-clock")).to_have_attribute("data-running", "false")

    expect(page.get_by_test_id("odds")).to_have_attribute("data-empty", "false")
    expect(page.get_by_test_id("odds-a")).to_have_text("81%")
    expect(page.get_by_test_id("odds-draw")).to_have_text("12%")
    expect(page.get_by_test_id("odds-b")).to_have_text("7%")
    expect(page.get_by_test_id("odds-score")).to_have_text("1.5\u20130.5, 2 left")

    expect(page.get_by_test_id("h2h-white")).to_have_text("0.88")
    expect(page.get_by_test_id("h2h-diff")).to_have_text("White +325 Elo")


def test_clamped_rating_is_marked(page: Any) -> None:
    expect(page.get_by_test_id("black-perceived")).to_have_text("2060")
    expect(page.get_by_test_id("black-perceived-bound")).to_have_text("\u2264")
    expect(page.get_by_test_id("white-perceived-bound")).to_have_text("")
    expect(page.get_by_test_id("white-perceived")).to_have_text("2906")  # 2905.5 rounds up
    expect(page.get_by_test_id("white-perceived-diff")).to_have_text("+41 vs FIDE")
    expect(page.get_by_test_id("black-perceived-diff")).to_have_text("\u2212700 vs FIDE")
    # clamped points are drawn hollow, real estimates filled
    classes = page.eval_on_selector_all(
        '[data-testid="trace-black-point"], [data-testid="trace-white-point"]',
        "ps => ps.map(p => p.getAttribute('class'))",
    )
    assert sorted(classes) == ["point", "point", "point bounded", "point bounded"]


def test_takeback_and_finish(static_server: StaticServer, page: Any) -> None:
    # a takeback to ply 2 (the operator corrected 2.exf5 g5), then the game ends
    after = board(
        moves=board().moves[:2],
        white_trace=[point(1, 2860)],
        black_trace=[point(2, 2060, True)],
        seq=5,
        eval=schema.EvalInfo(cp=80, depth=10),
        white_perceived=perceived(2860, 1),
        black_perceived=perceived(2060, 1, bounded=True),
    )
    update = schema.Update(
        board_id="r1-b1",
        seq=5,
        truncate_to=2,
        fen=after.fen,
        eval=after.eval,
        white_perceived=after.white_perceived,
        black_perceived=after.black_perceived,
        head_to_head=after.head_to_head,
        clocks=after.clocks,
        match=after.match,
        result="*",
        status="live",
    )
    static_server.publish(update, after)
    expect(page.locator('[data-testid="trace-white-point"]')).to_have_count(1)
    expect(page.locator('[data-testid="trace-black-point"]')).to_have_count(1)
    expect(page.get_by_test_id("last-move")).to_have_text("1\u2026 f5")
    expect(page.get_by_test_id("eval-cp")).to_have_text("+0.80")
    expect(page.get_by_test_id("white-perceived")).to_have_text("2860")
    expect(page.get_by_test_id("board-overlay")).to_have_attribute("data-gaps", "0")

    final = after.model_copy(update={"result": "1-0", "status": "finished", "seq": 6})
    done = update.model_copy(
        update={"seq": 6, "truncate_to": None, "result": "1-0", "status": "finished"}
    )
    static_server.publish(done, final)
    expect(page.get_by_test_id("status")).to_have_attribute("data-state", "finished")
    expect(page.get_by_test_id("status")).to_have_text("FINAL")
    expect(page.get_by_test_id("result")).to_have_text("1-0")


def test_a_gap_in_seq_fetches_a_fresh_snapshot(static_server: StaticServer, page: Any) -> None:
    # seq jumps from 4 to 9: the page must not apply it but ask for the board again
    later = board(seq=9, eval=schema.EvalInfo(cp=-150, depth=10))
    skipped = schema.Update(
        board_id="r1-b1", seq=9, fen=later.fen, eval=later.eval, result="*", status="live"
    )
    static_server.publish(skipped, later)
    overlay = page.get_by_test_id("board-overlay")
    expect(overlay).to_have_attribute("data-gaps", "1")
    expect(overlay).to_have_attribute("data-snapshots", "2")
    expect(page.get_by_test_id("eval-cp")).to_have_text("\u22121.50")
    expect(overlay).to_have_attribute("data-fresh", "true")


def test_a_move_waiting_for_its_evaluation(static_server: StaticServer, page: Any) -> None:
    # 3.Nf3 arrives; the engine has not evaluated the new position yet
    moves = [
        *board().moves,
        schema.Ply(ply=5, san="Nf3", uci="g1f3", color="white", clock=5250),
    ]
    after = board(moves=moves, eval=None, seq=5)
    update = schema.Update(
        board_id="r1-b1",
        seq=5,
        ply=moves[-1],
        fen=after.fen,
        eval=None,
        white_perceived=after.white_perceived,
        black_perceived=after.black_perceived,
        head_to_head=after.head_to_head,
        clocks=after.clocks,
        result="*",
        status="live",
    )
    static_server.publish(update, after)
    expect(page.get_by_test_id("last-move")).to_have_text("3. Nf3")
    expect(page.locator('[data-testid="move"]').last).to_have_attribute("data-ply", "5")
    expect(page.get_by_test_id("last-move-gain")).to_have_text("evaluating…")
    # the bar keeps the last known evaluation, marked as pending
    expect(page.get_by_test_id("eval-bar")).to_have_attribute("data-pending", "true")
    expect(page.get_by_test_id("eval-cp")).to_have_text("#2")
