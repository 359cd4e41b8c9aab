"""Evaluation normalisation and gain per move (seed 002, sections 2-4).

All scores are centipawns from White's point of view. Mate scores and anything
beyond +/-3900 cp are clipped to +/-3900 (the paper's 39 pawns: all material but
the king).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import chess

CLIP_CP = 3900


def clip(cp: int) -> int:
    """Clip a White-view centipawn score to [-3900, +3900]."""
    return max(-CLIP_CP, min(CLIP_CP, int(cp)))


def white_score(cp: int | None = None, mate: int | None = None) -> int:
    """Normalise an engine score given from White's point of view.

    ``mate`` is "mate in N" from White's view: positive when White mates,
    negative when Black mates. ``mate == 0`` is ambiguous (who is mated?) and is
    rejected: use :func:`checkmated_score` for a checkmate on the board.
    """
    if mate is not None:
        if mate == 0:
            raise ValueError("mate 0 is ambiguous; use checkmated_score()")
        return CLIP_CP if mate > 0 else -CLIP_CP
    if cp is None:
        raise ValueError("a score needs cp or mate")
    return clip(cp)


def checkmated_score(white_is_mated: bool) -> int:
    """The score of a position where one side is checkmated."""
    return -CLIP_CP if white_is_mated else CLIP_CP


def gain(before: int, after: int, mover_is_white: bool) -> int:
    """Gain of a move: White ``s_k - s_{k-1}``, Black ``-(s_k - s_{k-1})``."""
    delta = clip(after) - clip(before)
    return delta if mover_is_white else -delta


def gains(scores: list[int], first_mover_is_white: bool = True) -> list[int]:
    """Gains of consecutive moves from scores ``s_0 .. s_n`` (s_0: start position)."""
    out: list[int] = []
    white = first_mover_is_white
    for before, after in itertools.pairwise(scores):
        out.append(gain(before, after, white))
        white = not white
    return out


@dataclass(frozen=True)
class Evaluation:
    """One engine evaluation of one position, normalised to White's view.

    ``cp`` is already clipped (mate -> +/-3900). ``mate`` keeps the engine's
    "mate in N" (White view) for display. ``wdl`` is (win, draw, loss) per
    mille from White's view when the engine reports it.
    """

    cp: int
    mate: int | None = None
    wdl: tuple[int, int, int] | None = None
    depth: int = 0
    nodes: int = 0
    best: str | None = None
    pv: tuple[str, ...] = field(default_factory=tuple)


def terminal_evaluation(board: chess.Board) -> Evaluation | None:
    """The score of a finished position, with no engine; None when play goes on.

    Checkmate: -3900 when White is mated, +3900 when Black is. Stalemate,
    insufficient material and the 75-move rule: 0 (a draw). Only rules that
    follow from the position are applied (repetitions need the game's history).
    The engine pool and the live game state both use this one rule.
    """
    if board.is_checkmate():
        white_mated = board.turn == chess.WHITE
        wdl = (0, 0, 1000) if white_mated else (1000, 0, 0)
        return Evaluation(cp=checkmated_score(white_mated), wdl=wdl)
    if board.is_stalemate() or board.is_insufficient_material() or board.is_seventyfive_moves():
        return Evaluation(cp=0, wdl=(0, 1000, 0))
    return None
