"""Time use: the time each move took and when a player is in time trouble.

Pure: no I/O, no clock. The rules (docs/maths.md, "Time use"):

- A game's time control is read from its PGN ``TimeControl`` tag
  (:func:`parse_time_control`): periods separated by ``:``, each ``S``,
  ``S+I`` or ``M/S`` / ``M/S+I`` (``M`` moves in ``S`` seconds, ``I``
  seconds added after each move); ``-``, ``?``, sandclock (``*S``) and
  anything unreadable are "unknown".
- The time a move took (:func:`spent_seconds`) is the mover's clock after
  his previous move (his base time before his first), plus the increment of
  the period the move was made in, plus the time a new period adds when this
  move completes one (move 40 of ``40/5400+30:1800+30``), minus his clock
  after the move; never below 0. Unknown when either clock is unknown (his
  first move without a time control).
- A player is in time trouble (:func:`in_time_trouble`) when his clock shows
  less than the time control's threshold (:func:`trouble_threshold`): 5
  minutes in classical, 1 minute in rapid, 10 % of the base time (at least
  10 s) in blitz and bullet. The class follows FIDE's: the time for 60 moves
  (base + 60 x increment) of at least 60 minutes is classical, of at least
  10 minutes rapid, else blitz. Without a known time control the base is
  taken as the larger of the two players' clocks after their first move.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "BLITZ_TROUBLE_MIN",
    "BLITZ_TROUBLE_SHARE",
    "CLASSICAL_TROUBLE",
    "RAPID_TROUBLE",
    "Period",
    "TimeClass",
    "TimeControl",
    "in_time_trouble",
    "parse_time_control",
    "spent_seconds",
    "time_class",
    "trouble_threshold",
]

CLASSICAL_TROUBLE = 300
"""Seconds under which a classical player is in time trouble."""
RAPID_TROUBLE = 60
"""Seconds under which a rapid player is in time trouble."""
BLITZ_TROUBLE_SHARE = 0.10
"""Share of the base time under which a blitz (or bullet) player is in time trouble."""
BLITZ_TROUBLE_MIN = 10
"""The blitz threshold is at least this many seconds."""

TimeClass = Literal["classical", "rapid", "blitz"]


@dataclass(frozen=True)
class Period:
    """One period: ``moves`` moves (None: the rest of the game) in ``base``
    seconds, ``increment`` seconds added after each move."""

    base: int
    increment: int = 0
    moves: int | None = None


@dataclass(frozen=True)
class TimeControl:
    periods: tuple[Period, ...]

    @property
    def base(self) -> int:
        return self.periods[0].base

    @property
    def increment(self) -> int:
        return self.periods[0].increment

    def period_of(self, move: int) -> tuple[int, Period]:
        """The period (index, period) the player's ``move`` (1-based) is made in."""
        done = 0
        for i, p in enumerate(self.periods):
            if p.moves is None or move <= done + p.moves:
                return i, p
            done += p.moves
        return len(self.periods) - 1, self.periods[-1]

    def added_after(self, move: int) -> int:
        """Seconds a new period adds when the player's ``move`` completes one."""
        done = 0
        for i, p in enumerate(self.periods[:-1]):
            if p.moves is None:
                return 0
            done += p.moves
            if move == done:
                return self.periods[i + 1].base
        return 0


# at most nine digits a number: a longer one is no time control (and no int to convert)
_PERIOD = re.compile(r"^(?:(\d{1,9})/)?(\d{1,9})(?:\+(\d{1,9}))?$")


@functools.lru_cache(maxsize=256)
def parse_time_control(tag: str | None) -> TimeControl | None:
    """A PGN ``TimeControl`` tag (``5400+30``, ``40/5400+30:1800+30``); None: unknown."""
    if not tag:
        return None
    periods: list[Period] = []
    for part in tag.strip().split(":"):
        m = _PERIOD.match(part.strip())
        if m is None:
            return None
        moves = int(m.group(1)) if m.group(1) else None
        periods.append(Period(int(m.group(2)), int(m.group(3) or 0), moves))
    if not periods or periods[0].base <= 0:
        return None
    return TimeControl(tuple(periods))


def time_class(base: int, increment: int = 0) -> TimeClass:
    """FIDE's class of a time control by the time for 60 moves."""
    sixty = base + 60 * increment
    if sixty >= 3600:
        return "classical"
    if sixty >= 600:
        return "rapid"
    return "blitz"


def trouble_threshold(
    tc: TimeControl | None, first_clocks: Sequence[int | None] = ()
) -> int | None:
    """Seconds under which a player is in time trouble; None: unknown (no time
    control and no first-move clock to estimate the base from)."""
    if tc is not None:
        base, inc = tc.base, tc.increment
    else:
        known = [c for c in first_clocks if c is not None]
        if not known:
            return None
        base, inc = max(known), 0
    cls = time_class(base, inc)
    if cls == "classical":
        return CLASSICAL_TROUBLE
    if cls == "rapid":
        return RAPID_TROUBLE
    return max(BLITZ_TROUBLE_MIN, round(BLITZ_TROUBLE_SHARE * base))


def in_time_trouble(clock: int | None, threshold: int | None) -> bool:
    """The clock shows less than the threshold (False when either is unknown)."""
    return clock is not None and threshold is not None and clock < threshold


def spent_seconds(
    tc: TimeControl | None, move: int, clock: int | None, previous: int | None
) -> int | None:
    """Seconds the player's ``move`` (1-based, his own count) took: his
    ``previous`` clock (after his previous move; None for the first move:
    the base time) + the period's increment + a new period's time if this
    move completes one - his ``clock`` after it; at least 0."""
    if clock is None:
        return None
    if previous is None:
        if move != 1 or tc is None:
            return None
        previous = tc.base
    inc = 0
    bonus = 0
    if tc is not None:
        inc = tc.period_of(move)[1].increment
        bonus = tc.added_after(move)
    return max(0, previous + inc + bonus - clock)
