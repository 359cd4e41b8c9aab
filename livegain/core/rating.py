"""From expected scores to rating differences and perceived ratings, with intervals.

Elo's normal model (seed 002, step 5 of Algorithm 1)::

    d = 200 * sqrt(2) * Phi^-1(p)

(Phi^-1 from :class:`statistics.NormalDist`, Wichura's AS 241 algorithm, the
same as ``scipy.special.ndtri`` to 1e-15 and four times faster on one float.)

p = 0 or 1 gives an infinite difference in the paper; here the difference is
clamped to +/-800 (``MAX_DIFFERENCE``) and flagged ``bounded``. Every perceived
rating comes with a 95 % interval; docs/maths.md states the methods and their
assumptions:

* one game or a live game (Algorithm 4): a Wilson score interval on p with an
  effective number of moves ``n_eff = n (1 - rho) / (1 + rho)``, rho the lag-1
  autocorrelation of the per-move scores (clamped to [0, 0.8], taken as 0 under
  10 moves), mapped through d;
* several games of a player: the union of a cluster-robust t-interval with
  games as clusters (no assumption about the moves within a game) and the
  Wilson interval over the games' summed effective sizes; a percentile
  bootstrap over games (explicit seed) is available too;
* head-to-head (Algorithm 1): a Wilson-type interval whose effective size matches
  DeLong's variance of the Mann-Whitney estimate.

Interval ends are clamped at +/-800 like the point values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from livegain.core.elo import PAPER_ENGINE_RATING as PAPER_ENGINE_RATING
from livegain.core.elo import diff_from_expected_normal
from livegain.core.histogram import GainHistogram
from livegain.core.student import t_quantile

#: Difference reported when p is 0 or 1 (or so close that |d| would exceed it).
MAX_DIFFERENCE = 800.0
_NORMAL = NormalDist()
#: Two-sided 95 % normal quantile.
Z95 = _NORMAL.inv_cdf(0.975)
#: Lag-1 autocorrelation is only estimated from this many moves on.
MIN_MOVES_FOR_AUTOCORRELATION = 10
#: Upper clamp of the lag-1 autocorrelation (n_eff >= n/9).
MAX_AUTOCORRELATION = 0.8
#: A player needs this many games for the game-level bootstrap.
MIN_GAMES_FOR_BOOTSTRAP = 5


@dataclass(frozen=True)
class RatingDifference:
    """``value`` in Elo points (clamped), ``bounded`` when clamping happened."""

    value: float
    bounded: bool
    p: float


def rating_difference(p: float) -> RatingDifference:
    """``200 sqrt(2) Phi^-1(p)``, clamped to +/-800 (then ``bounded``)."""
    if math.isnan(p) or not 0.0 <= p <= 1.0:
        raise ValueError(f"expected score must be in [0, 1], got {p!r}")
    if p <= 0.0:
        return RatingDifference(-MAX_DIFFERENCE, True, p)
    if p >= 1.0:
        return RatingDifference(MAX_DIFFERENCE, True, p)
    d = diff_from_expected_normal(p)
    if d > MAX_DIFFERENCE:
        return RatingDifference(MAX_DIFFERENCE, True, p)
    if d < -MAX_DIFFERENCE:
        return RatingDifference(-MAX_DIFFERENCE, True, p)
    return RatingDifference(d, False, p)


def difference(p: float) -> float:
    """The clamped rating difference for expected score ``p``."""
    return rating_difference(p).value


def wilson_interval(p: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion ``p`` observed over ``n`` trials.

    A move's score against the engine is 1, 1/2 or 0; the binomial variance
    p(1-p)/n is an upper bound of the variance of such a mean, so the interval
    is conservative for half-points. ``n`` may be fractional (an effective
    size). ``n <= 0`` gives [0, 1].
    """
    if n <= 0:
        return 0.0, 1.0
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2.0 * n)) / denom
    half = z * math.sqrt(max(p * (1.0 - p), 0.0) / n + z2 / (4.0 * n * n)) / denom
    lo = 0.0 if p <= 0.0 else max(0.0, centre - half)
    hi = 1.0 if p >= 1.0 else min(1.0, centre + half)
    return lo, hi


def lag1_autocorrelation(values: Sequence[float]) -> float:
    """Lag-1 autocorrelation of a sequence (0 when undefined)."""
    n = len(values)
    if n < 2:
        return 0.0
    s1 = float(sum(values))
    s2 = float(sum(v * v for v in values))
    lag = float(sum(values[k] * values[k + 1] for k in range(n - 1)))
    return lag1_from_sums(n, s1, s2, lag, float(values[0]), float(values[-1]))


def lag1_from_sums(n: int, s1: float, s2: float, lag: float, first: float, last: float) -> float:
    """Lag-1 autocorrelation from running sums (sum, sum of squares, sum of
    consecutive products, first and last value); 0 when undefined."""
    if n < 2:
        return 0.0
    mean = s1 / n
    var = s2 / n - mean * mean
    if var <= 1e-12:
        return 0.0
    cov = (lag - mean * (2.0 * s1 - first - last) + (n - 1) * mean * mean) / (n - 1)
    return cov / var


def effective_moves(n: int, rho: float) -> float:
    """``n (1 - rho) / (1 + rho)`` with rho clamped to [0, 0.8] (0 under 10 moves).

    Positive autocorrelation (a run of good or bad moves) means fewer
    independent observations; a negative estimate is not allowed to inflate n.
    """
    if n < MIN_MOVES_FOR_AUTOCORRELATION or math.isnan(rho):
        return float(n)
    r = min(max(rho, 0.0), MAX_AUTOCORRELATION)
    return n * (1.0 - r) / (1.0 + r)


@dataclass(frozen=True)
class PerceivedRating:
    """Algorithm 4: ``rating = r_e + d`` with its 95 % interval [low, high].

    ``moves == 0`` means no information: rating is r_e and the interval spans
    the whole clamp range.
    """

    rating: float
    low: float
    high: float
    difference: float
    expected: float
    moves: int
    bounded: bool


def perceived_from_p(
    p: float,
    moves: int,
    engine_rating: float,
    interval_p: tuple[float, float] | None = None,
    n_eff: float | None = None,
) -> PerceivedRating:
    """A perceived rating from an expected score ``p`` against the engine.

    The interval is ``interval_p`` mapped through d when given, else the
    Wilson interval over ``n_eff`` (default: ``moves``) effective moves.
    """
    if moves <= 0:
        return PerceivedRating(
            rating=engine_rating,
            low=engine_rating - MAX_DIFFERENCE,
            high=engine_rating + MAX_DIFFERENCE,
            difference=0.0,
            expected=0.5,
            moves=0,
            bounded=False,
        )
    rd = rating_difference(p)
    lo_p, hi_p = (
        interval_p
        if interval_p is not None
        else wilson_interval(p, float(moves) if n_eff is None else n_eff)
    )
    lo_p, hi_p = min(lo_p, p), max(hi_p, p)
    return PerceivedRating(
        rating=engine_rating + rd.value,
        low=engine_rating + difference(lo_p),
        high=engine_rating + difference(hi_p),
        difference=rd.value,
        expected=p,
        moves=moves,
        bounded=rd.bounded,
    )


def perceived_rating(
    hist: GainHistogram,
    engine_rating: float,
    engine: GainHistogram | None = None,
    n_eff: float | None = None,
) -> PerceivedRating:
    """Algorithm 4 for one histogram (one game or a live game).

    ``n_eff`` is the effective number of moves for the interval (the ledger
    passes its autocorrelation-corrected value); default: the number of moves,
    i.e. moves treated as independent.
    """
    if hist.n == 0:
        return perceived_from_p(0.5, 0, engine_rating)
    p = hist.expected_score_vs_engine(engine)
    return perceived_from_p(p, hist.n, engine_rating, n_eff=n_eff)


def bootstrap_p_interval(
    game_scores: Sequence[float],
    game_moves: Sequence[int],
    samples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap interval of a pooled score, resampling games.

    ``game_scores[g]`` is the sum of the per-move scores of game g (so the
    pooled p of a resample is sum(scores)/sum(moves)); games, not moves, are
    drawn with replacement, so dependence between the moves of a game is kept.
    Deterministic for a given ``seed``.
    """
    if len(game_scores) != len(game_moves) or not game_scores:
        raise ValueError("one score sum and one move count per game, at least one game")
    scores = np.asarray(game_scores, dtype=float)
    moves = np.asarray(game_moves, dtype=float)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(scores), size=(samples, len(scores)))
    tot_moves = moves[idx].sum(axis=1)
    tot_scores = scores[idx].sum(axis=1)
    ok = tot_moves > 0
    if not ok.any():
        return 0.0, 1.0
    ps = tot_scores[ok] / tot_moves[ok]
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(ps, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def cluster_p_interval(
    game_scores: Sequence[float], game_moves: Sequence[int], level: float = 0.95
) -> tuple[float, float]:
    """Cluster-robust t-interval of a pooled score, games as clusters.

    ``p = sum(scores) / sum(moves)`` (a ratio estimator). Its variance is
    estimated from the games' residuals ``s_g - p n_g``, with the small-sample
    factor G/(G-1), and the quantile is Student's t with G-1 degrees of
    freedom: ``var = G/(G-1) * sum_g (s_g - p n_g)^2 / (sum_g n_g)^2``. Moves
    within a game may depend on each other in any way; games are assumed
    independent. Needs at least two games with moves.
    """
    pairs = [(float(s), int(n)) for s, n in zip(game_scores, game_moves, strict=True) if n > 0]
    g = len(pairs)
    if g < 2:
        raise ValueError("a cluster interval needs at least two games with moves")
    total = sum(n for _, n in pairs)
    p = sum(s for s, _ in pairs) / total
    var = g / (g - 1) * sum((s - p * n) ** 2 for s, n in pairs) / (total * total)
    q = t_quantile(g - 1, 0.5 + level / 2.0)
    half = q * math.sqrt(var)
    return max(0.0, p - half), min(1.0, p + half)


@dataclass(frozen=True)
class HeadToHead:
    """Algorithm 1 between a and b: expected score of a, difference in a's favour."""

    expected: float
    difference: float
    low: float
    high: float
    bounded: bool
    moves_a: int
    moves_b: int

    @property
    def expected_other(self) -> float:
        return 1.0 - self.expected


def head_to_head(a: GainHistogram, b: GainHistogram) -> HeadToHead:
    """Algorithm 1 with a 95 % interval.

    The interval is a Wilson score interval with the effective size
    ``n_eff = p (1 - p) / var`` where var is DeLong's variance of the
    Mann-Whitney estimate; when that is undefined (p = 0 or 1, or no spread)
    ``n_eff = min(n_a, n_b)``. An empty side gives p = 1/2 and the full range.
    """
    if a.n == 0 or b.n == 0:
        return HeadToHead(0.5, 0.0, -MAX_DIFFERENCE, MAX_DIFFERENCE, False, a.n, b.n)
    mw = a.mann_whitney(b)
    p = mw.p
    if mw.variance > 0.0 and 0.0 < p < 1.0:
        n_eff = p * (1.0 - p) / mw.variance
    else:
        n_eff = float(min(a.n, b.n))
    lo_p, hi_p = wilson_interval(p, n_eff)
    lo_p, hi_p = min(lo_p, p), max(hi_p, p)
    rd = rating_difference(p)
    return HeadToHead(
        expected=p,
        difference=rd.value,
        low=difference(lo_p),
        high=difference(hi_p),
        bounded=rd.bounded,
        moves_a=a.n,
        moves_b=b.n,
    )
