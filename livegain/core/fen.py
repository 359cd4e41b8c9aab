"""FEN of a board, as python-chess writes it, in a fifth of the time.

``chess.Board.fen()`` asks every one of the 64 squares for its piece (about
35 µs a position); reading the twelve piece bitboards instead takes about
7 µs. ``livegain analyze`` writes the FEN of every position of every game
before its first search, so this is on its start-up path
(docs/benchmarks.md, "analyze against the raw loop").

:func:`fen` equals ``board.fen()`` (its defaults: en passant square only when
a legal capture exists, X-FEN castling rights) for every board of the standard
game, Chess960 included; tests/core/test_fen.py compares the two over whole
games. Boards of other variants are left to python-chess.
"""

from __future__ import annotations

import chess

# Index of each square in the 71 characters of a board FEN written with a
# "1" per empty square: rank 8 first, a "/" after every rank but the last.
_AT = [(7 - chess.square_rank(sq)) * 9 + chess.square_file(sq) for sq in chess.SQUARES]
_EMPTY = "/".join(["11111111"] * 8).encode()
_RUNS = [("1" * n, str(n)) for n in range(8, 1, -1)]


def board_fen(board: chess.BaseBoard) -> str:
    """The piece placement part of the FEN (``board.board_fen()``)."""
    cells = bytearray(_EMPTY)
    at = _AT
    kinds = (board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings)
    white, black = board.occupied_co[chess.WHITE], board.occupied_co[chess.BLACK]
    for side, letters in ((white, b"PNBRQK"), (black, b"pnbrqk")):
        for mask, letter in zip(kinds, letters, strict=True):
            bb = mask & side
            while bb:
                low = bb & -bb
                cells[at[low.bit_length() - 1]] = letter
                bb ^= low
    text = cells.decode("ascii")
    for run, count in _RUNS:  # runs of empty squares never cross a "/"
        if run in text:
            text = text.replace(run, count)
    return text


def fen(board: chess.Board) -> str:
    """``board.fen()``."""
    if type(board) is not chess.Board:  # a variant (pockets, checks): python-chess's own
        return board.fen()
    castling = board.castling_xfen() if board.castling_rights else "-"
    ep = board.ep_square
    en_passant = chess.SQUARE_NAMES[ep] if ep is not None and board.has_legal_en_passant() else "-"
    return (
        f"{board_fen(board)} {'w' if board.turn else 'b'} {castling} {en_passant}"
        f" {board.halfmove_clock} {board.fullmove_number}"
    )


__all__ = ["board_fen", "fen"]
