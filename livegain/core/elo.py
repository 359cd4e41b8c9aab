"""Elo mathematics: expected scores, their inverses, FIDE K-factor, rating change, performance.

Four models link a rating difference ``d`` (player minus opponent) to an
expected score ``x`` (points per game, a draw counting 1/2):

``logistic``
    ``x = 1 / (1 + 10^(-d/400))`` (FIDE's and USCF's curve; seeds 000, 003).
``normal``
    Elo's own model: each player's performance is normal with sigma 200, so the
    difference of two performances has sigma ``200*sqrt(2)`` and
    ``x = Phi(d / (200*sqrt(2)))``; its inverse is ``d = 400*erfinv(2x - 1)``
    (seed 004, eqs. 4-5).
``log``
    Seed 004's logarithmic formula (eq. 2): ``d = 400*log10(x/(1-x))``. It is
    *exactly* the inverse of the logistic curve, so ``log`` and ``logistic``
    give identical numbers; both names are kept because the seed uses both.
``log2``
    Seed 004's second logarithmic formula (eq. 8): ``d = 100*sqrt(pi)*ln(x/(1-x))``,
    matched to the normal model's slope at ``x = 1/2``; inverse
    ``x = 1 / (1 + exp(-d / (100*sqrt(pi))))``.

Everything here is pure (no I/O, no clock).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal, get_args

Model = Literal["logistic", "normal", "log", "log2"]
MODELS: tuple[Model, ...] = get_args(Model)

#: The paper's Houdini 1.5a depth 20 strength (seed 002, Table 4): r_e of Algorithm 4.
PAPER_ENGINE_RATING = 2860.0

SIGMA = 200.0
"""Elo's standard deviation of one player's performance."""
DIFF_SIGMA = SIGMA * math.sqrt(2.0)
"""Standard deviation of the difference of two performances (about 282.8)."""
_NORMAL = NormalDist()
LOG2_SCALE = 100.0 * math.sqrt(math.pi)
"""Scale of seed 004's second logarithmic formula (about 177.2; 408.1 in log10 units)."""

CAP_DIFFERENCE = 400.0
"""FIDE's 400-point rule: larger differences count as 400 (players rated below 2650)."""
CAP_EXEMPT_FROM = 2650.0
"""Since 1 October 2025 the 400-point rule does not apply to players rated 2650 and above."""
K_PERIOD_LIMIT = 700
"""FIDE: if K * n exceeds 700 in a rating period, K is the largest whole number with K*n <= 700."""


# --------------------------------------------------------------------------- expected scores


def expected_logistic(diff: float) -> float:
    """Expected score of a player ``diff`` points above the opponent: ``1/(1+10^(-d/400))``."""
    # 10^(-d/400) overflows for d < -123000; the limit is 0 there.
    exponent = -diff / 400.0
    if exponent > 300.0:
        return 0.0
    return 1.0 / (1.0 + math.pow(10.0, exponent))


def expected_normal(diff: float) -> float:
    """Elo's normal model: ``Phi(d / (200*sqrt 2)) = (1 + erf(d/400)) / 2``."""
    return 0.5 * (1.0 + math.erf(diff / (2.0 * SIGMA)))


def expected_log(diff: float) -> float:
    """Inverse of seed 004's eq. 2; identical to :func:`expected_logistic`."""
    return expected_logistic(diff)


def expected_log2(diff: float) -> float:
    """Inverse of seed 004's eq. 8: ``1 / (1 + exp(-d / (100*sqrt(pi))))``."""
    z = -diff / LOG2_SCALE
    if z > 700.0:
        return 0.0
    return 1.0 / (1.0 + math.exp(z))


def expected(diff: float, model: Model = "logistic") -> float:
    """Expected score for a rating difference under ``model``."""
    if model == "logistic":
        return expected_logistic(diff)
    if model == "normal":
        return expected_normal(diff)
    if model == "log":
        return expected_log(diff)
    if model == "log2":
        return expected_log2(diff)
    raise ValueError(f"unknown model {model!r}; expected one of {', '.join(MODELS)}")


# --------------------------------------------------------------------------- inverses


def _check_fraction(x: float) -> None:
    if not (0.0 < x < 1.0) or math.isnan(x):
        raise ValueError(f"fractional score must lie strictly between 0 and 1, got {x}")


def diff_from_expected_logistic(x: float) -> float:
    """Rating difference giving expected score ``x`` on the logistic curve."""
    _check_fraction(x)
    return 400.0 * math.log10(x / (1.0 - x))


def diff_from_expected_normal(x: float) -> float:
    """Elo's normal model inverted: ``400*erfinv(2x-1) = 200*sqrt2*Phi^-1(x)`` (seed 004, eq. 5)."""
    _check_fraction(x)
    return DIFF_SIGMA * _NORMAL.inv_cdf(x)


def diff_from_expected_log(x: float) -> float:
    """Seed 004's logarithmic formula (eq. 2): ``400*log10(x/(1-x))``."""
    return diff_from_expected_logistic(x)


def diff_from_expected_log2(x: float) -> float:
    """Seed 004's second logarithmic formula (eq. 8): ``100*sqrt(pi)*ln(x/(1-x))``."""
    _check_fraction(x)
    return LOG2_SCALE * math.log(x / (1.0 - x))


def diff_from_expected(x: float, model: Model = "logistic") -> float:
    """Rating difference for fractional score ``x`` under ``model`` (ValueError at 0 or 1)."""
    if model == "logistic":
        return diff_from_expected_logistic(x)
    if model == "normal":
        return diff_from_expected_normal(x)
    if model == "log":
        return diff_from_expected_log(x)
    if model == "log2":
        return diff_from_expected_log2(x)
    raise ValueError(f"unknown model {model!r}; expected one of {', '.join(MODELS)}")


# --------------------------------------------------------------------------- FIDE K-factor


def fide_k(
    rating: float,
    *,
    games_played: int,
    junior: bool = False,
    ever_2400: bool = False,
    games_in_period: int | None = None,
) -> int:
    """FIDE's development coefficient K (standard rating regulations since 1 July 2014).

    - K = 40 for a player new to the rating list until they have completed
      events with at least 30 games (``games_played < 30``);
    - K = 10 once the player's published rating has reached 2400 (permanent,
      even if it drops again: pass ``ever_2400=True``; a current ``rating >= 2400``
      counts as having reached it);
    - K = 40 for juniors (under 18) as long as their rating is under 2300;
    - K = 20 otherwise (rating under 2400).

    Where rules overlap, they are applied in that order (a new player gets 40
    whatever the rating; a junior who has once reached 2400 keeps 10).

    ``games_in_period``: number of rated games ``n`` in the rating period; if
    ``K * n > 700``, K becomes the largest whole number with ``K * n <= 700``.
    """
    if games_played < 0:
        raise ValueError(f"games_played must be >= 0, got {games_played}")
    if games_played < 30:
        k = 40
    elif ever_2400 or rating >= 2400:
        k = 10
    elif junior and rating < 2300:
        k = 40
    else:
        k = 20
    if games_in_period is not None:
        if games_in_period < 0:
            raise ValueError(f"games_in_period must be >= 0, got {games_in_period}")
        if games_in_period > 0 and k * games_in_period > K_PERIOD_LIMIT:
            k = K_PERIOD_LIMIT // games_in_period
    return k


# --------------------------------------------------------------------------- rating change


def capped_difference(rating: float, opponent: float, *, cap: bool = True) -> float:
    """``rating - opponent``, with FIDE's 400-point rule for players rated below 2650.

    FIDE Rating Regulations 8.3.1 (as amended from 1 October 2025): a difference
    of more than 400 points counts as 400 for players rated below 2650; for
    players rated 2650 and above the actual difference is used in all cases.
    """
    d = rating - opponent
    if cap and rating < CAP_EXEMPT_FROM:
        return max(-CAP_DIFFERENCE, min(CAP_DIFFERENCE, d))
    return d


@dataclass(frozen=True)
class GameChange:
    opponent: float
    score: float
    difference: float
    """Rating difference used (after the 400-point rule)."""
    expected: float
    change: float


@dataclass(frozen=True)
class RatingChange:
    rating: float
    k: float
    games: tuple[GameChange, ...]
    score: float
    expected: float
    change: float
    new_rating: float


def _check_scores(opponents: Sequence[float], scores: Sequence[float]) -> None:
    if len(opponents) != len(scores):
        raise ValueError(f"{len(opponents)} opponents but {len(scores)} scores; they must pair up")
    if not opponents:
        raise ValueError("no games: give at least one opponent and score")
    for i, s in enumerate(scores, start=1):
        if s not in (0.0, 0.5, 1.0):
            raise ValueError(f"score of game {i} is {s}; a game scores 0, 0.5 or 1")


def rating_change(
    rating: float,
    opponents: Sequence[float],
    scores: Sequence[float],
    k: float,
    *,
    model: Model = "logistic",
    cap: bool = True,
) -> RatingChange:
    """Rating change over a period: ``sum K*(S_i - E_i)``.

    ``E_i`` is the expected score for the (400-point-capped) difference under
    ``model``; FIDE publishes a rounded table based on the normal model, the
    logistic curve is what seeds 000 and 003 use (the default).
    """
    _check_scores(opponents, scores)
    if k <= 0:
        raise ValueError(f"K must be positive, got {k}")
    games: list[GameChange] = []
    for opp, s in zip(opponents, scores, strict=True):
        d = capped_difference(rating, opp, cap=cap)
        e = expected(d, model)
        games.append(GameChange(opp, s, d, e, k * (s - e)))
    total_s = math.fsum(scores)
    total_e = math.fsum(g.expected for g in games)
    change = math.fsum(g.change for g in games)
    return RatingChange(rating, k, tuple(games), total_s, total_e, change, rating + change)


# --------------------------------------------------------------------------- performance rating

# FIDE Rating Regulations, table 8.1(a): fractional score p (0.50 .. 1.00) -> dp.
# dp(1 - p) = -dp(p). Title regulations compute a performance as Ra + dp.
FIDE_DP_TABLE: tuple[int, ...] = (
    0, 7, 14, 21, 29, 36, 43, 50, 57, 65,
    72, 80, 87, 95, 102, 110, 117, 125, 133, 141,
    149, 158, 166, 175, 184, 193, 202, 211, 220, 230,
    240, 251, 262, 273, 284, 296, 309, 322, 336, 351,
    366, 383, 401, 422, 444, 470, 501, 538, 589, 677,
    800,
)  # fmt: skip
"""``FIDE_DP_TABLE[i]`` is dp for p = 0.50 + i/100 (i = 0..50)."""

PerformanceMethod = Literal["fide", "normal", "linear"]
PERFORMANCE_METHODS: tuple[PerformanceMethod, ...] = get_args(PerformanceMethod)
PERFORMANCE_LIMIT = 800.0


def fide_dp(p: float) -> int:
    """FIDE table 8.1(a): dp for fractional score ``p``, rounded to the nearest 0.01."""
    if not (0.0 <= p <= 1.0):
        raise ValueError(f"fractional score must lie in [0, 1], got {p}")
    hundredths = math.floor(p * 100.0 + 0.5 + 1e-9)  # round half up, immune to 0.145 -> 14.499..
    if hundredths >= 50:
        return FIDE_DP_TABLE[hundredths - 50]
    return -FIDE_DP_TABLE[50 - hundredths]


@dataclass(frozen=True)
class Performance:
    method: str
    games: int
    score: float
    p: float
    average_opponent: float
    dp: float
    rating: float


def performance_rating(
    opponents: Sequence[float],
    scores: Sequence[float],
    method: PerformanceMethod = "fide",
) -> Performance:
    """Performance rating ``Ra + dp`` over a set of games.

    ``Ra`` is the average opponent rating (not rounded), ``p`` the fractional score.

    - ``fide``: dp from FIDE's table 8.1(a) with p rounded to two decimals
      (the table is Elo's normal model, tabulated; 100 % -> +800, 0 % -> -800);
    - ``normal``: dp = 200*sqrt(2)*Phi^-1(p) unrounded, clamped to +/-800;
    - ``linear``: dp = 400*(W - L)/n (the "algorithm of 400").
    """
    _check_scores(opponents, scores)
    n = len(scores)
    total = math.fsum(scores)
    p = total / n
    ra = math.fsum(opponents) / n
    if method == "fide":
        dp = float(fide_dp(p))
    elif method == "normal":
        if p <= 0.0:
            dp = -PERFORMANCE_LIMIT
        elif p >= 1.0:
            dp = PERFORMANCE_LIMIT
        else:
            dp = max(-PERFORMANCE_LIMIT, min(PERFORMANCE_LIMIT, diff_from_expected_normal(p)))
    elif method == "linear":
        wins = sum(1 for s in scores if s == 1.0)
        losses = sum(1 for s in scores if s == 0.0)
        dp = 400.0 * (wins - losses) / n
    else:
        raise ValueError(
            f"unknown performance method {method!r}; expected one of "
            f"{', '.join(PERFORMANCE_METHODS)}"
        )
    return Performance(method, n, total, p, ra, dp, ra + dp)
