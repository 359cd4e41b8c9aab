"""The producer's ranking: which board deserves the camera now.

Pure: no I/O, no clock (the caller passes how long ago a game ended). The
rule (docs/producer.md) adds named terms, each a number of "points":

- :func:`swing_term`: the recent swing of the shown winning chances: the
  range (max - min) of White's expected score ``E = (win + draw/2) / 1000``
  of the shown W/D/L over the last :data:`RECENT_PLIES` evaluated plies and
  the current position, times :data:`SWING_WEIGHT`. A blunder that turns a
  level game (0.5) into a lost one (0.05) is worth 0.45 x 4 = 1.8.
- :func:`decisive_term`: a decisive result in the making: the game is live
  and ``E`` is beyond :data:`DECISIVE` (0.8, or 0.2 for Black):
  :data:`DECISIVE_POINTS`.
- :func:`time_trouble_term`: :data:`TIME_TROUBLE_POINTS` for each player in
  time trouble (core.timeuse) in a live game.
- :func:`standings_term`: how much the game matters for the event: the
  larger of its two players' chances of first place (the standings' win
  odds, 0..1), times :data:`STANDINGS_WEIGHT`, for a live game.
- :func:`ended_term`: the game just ended (within :data:`JUST_ENDED_S`
  seconds): :data:`JUST_ENDED_POINTS`.

A finished game gets only its ended term (a game over is no reason to look
at it after that). Boards are ranked by total points, ties by board id; the
reason shown is the term that gave most points, in words
(:func:`reason_text`); a board with no points has no reason ("quiet").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "DECISIVE",
    "DECISIVE_POINTS",
    "JUST_ENDED_POINTS",
    "JUST_ENDED_S",
    "RECENT_PLIES",
    "STANDINGS_WEIGHT",
    "SWING_WEIGHT",
    "TIME_TROUBLE_POINTS",
    "BoardLook",
    "Ranked",
    "Term",
    "TermName",
    "decisive_term",
    "ended_term",
    "rank_boards",
    "reason_text",
    "recent_swing",
    "score_board",
    "standings_term",
    "swing_term",
    "time_trouble_term",
]

RECENT_PLIES = 4
"""Evaluated plies (two moves each) a swing counts in, before the current position."""
SWING_WEIGHT = 4.0
DECISIVE = 0.8
DECISIVE_POINTS = 1.0
TIME_TROUBLE_POINTS = 1.0
STANDINGS_WEIGHT = 1.5
JUST_ENDED_S = 120.0
JUST_ENDED_POINTS = 2.0

TermName = Literal["swing", "decisive", "time-trouble", "standings", "just-ended"]


@dataclass(frozen=True)
class BoardLook:
    """What the ranking sees of one board.

    ``chances``: White's expected score (0..1) of the shown W/D/L at each
    evaluated ply, in ply order, the current position's last (only the recent
    ones matter); ``white_first`` / ``black_first``: each player's chance of
    first place in his event (None: no standings odds); ``ended_ago``: seconds
    since the game was seen to end (None: live, or not known when)."""

    board_id: str
    live: bool
    chances: Sequence[float] = ()
    white_time_trouble: bool = False
    black_time_trouble: bool = False
    white_clock: int | None = None
    black_clock: int | None = None
    white_first: float | None = None
    black_first: float | None = None
    white: str = "White"
    black: str = "Black"
    result: str = "*"
    ended_ago: float | None = None


@dataclass(frozen=True)
class Term:
    name: TermName
    points: float
    reason: str


@dataclass(frozen=True)
class Ranked:
    board_id: str
    rank: int
    score: float
    reason: str
    terms: tuple[Term, ...] = field(default_factory=tuple)


def recent_swing(chances: Sequence[float], plies: int = RECENT_PLIES) -> float:
    """The range of White's expected score over the last ``plies`` + 1 values."""
    recent = list(chances)[-(plies + 1) :]
    return max(recent) - min(recent) if len(recent) >= 2 else 0.0


def _pct(x: float) -> str:
    return f"{round(100 * x)} %"


def swing_term(b: BoardLook) -> Term | None:
    if not b.live:
        return None
    swing = recent_swing(b.chances)
    if swing <= 0:
        return None
    recent = list(b.chances)[-(RECENT_PLIES + 1) :]
    text = f"swing: White's chances {_pct(recent[0])} → {_pct(recent[-1])} in the last moves"
    return Term("swing", SWING_WEIGHT * swing, text)


def decisive_term(b: BoardLook) -> Term | None:
    if not b.live or not b.chances:
        return None
    e = b.chances[-1]
    if e > DECISIVE:
        return Term("decisive", DECISIVE_POINTS, f"decisive: {b.white} wins {_pct(e)}")
    if e < 1.0 - DECISIVE:
        return Term("decisive", DECISIVE_POINTS, f"decisive: {b.black} wins {_pct(1.0 - e)}")
    return None


def _clock(s: int | None) -> str:
    if s is None:
        return ""
    s = max(0, s)
    return f" ({s // 60}:{s % 60:02d} left)"


def time_trouble_term(b: BoardLook) -> Term | None:
    if not b.live:
        return None
    who = [
        f"{name}{_clock(clock)}"
        for name, trouble, clock in (
            (b.white, b.white_time_trouble, b.white_clock),
            (b.black, b.black_time_trouble, b.black_clock),
        )
        if trouble
    ]
    if not who:
        return None
    return Term("time-trouble", TIME_TROUBLE_POINTS * len(who), "time trouble: " + ", ".join(who))


def standings_term(b: BoardLook) -> Term | None:
    if not b.live:
        return None
    odds = [(p, n) for p, n in ((b.white_first, b.white), (b.black_first, b.black)) if p]
    if not odds:
        return None
    p, name = max(odds)
    return Term("standings", STANDINGS_WEIGHT * p, f"standings: {name} {_pct(p)} to finish first")


def ended_term(b: BoardLook) -> Term | None:
    if b.live or b.ended_ago is None or b.ended_ago > JUST_ENDED_S:
        return None
    return Term("just-ended", JUST_ENDED_POINTS, f"just ended: {b.result}")


TERMS = (swing_term, decisive_term, time_trouble_term, standings_term, ended_term)


def score_board(b: BoardLook) -> tuple[float, tuple[Term, ...]]:
    """The board's points and its terms (largest first)."""
    terms = [t for t in (f(b) for f in TERMS) if t is not None and t.points > 0]
    terms.sort(key=lambda t: -t.points)
    return sum(t.points for t in terms), tuple(terms)


def reason_text(terms: Sequence[Term]) -> str:
    """The reason shown: the term that gave most points ("quiet" when none)."""
    return terms[0].reason if terms else "quiet"


def rank_boards(boards: Iterable[BoardLook]) -> list[Ranked]:
    """Every board, most deserving first (ties: by board id), ranks from 1."""
    scored = [(b.board_id, *score_board(b)) for b in boards]
    scored.sort(key=lambda s: (-s[1], s[0]))
    return [
        Ranked(bid, i + 1, round(score, 3), reason_text(terms), terms)
        for i, (bid, score, terms) in enumerate(scored)
    ]
