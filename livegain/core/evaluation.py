"""Evaluation normalisation and gain per move (seed 002, sections 2-4).

All scores are centipawns from White's point of view. Mate scores and anything
beyond +/-3900 cp are clipped to +/-3900 (the paper's 39 pawns: all material but
the king).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import chess

CLIP_CP = 3900

#: Why a position was scored by the rules of chess instead of by an engine
#: (:attr:`Evaluation.rule`): the game is over (checkmate, stalemate,
#: insufficient material, the 75-move rule, fivefold repetition) or a draw can
#: be claimed (threefold repetition, the 50-move rule). See ``docs/maths.md``.
Rule = Literal[
    "checkmate",
    "stalemate",
    "insufficient-material",
    "seventyfive-moves",
    "fivefold-repetition",
    "threefold-repetition",
    "fifty-moves",
]

#: The win/draw/loss of a drawn position, per mille.
DRAW_WDL = (0, 1000, 0)


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
    mille from White's view when the engine reports it. ``rule`` is set when
    no engine was asked: the position was scored by the rule it names
    (:data:`Rule`); such a value depends on the game's history (repetitions)
    and is never stored under its FEN.
    """

    cp: int
    mate: int | None = None
    wdl: tuple[int, int, int] | None = None
    depth: int = 0
    nodes: int = 0
    best: str | None = None
    pv: tuple[str, ...] = field(default_factory=tuple)
    rule: Rule | None = None


def draw_evaluation(rule: Rule) -> Evaluation:
    """A draw scored by ``rule``: 0 cp, WDL (0, 1000, 0)."""
    return Evaluation(cp=0, wdl=DRAW_WDL, rule=rule)


def check_valid(board: chess.Board) -> None:
    """Raise ValueError naming the FEN and python-chess's status when
    ``board`` is not a legal chess position (no engine is asked about it)."""
    if not board.is_valid():
        raise ValueError(f"invalid position {board.fen()!r}: {board.status()!r}")


def terminal_evaluation(board: chess.Board) -> Evaluation | None:
    """The score of a finished position, with no engine; None when play goes on.

    Checkmate: -3900 when White is mated, +3900 when Black is. Stalemate,
    insufficient material and the 75-move rule: 0 (a draw). Only rules that
    follow from the position are applied (repetitions need the game's history:
    :func:`rule_evaluation`). The engine pool uses this one rule.
    """
    if not any(board.generate_legal_moves()):  # one move generation for both rules
        if board.is_check():
            white_mated = board.turn == chess.WHITE
            wdl = (0, 0, 1000) if white_mated else (1000, 0, 0)
            return Evaluation(cp=checkmated_score(white_mated), wdl=wdl, rule="checkmate")
        return draw_evaluation("stalemate")
    if board.is_insufficient_material():
        return draw_evaluation("insufficient-material")
    if board.is_seventyfive_moves():
        return draw_evaluation("seventyfive-moves")
    return None


def position_key(fen: str) -> str:
    """What the repetition rules compare: pieces, side to move, castling rights
    and en passant (the FEN's first four fields; python-chess writes an en
    passant square only when a capture there is legal, as FIDE counts it)."""
    return " ".join(fen.split()[:4])


def repetitions(fen_at: Callable[[int], str], ply: int) -> int:
    """How many times the position at ``ply`` has occurred in the game, itself
    included. ``fen_at(k)`` is the FEN after ply k (0: the start position).

    Only positions since the last capture or pawn move can be the same
    position (its halfmove clock says how many plies back that was), and only
    every second one has the same side to move: at most ``halfmove / 2`` FENs
    are read.
    """
    fen = fen_at(ply)
    fields = fen.split()
    halfmove = int(fields[4]) if len(fields) > 4 and fields[4].isdigit() else ply
    key = " ".join(fields[:4])
    count = 1
    for k in range(ply - 2, max(ply - halfmove, 0) - 1, -2):
        if position_key(fen_at(k)) == key:
            count += 1
    return count


def draw_rule(board: chess.Board, repeated: int = 1) -> Rule | None:
    """The rule by which a position that is *not* checkmate or stalemate is a
    draw, or None. ``repeated``: how many times it has occurred in the game,
    itself included (:func:`repetitions`).

    Over by rule: insufficient material, the 75-move rule (halfmove clock
    >= 150), fivefold repetition. Claimable: threefold repetition, the 50-move
    rule (halfmove clock >= 100). Needs no move generation, so it costs about a
    microsecond: cheap enough for every ply of a game (a position that play
    went on from cannot be checkmate or stalemate).
    """
    if board.is_insufficient_material():
        return "insufficient-material"
    if board.halfmove_clock >= 150:
        return "seventyfive-moves"
    if repeated >= 5:
        return "fivefold-repetition"
    if repeated >= 3:
        return "threefold-repetition"
    if board.halfmove_clock >= 100:
        return "fifty-moves"
    return None


def rule_evaluation(board: chess.Board, repeated: int | None = None) -> Evaluation | None:
    """The score of a position decided by the rules of chess, with no engine;
    None when an engine must judge it.

    Checkmate (+/-3900) first, then stalemate, insufficient material, the
    75-move rule, fivefold and threefold repetition and the 50-move rule, all
    0 with WDL (0, 1000, 0): a game that is over, or one either player may end
    as a draw, is worth a draw whatever an engine that sees only the FEN says.
    ``repeated``: how many times the position has occurred in the game, itself
    included (:func:`repetitions`); None: counted from ``board``'s move stack
    (python-chess's ``is_repetition``), so a board without one counts once.
    The live game state and ``livegain analyze`` both use this one rule.
    """
    terminal = terminal_evaluation(board)
    if terminal is not None:
        return terminal
    if repeated is None:
        repeated = 5 if board.is_repetition(5) else 3 if board.is_repetition(3) else 1
    rule = draw_rule(board, repeated)
    return None if rule is None else draw_evaluation(rule)
