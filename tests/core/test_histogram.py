"""GainHistogram: Algorithm 1 (Mann-Whitney form) and Algorithm 4."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from livegain.core.histogram import MAX_GAIN, GainHistogram, brute_force_expected_score

small_gains = st.lists(st.integers(min_value=-300, max_value=300), min_size=1, max_size=40)
wide_gains = st.lists(st.integers(min_value=-MAX_GAIN, max_value=MAX_GAIN), min_size=1, max_size=12)


def test_add_remove_counts() -> None:
    h = GainHistogram.from_gains([0, 0, -5, 12])
    assert h.n == 4
    assert h.counts() == {0: 2, -5: 1, 12: 1}
    assert (h.positive, h.zero, h.negative) == (1, 2, 1)
    h.remove(0)
    h.remove(-5)
    assert h.counts() == {0: 1, 12: 1}
    assert (h.positive, h.zero, h.negative) == (1, 1, 0)
    with pytest.raises(ValueError, match="not in the histogram"):
        h.remove(-5)
    with pytest.raises(ValueError, match="outside"):
        h.add(MAX_GAIN + 1)


def test_copy_is_independent() -> None:
    h = GainHistogram.from_gains([1, 2])
    c = h.copy()
    c.add(3)
    assert h.n == 2 and c.n == 3
    assert h != c


def test_known_values() -> None:
    a = GainHistogram.from_gains([0])
    b = GainHistogram.from_gains([-1])
    assert a.expected_score(b) == 1.0
    assert b.expected_score(a) == 0.0
    assert a.expected_score(a) == 0.5
    # engine single peak at 0
    h = GainHistogram.from_gains([5, 0, 0, -3])
    assert h.expected_score_vs_engine() == pytest.approx((1 + 0.5 * 2) / 4)
    engine = GainHistogram.from_gains([0])
    assert h.expected_score_vs_engine(engine) == h.expected_score_vs_engine()


def test_empty_is_an_error() -> None:
    with pytest.raises(ValueError):
        GainHistogram().expected_score_vs_engine()
    with pytest.raises(ValueError):
        GainHistogram().expected_score(GainHistogram.from_gains([1]))


@settings(deadline=None)
@given(small_gains, small_gains)
def test_antisymmetry(a: list[int], b: list[int]) -> None:
    ha, hb = GainHistogram.from_gains(a), GainHistogram.from_gains(b)
    assert ha.expected_score(hb) + hb.expected_score(ha) == pytest.approx(1.0, abs=1e-12)


@settings(deadline=None, max_examples=60)
@given(small_gains, small_gains)
def test_agrees_with_brute_force(a: list[int], b: list[int]) -> None:
    ha, hb = GainHistogram.from_gains(a), GainHistogram.from_gains(b)
    assert ha.expected_score(hb) == pytest.approx(brute_force_expected_score(ha, hb), abs=1e-9)


@settings(max_examples=15, deadline=None)
@given(wide_gains, wide_gains)
def test_agrees_with_brute_force_over_the_full_range(a: list[int], b: list[int]) -> None:
    ha, hb = GainHistogram.from_gains(a), GainHistogram.from_gains(b)
    assert ha.expected_score(hb) == pytest.approx(brute_force_expected_score(ha, hb), abs=1e-9)


@settings(deadline=None)
@given(small_gains, small_gains, st.integers(min_value=-300, max_value=300), st.integers(0, 300))
def test_monotone_in_a_larger_gain(a: list[int], b: list[int], g: int, extra: int) -> None:
    """Replacing a move's gain by a larger one never lowers p (vs a player or the engine)."""
    base = GainHistogram.from_gains([*a, g])
    better = GainHistogram.from_gains([*a, g + extra])
    hb = GainHistogram.from_gains(b)
    assert better.expected_score(hb) >= base.expected_score(hb) - 1e-12
    assert better.expected_score_vs_engine() >= base.expected_score_vs_engine()


@settings(deadline=None)
@given(small_gains, st.integers(min_value=-300, max_value=300))
def test_adding_a_gain_above_all_others_never_lowers_p(a: list[int], g: int) -> None:
    h = GainHistogram.from_gains(a)
    opp = GainHistogram.from_gains([g])
    before = h.expected_score(opp)
    h.add(max(a) + 1)
    assert h.expected_score(opp) >= before - 1e-12


@settings(deadline=None)
@given(small_gains, small_gains)
def test_engine_histogram_same_as_player(a: list[int], e: list[int]) -> None:
    ha, he = GainHistogram.from_gains(a), GainHistogram.from_gains(e)
    assert ha.expected_score_vs_engine(he) == pytest.approx(ha.expected_score(he))
    # placement2 is the per-move score against e, doubled and scaled by n_e
    total = sum(he.placement2(g) for g in a)
    assert total / (2 * he.n * ha.n) == pytest.approx(ha.expected_score(he))


@settings(deadline=None)
@given(small_gains, small_gains)
def test_merge_equals_pooled(a: list[int], b: list[int]) -> None:
    h = GainHistogram.from_gains(a)
    h.merge(GainHistogram.from_gains(b))
    pooled = GainHistogram.from_gains(a + b)
    assert h == pooled
    assert (h.positive, h.zero, h.negative, h.n) == (
        pooled.positive,
        pooled.zero,
        pooled.negative,
        pooled.n,
    )


def test_delong_variance_matches_direct_formula() -> None:
    a = [0, 0, -5, 12, -30, 3, 0]
    b = [-1, 0, -40, 7]
    mw = GainHistogram.from_gains(a).mann_whitney(GainHistogram.from_gains(b))

    def psi(x: int, y: int) -> float:
        return 1.0 if x > y else (0.5 if x == y else 0.0)

    v10 = [sum(psi(x, y) for y in b) / len(b) for x in a]
    v01 = [sum(psi(x, y) for x in a) / len(a) for y in b]

    def var(v: list[float]) -> float:
        m = sum(v) / len(v)
        return sum((x - m) ** 2 for x in v) / (len(v) - 1)

    assert mw.p == pytest.approx(sum(v10) / len(a))
    assert mw.variance == pytest.approx(var(v10) / len(a) + var(v01) / len(b))
