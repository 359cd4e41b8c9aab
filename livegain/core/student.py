"""Student's t distribution with whole degrees of freedom: its quantiles.

The intervals of the report use Student's t with ``n - 1`` degrees of freedom
(games, players, jackknife groups). For a whole number ``nu`` its distribution
function has a closed form, a finite sum in ``theta = atan(t / sqrt(nu))``
(Abramowitz and Stegun 26.7.3-26.7.4)::

    A(t | nu) = P(|T| <= t)
      nu odd:  2/pi * (theta + sin(theta) cos(theta) (1 + 2/3 c^2 + 2*4/(3*5) c^4 + ...))
      nu even: sin(theta) (1 + 1/2 c^2 + 1*3/(2*4) c^4 + ...)        (c = cos(theta))

with ``(nu - 1) // 2`` terms after the 1, and its quantile is found by Newton's
method on it, kept inside a bracket. The results agree with SciPy's
``stdtrit`` to about 1e-12 (tests/core/test_student.py); this module exists so
that a report needs no SciPy import for them (0.2-0.3 s of start-up).
"""

from __future__ import annotations

import functools
import math
from statistics import NormalDist

__all__ = ["t_quantile"]

_NORMAL = NormalDist()


def _two_sided(t: float, nu: int) -> tuple[float, float]:
    """``A(t | nu) = P(|T| <= t)`` for ``t >= 0`` and ``nu >= 3`` (1 and 2 have
    closed-form quantiles), and its derivative in ``t``."""
    theta = math.atan(t / math.sqrt(nu))
    s, c = math.sin(theta), math.cos(theta)
    c2 = c * c
    term, total = 1.0, 1.0
    if nu % 2:
        for k in range(1, (nu - 1) // 2):
            term *= c2 * (2 * k) / (2 * k + 1)
            total += term
        value = 2.0 / math.pi * (theta + s * c * total)
    else:
        for k in range(1, nu // 2):
            term *= c2 * (2 * k - 1) / (2 * k)
            total += term
        value = s * total
    log_pdf = (
        math.lgamma((nu + 1) / 2)
        - math.lgamma(nu / 2)
        - 0.5 * math.log(nu * math.pi)
        - (nu + 1) / 2 * math.log1p(t * t / nu)
    )
    return value, 2.0 * math.exp(log_pdf)


@functools.lru_cache(maxsize=256)
def t_quantile(nu: int, p: float) -> float:
    """The ``p`` quantile of Student's t with ``nu`` (whole, >= 1) degrees of freedom."""
    if nu < 1 or int(nu) != nu:
        raise ValueError(f"degrees of freedom must be a whole number >= 1, got {nu}")
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p}")
    nu = int(nu)
    if p < 0.5:
        return -t_quantile(nu, 1.0 - p)
    if p == 0.5:
        return 0.0
    if nu == 1:  # Cauchy
        return math.tan(math.pi * (p - 0.5))
    if nu == 2:
        return (2.0 * p - 1.0) / math.sqrt(2.0 * p * (1.0 - p))
    target = 2.0 * p - 1.0
    # t's quantile is above the normal's and below the one with nu = 2
    lo = _NORMAL.inv_cdf(p)
    hi = target / math.sqrt(2.0 * p * (1.0 - p))
    t = lo
    for _ in range(100):
        value, slope = _two_sided(t, nu)
        gap = value - target
        if gap < 0:
            lo = t
        else:
            hi = t
        step = gap / slope if slope > 0 else math.inf
        nxt = t - step
        if not lo < nxt < hi:  # Newton left the bracket: bisect
            nxt = 0.5 * (lo + hi)
        if abs(nxt - t) <= 1e-14 * max(1.0, abs(t)):
            return nxt
        t = nxt
    return t
