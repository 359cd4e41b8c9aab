"""A feed's move list read against a board: legal moves in SAN or UCI, an
illegal move that stood over the board (the position the feed reports after
it, or a pseudo-legal move the next move follows), a DGT result signal, and
the draw by rule each new position stands in.

Pure: the game it reads against is passed in (its plies and positions).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import chess

from livegain.core.board.moves import diff_uci, parse_move, pseudo_legal, reported_position
from livegain.core.board.results import dgt_signal_result
from livegain.core.evaluation import Rule, draw_rule, repetitions


@dataclass
class Ply:
    """A ply as the board keeps it."""

    token: str
    san: str
    uci: str
    fen: str
    white: bool
    clock: int | None = None
    stood: bool = False  # an illegal move that stood over the board
    evaluable: bool = True  # False: the position after it is no position an engine takes
    how: Literal["reported", "played", ""] = ""  # where a stood move's position came from


@dataclass
class NewPly:
    """A ply read from a feed's move list, not yet the board's."""

    token: str
    uci: str
    san: str
    fen: str  # the position after it
    rule: Rule | None  # the draw rule that scores it (see draw_rule)
    stood: bool = False
    evaluable: bool = True
    how: Literal["reported", "played", ""] = ""


@dataclass
class ParsedMoves:
    """What :func:`parse_moves` read: the new plies, and where and why it stopped."""

    moves: list[NewPly]
    illegal_ply: int | None = None
    illegal_token: str | None = None
    illegal_reason: str | None = None
    illegal_fen: str | None = None
    illegal_after: int = 0  # tokens past the illegal move
    signal: str | None = None
    board: chess.Board | None = None  # the position after the last legal move


def parse_moves(
    plies: Sequence[Ply],
    fen_at: Callable[[int], str],
    b: chess.Board,
    start: int,
    tokens: tuple[str, ...],
    reported: tuple[str | None, ...] = (),
    start_evaluable: bool = True,
) -> ParsedMoves:
    """Read ``tokens[start:]`` from ``b``, the position at ply ``start`` of the game
    whose ``plies`` and positions (``fen_at``) are known
    (changed in place: it ends as the position after the last move read);
    ``reported``: the feed's positions per ply (for a move that cannot be
    played); ``start_evaluable``: the position at ``start`` is one an engine takes."""
    out = ParsedMoves(moves=[])
    fens: list[str] = []  # the new positions
    ok = start_evaluable

    def fen_of(ply: int) -> str:  # the game's positions as they will stand
        return fen_at(ply) if ply <= start else fens[ply - start - 1]

    for i in range(start, len(tokens)):
        tok = tokens[i].strip()
        move = parse_move(b, tok)
        if move is None:
            signal = dgt_signal_result(b, tokens[i:])
            stood = None if signal is not None else _stood(plies, fen_at, b, tokens, i, reported)
            if stood is not None:
                # An illegal move that stood over the board: play goes on from the
                # position after it (reported by the feed, or the move as played).
                b, uci, how = stood
                ok = b.is_valid()
                fens.append(b.fen())
                out.moves.append(NewPly(tokens[i], uci, tok, fens[-1], None, True, ok, how))
                continue
            out.illegal_ply = i + 1
            out.illegal_token = tokens[i]
            out.illegal_fen = b.fen()
            out.illegal_after = len(tokens) - i - 1
            if signal is not None:
                out.signal = signal
            else:
                out.illegal_reason = (
                    "illegal move" if tok else "empty move"
                ) + f" in position {b.fen()}"
            break
        san = b.san(move)
        b.push(move)
        fens.append(b.fen())
        if not ok:  # after an illegal position: is this one legal again?
            ok = b.is_valid()
        if ok:
            # Three occurrences need at least 8 plies without a capture or pawn move.
            repeated = repetitions(fen_of, i + 1) if b.halfmove_clock >= 8 else 1
            rule = draw_rule(b, repeated)
        else:
            rule = None
        out.moves.append(NewPly(tokens[i], move.uci(), san, fens[-1], rule, evaluable=ok))
    out.board = b
    return out


def _stood(
    plies: Sequence[Ply],
    fen_at: Callable[[int], str],
    b: chess.Board,
    tokens: tuple[str, ...],
    i: int,
    reported: tuple[str | None, ...],
) -> tuple[chess.Board, str, Literal["reported", "played"]] | None:
    """The position after ``tokens[i]``, a move that cannot be played in ``b``,
    when the game visibly went on from it: the position the feed reports for
    that ply; else the one this board already went on from after the same
    move; else, when the move is pseudo-legal (a king left in check, a pinned
    piece moved) and the next move is legal after it, the move as played."""
    tok = tokens[i].strip()
    text = reported[i] if i < len(reported) else None
    if text:
        after = reported_position(b, text)
        if after is not None:
            return after, diff_uci(b, after), "reported"
    if i < len(plies):
        p = plies[i]
        if p.stood and p.token.strip() == tok and fen_at(i) == b.fen():
            after = chess.Board(p.fen, chess960=b.chess960)
            return after, p.uci, p.how or "reported"
    if i + 1 < len(tokens):
        move = pseudo_legal(b, tok)
        if move is not None:
            after = b.copy(stack=False)
            after.push(move)
            if parse_move(after, tokens[i + 1].strip()) is not None:
                return after, move.uci(), "played"
    return None
