"""Key moments of a game: a move that swings the shown chances, a game's end.

Pure: no I/O, no clock. The rule (docs/maths.md, "Key moments") reads the
W/D/L the board shows (the human model's when it has one) as White's
expected score ``E = (win + draw / 2) / 1000`` and looks at each move from
its player's side (``e = E`` for White, ``1 - E`` for Black), before and
after the move. The first predicate that holds names the moment:

- :func:`is_turnaround`: the mover was better (``e >= 0.60``) and is now
  worse (``e <= 0.40``): the favourite changed;
- :func:`is_missed_win`: the mover was winning (``e >= 0.75``) and is no
  longer (``e < 0.60``);
- :func:`is_blunder`: the mover's expected score fell by at least 0.15
  (lichess's blunder threshold: a drop of 0.3 in its [-1, 1] winning
  chances);
- :func:`is_game_end`: the result went from ``*`` to a result.

Apart from the shown chances, :func:`is_time_trouble` names the move after
which its player's clock first fell under the time-trouble threshold
(core.timeuse, docs/maths.md "Time use"): once per player and game, with
the clock after the move.

Each moment carries the board, the ply, the move (SAN), White's expected
score before and after and their difference (``swing``, White's view), and
the engine's preferred move in the position before the move (the ``best`` of
that position's evaluation, as SAN). :class:`MomentTracker` turns a board's
updates into moments, each (board, ply, kind) once while it stands (a
correction that removes the move forgets it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import chess

from livegain.core.timeuse import in_time_trouble
from livegain.core.wdl import Wdl

if TYPE_CHECKING:
    from livegain.core.board.board import BoardGame
    from livegain.core.board.updates import BoardUpdate

MomentKind = Literal["turnaround", "missed-win", "blunder", "game-end", "time-trouble"]

BLUNDER_DROP = 0.15
WINNING = 0.75
NOT_WINNING = 0.60
BETTER = 0.60
WORSE = 0.40


def expected_score(wdl: Wdl) -> float:
    """White's expected score (0..1) of a per-mille W/D/L."""
    w, d, lo = wdl
    total = w + d + lo
    return (w + d / 2.0) / total if total > 0 else 0.5


def is_blunder(before: float, after: float) -> bool:
    """The mover's expected score (his view) fell by at least :data:`BLUNDER_DROP`."""
    return before - after >= BLUNDER_DROP - 1e-12


def is_missed_win(before: float, after: float) -> bool:
    """The mover was winning and is no longer."""
    return before >= WINNING and after < NOT_WINNING


def is_turnaround(before: float, after: float) -> bool:
    """The mover was the favourite and now his opponent is."""
    return before >= BETTER and after <= WORSE


def is_game_end(result_before: str | None, result_after: str) -> bool:
    """The game was in progress (or not seen yet as over) and now has a result."""
    return result_before == "*" and result_after != "*"


def is_time_trouble(before: int | None, after: int | None, threshold: int | None) -> bool:
    """The mover's clock was not under ``threshold`` after his previous move (or
    unknown: his first move) and is under it after this one."""
    return in_time_trouble(after, threshold) and not in_time_trouble(before, threshold)


def is_engine_move(played: str, best: str | None) -> bool:
    """The move played is the engine's own choice in the position before it:
    never a mistake, whatever the next evaluation says (a search at a fixed
    depth can see more after the move than before it)."""
    return best is not None and played == best


def move_kind(before: float, after: float) -> MomentKind | None:
    """The moment a move with the mover's expected score ``before`` -> ``after`` makes."""
    if is_turnaround(before, after):
        return "turnaround"
    if is_missed_win(before, after):
        return "missed-win"
    if is_blunder(before, after):
        return "blunder"
    return None


@dataclass(frozen=True)
class Moment:
    """One key moment. ``before``/``after``/``swing``: White's expected score
    (0..1) and its change; None for a game's end without evaluations."""

    board_id: str
    kind: MomentKind
    ply: int
    move: str | None
    color: Literal["white", "black"] | None
    before: float | None = None
    after: float | None = None
    swing: float | None = None
    best: str | None = None
    result: str | None = None
    clock: int | None = None


def san_of(uci: str | None, fen: str, chess960: bool = False) -> str | None:
    """A UCI move as SAN in ``fen`` (None when absent or not legal there)."""
    if not uci:
        return None
    try:
        board = chess.Board(fen, chess960=chess960)
        return board.san(board.parse_uci(uci))
    except ValueError:
        return None


def move_moment(game: BoardGame, ply: int) -> Moment | None:
    """The moment move ``ply`` of ``game`` makes, if any (both positions evaluated)."""
    if ply < 1 or ply > game.plies:
        return None
    w0, w1 = game.wdl_at(ply - 1), game.wdl_at(ply)
    if w0 is None or w1 is None:
        return None
    e0, e1 = expected_score(w0), expected_score(w1)
    info = game.ply_info(ply)
    ev = game.eval_at(ply - 1)
    if is_engine_move(info.uci, None if ev is None else ev.best):
        return None
    white = info.color == "white"
    kind = move_kind(e0, e1) if white else move_kind(1.0 - e0, 1.0 - e1)
    if kind is None:
        return None
    return Moment(
        board_id=game.board_id,
        kind=kind,
        ply=ply,
        move=info.san,
        color=info.color,
        before=round(e0, 3),
        after=round(e1, 3),
        swing=round(e1 - e0, 3),
        best=None if ev is None else san_of(ev.best, game.fen_at(ply - 1), game.chess960),
    )


def time_trouble_moment(game: BoardGame, ply: int) -> Moment | None:
    """The time-trouble moment move ``ply`` of ``game`` makes, if any."""
    threshold = game.time_trouble_below
    if ply < 1 or ply > game.plies or threshold is None:
        return None
    info = game.ply_info(ply)
    if not in_time_trouble(info.clock, threshold):  # the common case: cheap
        return None
    before = game.ply_info(ply - 2).clock if ply > 2 else None
    if not is_time_trouble(before, info.clock, game.time_trouble_below):
        return None
    return Moment(
        board_id=game.board_id,
        kind="time-trouble",
        ply=ply,
        move=info.san,
        color=info.color,
        clock=info.clock,
    )


def end_moment(game: BoardGame) -> Moment:
    """The end of ``game``: its last move, the result and the last evaluated swing."""
    ply = game.plies
    info = game.ply_info(ply) if ply else None
    w0, w1 = (game.wdl_at(ply - 1), game.wdl_at(ply)) if ply else (None, None)
    e0 = None if w0 is None else round(expected_score(w0), 3)
    e1 = None if w1 is None else round(expected_score(w1), 3)
    return Moment(
        board_id=game.board_id,
        kind="game-end",
        ply=ply,
        move=None if info is None else info.san,
        color=None if info is None else info.color,
        before=e0,
        after=e1,
        swing=None if e0 is None or e1 is None else round(e1 - e0, 3),
        result=game.result,
    )


class MomentTracker:
    """Turns boards' updates into moments, each (board, ply, kind) once."""

    def __init__(self) -> None:
        self._seen: dict[str, set[tuple[int, MomentKind]]] = {}
        self._result: dict[str, str] = {}

    def observe(self, game: BoardGame, updates: Iterable[BoardUpdate]) -> list[Moment]:
        """The moments ``updates`` (just applied to ``game``) make."""
        bid = game.board_id
        seen = self._seen.setdefault(bid, set())
        out: list[Moment] = []
        for u in updates:
            if u.truncate_to is not None:
                t = u.truncate_to
                seen.difference_update({k for k in seen if k[0] > t})
            if u.kind == "ply" and u.ply is not None:
                m = move_moment(game, u.ply.ply)
                if m is not None and (m.ply, m.kind) not in seen:
                    seen.add((m.ply, m.kind))
                    out.append(m)
            if u.ply is not None:
                tt = time_trouble_moment(game, u.ply.ply)
                # Once per player and game: plies of one parity are one player's.
                if tt is not None and not any(
                    k == "time-trouble" and p % 2 == tt.ply % 2 for p, k in seen
                ):
                    seen.add((tt.ply, tt.kind))
                    out.append(tt)
        before = self._result.get(bid)
        self._result[bid] = game.result
        if is_game_end(before, game.result) and (game.plies, "game-end") not in seen:
            seen.add((game.plies, "game-end"))
            out.append(end_moment(game))
        return out

    def forget(self, board_id: str) -> None:
        self._seen.pop(board_id, None)
        self._result.pop(board_id, None)
