"""livegain.core.fen writes exactly the FEN python-chess writes: it names the
positions sent to the engine and the evaluation cache's keys."""

from __future__ import annotations

import random
from pathlib import Path

import chess
import chess.pgn
import chess.variant
import pytest

import livegain
from livegain.batch.engine_analysis import game_positions
from livegain.core.fen import board_fen, fen

GOTC = Path(livegain.__file__).parent / "data" / "game_of_the_century.pgn"


def game_boards(path: Path, limit: int) -> list[chess.Board]:
    boards = []
    with path.open(encoding="utf-8") as fh:
        for _ in range(limit):
            game = chess.pgn.read_game(fh)
            if game is None:
                break
            board = game.board()
            boards.append(board.copy())
            for move in game.mainline_moves():
                board.push(move)
                boards.append(board.copy(stack=False))
    return boards


def test_every_position_of_a_shipped_game() -> None:
    boards = game_boards(GOTC, 1)
    assert len(boards) > 80
    for board in boards:
        assert fen(board) == board.fen()
        assert board_fen(board) == board.board_fen()


def test_every_position_of_a_tournament(tata_steel: Path) -> None:
    boards = game_boards(tata_steel, 1000)
    assert len(boards) > 5000
    assert [fen(b) for b in boards] == [b.fen() for b in boards]


@pytest.mark.parametrize("chess960", [False, True])
def test_random_play(chess960: bool) -> None:
    """Random games: promotions, under-promotions, en passant, castling rights
    lost one by one, Chess960 rooks on any file (X-FEN letters)."""
    rng = random.Random(960 if chess960 else 0)
    seen = 0
    for _ in range(150):
        board = chess.Board.from_chess960_pos(rng.randrange(960)) if chess960 else chess.Board()
        for _ply in range(rng.randrange(300)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
            assert fen(board) == board.fen()
            seen += 1
    assert seen > 10_000


def test_en_passant_only_when_a_capture_is_legal() -> None:
    legal = chess.Board("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3")
    assert fen(legal) == legal.fen() and " f6 " in fen(legal)
    # the e5 pawn is pinned to its king: no legal capture, no square written
    pinned = chess.Board("4r1k1/8/8/3pP3/8/8/8/4K3 w - d6 0 1")
    assert fen(pinned) == pinned.fen() and " - 0 1" in fen(pinned)
    nobody = chess.Board("4k3/8/8/3p4/8/8/8/4K3 w - d6 0 1")
    assert fen(nobody) == nobody.fen()


def test_unusual_castling_rights_and_clocks() -> None:
    for text in (
        "4k3/8/8/8/8/8/8/R3K2R w KQ - 99 120",
        "r3k2r/8/8/8/8/8/8/4K3 b kq - 0 1",
        "1r2k1r1/8/8/8/8/8/8/1R2K1R1 w GBgb - 0 1",  # Chess960: rooks on b and g
        "8/8/8/8/8/8/8/K6k w - - 0 1",
        "RNBQKBNR/PPPPPPPP/8/8/8/8/pppppppp/rnbqkbnr w - - 0 1",
    ):
        board = chess.Board(text, chess960="G" in text)
        assert fen(board) == board.fen(), text


def test_a_variant_board_is_left_to_python_chess() -> None:
    board = chess.variant.CrazyhouseBoard()
    board.push_san("e4")
    board.push_san("d5")
    board.push_san("exd5")
    assert fen(board) == board.fen() and "[P]" in fen(board)


def test_batch_positions_use_it() -> None:
    with GOTC.open(encoding="utf-8") as fh:
        game = chess.pgn.read_game(fh)
    assert game is not None
    pos = game_positions(game)
    assert pos.fens == [b.fen() for b in pos.boards]


def test_an_invalid_start_position_is_refused_before_any_search() -> None:
    game = chess.pgn.Game()
    game.setup(chess.Board("8/8/8/8/8/8/8/K6K w - - 0 1"))  # two white kings, no black one
    with pytest.raises(ValueError, match="invalid position"):
        game_positions(game)
