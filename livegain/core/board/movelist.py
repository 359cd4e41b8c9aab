"""A board's moves (:class:`MoveList`), and a feed's move list read against
them: legal moves in SAN or UCI, an illegal move that stood over the board
(the position the feed reports after it, or a pseudo-legal move the next move
follows), a DGT result signal, and the draw by rule each new position stands in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

import chess

from livegain.core.board.moves import (
    diff_uci,
    mover_white,
    parse_move,
    pseudo_legal,
    reported_position,
)
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
    start: int = 0  # the ply the moves start after
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
    out = ParsedMoves(moves=[], start=start)
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


class MoveList:
    """One board's moves: its start position, each ply as read from its feeds
    (1-based), the plies whose position no engine takes, and the current
    position as last parsed (reading appended moves on from it is cheap)."""

    def __init__(self, start_fen: str = chess.STARTING_FEN, chess960: bool = False) -> None:
        self.start_fen = start_fen
        self.chess960 = chess960
        self._plies: list[Ply] = []
        self.unevaluable: set[int] = set()
        """Plies whose position no engine takes (after an illegal move that stood)."""
        self._tip: chess.Board | None = None  # the current position, once parsed

    def __len__(self) -> int:
        return len(self._plies)

    def __iter__(self) -> Iterator[Ply]:
        return iter(self._plies)

    def ply(self, k: int) -> Ply:
        """Move ``k`` (1-based)."""
        return self._plies[k - 1]

    @property
    def fen(self) -> str:
        """The current position."""
        return self._plies[-1].fen if self._plies else self.start_fen

    def fen_at(self, ply: int) -> str:
        """The position after ``ply`` plies (0: the start)."""
        return self.start_fen if ply == 0 else self._plies[ply - 1].fen

    def board_at(self, ply: int) -> chess.Board:
        """The position after ``ply`` plies, to play on."""
        return chess.Board(self.fen_at(ply), chess960=self.chess960)

    def read(self, tokens: tuple[str, ...], reported: tuple[str | None, ...]) -> ParsedMoves:
        """A feed's move list (``tokens``; ``reported``: its positions per ply)
        read against these moves: the moves parsed from its first token that
        differs from the board's on (:func:`parse_moves`), their ``start``."""
        plies = self._plies
        first = 0
        n = min(len(plies), len(tokens))
        while first < n and plies[first].token == tokens[first]:
            first += 1
        if first == len(plies) and self._tip is not None:
            b = self._tip.copy(stack=False)  # the usual case: moves appended at the end
        else:
            b = self.board_at(first)
        return parse_moves(
            plies, self.fen_at, b, first, tokens, reported, first not in self.unevaluable
        )

    def keep(self, parsed: ParsedMoves) -> int:
        """Keep the plies ``parsed`` read as the board has them (with their text
        as the feed now writes it): how many plies stay. The board's others go,
        and ``parsed.moves`` past the kept ones are new."""
        plies, new = self._plies, parsed.moves
        common, j = parsed.start, 0
        while (
            common < len(plies)
            and j < len(new)
            and plies[common].uci == new[j].uci
            and plies[common].fen == new[j].fen
        ):
            plies[common].token = new[j].token
            common += 1
            j += 1
        return common

    def truncate(self, plies: int) -> None:
        """Drop the moves after ``plies``."""
        del self._plies[plies:]
        self.unevaluable = {k for k in self.unevaluable if k <= plies}

    def append(self, move: NewPly) -> Ply:
        """Add a move read from a feed: the board's now."""
        p = Ply(
            move.token,
            move.san,
            move.uci,
            move.fen,
            white=mover_white(move.fen),
            stood=move.stood,
            evaluable=move.evaluable,
            how=move.how,
        )
        self._plies.append(p)
        if not move.evaluable:
            self.unevaluable.add(len(self._plies))
        return p

    def keep_tip(self, board: chess.Board | None) -> None:
        """``board`` is the current position (the last move list read ends there)."""
        self._tip = board
        if board is not None:
            # Only the position is needed: a kept move stack would hold two
            # objects per ply for the life of the board (and the GC's scans).
            board.clear_stack()
