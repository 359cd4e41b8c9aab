"""run_engine_analysis: every position of every game, scores per position."""

from __future__ import annotations

import io
from pathlib import Path

import chess
import chess.pgn
import pytest

from livegain.batch.engine_analysis import ProgressBar, run_engine_analysis
from livegain.engine.cache import EvalCache

pytestmark = [pytest.mark.engine, pytest.mark.timeout(120)]

PGN = """
[Event "Test"]
[White "A"]
[Black "B"]
[Result "0-1"]

1. f3 e5 2. g4 Qh4# 0-1

[Event "Test"]
[White "C"]
[Black "D"]
[SetUp "1"]
[FEN "4k3/8/8/8/8/8/4P3/4K3 b - - 0 40"]
[Result "*"]

40... Kd7 41. e4 *
"""


def games() -> list[chess.pgn.Game]:
    fh = io.StringIO(PGN)
    out = []
    while (g := chess.pgn.read_game(fh)) is not None:
        out.append(g)
    return out


def test_every_position_is_scored(
    stockfish: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache_path = tmp_path / "evals.sqlite"
    annotated = run_engine_analysis(
        games(), engine_path=stockfish, depth=6, workers=2, cache_path=cache_path
    )
    assert capsys.readouterr().err == ""  # quiet without progress
    fools, endgame = annotated
    assert fools.sans == ["f3", "e5", "g4", "Qh4#"]
    assert fools.ucis[-1] == "d8h4"
    assert len(fools.scores) == 5 and fools.scores[-1] == -3900  # White is mated
    assert fools.white == "A" and fools.first_mover_is_white
    assert fools.start_fen is None
    assert endgame.start_fen == "4k3/8/8/8/8/8/4P3/4K3 b - - 0 40"
    assert not endgame.first_mover_is_white
    assert len(endgame.scores) == 3
    assert endgame.scores[0] > 0  # an extra pawn
    assert endgame.evaluations is not None and endgame.wdl is not None
    assert [e.depth for e in endgame.evaluations] == [6, 6, 6]
    with EvalCache(cache_path) as cache:
        assert len(cache) == 4 + 3  # the checkmate needs no engine, no row


def test_progress_bar_on_stderr(stockfish: str, capsys: pytest.CaptureFixture[str]) -> None:
    run_engine_analysis(games()[:1], engine_path=stockfish, depth=5, workers=1, progress=True)
    err = capsys.readouterr().err
    assert "positions" in err and "5/5" in err


def test_progress_bar_shared_with_calibrate(capsys: pytest.CaptureFixture[str]) -> None:
    """The bar ``livegain calibrate`` shows for its engine-gains pass (no engine needed)."""
    with ProgressBar("engine gains, test", 4) as on_progress:
        for done in range(1, 5):
            on_progress(done, 4)
    err = capsys.readouterr().err
    assert "engine gains, test" in err and "4/4" in err and "positions" in err
