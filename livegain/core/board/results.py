"""Game results: the four result tokens, the spellings feeds use for them, and
the result a DGT board signals with its kings in the centre."""

from __future__ import annotations

import re
from collections.abc import Iterable

import chess

from livegain.core.board.moves import (
    UCI_MOVE,
)

RESULTS = ("1-0", "0-1", "1/2-1/2", "*")
RESULT_ALIASES = {
    "1-0": "1-0",
    "0-1": "0-1",
    "1/2-1/2": "1/2-1/2",
    "½-½": "1/2-1/2",
    "1/2": "1/2-1/2",
    "0.5-0.5": "1/2-1/2",
    "=": "1/2-1/2",
    "*": "*",
    "": "*",
    "whitewin": "1-0",
    "blackwin": "0-1",
    "draw": "1/2-1/2",
}

CENTRE = (chess.D4, chess.D5, chess.E4, chess.E5)
_KING_TO_CENTRE_SAN = re.compile(r"^K[x:]?([de][45])[+#]?[!?]*$")


def normalize_result(result: str | None) -> str | None:
    """``1-0`` / ``0-1`` / ``1/2-1/2`` / ``*``, or None when not a result."""
    if result is None:
        return None
    return RESULT_ALIASES.get(result.strip().lower().replace(" ", ""))


def dgt_signal_result(board: chess.Board, tokens: Iterable[str]) -> str | None:
    """The result signalled by DGT's "kings in the centre", or None.

    ``tokens`` are the trailing moves (at most two) from the first illegal one
    on. Each must be a king move to d4/d5/e4/e5 (SAN ``Kd4`` or UCI ``e1d4``);
    the first one moves the side to move's king, the next the other king. If
    afterwards both kings stand on centre squares: both on light squares
    (d5, e4) is 1-0, both on dark squares (d4, e5) is 0-1, one of each is a draw.
    """
    toks = list(tokens)
    if not 1 <= len(toks) <= 2:
        return None
    kings = {
        chess.WHITE: board.king(chess.WHITE),
        chess.BLACK: board.king(chess.BLACK),
    }
    if kings[chess.WHITE] is None or kings[chess.BLACK] is None:
        return None
    color = board.turn
    for tok in toks:
        tok = tok.strip()
        m = _KING_TO_CENTRE_SAN.match(tok)
        if m:
            kings[color] = chess.parse_square(m.group(1))
        else:
            u = UCI_MOVE.match(tok)
            if not u:
                return None
            src, dst = chess.parse_square(u.group(1)), chess.parse_square(u.group(2))
            if dst not in CENTRE:
                return None
            moved = [c for c, sq in kings.items() if sq == src]
            if not moved:
                return None
            color = moved[0]
            kings[color] = dst
        color = not color
    wk, bk = kings[chess.WHITE], kings[chess.BLACK]
    if wk not in CENTRE or bk not in CENTRE or wk == bk:
        return None
    light = {chess.D5, chess.E4}
    if wk in light and bk in light:
        return "1-0"
    if wk not in light and bk not in light:
        return "0-1"
    return "1/2-1/2"


def position_result(board: chess.Board) -> str:
    """The result a position decides by itself: checkmate (the side to move
    lost), stalemate (a draw), else ``*``."""
    if board.is_checkmate():
        return "0-1" if board.turn == chess.WHITE else "1-0"
    if board.is_stalemate():
        return "1/2-1/2"
    return "*"
