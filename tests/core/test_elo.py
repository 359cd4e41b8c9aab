"""Elo maths: expectations, inverses, FIDE K-factor, rating change, performance."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from livegain.core import elo
from livegain.core.elo import (
    FIDE_DP_TABLE,
    MODELS,
    capped_difference,
    diff_from_expected,
    diff_from_expected_log,
    diff_from_expected_log2,
    diff_from_expected_logistic,
    diff_from_expected_normal,
    expected,
    expected_logistic,
    expected_normal,
    fide_dp,
    fide_k,
    performance_rating,
    rating_change,
)

diffs = st.floats(min_value=-1500, max_value=1500, allow_nan=False)
fractions = st.floats(min_value=1e-6, max_value=1 - 1e-6, allow_nan=False)
models = st.sampled_from(MODELS)


# ----------------------------------------------------------------- properties


@given(diffs, models)
def test_expectation_is_antisymmetric(d: float, model: elo.Model) -> None:
    assert expected(d, model) + expected(-d, model) == pytest.approx(1.0, abs=1e-12)


@given(diffs, diffs, models)
def test_expectation_is_monotone(d1: float, d2: float, model: elo.Model) -> None:
    lo, hi = sorted((d1, d2))
    assert expected(lo, model) <= expected(hi, model)


@given(fractions, models)
def test_inverse_round_trip_from_score(x: float, model: elo.Model) -> None:
    assert expected(diff_from_expected(x, model), model) == pytest.approx(x, rel=1e-9, abs=1e-12)


@given(st.floats(min_value=-1000, max_value=1000, allow_nan=False), models)
def test_inverse_round_trip_from_difference(d: float, model: elo.Model) -> None:
    assert diff_from_expected(expected(d, model), model) == pytest.approx(d, abs=1e-6)


@given(fractions)
def test_log_formula_is_exactly_the_logistic_inverse(x: float) -> None:
    assert diff_from_expected_log(x) == diff_from_expected_logistic(x)


def test_known_points() -> None:
    assert expected_logistic(0) == 0.5
    assert expected_normal(0) == 0.5
    # 200 points: about 0.76 (logistic) and 0.76 (normal, Phi(0.7071)).
    assert expected_logistic(200) == pytest.approx(1 / (1 + 10**-0.5))
    assert expected_normal(200) == pytest.approx(0.5 * (1 + math.erf(0.5)))
    # Normal model via its definition: Phi(d / (200*sqrt 2)).
    phi = 0.5 * (1 + math.erf(150 / (200 * math.sqrt(2)) / math.sqrt(2)))
    assert expected_normal(150) == pytest.approx(phi)
    assert expected_logistic(-1e6) == 0.0
    assert elo.expected_log2(-1e6) == 0.0


@pytest.mark.parametrize("x", [0.0, 1.0, -0.1, 1.5, math.nan])
@pytest.mark.parametrize("model", MODELS)
def test_inverse_rejects_scores_outside_open_interval(x: float, model: elo.Model) -> None:
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        diff_from_expected(x, model)


def test_unknown_model() -> None:
    with pytest.raises(ValueError, match="unknown model"):
        expected(0, "glicko")  # type: ignore[arg-type]


# ----------------------------------------------------------------- seed 004


def test_fischer_spassky_seed_004() -> None:
    """0.625 -> 90.1 (Elo's normal model) and 88.7 (logarithmic formula)."""
    assert round(diff_from_expected_normal(0.625), 1) == 90.1
    assert round(diff_from_expected_log(0.625), 1) == 88.7
    # The second logarithmic formula (eq. 8) equals 408.1*log10(x/(1-x)).
    assert diff_from_expected_log2(0.625) == pytest.approx(408.1 * math.log10(0.625 / 0.375), 1e-4)
    # Solving eq. 1 for A with x=0.625, delta=90 gives 405.7.
    assert round(90 / math.log10(0.625 / 0.375), 1) == 405.7


def test_seed_004_slopes_at_one_half() -> None:
    """First-order terms: 1600/ln10 = 694.9 (log), 400*sqrt(pi) = 709.0 (normal and log2)."""
    h = 1e-6
    slope = {
        m: (diff_from_expected(0.5 + h, m) - diff_from_expected(0.5 - h, m)) / (2 * h)
        for m in MODELS
    }
    assert round(slope["log"], 1) == 694.9
    assert round(slope["normal"], 1) == 709.0
    assert slope["log2"] == pytest.approx(slope["normal"], rel=1e-6)


# ----------------------------------------------------------------- seed 003


def test_seed_003_1613_to_1601() -> None:
    opponents = [1609, 1477, 1388, 1586, 1720]
    scores = [0, 0.5, 1, 1, 0]
    rc = rating_change(1613, opponents, scores, k=32)
    assert [round(g.expected, 3) for g in rc.games] == [0.506, 0.686, 0.785, 0.539, 0.351]
    assert round(rc.expected, 3) == 2.867
    assert rc.score == 2.5
    assert round(rc.new_rating) == 1601
    # "two wins, one loss, and two draws" -> 3 points -> 1617
    rc3 = rating_change(1613, opponents, [0.5, 0.5, 1, 1, 0], k=32)
    assert rc3.score == 3.0
    assert round(rc3.new_rating) == 1617


def test_rating_change_is_sum_of_k_s_minus_e() -> None:
    rc = rating_change(2000, [2100, 1900], [1, 0.5], k=20, model="normal")
    want = 20 * (1 - expected_normal(-100)) + 20 * (0.5 - expected_normal(100))
    assert rc.change == pytest.approx(want)
    assert rc.new_rating == pytest.approx(2000 + want)


def test_rating_change_uses_capped_difference() -> None:
    rc = rating_change(2000, [2600], [1], k=20)
    assert rc.games[0].difference == -400
    assert rc.change == pytest.approx(20 * (1 - expected_logistic(-400)))
    uncapped = rating_change(2000, [2600], [1], k=20, cap=False)
    assert uncapped.games[0].difference == -600


@pytest.mark.parametrize(
    ("opponents", "scores", "message"),
    [([], [], "no games"), ([2000], [1, 0], "pair up"), ([2000], [0.7], "0, 0.5 or 1")],
)
def test_rating_change_rejects_bad_games(
    opponents: list[float], scores: list[float], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        rating_change(2000, opponents, scores, k=20)


# ----------------------------------------------------------------- FIDE rules


def test_400_point_rule_and_2650_exemption() -> None:
    assert capped_difference(2000, 2420) == -400
    assert capped_difference(2000, 1550) == 400
    assert capped_difference(2000, 1700) == 300
    assert capped_difference(2649, 1800) == 400
    # Players rated 2650 and above: the actual difference in all cases.
    assert capped_difference(2650, 1800) == 850
    assert capped_difference(2800, 1800) == 1000
    assert capped_difference(2000, 2420, cap=False) == -420


@pytest.mark.parametrize(
    ("rating", "kwargs", "k"),
    [
        (1800, {"games_played": 0}, 40),
        (2450, {"games_played": 29}, 40),  # new player: 40 whatever the rating
        (1800, {"games_played": 30}, 20),
        (2399, {"games_played": 100}, 20),
        (2400, {"games_played": 100}, 10),
        (2350, {"games_played": 100, "ever_2400": True}, 10),  # permanent once reached
        (2250, {"games_played": 100, "junior": True}, 40),
        (2300, {"games_played": 100, "junior": True}, 20),
        (2250, {"games_played": 100, "junior": True, "ever_2400": True}, 10),
    ],
)
def test_fide_k(rating: float, kwargs: dict[str, int | bool], k: int) -> None:
    assert fide_k(rating, **kwargs) == k  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("rating", "games_played", "n", "k"),
    [
        (1800, 0, 17, 40),  # 40*17 = 680
        (1800, 0, 18, 38),  # 40*18 = 720 > 700 -> 38 (38*18 = 684)
        (1800, 100, 35, 20),  # 20*35 = 700, allowed
        (1800, 100, 36, 19),  # 19*36 = 684
        (2500, 100, 70, 10),
        (2500, 100, 71, 9),
        (2500, 100, 0, 10),
    ],
)
def test_fide_k_700_rule(rating: float, games_played: int, n: int, k: int) -> None:
    got = fide_k(rating, games_played=games_played, games_in_period=n)
    assert got == k
    assert n == 0 or got * n <= 700


@given(st.integers(min_value=1, max_value=500), st.integers(0, 200), st.floats(1000, 2900))
def test_fide_k_never_exceeds_700_per_period(n: int, played: int, rating: float) -> None:
    base = fide_k(rating, games_played=played)
    k = fide_k(rating, games_played=played, games_in_period=n)
    assert k * n <= 700
    assert k == min(base, 700 // n)


def test_fide_k_rejects_negative_counts() -> None:
    with pytest.raises(ValueError):
        fide_k(2000, games_played=-1)


# ----------------------------------------------------------------- performance


def test_fide_dp_table_shape() -> None:
    assert len(FIDE_DP_TABLE) == 51
    assert all(a < b for a, b in itertools.pairwise(FIDE_DP_TABLE))
    assert fide_dp(0.5) == 0
    assert fide_dp(0.625) == 95  # rounded to 0.63
    assert fide_dp(0.62) == 87
    assert fide_dp(1.0) == 800
    assert fide_dp(0.0) == -800
    assert fide_dp(0.01) == -677


@given(st.integers(min_value=0, max_value=100))
def test_fide_dp_is_antisymmetric(h: int) -> None:
    assert fide_dp(h / 100) == -fide_dp(1 - h / 100)


def test_fide_table_is_the_normal_model_tabulated() -> None:
    """Table 8.1(a) follows Elo's normal model to within 1 point + 1.5 % from 51 % to 98 %."""
    for h in range(51, 99):
        p = h / 100
        normal = diff_from_expected_normal(p)
        assert abs(fide_dp(p) - normal) <= 1 + 0.015 * normal, p


def test_performance_fide() -> None:
    perf = performance_rating([2500, 2600, 2400, 2500], [1, 0.5, 0.5, 0.5])
    assert perf.p == 0.625
    assert perf.average_opponent == 2500
    assert perf.dp == 95
    assert perf.rating == 2595


def test_performance_methods() -> None:
    opps = [2400, 2500, 2600]
    scores = [1.0, 1.0, 0.5]
    normal = performance_rating(opps, scores, "normal")
    assert normal.rating == pytest.approx(2500 + diff_from_expected_normal(2.5 / 3))
    linear = performance_rating(opps, scores, "linear")
    assert linear.rating == pytest.approx(2500 + 400 * 2 / 3)
    perfect = performance_rating(opps, [1, 1, 1], "normal")
    assert perfect.rating == 2500 + 800
    zero = performance_rating(opps, [0, 0, 0], "fide")
    assert zero.rating == 2500 - 800
    with pytest.raises(ValueError, match="unknown performance method"):
        performance_rating(opps, scores, "tpr")  # type: ignore[arg-type]
