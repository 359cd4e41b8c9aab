"""Per-game win/draw/loss and exact match odds (seed 000, done right).

Per game (seed 000): with expected score ``E`` (logistic curve by default) and
draw probability ``D``, ``E = P(win) + D/2``, so ``P(win) = E - D/2`` and
``P(loss) = 1 - E - D/2``. When ``D/2`` exceeds ``E`` (or ``1 - E``) that
would make a probability negative; the draw rate is then lowered to the
largest value compatible with ``E`` (``D = 2*min(E, 1-E)``): the expected
score is kept and the weaker side's winning chance is 0.

Match: each remaining game is independent with the same W/D/L; the
distribution of the final score difference is computed exactly by dynamic
programming (repeated convolution of the per-game distribution), which is the
multinomial ``n!/(w! d! l!) p^w q^d r^l`` summed by final difference. Seed 000
prints a faulty coefficient (``C(n, N_M) * C(2 N_F, N_F)`` instead of
``C(n, N_M) * C(n - N_M, N_F)``) but its published 42.4 % / 18.1 % / 39.5 % are
what the correct multinomial gives.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from livegain.core.elo import Model, expected

_TOL = 1e-9


@dataclass(frozen=True)
class GameOdds:
    """One game's outcome probabilities from player A's point of view."""

    win: float
    draw: float
    loss: float

    def __post_init__(self) -> None:
        for name, v in (("win", self.win), ("draw", self.draw), ("loss", self.loss)):
            if math.isnan(v) or v < -_TOL or v > 1.0 + _TOL:
                raise ValueError(f"{name} probability {v} is not in [0, 1]")
        total = self.win + self.draw + self.loss
        if abs(total - 1.0) > 1e-6:
            raise ValueError(f"win + draw + loss = {total}, expected 1")

    @property
    def expected_score(self) -> float:
        return self.win + 0.5 * self.draw

    def swapped(self) -> GameOdds:
        """The same game from the opponent's point of view."""
        return GameOdds(self.loss, self.draw, self.win)


@dataclass(frozen=True)
class MatchOdds:
    """Probabilities that the match ends won by A, drawn, won by B."""

    a_wins: float
    draw: float
    b_wins: float


def game_probabilities(rating_diff: float, draw_rate: float, model: Model = "logistic") -> GameOdds:
    """W/D/L for a player ``rating_diff`` points above the opponent, with draw rate ``draw_rate``.

    If ``draw_rate / 2`` exceeds the expected score of either side, the draw
    rate is lowered to ``2*min(E, 1-E)`` (the expected score ``E`` is kept).
    """
    if math.isnan(draw_rate) or not (0.0 <= draw_rate <= 1.0):
        raise ValueError(f"draw rate must lie in [0, 1], got {draw_rate}")
    e = expected(rating_diff, model)
    d = min(draw_rate, 2.0 * min(e, 1.0 - e))
    win = max(0.0, e - d / 2.0)
    loss = max(0.0, 1.0 - e - d / 2.0)
    return GameOdds(win, d, loss)


def _step(dist: npt.NDArray[np.float64], game: GameOdds) -> npt.NDArray[np.float64]:
    """Convolve a distribution of (A wins - B wins) with one more game."""
    out = np.zeros(dist.size + 2, dtype=np.float64)
    out[2:] += dist * game.win
    out[1:-1] += dist * game.draw
    out[:-2] += dist * game.loss
    return out


def difference_distribution(
    game: GameOdds, games_left: int, current: GameOdds | None = None
) -> tuple[int, npt.NDArray[np.float64]]:
    """Distribution of (A's points - B's points) gained over the games left.

    Returns ``(offset, probs)``: ``probs[i]`` is the probability that the
    difference is ``i - offset`` (an integer: a win is +1, a draw 0, a loss -1).
    ``current`` (if given) is the in-progress game's W/D/L and counts as one of
    ``games_left``.
    """
    if games_left < 0:
        raise ValueError(f"games left must be >= 0, got {games_left}")
    if current is not None and games_left < 1:
        raise ValueError("a game in progress needs at least one game left")
    dist = np.ones(1, dtype=np.float64)
    remaining = games_left
    if current is not None:
        dist = _step(dist, current)
        remaining -= 1
    for _ in range(remaining):
        dist = _step(dist, game)
    return games_left, dist


def match_odds_games(
    games: Sequence[GameOdds], score_a: float = 0.0, score_b: float = 0.0
) -> MatchOdds:
    """Exact probabilities that A wins, the match is drawn, B wins, when each
    game left has its own W/D/L (A's view), e.g. as the colours alternate
    under a model with a White advantage. ``games`` are the games still to be
    played, a game in progress first; ``score_a``/``score_b`` the points so
    far. With every game the same this is :func:`match_odds`."""
    if not games:
        return _final(np.ones(1, dtype=np.float64), 0, score_a, score_b)
    dist = np.ones(1, dtype=np.float64)
    for g in games:
        dist = _step(dist, g)
    return _final(dist, len(games), score_a, score_b)


def _final(dist: npt.NDArray[np.float64], offset: int, score_a: float, score_b: float) -> MatchOdds:
    """The match's outcome from the distribution of (A's wins - B's wins) over
    the games left (``dist[i]``: a difference of ``i - offset``) and the score."""
    for name, s in (("score_a", score_a), ("score_b", score_b)):
        if s < 0 or (2 * s) != math.floor(2 * s):
            raise ValueError(f"{name} must be a non-negative multiple of 0.5, got {s}")
    lead2 = round(2 * (score_a - score_b))  # current lead in half points
    idx = np.arange(dist.size)
    final2 = lead2 + 2 * (idx - offset)
    a = float(dist[final2 > 0].sum())
    d = float(dist[final2 == 0].sum())
    b = float(dist[final2 < 0].sum())
    total = a + d + b
    return MatchOdds(a / total, d / total, b / total)


def match_odds(
    game: GameOdds,
    games_left: int,
    score_a: float = 0.0,
    score_b: float = 0.0,
    current: GameOdds | None = None,
) -> MatchOdds:
    """Exact probabilities that A wins, the match is drawn, B wins.

    ``score_a``/``score_b``: points so far (multiples of 1/2); ``games_left``:
    games still to be played, counting the in-progress game whose W/D/L is
    ``current`` (if any); every other game uses ``game``.
    """
    offset, dist = difference_distribution(game, games_left, current)
    return _final(dist, offset, score_a, score_b)
