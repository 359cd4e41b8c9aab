"""The live state machine agrees with batch analysis (``livegain.batch.analysis.analyze``)
on the game of the century with the paper's Figure 1 scores, however the moves
and evaluations arrive."""

from __future__ import annotations

from pathlib import Path

import chess
import pytest

import livegain
from livegain.batch.analysis import AnnotatedGame, analyze
from livegain.batch.pgn_evals import annotated_from_pgn_evals
from livegain.batch.pgnio import read_pgn_games
from livegain.core.board.registry import BoardRegistry
from livegain.core.evaluation import Evaluation
from livegain.core.rating import PAPER_ENGINE_RATING
from livegain.core.snapshot import GameSnapshot, PlayerInfo

GOTC = Path(livegain.__file__).parent / "data" / "game_of_the_century.pgn"


@pytest.fixture(scope="module")
def gotc() -> AnnotatedGame:
    game = annotated_from_pgn_evals(read_pgn_games(GOTC)[0])
    assert game.counted_from_ply == 1
    return game


def fen_scores(game: AnnotatedGame) -> dict[str, int]:
    board = chess.Board()
    out = {board.fen(): game.scores[0]}
    for san, score in zip(game.sans, game.scores[1:], strict=True):
        board.push_san(san)
        out[board.fen()] = score
    return out


def snap(sans: list[str], result: str = "*") -> GameSnapshot:
    return GameSnapshot(
        "gotc",
        PlayerInfo("Byrne, Donald"),
        PlayerInfo("Fischer, Robert James"),
        moves=tuple(sans),
        result=result,
        round="8",
    )


def test_live_game_of_the_century_matches_batch_analysis(gotc: AnnotatedGame) -> None:
    scores = fen_scores(gotc)
    t = BoardRegistry(PAPER_ENGINE_RATING)
    bid = None
    n = len(gotc.sans)
    for k in range(1, n + 1):
        sans = gotc.sans[:k]
        if k == 30:
            # The operator enters a wrong move, evaluations arrive, then the fix.
            board = chess.Board()
            for san in gotc.sans[:28]:
                board.push_san(san)
            other = sorted(board.san(m) for m in board.legal_moves if board.san(m) != sans[28])
            wrong = t.apply(snap([*gotc.sans[:28], other[0]]))
            for r in t.pending():
                if r.fen not in scores:
                    t.record_eval(r.board_id, r.ply, r.fen, Evaluation(cp=-500))
            assert not wrong.errors
        bid = t.apply(snap(sans)).board_id
        # the latest position only: backfill waits until the end
        latest = [r for r in t.pending() if r.priority == 0]
        for r in latest:
            t.record_eval(r.board_id, r.ply, r.fen, Evaluation(cp=scores[r.fen]))
    t.apply(snap(gotc.sans, "0-1"))
    for r in t.pending():
        t.record_eval(r.board_id, r.ply, r.fen, Evaluation(cp=scores[r.fen]))
    assert bid is not None and t.pending() == []

    report = analyze([gotc], PAPER_ENGINE_RATING).games[0]
    g = t.board(bid)
    assert g.result == "0-1" and g.evaluated_plies == n
    assert [p.gain for p in g.moves()] == [row.gain for row in report.plies]
    assert g.scoring.perceived("white") == report.white.perceived
    assert g.scoring.perceived("black") == report.black.perceived
    assert [tp.perceived for tp in g.scoring.trace("black")] == [
        e.perceived for e in report.black.trace
    ]
    assert [tp.ply for tp in g.scoring.trace("white")] == [e.ply for e in report.white.trace]
    assert g.scoring.head_to_head() == report.head_to_head
    # The paper's Figure 6 end points: -185 (Byrne) and -43 (Fischer).
    white, black = g.scoring.perceived("white"), g.scoring.perceived("black")
    assert white is not None and black is not None
    assert white.difference == pytest.approx(-185, abs=1)
    assert black.difference == pytest.approx(-43, abs=1)
