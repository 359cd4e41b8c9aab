"""Distributions of gain and expected scores (seed 002, Algorithms 1 and 4).

A player's distribution of gain is the normalised histogram of the gains of
his moves at 1 centipawn resolution. :class:`GainHistogram` stores only the
non-empty bins (value -> count), so it never builds a dense 7801-bin array.

Algorithm 1 defines the expected score of player i against player j through the
cross-correlation of the two distributions::

    p_ij = 1/2 (f_j * f_i)[0] + sum_{n>0} (f_j * f_i)[n]
         = P(G_i > G_j) + 1/2 P(G_i = G_j)

which is the Mann-Whitney U statistic divided by n_i n_j. It is computed from
the sorted distinct values in O(k log k) (k distinct values), and against the
engine's single peak at 0 (Algorithm 4) in O(1) from running counts of
positive, zero and negative gains. :func:`brute_force_expected_score` is the
literal cross-correlation over the dense bin range, kept for tests.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from livegain.core.evaluation import CLIP_CP

#: Largest possible absolute gain: a swing from -3900 to +3900.
MAX_GAIN = 2 * CLIP_CP


class GainHistogram:
    """Counts of gains (integer centipawns) of one player, 1 cp bins.

    Supports :meth:`add` and :meth:`remove` (takebacks and corrections), keeps
    running counts of positive / zero / negative gains so that the expected
    score against the engine's single peak at 0 is O(1).
    """

    __slots__ = ("_counts", "_n", "_neg", "_pos", "_zero")

    def __init__(self) -> None:
        self._counts: dict[int, int] = {}
        self._n = 0
        self._pos = 0
        self._zero = 0
        self._neg = 0

    # -- construction -----------------------------------------------------
    @classmethod
    def from_gains(cls, gains: Iterable[int]) -> GainHistogram:
        hist = cls()
        for g in gains:
            hist.add(g)
        return hist

    @classmethod
    def from_counts(cls, counts: Mapping[int, int]) -> GainHistogram:
        hist = cls()
        for value, count in counts.items():
            if count < 0:
                raise ValueError(f"negative count {count} for gain {value}")
            for _ in range(count):
                hist.add(value)
        return hist

    def copy(self) -> GainHistogram:
        other = GainHistogram()
        other._counts = dict(self._counts)
        other._n = self._n
        other._pos = self._pos
        other._zero = self._zero
        other._neg = self._neg
        return other

    # -- updates ----------------------------------------------------------
    def add(self, g: int) -> None:
        """Count one more move with gain ``g`` (centipawns)."""
        g = _check_gain(g)
        self._counts[g] = self._counts.get(g, 0) + 1
        self._n += 1
        if g > 0:
            self._pos += 1
        elif g == 0:
            self._zero += 1
        else:
            self._neg += 1

    def remove(self, g: int) -> None:
        """Forget one move with gain ``g``; ValueError if none is counted."""
        g = _check_gain(g)
        count = self._counts.get(g, 0)
        if count == 0:
            raise ValueError(f"gain {g} is not in the histogram")
        if count == 1:
            del self._counts[g]
        else:
            self._counts[g] = count - 1
        self._n -= 1
        if g > 0:
            self._pos -= 1
        elif g == 0:
            self._zero -= 1
        else:
            self._neg -= 1

    def merge(self, other: GainHistogram) -> None:
        """Add every move of ``other`` (pooling games)."""
        for value, count in other._counts.items():
            self._counts[value] = self._counts.get(value, 0) + count
        self._n += other._n
        self._pos += other._pos
        self._zero += other._zero
        self._neg += other._neg

    # -- views ------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of moves counted."""
        return self._n

    @property
    def positive(self) -> int:
        return self._pos

    @property
    def zero(self) -> int:
        return self._zero

    @property
    def negative(self) -> int:
        return self._neg

    def counts(self) -> Mapping[int, int]:
        """Non-empty bins, value -> count (a copy)."""
        return dict(self._counts)

    def items(self) -> Iterator[tuple[int, int]]:
        """Non-empty bins in increasing order of gain."""
        for value in sorted(self._counts):
            yield value, self._counts[value]

    def gains(self) -> list[int]:
        """All counted gains, sorted."""
        out: list[int] = []
        for value, count in self.items():
            out.extend([value] * count)
        return out

    def mean(self) -> float:
        if self._n == 0:
            raise ValueError("empty histogram has no mean")
        return sum(v * c for v, c in self._counts.items()) / self._n

    def normalised(self) -> dict[int, float]:
        """The paper's normalised histogram (frequencies summing to 1)."""
        if self._n == 0:
            return {}
        return {v: c / self._n for v, c in sorted(self._counts.items())}

    def __len__(self) -> int:
        return self._n

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GainHistogram):
            return NotImplemented
        return self._counts == other._counts

    def __hash__(self) -> int:  # pragma: no cover - mutable, like dict
        raise TypeError("GainHistogram is mutable and unhashable")

    def __repr__(self) -> str:
        return f"GainHistogram(n={self._n}, bins={len(self._counts)})"

    # -- Algorithm 1 / 4 ----------------------------------------------------
    def expected_score(self, other: GainHistogram) -> float:
        """Algorithm 1: ``P(self > other) + 1/2 P(self = other)``.

        One merge over the sorted distinct values: O(k log k) for k distinct
        gains (the sort), whatever their range.
        """
        if self._n == 0 or other._n == 0:
            raise ValueError("expected score needs moves on both sides")
        theirs = other._counts
        their_keys = sorted(theirs)
        j = 0
        below = 0  # other's moves with a gain < x
        u2 = 0  # 2U
        for x in sorted(self._counts):
            while j < len(their_keys) and their_keys[j] < x:
                below += theirs[their_keys[j]]
                j += 1
            u2 += self._counts[x] * (2 * below + theirs.get(x, 0))
        return u2 / (2 * self._n * other._n)

    def mann_whitney(self, other: GainHistogram) -> MannWhitney:
        """U statistic of self over other, with DeLong's variance of ``U/(n m)``.

        The placement of a gain ``x`` of self is ``P(other < x) + 1/2
        P(other = x)``; the mean placement is the expected score. The variance
        of the estimator is ``var(placements of self)/n + var(placements of
        other)/m`` (DeLong et al. 1988, the tie-aware form of Hanley and
        McNeil's variance of the area under the ROC curve).
        """
        if self._n == 0 or other._n == 0:
            raise ValueError("expected score needs moves on both sides")
        n, m = self._n, other._n
        mine, theirs = self._counts, other._counts
        # one pass over the union of distinct values, in increasing order:
        # placement (doubled) of a value v of self is 2*#other(<v) + #other(=v)
        below_self = below_other = 0
        sa = sa2 = 0  # sums over self's moves of placement2 and placement2^2
        sb = sb2 = 0  # the same for other's moves
        for v in sorted(mine.keys() | theirs.keys()):
            ca = mine.get(v, 0)
            cb = theirs.get(v, 0)
            if ca:
                pa = 2 * below_other + cb
                sa += ca * pa
                sa2 += ca * pa * pa
            if cb:
                pb = 2 * below_self + ca
                sb += cb * pb
                sb2 += cb * pb * pb
            below_self += ca
            below_other += cb
        u2 = sa  # 2U
        p = u2 / (2 * n * m)
        variance = _variance(sa, sa2, n, 2 * m) / n + _variance(sb, sb2, m, 2 * n) / m
        return MannWhitney(p=p, u=u2 / 2, n=n, m=m, variance=variance)

    def expected_score_vs_engine(self, engine: GainHistogram | None = None) -> float:
        """Algorithm 4: expected score against the engine.

        ``engine=None`` is the paper's single peak of height 1 at gain 0:
        ``P(G > 0) + 1/2 P(G = 0)``, O(1) from the running counts.
        """
        if engine is None:
            if self._n == 0:
                raise ValueError("expected score needs at least one move")
            return (2 * self._pos + self._zero) / (2 * self._n)
        return self.expected_score(engine)

    def placement2(self, g: int) -> int:
        """``2*count(< g) + count(= g)``: twice the score of a gain g against self."""
        less = 0
        for value, count in self._counts.items():
            if value < g:
                less += count
        return 2 * less + self._counts.get(g, 0)


@dataclass(frozen=True)
class MannWhitney:
    """Expected score p = U/(n m) of one sample over another, and its variance."""

    p: float
    u: float
    n: int
    m: int
    variance: float


def _check_gain(g: int) -> int:
    value = int(g)
    if value != g:
        raise ValueError(f"gain must be an integer number of centipawns, got {g!r}")
    if not -MAX_GAIN <= value <= MAX_GAIN:
        raise ValueError(f"gain {value} outside [-{MAX_GAIN}, {MAX_GAIN}]")
    return value


def _variance(total: int, total2: int, count: int, denom: int) -> float:
    """Sample variance (ddof=1) of ``count`` values ``x/denom`` given sum and sum of squares
    of the integers x."""
    if count < 2:
        return 0.0
    ss = (count * total2 - total * total) / (count * denom * denom)  # exact numerator
    return ss / (count - 1)


def brute_force_expected_score(a: GainHistogram, b: GainHistogram) -> float:
    """Algorithm 1 literally: cross-correlate the normalised histograms.

    ``(f_b * f_a)[n] = sum_m f_b[m] f_a[n+m]`` is the distribution of ``A - B``;
    the score is ``1/2 (f_b * f_a)[0] + sum_{n>0} (f_b * f_a)[n]``. Dense
    arrays span the bins from the smallest to the largest gain seen (at most
    15601 bins). For tests: O(bins^2).
    """
    if a.n == 0 or b.n == 0:
        raise ValueError("expected score needs moves on both sides")
    lo = min(min(a.counts()), min(b.counts()))
    hi = max(max(a.counts()), max(b.counts()))
    size = hi - lo + 1
    fa = np.zeros(size)
    fb = np.zeros(size)
    for v, c in a.counts().items():
        fa[v - lo] = c / a.n
    for v, c in b.counts().items():
        fb[v - lo] = c / b.n
    # np.correlate(fa, fb, "full")[k] = sum_m fa[m + k - (size-1)] fb[m]: lag n = k - (size-1)
    corr = np.correlate(fa, fb, mode="full")
    zero = size - 1
    return float(0.5 * corr[zero] + corr[zero + 1 :].sum())
