"""Illegal moves on a board (docs/feeds.md, "Illegal moves that stood"): the
ones that stood over the board (the game went on from the position after
them), and the one the board stops at; each reported once, not once per poll."""

from __future__ import annotations

from collections.abc import Iterable

from livegain.core.board.movelist import NewPly, ParsedMoves, Ply
from livegain.core.board.updates import IllegalPly


class IllegalMoves:
    """What a board reported of its illegal moves, and where it stops."""

    def __init__(self) -> None:
        self.stopped: IllegalPly | None = None
        """The illegal move the board stops at (None: it stops at none)."""
        self._last: tuple[str, int, str] | None = None
        self._stood_seen: set[tuple[int, str, str]] = set()

    def stop_at(self, parsed: ParsedMoves) -> str | None:
        """Where the last move list read stops: the message to report the first
        time it stops at this move in this position (None: nothing new)."""
        if parsed.illegal_reason is None or parsed.illegal_ply is None:
            self._last = self.stopped = None
            return None
        token = parsed.illegal_token or ""
        key = (parsed.illegal_fen or "", parsed.illegal_ply, token)
        after = parsed.illegal_after
        self.stopped = IllegalPly(parsed.illegal_ply, token, False, after=after)
        if key == self._last:
            return None
        self._last = key
        reason = parsed.illegal_reason
        if after:
            reason += (
                f"; the game went on for {after} more moves: an illegal move that "
                f"stood over the board? The board stays at ply {parsed.illegal_ply - 1} "
                "until a feed reports the position after it"
            )
        return reason

    def stood(self, ply: int, move: NewPly) -> str | None:
        """The message that marks an illegal move that stood at ``ply``: once per
        ply, move and position (None: reported already)."""
        key = (ply, move.token.strip(), move.fen)
        if key in self._stood_seen:
            return None
        self._stood_seen.add(key)
        where = "the position the feed reports" if move.how == "reported" else "the move as played"
        note = (
            ""
            if move.evaluable
            else " (no legal position, e.g. a king left in check: not evaluated)"
        )
        return (
            f"illegal move stood over the board: the game goes on from {where}, "
            f"{move.fen}{note}; gains across this move are not counted"
        )

    def plies(self, plies: Iterable[Ply]) -> tuple[IllegalPly, ...]:
        """The illegal moves that stood among ``plies``, then the one the board stops at."""
        stood = tuple(
            IllegalPly(k, p.san, True, p.fen, p.how)
            for k, p in enumerate(plies, start=1)
            if p.stood
        )
        return stood + ((self.stopped,) if self.stopped is not None else ())

    def irregular(self, plies: Iterable[Ply]) -> bool:
        """True when an illegal move stood, or the board stops at one with moves past it."""
        return any(p.stood for p in plies) or (self.stopped is not None and self.stopped.after > 0)
