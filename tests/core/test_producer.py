"""The producer's ranking rule (core.producer) by hand, and on a replayed
round read from the published states (publish.producer_view)."""

from __future__ import annotations

import chess
import pytest

from livegain.core.board.registry import BoardRegistry
from livegain.core.evaluation import Evaluation
from livegain.core.producer import (
    DECISIVE_POINTS,
    JUST_ENDED_POINTS,
    STANDINGS_WEIGHT,
    SWING_WEIGHT,
    TIME_TROUBLE_POINTS,
    BoardLook,
    rank_boards,
    recent_swing,
    score_board,
)
from livegain.core.rating import PAPER_ENGINE_RATING
from livegain.core.snapshot import GameSnapshot, PlayerInfo
from livegain.publish import convert, producer_view, schema


def test_terms_by_hand() -> None:
    assert recent_swing([0.5, 0.52, 0.5, 0.5, 0.1]) == pytest.approx(0.42)
    # only the last 4 plies and the current position count
    assert recent_swing([0.9, 0.5, 0.5, 0.5, 0.5, 0.5]) == 0.0
    assert recent_swing([0.5]) == 0.0
    quiet = BoardLook("q", live=True, chances=(0.5, 0.5, 0.5))
    assert score_board(quiet) == (0.0, ())
    blunder = BoardLook("b", live=True, chances=(0.5, 0.5, 0.1))
    score, terms = score_board(blunder)
    assert [t.name for t in terms] == ["swing", "decisive"]
    assert score == pytest.approx(SWING_WEIGHT * 0.4 + DECISIVE_POINTS)
    assert terms[0].reason == "swing: White's chances 50 % → 10 % in the last moves"
    assert terms[1].reason == "decisive: Black wins 90 %"
    trouble = BoardLook(
        "t", live=True, chances=(0.5,), black_time_trouble=True, black_clock=170, black="Kim"
    )
    score, terms = score_board(trouble)
    assert score == TIME_TROUBLE_POINTS and terms[0].reason == "time trouble: Kim (2:50 left)"
    leader = BoardLook("l", live=True, chances=(0.5,), white_first=0.6, white="Ann")
    score, terms = score_board(leader)
    assert score == pytest.approx(STANDINGS_WEIGHT * 0.6)
    assert terms[0].reason == "standings: Ann 60 % to finish first"
    ended = BoardLook("e", live=False, chances=(0.5, 1.0), result="1-0", ended_ago=10)
    assert score_board(ended)[0] == JUST_ENDED_POINTS  # no swing once over
    assert score_board(BoardLook("o", live=False, result="1-0", ended_ago=500))[0] == 0.0
    ranked = rank_boards([quiet, trouble, blunder, leader, ended])
    assert [r.board_id for r in ranked] == ["b", "e", "t", "l", "q"]
    assert [r.rank for r in ranked] == [1, 2, 3, 4, 5]
    assert ranked[-1].reason == "quiet"


# Board 2: Black's 3...Nf6?? allows 4.Qxf7#; boards 1 and 3 stay quiet.
BLUNDER = ["e4", "e5", "Qh5", "Nc6", "Bc4", "Nf6"]
QUIET = ["d4", "d5", "c4", "e6", "Nc3", "Nf6"]


def _snap(board: int, moves: list[str], clocks: tuple[int, ...] = ()) -> GameSnapshot:
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


def _evaluate(t: BoardRegistry) -> None:
    """Level evaluations, but mate in 1 for White after 3...Nf6."""
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


def _states(t: BoardRegistry, ids: list[str]) -> list[schema.BoardState]:
    return [convert.board_state(t.board(b), engine="test") for b in ids]


def test_a_decisive_blunder_tops_and_time_trouble_rises() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    ids = []
    for board in (1, 2, 3):
        bid = t.apply(_snap(board, QUIET if board != 2 else BLUNDER[:5])).board_id
        assert bid is not None
        ids.append(bid)
    _evaluate(t)
    before = producer_view.ranking(_states(t, ids), [], {}, 0)
    assert all(r.reason == "quiet" for r in before.boards)
    # 3...Nf6?? is played on board 2
    t.apply(_snap(2, BLUNDER))
    _evaluate(t)
    after = producer_view.ranking(_states(t, ids), [], {}, 0)
    top = after.boards[0]
    assert top.board_id == ids[1] and top.rank == 1
    assert top.reason.startswith("swing: White's chances") and top.reason.endswith(
        "→ 100 % in the last moves"
    )
    assert [x.name for x in top.terms] == ["swing", "decisive"]
    assert top.overlay == f"/overlay/board?board={ids[1]}"
    # Black on board 3 falls under 5 minutes: board 3 rises above board 1
    clocks = (5399, 5405, 3000, 1000, 2990, 250)
    t.apply(_snap(3, QUIET, clocks))
    ranked = producer_view.ranking(_states(t, ids), [], {}, 0).boards
    assert [r.board_id for r in ranked] == [ids[1], ids[2], ids[0]]
    assert ranked[1].reason == "time trouble: Black 3 (4:10 left)"


def test_standings_odds_are_matched_by_name() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    bid = t.apply(_snap(1, QUIET)).board_id
    assert bid is not None
    row = schema.StandingsRow(
        rank=1,
        key="white 1",
        name="White 1",
        points=3,
        games=3,
        tiebreaks={},
        win=0.7,
        win_se=0.01,
        live=True,
    )
    st = schema.Standings(
        event="Producer Open",
        format="swiss",
        round=1,
        rounds=5,
        tiebreaks=[],
        playoff=None,
        rows=[row],
        sims=1000,
        version=1,
        plies=6,
        finished=0,
        live=1,
        upcoming=0,
    )
    ranked = producer_view.ranking(_states(t, [bid]), [st], {}, 0).boards
    assert ranked[0].reason == "standings: White 1 70 % to finish first"
