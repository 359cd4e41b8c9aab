"""A board's clocks: each move's clock as feeds send it (merged: a clock no
longer sent is kept), the clocks now, whose clock runs, time spent per move
and time trouble (the rules are :mod:`livegain.core.timeuse`'s)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from livegain.core.board.movelist import Ply
from livegain.core.board.updates import Clocks, Color
from livegain.core.events import GameSnapshot
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


def trouble_below(tc: TimeControl | None, plies: Sequence[Ply]) -> int | None:
    """Seconds under which a clock is in time trouble (:func:`trouble_threshold`)."""
    return trouble_threshold(tc, [p.clock for p in plies[:2]])


def spent_at(tc: TimeControl | None, plies: Sequence[Ply], ply: int) -> int | None:
    """Seconds move ``ply`` (1-based) took (:func:`spent_seconds`)."""
    if ply < 1 or ply > len(plies):
        return None
    p = plies[ply - 1]
    move = (ply + 1) // 2 if p.white == plies[0].white else ply // 2
    previous = plies[ply - 3].clock if ply > 2 else None
    return spent_seconds(tc, move, p.clock, previous)


def board_clocks(
    white: int | None,
    black: int | None,
    running: Color | None,
    below: int | None,
) -> Clocks:
    """Both clocks, whose runs, and who is in time trouble (under ``below`` seconds)."""
    return Clocks(
        white, black, running, in_time_trouble(white, below), in_time_trouble(black, below), below
    )


def merge_clock(plies: Sequence[Ply], ply: int, snap: GameSnapshot) -> bool:
    """Take the feed's clock for ``ply`` (1-based) if it sent one; True when it changed."""
    if ply - 1 < len(snap.clocks):
        c = snap.clocks[ply - 1]
        if c is not None and plies[ply - 1].clock != int(c):
            plies[ply - 1].clock = int(c)
            return True
    return False


def current_clocks(
    plies: Sequence[Ply], snap: GameSnapshot, white: int | None, black: int | None
) -> tuple[int | None, int | None]:
    """The clocks now: the feed's own if given, else the last move's of each
    player, else the last known (``white``, ``black``)."""
    last: dict[bool, int | None] = {True: None, False: None}
    for p in reversed(plies):
        if last[p.white] is None and p.clock is not None:
            last[p.white] = p.clock
        if last[True] is not None and last[False] is not None:
            break
    if snap.clock_white is not None:
        white = int(snap.clock_white)
    elif last[True] is not None:
        white = last[True]
    if snap.clock_black is not None:
        black = int(snap.clock_black)
    elif last[False] is not None:
        black = last[False]
    return white, black
