"""A board's clocks: each move's clock as feeds send it (merged: a clock no
longer sent is kept), the clocks now, whose clock runs, time spent per move
and time trouble (the rules are :mod:`livegain.core.timeuse`'s)."""

from __future__ import annotations

from collections.abc import Mapping

from livegain.core.board.updates import Clocks, Color
from livegain.core.snapshot import GameSnapshot
from livegain.core.timeuse import (
    TimeControl,
    in_time_trouble,
    parse_time_control,
    spent_seconds,
    trouble_threshold,
)


def time_control(tags: Mapping[str, str]) -> TimeControl | None:
    """The game's time control from its ``TimeControl`` tag (None: unknown)."""
    return parse_time_control(tags.get("TimeControl"))


class GameClocks:
    """One board's clocks: the seconds left after each of its plies (1-based),
    kept in step with its moves, and the clocks now (``white``, ``black``)."""

    def __init__(self) -> None:
        self._times: list[int | None] = []  # seconds left after each ply (None: not sent)
        self._by_white: list[bool] = []  # whether White made each ply
        self.white: int | None = None
        self.black: int | None = None

    def at(self, ply: int) -> int | None:
        """The clock after move ``ply`` (1-based); None when no feed sent it."""
        return self._times[ply - 1]

    def times(self) -> tuple[int | None, ...]:
        """Every ply's clock, in order."""
        return tuple(self._times)

    def played(self, white: bool, snap: GameSnapshot) -> None:
        """A new move (by White or not), its clock from ``snap`` if it sent one;
        the clocks now are as of this move, but for the feed's own (what
        :meth:`settle` gives, one move at a time)."""
        self._times.append(None)
        self._by_white.append(white)
        ply = len(self._times)
        self.merge(ply, snap)
        clock = self._times[-1]
        if clock is not None:
            if white and snap.clock_white is None:
                self.white = clock
            elif not white and snap.clock_black is None:
                self.black = clock

    def merge(self, ply: int, snap: GameSnapshot) -> bool:
        """Take the feed's clock for ``ply`` (1-based) if it sent one; True when it changed."""
        if ply - 1 < len(snap.clocks):
            c = snap.clocks[ply - 1]
            if c is not None and self._times[ply - 1] != int(c):
                self._times[ply - 1] = int(c)
                return True
        return False

    def merge_kept(self, kept: int, snap: GameSnapshot) -> list[int]:
        """The clocks ``snap`` sends for the first ``kept`` plies, merged (a clock
        no longer sent is kept): the plies whose clock changed."""
        return [k for k in range(1, min(kept, len(snap.clocks)) + 1) if self.merge(k, snap)]

    def truncate(self, plies: int) -> None:
        """Moves after ``plies`` went: their clocks too, and the clocks now
        (:meth:`settle` works them out again)."""
        del self._times[plies:]
        del self._by_white[plies:]
        self.white = self.black = None

    def clear(self) -> None:
        """A new start position: no move has a clock (the clocks now stay)."""
        self._times = []
        self._by_white = []

    def settle(self, snap: GameSnapshot) -> None:
        """The clocks now: the feed's own if given, else the last move's of each
        player, else the last known."""
        last: dict[bool, int | None] = {True: None, False: None}
        for white, clock in zip(reversed(self._by_white), reversed(self._times), strict=True):
            if last[white] is None and clock is not None:
                last[white] = clock
            if last[True] is not None and last[False] is not None:
                break
        if snap.clock_white is not None:
            self.white = int(snap.clock_white)
        elif last[True] is not None:
            self.white = last[True]
        if snap.clock_black is not None:
            self.black = int(snap.clock_black)
        elif last[False] is not None:
            self.black = last[False]

    def trouble_below(self, tc: TimeControl | None) -> int | None:
        """Seconds under which a clock is in time trouble (:func:`trouble_threshold`)."""
        return trouble_threshold(tc, self._times[:2])

    def spent(self, tc: TimeControl | None, ply: int) -> int | None:
        """Seconds move ``ply`` (1-based) took (:func:`spent_seconds`)."""
        if ply < 1 or ply > len(self._times):
            return None
        move = (ply + 1) // 2 if self._by_white[ply - 1] == self._by_white[0] else ply // 2
        previous = self._times[ply - 3] if ply > 2 else None
        return spent_seconds(tc, move, self._times[ply - 1], previous)

    def now(self, running: Color | None, below: int | None) -> Clocks:
        """The clocks now, ``running`` the one that runs, in time trouble under ``below``."""
        white, black = self.white, self.black
        return Clocks(
            white,
            black,
            running,
            in_time_trouble(white, below),
            in_time_trouble(black, below),
            below,
        )
