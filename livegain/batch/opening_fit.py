"""Fitting an opening table (:mod:`livegain.core.opening`) on rated games.

Each rated player-game of the calibration part (:func:`~livegain.batch.validity.split_part`)
from the standard start contributes its rating to every prefix of its
opening's key chain (:func:`~livegain.core.opening.opening_keys`). A prefix's
estimate is its games' mean rating shrunk toward the estimate of the prefix
one ply shorter, ``(sum + m * shorter) / (n + m)``, from the side's mean. The
weight ``m`` is chosen by a cross-validation on the calibration part (five
folds of split groups, as the perceived model's fit folds them): each
player-game's estimate from the tables of the other folds, the mean absolute
error over a grid of ``m``. The table's ``sd`` is the standard deviation of
the ratings around those cross-fitted estimates (so it never holds a game's
own rating). The table keeps every prefix with ``min_count`` games or more
(a set closed under shorter prefixes).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import chess
import chess.pgn
import numpy as np
import numpy.typing as npt

from livegain.batch.validity import CROSS_FOLDS, cross_fold, split_group, split_part
from livegain.core.opening import MIN_COUNT, OpeningTable, opening_keys
from livegain.core.snapshot import official_rating

#: The shrinkage weights the cross-validation tries.
M_GRID: tuple[float, ...] = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0)

FloatArray = npt.NDArray[np.float64]
#: ``key -> [games, sum of their ratings]``
Counts = dict[str, list[float]]


@dataclass(frozen=True)
class OpeningGame:
    """One rated player-game's opening: the rating, its key chain (the
    side's root first) and its cross-validation fold."""

    rating: float
    keys: tuple[str, ...]
    fold: int


def opening_games(
    games: Iterable[chess.pgn.Game], plies: int, part: str = "calibration"
) -> list[OpeningGame]:
    """The rated player-games of ``part`` from the standard start, with the
    key chains of their first ``plies`` plies."""
    out: list[OpeningGame] = []
    for game in games:
        headers = game.headers
        start = game.board()  # the FEN/SetUp and Variant tags read as python-chess reads them
        if start.fen() != chess.STARTING_FEN or start.chess960:
            continue
        if split_part(dict(headers)) != part:
            continue
        moves: list[str] = []
        for move in game.mainline_moves():
            if len(moves) >= plies:
                break
            moves.append(move.uci())
        group = cross_fold(split_group(dict(headers)))
        for white, tag in ((True, "WhiteElo"), (False, "BlackElo")):
            rating = official_rating(headers.get(tag))
            if rating is not None:
                keys = opening_keys(white, True, moves, plies)
                out.append(OpeningGame(float(rating), tuple(keys), group))
    return out


def counts(rows: Iterable[OpeningGame]) -> Counts:
    """Games and the sum of their ratings through each prefix."""
    t: Counts = defaultdict(lambda: [0.0, 0.0])
    for r in rows:
        for key in r.keys:
            cell = t[key]
            cell[0] += 1.0
            cell[1] += r.rating
    return dict(t)


def backoff(
    keys: Sequence[str], stats: Callable[[str], tuple[float, float]], m: float, fallback: float
) -> float:
    """A chain's estimate: each prefix's mean shrunk toward the estimate one
    ply shorter, from the side's mean (``fallback`` when the side has no
    game); a prefix with no game ends the chain."""
    n, s = stats(keys[0])
    est = s / n if n > 0 else fallback
    for key in keys[1:]:
        n, s = stats(key)
        if n <= 0:
            break
        est = (s + m * est) / (n + m)
    return est


def estimate(keys: Sequence[str], table: Counts, m: float, fallback: float) -> float:
    """A chain's estimate from the counts of ``table`` (:func:`backoff`)."""
    empty = [0.0, 0.0]

    def stats(key: str) -> tuple[float, float]:
        a = table.get(key, empty)
        return a[0], a[1]

    return backoff(keys, stats, m, fallback)


def cross_fitted(rows: Sequence[OpeningGame], m: float, fallback: float) -> FloatArray:
    """Each player-game's estimate from the other folds' games."""
    total = counts(rows)
    folds = [counts(r for r in rows if r.fold == f) for f in range(CROSS_FOLDS)]
    out = np.empty(len(rows))
    empty = [0.0, 0.0]
    for i, r in enumerate(rows):
        own = folds[r.fold]

        def stats(key: str, own: Counts = own) -> tuple[float, float]:
            a, b = total.get(key, empty), own.get(key, empty)
            return a[0] - b[0], a[1] - b[1]

        out[i] = backoff(r.keys, stats, m, fallback)
    return out


@dataclass(frozen=True)
class OpeningFit:
    """A fitted table with how it was chosen: the cross-validated mean
    absolute error for each ``m`` tried, and the player-games it was fitted on."""

    table: OpeningTable
    cv: tuple[tuple[float, float], ...]
    player_games: int


def fit_opening_table(
    rows: Sequence[OpeningGame],
    plies: int,
    name: str,
    scale: str,
    provenance: dict[str, str] | None = None,
    min_count: int = MIN_COUNT,
    m_grid: Sequence[float] = M_GRID,
) -> OpeningFit:
    """Fit a table on ``rows`` (module docstring)."""
    if not rows:
        raise ValueError("no rated player-game from the standard start to fit an opening table on")
    y = np.array([r.rating for r in rows])
    fallback = float(np.mean(y))
    cv: list[tuple[float, float]] = []
    best: tuple[float, float, FloatArray] | None = None
    for m in m_grid:
        oof = cross_fitted(rows, m, fallback)
        mae = float(np.abs(oof - y).mean())
        cv.append((m, mae))
        if best is None or mae < best[1]:
            best = (m, mae, oof)
    assert best is not None
    m, _mae, oof = best
    total = counts(rows)
    estimates: dict[str, float] = {}
    for r in rows:
        for j, key in enumerate(r.keys):
            if key in estimates:
                continue
            if j > 0 and total[key][0] < min_count:
                break
            estimates[key] = estimate(r.keys[: j + 1], total, m, fallback)
    for root in ("w|", "b|"):
        estimates.setdefault(root, fallback)
    table = OpeningTable(
        name=name,
        scale=scale,
        plies=plies,
        m=m,
        sd=float(np.std(y - oof)),
        estimates=estimates,
        provenance=dict(provenance or {}),
    )
    return OpeningFit(table, tuple(cv), len(rows))
